// The implicit viscoplastic model (tests/aoti/viscoplastic) and the composed thermo-elastic
// model (tests/aoti/thermoelastic) through the C++ API: physics, derivatives against finite
// differences of forward, and convergence errors through the dispatcher under every policy.
#include "fixtures.h"

#include <cmath>
#include <optional>
#include <type_traits>

using namespace neml2_test;
using Catch::Matchers::ContainsSubstring;

namespace
{
const double E = 200000, nu = 0.3;
/// A uniaxial strain step that needs more than the fixture's 8 Newton updates over
/// dt_fail and fewer over dt_fail / 2 (the threshold lies near 5.8 s).
const double strain_fail = 0.1, dt_fail = 8.0;

/// Whether a case cuts the batch into chunks of exactly the size it is made with.
template <class Case>
constexpr bool fixed_chunks =
    std::is_same_v<Case, SyncSimpleCase> || std::is_same_v<Case, AsyncSimpleCase> ||
    std::is_same_v<Case, AsyncHybridCase> || std::is_same_v<Case, AnyHybridCase>;

/// Inputs of the viscoplastic model: plastic points (random strains around 2e-3, no prior
/// plastic strain, time steps in [0.1, 1]); strains scaled by @p scale.
TensorMap
state(int64_t batch, double scale = 1.0, uint64_t seed = 11)
{
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return {{"strain", at::randn({batch, 6}, gen, f64()) * (2e-3 * scale)},
          {"old_plastic_strain", at::zeros({batch, 6}, f64())},
          {"old_equivalent_plastic_strain", at::rand({batch}, gen, f64()) * 0.01},
          {"time_step", at::rand({batch}, gen, f64()) * 0.9 + 0.1}};
}

/// Make the points @p rows of @p in take a uniaxial strain step of 0.1 over dt_fail from
/// the virgin state.
TensorMap
with_failing(TensorMap in, const std::vector<int64_t> & rows)
{
  for (const std::string name : {"strain", "old_equivalent_plastic_strain", "time_step"})
    in[name] = in[name].clone();
  for (const int64_t r : rows)
  {
    in["strain"][r].zero_();
    in["strain"][r][0] = strain_fail;
    in["old_equivalent_plastic_strain"][r] = 0.0;
    in["time_step"][r] = dt_fail;
  }
  return in;
}

/// d(out)/d(input name) by central differences of forward, (B, *out, *in).
at::Tensor
fd_input(const Model & m, const TensorMap & in, const std::string & name, const std::string & out)
{
  const at::Tensor x = in.at(name);
  const int64_t batch = x.size(0);
  const at::Tensor flat = x.reshape({batch, -1});
  // a step relative to each point
  const at::Tensor h = std::get<0>(flat.abs().max(1)).clamp_min(1e-3) * 1e-6;
  std::vector<at::Tensor> columns;
  for (int64_t j = 0; j < flat.size(1); ++j)
  {
    at::Tensor step = at::zeros_like(flat);
    step.select(1, j).copy_(h);
    step = step.reshape(x.sizes());
    TensorMap plus = in, minus = in;
    plus[name] = x + step;
    minus[name] = x - step;
    const at::Tensor d = m.forward(plus).at(out) - m.forward(minus).at(out);
    std::vector<int64_t> shape(d.dim(), 1);
    shape[0] = batch;
    columns.push_back(d / (2 * h.reshape(shape)));
  }
  const at::Tensor fd = at::stack(columns, -1);
  return x.dim() == 1 ? fd.squeeze(-1) : fd;
}

/// d(out)/d(parameter) by central differences of forward, (B, *out).
at::Tensor
fd_param(Model & m, const TensorMap & in, const std::string & name, const std::string & out)
{
  at::Tensor p = m.named_parameters().at(name);
  const double value = p.item<double>();
  const double h = 1e-6 * std::abs(value);
  p.fill_(value + h);
  const at::Tensor plus = m.forward(in).at(out);
  p.fill_(value - h);
  const at::Tensor minus = m.forward(in).at(out);
  p.fill_(value);
  return (plus - minus) / (2 * h);
}

/// The ConvergenceError (or AggregateError) that @p f throws, as an exception pointer.
template <class F>
std::exception_ptr
error_of(F && f)
{
  try
  {
    f();
  }
  catch (...)
  {
    return std::current_exception();
  }
  return nullptr;
}
/// The points that @p f's recoverable error names as failed; none when @p f threw nothing or
/// another error.
template <class F>
std::optional<FailedPoints>
failed_in(F && f)
{
  try
  {
    f();
  }
  catch (const Exception & e)
  {
    if (e.recoverable())
      return failed_points(e);
  }
  return std::nullopt;
}
} // namespace

