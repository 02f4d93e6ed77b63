// tests/aoti/multiphysics: one composed model per multiphysics family (chemical reactions,
// phase-field fracture, porous flow, finite-volume transport, KWN precipitation), side by
// side in one compiled model, dispatched under every policy: every output equals the direct
// call (the fixture compiles the forward graph only: flags.txt).
#include "fixtures.h"

using namespace neml2_test;

namespace
{
constexpr int64_t cells = 5, bins = 3;

/// Inputs inside each model's physical range: fractions that leave room for one another,
/// saturations on both sides of the capillary model's transition, velocities of both signs,
/// number densities from a matrix far above equilibrium to one depleted below it.
TensorMap
multiphysics_inputs(int64_t batch, uint64_t seed = 21)
{
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto uniform = [&](double lo, double hi, at::IntArrayRef base = {})
  {
    std::vector<int64_t> shape{batch};
    shape.insert(shape.end(), base.begin(), base.end());
    return lo + (hi - lo) * at::rand(shape, gen, f64());
  };
  const at::Tensor eye = at::eye(3, f64());
  return {{"conversion_degree", uniform(0.05, 0.9)},
          {"solid_fraction", uniform(0.3, 0.5)},
          {"product_fraction", uniform(0.05, 0.3)},
          {"liquid_reactivity", uniform(0.5, 1.0)},
          {"solid_reactivity", uniform(0.5, 1.0)},
          {"open_volume_fraction", uniform(0.05, 0.3)},
          {"w_solid", uniform(0.2, 0.8)},
          {"w_product", uniform(0.2, 0.8)},
          {"phase", uniform(0.0, 0.95)},
          {"strain", uniform(-2e-3, 2e-3, {6})},
          {"fluid_fraction", uniform(0.06, 0.55)},
          {"porosity", uniform(0.1, 0.5)},
          {"temperature", uniform(600.0, 750.0)},
          {"deformation_gradient", eye + uniform(-1e-2, 1e-2, {3, 3})},
          {"pk1_stress", uniform(-100.0, 100.0, {3, 3})},
          {"v", uniform(-1.0, 1.0, {cells})},
          {"c", uniform(0.0, 1.0, {cells})},
          {"number_density", uniform(0.0, 1.0, {bins}) * at::tensor({5e23, 5e22, 3.5e22}, f64())}};
}

/// The families' exp, log and pow run in vector lanes or in a scalar tail loop depending on
/// where a point falls in its chunk, so results agree to round-off, not bitwise, even on
/// one CPU.
template <class Case>
void
check_close(const at::Tensor & got, const at::Tensor & want)
{
  CHECK(agree(got, want, Case::exact() ? 1e-13 : 1e-10));
}
} // namespace

TEST_CASE("multiphysics: every family's outputs are compiled, the cells as a sub-batch axis",
          "[models][multiphysics]")
{
  const Model direct(stub("multiphysics"), "model", "cpu");
  std::vector<std::string> names;
  for (const auto & v : direct.meta().outputs)
    names.push_back(v.name);
  CHECK(names == std::vector<std::string>{"total_rate", "psi", "effective_saturation",
                                          "capillary_pressure", "permeability", "advective_stress",
                                          "c_rate", "critical_radius", "nucleation_flux_magnitude",
                                          "growth_rate", "limited_growth_rate"});
  const auto & c_rate = direct.meta().outputs[6];
  CHECK(c_rate.shape == std::vector<int64_t>{cells});
  CHECK(c_rate.sub_batch == std::vector<int64_t>{cells});
  const auto & growth = direct.meta().outputs[9];
  CHECK(growth.shape == std::vector<int64_t>{bins});
  CHECK(growth.sub_batch == std::vector<int64_t>{bins});
}

TEMPLATE_TEST_CASE("multiphysics: dispatched results equal the direct call",
                   "[models][multiphysics][dispatch]", NEML2_ALL_POLICIES)
{
  const Model direct(stub("multiphysics"), "model", "cpu");
  for (const int64_t batch : {1, 7, 40})
  {
    INFO("batch " << batch);
    auto m = TestType::make(stub("multiphysics"), 3);
    const TensorMap in = multiphysics_inputs(batch);
    const TensorMap got = m.forward(in), want = direct.forward(in);
    REQUIRE(got.size() == want.size());
    CHECK(got.at("c_rate").sizes() == at::IntArrayRef({batch, cells}));
    CHECK(got.at("growth_rate").sizes() == at::IntArrayRef({batch, bins}));
    for (const auto & [name, t] : want)
    {
      INFO(name);
      CHECK(at::isfinite(t).all().item().toBool());
      check_close<TestType>(got.at(name), t);
    }
  }
}
