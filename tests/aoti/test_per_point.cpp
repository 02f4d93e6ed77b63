// Per-point parameters: a promoted parameter compiled with `neml2-compile --per-point` given
// one value per point, (B, *shape), under every policy, against the closed form of linear
// isotropic elasticity and against one direct call per point with the parameters shared.
#include "fixtures.h"

using namespace neml2_test;
using Catch::Matchers::ContainsSubstring;

namespace
{
constexpr int64_t B = 11;
constexpr double nu0 = 0.25; // the fixture's Poisson ratio

/// One Young's modulus per point, all different.
at::Tensor
moduli()
{
  return 100.0 + 10.0 * at::arange(B, f64());
}

/// One Poisson ratio per point, all different.
at::Tensor
ratios()
{
  return 0.2 + 0.01 * at::arange(B, f64());
}

/// Equal to round-off: the per-point graphs are other compiled code than the shared ones,
/// and a GPU rounds differently again.
void
same(const at::Tensor & got, const at::Tensor & want)
{
  CHECK(close(got, want, 1e-12, 1e-9));
}

/// Results of one direct call per point, with the point's parameters shared: what a
/// per-point call must give, row by row.
struct PointByPoint
{
  at::Tensor stress, dstrain, dE, dnu, adjE, adjnu;
};

PointByPoint
point_by_point(const at::Tensor & strain, const at::Tensor & E, const at::Tensor & nu,
               const at::Tensor & cot)
{
  Model direct(stub("elastic_promoted"), "model", "cpu");
  std::vector<at::Tensor> s, j, pe, pn, ae, an;
  for (int64_t b = 0; b < B; ++b)
  {
    direct.set_parameter("model.E", E[b].clone());
    direct.set_parameter("model.nu", nu[b].clone());
    const TensorMap x{{"strain", strain[b]}};
    s.push_back(direct.forward(x).at("stress"));
    j.push_back(direct.jacobian(x).at("stress").at("strain"));
    const auto pj = direct.param_jacobian(x).at("stress");
    pe.push_back(pj.at("model.E"));
    pn.push_back(pj.at("model.nu"));
    const auto adj = direct.param_vjp(x, {{"stress", cot[b]}});
    ae.push_back(adj.at("model.E"));
    an.push_back(adj.at("model.nu"));
  }
  return {at::stack(s), at::stack(j), at::stack(pe), at::stack(pn), at::stack(ae), at::stack(an)};
}
} // namespace

TEST_CASE("per point: a Model takes one parameter value per point", "[per_point]")
{
  Model direct(stub("elastic_promoted"), "model", "cpu");
  REQUIRE(direct.meta().per_point == std::vector<std::string>{"model.E", "model.nu"});
  const at::Tensor strain = strains(B);
  direct.set_parameter("model.E", moduli());
  const at::Tensor stress = direct.forward({{"strain", strain}}).at("stress");
  for (int64_t b = 0; b < B; ++b)
    CHECK(close(stress[b], at::mv(stiffness(100.0 + 10.0 * double(b), nu0), strain[b])));
  // the parameters as held now: E per point
  CHECK(direct.parameters()[0].shape == std::vector<int64_t>{B});
  CHECK(direct.parameters()[1].shape.empty());
  // back to one value for all points: the shared graph again
  direct.set_parameter("model.E", at::scalar_tensor(150.0, f64()));
  CHECK(close(direct.forward({{"strain", strain}}).at("stress"),
              at::matmul(strain, stiffness(150.0, nu0))));
}