TEST_CASE("viscoplastic: below yield the response is linear elastic", "[models]")
{
  const Model m(stub("viscoplastic"), "model", "cpu");
  TensorMap in = state(50, 0.02);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  in["old_plastic_strain"] = at::randn({50, 6}, gen, f64()) * 4e-5;
  const TensorMap out = m.forward(in);
  const at::Tensor elastic = in.at("strain") - in.at("old_plastic_strain");
  CHECK(close(out.at("stress"), at::matmul(elastic, stiffness(E, nu).t()), 1e-12, 1e-9));
  CHECK(identical(out.at("plastic_strain"), in.at("old_plastic_strain")));
  CHECK(identical(out.at("equivalent_plastic_strain"), in.at("old_equivalent_plastic_strain")));
  // An elastic step's tangent is the elastic stiffness.
  CHECK(close(m.jacobian(in).at("stress").at("strain")[7], stiffness(E, nu), 1e-12, 1e-9));
}

TEST_CASE("viscoplastic: yielding lowers the stress below the elastic trial stress", "[models]")
{
  const Model m(stub("viscoplastic"), "model", "cpu");
  const TensorMap in = state(20);
  const TensorMap out = m.forward(in);
  const at::Tensor trial = at::matmul(in.at("strain"), stiffness(E, nu).t());
  const at::Tensor p = out.at("equivalent_plastic_strain") - in.at("old_equivalent_plastic_strain");
  CHECK((p > 0).all().item<bool>());
  CHECK((out.at("stress").norm(2, 1) < trial.norm(2, 1)).all().item<bool>());
  // The plastic strain is deviatoric and its increment has the equivalent norm dp.
  const at::Tensor ep = out.at("plastic_strain");
  CHECK(close(ep.slice(1, 0, 3).sum(1), at::zeros({20}, f64()), 0, 1e-15));
  CHECK(close(ep.norm(2, 1) * std::sqrt(2.0 / 3.0), p, 1e-10, 1e-15));
}

TEST_CASE("viscoplastic: jacobian equals finite differences of forward", "[models]")
{
  const Model m(stub("viscoplastic"), "model", "cpu");
  const TensorMap in = state(6);
  const DerivMap J = m.jacobian(in);
  for (const std::string of : {"stress", "plastic_strain", "equivalent_plastic_strain"})
    for (const std::string wrt :
         {"strain", "old_plastic_strain", "old_equivalent_plastic_strain", "time_step"})
    {
      INFO(of << ":" << wrt);
      const at::Tensor fd = fd_input(m, in, wrt, of);
      const at::Tensor block = J.at(of).at(wrt);
      REQUIRE(block.sizes() == fd.sizes());
      for (int64_t b = 0; b < block.size(0); ++b)
        CHECK(agree(block[b], fd[b], 1e-5));
    }
  // jvp is J . v, summed over the inputs
  auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
  const TensorMap v{{"strain", at::randn({6, 6}, gen, f64())},
                    {"time_step", at::randn({6}, gen, f64())}};
  const at::Tensor want = (J.at("stress").at("strain") * v.at("strain").unsqueeze(1)).sum(-1) +
                          J.at("stress").at("time_step") * v.at("time_step").unsqueeze(-1);
  CHECK(close(m.jvp(in, v).at("stress"), want, 1e-12, 1e-9));
}

TEST_CASE("viscoplastic: parameter derivatives equal finite differences", "[models]")
{
  Model m(stub("viscoplastic"), "model", "cpu");
  const TensorMap in = state(6);
  const DerivMap P = m.param_jacobian(in);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(4);
  const at::Tensor cot = at::randn({6, 6}, gen, f64());
  const TensorMap adj = m.param_vjp(in, {{"stress", cot}});
  for (const std::string p : {"E", "nu", "sy", "Q", "b", "eta", "n"})
  {
    const std::string name = "model." + p;
    INFO(name);
    const at::Tensor fd = fd_param(m, in, name, "stress");
    CHECK(agree(P.at("stress").at(name), fd, 1e-5));
    CHECK(agree(adj.at(name), (cot * fd).sum(), 1e-5));
    CHECK(agree(P.at("equivalent_plastic_strain").at(name),
                fd_param(m, in, name, "equivalent_plastic_strain"), 1e-5));
  }
}

TEST_CASE("viscoplastic: a large step fails with ConvergenceError; half the step converges",
          "[models]")
{
  const Model m(stub("viscoplastic"), "model", "cpu");
  const TensorMap in = with_failing(state(10), {4});
  try
  {
    m.forward(in);
    FAIL("no error");
  }
  catch (const ConvergenceError & e)
  {
    CHECK(e.recoverable());
    CHECK_THAT(e.what(), ContainsSubstring("model 'model': 1 of 10 points did not converge "
                                           "(worst residual "));
    REQUIRE(e.points());
    CHECK(e.points()->batch == 10);
    CHECK(identical(e.points()->rows, at::tensor({int64_t{4}}, at::kLong)));
  }
  CHECK_THROWS_AS(m.jacobian(in), ConvergenceError);
  CHECK_THROWS_AS(m.param_vjp(in, {}), ConvergenceError);

  TensorMap half = in;
  half["time_step"] = in.at("time_step") / 2;
  const TensorMap out = m.forward(half);
  CHECK(out.at("equivalent_plastic_strain")[4].item<double>() > 0.05);
  // An unbatched time step goes to every point.
  half["time_step"] = at::scalar_tensor(dt_fail / 2, f64());
  CHECK_NOTHROW(m.forward(half));
}

TEMPLATE_TEST_CASE("viscoplastic: dispatched results equal the direct call", "[models][dispatch]",
                   NEML2_ALL_POLICIES)
{
  const Model direct(stub("viscoplastic"), "model", "cpu");
  auto m = TestType::make(stub("viscoplastic"), 7);
  const TensorMap in = state(40);
  const TensorMap got = m.forward(in), want = direct.forward(in);
  for (const auto & [name, t] : want)
  {
    INFO(name);
    if (TestType::exact())
      CHECK(identical(got.at(name), t)); // a point's solve does not depend on its chunk
    else
      CHECK(close(got.at(name), t, 1e-10, 1e-12));
  }
  const DerivMap J = m.jacobian(in), J0 = direct.jacobian(in);
  CHECK(close(J.at("stress").at("strain"), J0.at("stress").at("strain"), 1e-12, 1e-9));
  const TensorMap a = m.param_vjp(in, {{"stress", in.at("strain")}});
  const TensorMap a0 = direct.param_vjp(in, {{"stress", in.at("strain")}});
  CHECK(close(a.at("model.sy"), a0.at("model.sy"), 1e-10, 1e-12));
}

TEMPLATE_TEST_CASE("viscoplastic: one failing chunk throws ConvergenceError; the rest is fine",
                   "[models][dispatch]", NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("viscoplastic"), 10);
  const TensorMap in = with_failing(state(40), {25, 27});
  const at::Tensor before = in.at("strain").clone();
  try
  {
    m.forward(in);
    FAIL("no error");
  }
  catch (const ConvergenceError & e)
  {
    CHECK(e.recoverable());
    // a chunk names its rows and device (cpu, or a GPU under StaticHybrid where one is seen)
    if (!TestType::chunked)
      CHECK_THAT(e.what(), ContainsSubstring("model 'model': 2 of 40 points did not converge "
                                             "(worst residual "));
    else if (fixed_chunks<TestType>)
      CHECK_THAT(e.what(), ContainsSubstring("model 'model': 2 of 10 points did not converge in "
                                             "rows [20, 30) on ") &&
                               ContainsSubstring("(worst residual "));
    else
      CHECK_THAT(e.what(), ContainsSubstring("points did not converge in rows ["));
  }
  CHECK(identical(in.at("strain"), before));

  // Halving the time step converges, and the model is reusable after the error.
  TensorMap half = in;
  half["time_step"] = in.at("time_step") / 2;
  const TensorMap out = m.forward(half);
  const Model direct(stub("viscoplastic"), "model", "cpu");
  CHECK(close(out.at("stress"), direct.forward(half).at("stress"), 1e-12, 1e-9));
  CHECK_NOTHROW(m.forward(state(40)));
}