TEMPLATE_TEST_CASE("per point: every result equals one direct call per point", "[per_point]",
                   NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("elastic_promoted"), 4);
  const at::Tensor strain = strains(B);
  const at::Tensor cot = strains(B, 11);
  const TensorMap x{{"strain", strain}};

  SECTION("E per point, nu shared")
  {
    const at::Tensor E = moduli();
    m.set_parameter("model.E", E);
    const auto want = point_by_point(strain, E, at::full({B}, nu0, f64()), cot);
    const at::Tensor stress = m.forward(x).at("stress");
    same(stress, want.stress);
    for (int64_t b = 0; b < B; ++b)
      CHECK(close(stress[b], at::mv(stiffness(E[b].item<double>(), nu0), strain[b])));
    same(m.jacobian(x).at("stress").at("strain"), want.dstrain);
    const auto pj = m.param_jacobian(x).at("stress");
    same(pj.at("model.E"), want.dE);
    same(pj.at("model.nu"), want.dnu);
    // the adjoint of a per-point parameter is per point; a shared one's is summed
    const auto adj = m.param_vjp(x, {{"stress", cot}});
    same(adj.at("model.E"), want.adjE);
    CHECK(adj.at("model.nu").dim() == 0);
    CHECK(close(adj.at("model.nu"), want.adjnu.sum()));
    // tangents: J . v per point
    const auto t = m.jvp(x, {{"strain", cot}}).at("stress");
    CHECK(close(t, at::bmm(want.dstrain, cot.unsqueeze(-1)).squeeze(-1)));
  }

  SECTION("both per point")
  {
    const at::Tensor E = moduli(), nu = ratios();
    m.set_parameter("model.E", E);
    m.set_parameter("model.nu", nu);
    const auto want = point_by_point(strain, E, nu, cot);
    same(m.forward(x).at("stress"), want.stress);
    const auto adj = m.param_vjp(x, {{"stress", cot}});
    same(adj.at("model.E"), want.adjE);
    same(adj.at("model.nu"), want.adjnu);
    // results into the caller's buffers, as a host code holds them
    TensorMap into{{"stress", at::empty({B, 6}, f64())}};
    m.forward(x, into);
    same(into.at("stress"), want.stress);
  }

  SECTION("one point's inputs for every point")
  {
    const at::Tensor E = moduli();
    m.set_parameter("model.E", E);
    const at::Tensor one = strain[3];
    const at::Tensor stress = m.forward({{"strain", one}}).at("stress");
    REQUIRE(stress.sizes() == at::IntArrayRef({B, 6}));
    for (int64_t b = 0; b < B; ++b)
      CHECK(close(stress[b], at::mv(stiffness(E[b].item<double>(), nu0), one)));
  }

  SECTION("a mutated per-point tensor is seen by the next call")
  {
    at::Tensor E = moduli();
    m.set_parameter("model.E", E);
    (void)m.forward(x);
    E.mul_(2);
    const at::Tensor stress = m.forward(x).at("stress");
    for (int64_t b = 0; b < B; ++b)
      CHECK(close(stress[b], at::mv(stiffness(E[b].item<double>(), nu0), strain[b])));
  }
}

TEMPLATE_TEST_CASE("per point: bad per-point values are refused and change nothing", "[per_point]",
                   NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("elastic_promoted"), 4);
  const at::Tensor strain = strains(B);
  const TensorMap x{{"strain", strain}};
  const at::Tensor before = m.forward(x).at("stress");
  const at::Tensor E0 = m.named_parameters().at("model.E");

  // as many points as the call has, or the call is refused
  m.set_parameter("model.E", at::full({B - 1}, 120.0, f64()));
  CHECK_THROWS_WITH(m.forward(x), ContainsSubstring("batch sizes disagree") &&
                                      ContainsSubstring("parameter 'model.E' has 10 points"));
  m.set_parameter("model.E", E0);
  same(m.forward(x).at("stress"), before);

  CHECK_THROWS_WITH(
      m.set_parameter("model.E", at::ones({B, 2}, f64())),
      ContainsSubstring("'model.E' must stay a tensor of shape () or (B,) per point"));
  CHECK_THROWS_WITH(m.set_parameter("model.E", at::ones({B}, at::kFloat)),
                    ContainsSubstring("model.E"));
  CHECK_THROWS_WITH(m.set_parameter("model.G", at::ones({B}, f64())),
                    ContainsSubstring("unknown parameter 'model.G'") &&
                        ContainsSubstring("model.E, model.nu"));
  same(m.forward(x).at("stress"), before);
}

TEST_CASE("per point: a parameter not compiled per point says how to compile it", "[per_point]")
{
  // thermoelastic renames elastic.E to E and compiles nothing per point
  Model direct(stub("thermoelastic"), "model", "cpu");
  CHECK(direct.meta().per_point.empty());
  CHECK_THROWS_WITH(direct.set_parameter("E", at::ones({B}, f64())),
                    ContainsSubstring("not compiled per point; add --per-point elastic.E"));
}

TEST_CASE("per point: the documentation's snippet runs verbatim", "[per_point][docs]")
{
  auto md = load_model(stub("elastic_promoted"), "model",
                       std::make_shared<Simple>(Simple::Config{"cpu", 4}));
  const at::Tensor strain = strains(B), cot = strains(B, 11);
  // doc/dispatching.md, "Per-point parameters":
  const at::Tensor E = 100e3 + 1e3 * at::arange(B, at::kDouble); // one modulus per point
  md.set_parameter("model.E", E);
  const auto stress = md.forward({{"strain", strain}}).at("stress"); // (B, 6)
  const auto adj = md.param_vjp({{"strain", strain}}, {{"stress", cot}});
  // adj["model.E"] is (B,): one adjoint per point; adj["model.nu"], shared, is summed
  md.set_parameter("model.E", at::scalar_tensor(100e3, at::kDouble)); // one for all again
  // end of the snippet
  CHECK(stress.sizes() == at::IntArrayRef({B, 6}));
  CHECK(adj.at("model.E").sizes() == at::IntArrayRef({B}));
  CHECK(adj.at("model.nu").dim() == 0);
  CHECK(md.parameters()[0].shape.empty());
}