TEMPLATE_TEST_CASE("viscoplastic: several failing chunks", "[models][dispatch]", NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("viscoplastic"), 10);
  // Rows 3 and 14: the first two chunks, in flight together under an asynchronous policy.
  const TensorMap in = with_failing(state(40), {3, 14});
  const std::exception_ptr thrown = error_of([&] { m.forward(in); });
  REQUIRE(thrown);
  try
  {
    std::rethrow_exception(thrown);
  }
  catch (const AggregateError & e)
  {
    // A chunk whose points failed does not stop the dispatch: both chunks report.
    CHECK(TestType::chunked);
    CHECK(e.recoverable());
    if (fixed_chunks<TestType>)
    {
      REQUIRE(e.errors().size() == 2);
      CHECK_THAT(e.errors()[0]->what(),
                 ContainsSubstring("1 of 10 points did not converge in rows [0, 10)"));
      CHECK_THAT(e.errors()[1]->what(), ContainsSubstring("in rows [10, 20)"));
    }
    for (const auto & sub : e.errors())
      CHECK(dynamic_cast<const ConvergenceError *>(sub.get()));
  }
  catch (const ConvergenceError & e)
  {
    // One call over the whole batch (or an adaptive chunk holding both points) sees both.
    CHECK(e.recoverable());
    if (!TestType::chunked)
      CHECK_THAT(e.what(), ContainsSubstring("2 of 40 points did not converge"));
    else
      CHECK_FALSE(fixed_chunks<TestType>);
  }
  TensorMap half = in;
  half["time_step"] = in.at("time_step") / 2;
  CHECK_NOTHROW(m.forward(half));
}

TEMPLATE_TEST_CASE("viscoplastic: the error names every failed point of the caller's batch",
                   "[models][dispatch]", NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("viscoplastic"), 10);
  const TensorMap in = with_failing(state(40), {3, 14, 15, 37});
  const std::exception_ptr thrown = error_of([&] { m.forward(in); });
  REQUIRE(thrown);
  std::optional<FailedPoints> failed;
  try
  {
    std::rethrow_exception(thrown);
  }
  catch (const Exception & e)
  {
    CHECK(e.recoverable());
    failed = failed_points(e);
    REQUIRE(failed);
    CHECK(failed->batch == 40);
    CHECK(failed->rows.device().is_cpu());
    CHECK(identical(failed->rows, at::tensor({3, 14, 15, 37}, at::kLong)));
    const at::Tensor converged = failed->converged();
    REQUIRE(converged.sizes() == at::IntArrayRef{40});
    CHECK(converged.sum().item<int64_t>() == 36);
    CHECK_FALSE(converged[14].item<bool>());
    CHECK(converged[16].item<bool>());
    // Each failed point's own final residual, above the solver's tolerance.
    REQUIRE(failed->residual.sizes() == at::IntArrayRef{4});
    CHECK(failed->residual.min().item<double>() > 1e-10);
  }
  // A direct call over the same points names the same rows, with the same residuals.
  const Model direct(stub("viscoplastic"), "model", "cpu");
  try
  {
    direct.forward(in);
    FAIL("no error");
  }
  catch (const ConvergenceError & e)
  {
    REQUIRE(e.points());
    CHECK(identical(e.points()->rows, at::tensor({3, 14, 15, 37}, at::kLong)));
    CHECK(close(e.points()->residual, failed->residual, 1e-10, 1e-12));
  }
}

TEMPLATE_TEST_CASE("viscoplastic: the solver settings change at run time on every device",
                   "[models][dispatch][settings]", NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("viscoplastic"), 10);
  // The compiled values of tests/aoti/viscoplastic/model.i's [Solvers/newton].
  REQUIRE(m.solver_settings().size() == 1);
  const SolverSettings compiled = m.solver_settings().at("newton");
  CHECK(compiled.abs_tol == 1e-10);
  CHECK(compiled.rel_tol == 1e-10);
  CHECK(compiled.max_its == 8);

  // Points that need more than 8 updates converge once the cap is raised, and every device
  // solves them as a direct call with the same cap does.
  const TensorMap in = with_failing(state(40), {5, 22});
  const auto failed = failed_in([&] { m.forward(in); });
  REQUIRE(failed);
  CHECK(failed->rows.equal(at::tensor({5, 22}, at::kLong)));
  m.set_solver_settings("newton", {compiled.abs_tol, compiled.rel_tol, 40});
  CHECK(m.solver_settings().at("newton").max_its == 40);
  Model direct(stub("viscoplastic"), "model", "cpu");
  direct.set_solver_settings("newton", {compiled.abs_tol, compiled.rel_tol, 40});
  const TensorMap got = m.forward(in), want = direct.forward(in);
  CHECK(got.at("equivalent_plastic_strain")[5].item<double>() > 0.05);
  for (const auto & [name, t] : want)
    CHECK(close(got.at(name), t, 1e-12, 1e-9));

  // One update is too few for the plastic points of an ordinary step.
  m.set_solver_settings("newton", {compiled.abs_tol, compiled.rel_tol, 1});
  const auto capped = failed_in([&] { m.forward(state(40)); });
  REQUIRE(capped);
  CHECK(capped->rows.numel() > 20);

  // A loose tolerance stops earlier: another result than the compiled one, the same as a
  // direct call with that tolerance.
  const TensorMap plain = state(40);
  m.set_solver_settings("newton", compiled);
  const TensorMap tight = m.forward(plain);
  m.set_solver_settings("newton", {1e-2, 0, compiled.max_its});
  direct.set_solver_settings("newton", {1e-2, 0, compiled.max_its});
  const TensorMap loose = m.forward(plain);
  CHECK_FALSE(close(loose.at("stress"), tight.at("stress"), 1e-12, 1e-9));
  CHECK(close(loose.at("stress"), direct.forward(plain).at("stress"), 1e-12, 1e-9));

  // Bad settings are refused and change nothing.
  CHECK_THROWS_WITH(m.set_solver_settings("newtn", compiled),
                    ContainsSubstring("model 'model': unknown solver 'newtn' (expected "
                                      "solvers: newton)"));
  CHECK_THROWS_WITH(m.set_solver_settings("newton", {-1, 0, 8}),
                    ContainsSubstring("setting 'newton.abs_tol' is -1, expected a finite "
                                      "number >= 0"));
  CHECK_THROWS_WITH(m.set_solver_settings("newton", {0, std::nan(""), 8}),
                    ContainsSubstring("setting 'newton.rel_tol' is nan"));
  CHECK_THROWS_WITH(m.set_solver_settings("newton", {0, 0, 0}),
                    ContainsSubstring("setting 'newton.max_its' is 0, expected an integer >= 1"));
  CHECK(m.solver_settings().at("newton").abs_tol == 1e-2);
  CHECK(close(m.forward(plain).at("stress"), loose.at("stress"), 1e-12, 1e-9));
}

TEST_CASE("thermoelastic: the composed model is thermo-elasticity", "[models]")
{
  // The fixture renames strain, stress, elastic.E and thermal.alpha (its flags.txt).
  Model m(stub("thermoelastic"), "model", "cpu");
  const double alpha = 1.2e-5, T0 = 293.15;
  const at::Tensor eps = strains(8) * 1e-3;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(8);
  const at::Tensor T = at::rand({8}, gen, f64()) * 400 + 200;
  const TensorMap in{{"eps", eps}, {"temperature", T}};
  const at::Tensor C = stiffness(E, nu);
  const at::Tensor I = at::tensor({1.0, 1.0, 1.0, 0.0, 0.0, 0.0}, f64());
  const at::Tensor mech = eps - alpha * (T - T0).unsqueeze(-1) * I;
  CHECK(close(m.forward(in).at("sigma"), at::matmul(mech, C.t()), 1e-12, 1e-8));

  const DerivMap J = m.jacobian(in);
  CHECK(close(J.at("sigma").at("eps"), C)); // batch-independent blocks come back once
  CHECK(close(J.at("sigma").at("temperature"), -alpha * at::matmul(C, I)));
  CHECK(agree(J.at("sigma").at("temperature").expand({8, 6}),
              fd_input(m, in, "temperature", "sigma"), 1e-6));
  const DerivMap P = m.param_jacobian(in);
  for (const std::string p : {"alpha", "thermal.T0", "E", "elastic.nu"})
  {
    INFO(p);
    CHECK(agree(P.at("sigma").at(p).expand({8, 6}), fd_param(m, in, p, "sigma"), 1e-6));
  }
}

namespace
{
/// The keys of a map, in order.
template <class Map>
std::vector<std::string>
keys(const Map & map)
{
  std::vector<std::string> out;
  for (const auto & entry : map)
    out.push_back(entry.first);
  return out;
}
} // namespace

TEMPLATE_TEST_CASE("thermoelastic: renamed inputs, outputs and parameters under every policy",
                   "[models][rename]", NEML2_ALL_POLICIES)
{
  // flags.txt: --rename-input strain:eps --rename-output stress:sigma
  // --rename-parameter elastic.E:E thermal.alpha:alpha (temperature, thermal.T0 and
  // elastic.nu keep their names), and --into forward.
  const Model direct(stub("thermoelastic"), "model", "cpu");
  const Meta & meta = direct.meta();
  REQUIRE(meta.inputs.size() == 2);
  CHECK(meta.inputs[0].name == "temperature");
  CHECK(meta.inputs[0].renamed_from.empty());
  CHECK(meta.inputs[1].name == "eps");
  CHECK(meta.inputs[1].renamed_from == "strain");
  CHECK(meta.inputs[1].original() == "strain");
  CHECK(meta.outputs[0].name == "sigma");
  CHECK(meta.outputs[0].renamed_from == "stress");
  CHECK(meta.find_renamed(meta.parameters, "elastic.E")->name == "E");
  CHECK(!meta.graphs.at(Graph::forward).into.empty()); // the in-place variant is there

  auto m = TestType::make(stub("thermoelastic"), 3);
  const TensorMap in{{"eps", strains(10) * 1e-3},
                     {"temperature", at::linspace(250, 600, 10, f64())}};
  CHECK(keys(m.named_parameters()) ==
        std::vector<std::string>{"E", "alpha", "elastic.nu", "thermal.T0"});

  const TensorMap out = m.forward(in);
  CHECK(keys(out) == std::vector<std::string>{"sigma"});
  CHECK(close(out.at("sigma"), direct.forward(in).at("sigma"), 1e-12, 1e-9));
  // Into a caller's buffer, named by the new name (the cpu runs the in-place variant).
  const at::Tensor buffer = at::full({10, 6}, -7.25, f64());
  TensorMap into{{"sigma", buffer}};
  m.forward(in, into);
  CHECK(into.at("sigma").data_ptr() == buffer.data_ptr());
  CHECK(close(buffer, out.at("sigma"), 1e-12, 1e-9));

  const DerivMap J = m.jacobian(in);
  CHECK(keys(J) == std::vector<std::string>{"sigma"});
  CHECK(keys(J.at("sigma")) == std::vector<std::string>{"eps", "temperature"});
  const DerivMap P = m.param_jacobian(in);
  CHECK(keys(P.at("sigma")) == std::vector<std::string>{"E", "alpha", "elastic.nu", "thermal.T0"});
  const TensorMap a = m.param_vjp(in, {{"sigma", at::ones({10, 6}, f64())}});
  CHECK(keys(a) == std::vector<std::string>{"E", "alpha", "elastic.nu", "thermal.T0"});
  const TensorMap jv = m.jvp(in, {{"eps", at::ones({10, 6}, f64())}});
  CHECK(keys(jv) == std::vector<std::string>{"sigma"});

  // The parameter map is live under its new names: the stress is linear in E.
  m.named_parameters().at("E").mul_(2);
  CHECK(close(m.forward(in).at("sigma"), 2 * out.at("sigma"), 1e-12, 1e-9));
  m.named_parameters().at("E").div_(2);

  // The input file's names are refused, and the message gives the new one.
  CHECK(fatal_message(
            [&] {
              m.forward({{"strain", in.at("eps")}});
            }) ==
        "model 'model': unknown input 'strain' (expected inputs: temperature, eps); 'strain' is "
        "now called 'eps' (neml2-compile --rename-input)");
  CHECK(fatal_message(
            [&] {
              m.param_vjp(in, {{"stress", at::ones({10, 6}, f64())}});
            }) ==
        "model 'model': unknown cotangent 'stress' (expected outputs: sigma); 'stress' is now "
        "called 'sigma' (neml2-compile --rename-output)");
  m.named_parameters()["elastic.E"] = at::scalar_tensor(1.0, f64());
  CHECK(fatal_message([&] { m.forward(in); }) ==
        "model 'model': unknown parameter 'elastic.E' in named_parameters() (promoted "
        "parameters: alpha, thermal.T0, E, elastic.nu); 'elastic.E' is now called 'E' "
        "(neml2-compile --rename-parameter)");
  m.named_parameters().erase("elastic.E");
  CHECK(close(m.forward(in).at("sigma"), out.at("sigma"), 1e-12, 1e-9));
}
