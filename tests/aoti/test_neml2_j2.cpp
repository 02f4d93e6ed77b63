// The J2 viscoplastic model written from NEML2's blocks (tests/aoti/j2_composed: a
// ComposedModel around an ImplicitUpdate) through the C++ API: it answers as the
// monolithic J2Viscoplasticity of tests/aoti/viscoplastic with the same constants, its
// dispatched results equal the direct call under every policy, and a point that exceeds
// the Newton iteration cap raises ConvergenceError through the dispatcher. Its graphs take
// the longest of all fixtures to compile, so flags.txt keeps only forward and the Jacobian
// (--graphs jacobian; its parameter adjoints are compared with the monolithic model's in
// python/tests/test_composed.py, eagerly), and a left-out graph is a FatalError that says so.
#include "fixtures.h"

using namespace neml2_test;
using Catch::Matchers::ContainsSubstring;

namespace
{
const std::string composed = "j2_composed";

/// Inputs of the composed model: random strain steps of about 2e-3 from the virgin plastic
/// strain, prior equivalent plastic strain in [0, 0.01), time steps in [0.1, 1).
TensorMap
state(int64_t batch, uint64_t seed = 11)
{
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const at::Tensor t_old = at::rand({batch}, gen, f64());
  return {{"strain", at::randn({batch, 6}, gen, f64()) * 2e-3},
          {"plastic_strain~1", at::zeros({batch, 6}, f64())},
          {"equivalent_plastic_strain~1", at::rand({batch}, gen, f64()) * 0.01},
          {"t~1", t_old},
          {"t", t_old + at::rand({batch}, gen, f64()) * 0.9 + 0.1}};
}

/// The same step in the names of the monolithic model (tests/aoti/viscoplastic).
TensorMap
monolithic_state(const TensorMap & in)
{
  return {{"strain", in.at("strain")},
          {"old_plastic_strain", in.at("plastic_strain~1")},
          {"old_equivalent_plastic_strain", in.at("equivalent_plastic_strain~1")},
          {"time_step", in.at("t") - in.at("t~1")}};
}

/// Make the points @p rows of @p in take a uniaxial strain step of 0.1 over 0.1 s from the
/// virgin state: 20 Newton updates, above the fixture's cap of 17.
TensorMap
with_failing(TensorMap in, const std::vector<int64_t> & rows)
{
  for (const std::string name : {"strain", "equivalent_plastic_strain~1", "t"})
    in[name] = in[name].clone();
  for (const int64_t r : rows)
  {
    in["strain"][r].zero_();
    in["strain"][r][0] = 0.1;
    in["equivalent_plastic_strain~1"][r] = 0.0;
    in["t"][r] = in["t~1"][r] + 0.1;
  }
  return in;
}

const std::vector<std::string> outputs{"equivalent_plastic_strain", "plastic_strain", "stress"};
const std::vector<std::string> inputs{"strain", "plastic_strain~1", "equivalent_plastic_strain~1",
                                      "t", "t~1"};
} // namespace

TEST_CASE("j2_composed: answers as the monolithic J2 viscoplastic model", "[j2]")
{
  const Model m(stub(composed), "model", "cpu");
  const Model mono(stub("viscoplastic"), "model", "cpu");
  const TensorMap in = state(30);
  const TensorMap out = m.forward(in), want = mono.forward(monolithic_state(in));
  // every point yields
  CHECK((out.at("equivalent_plastic_strain") > in.at("equivalent_plastic_strain~1"))
            .all()
            .item<bool>());
  for (const auto & name : outputs)
  {
    INFO(name);
    CHECK(agree(out.at(name), want.at(name), 1e-8));
  }
  // the consistent tangents: the implicit function theorem on either formulation
  const DerivMap J = m.jacobian(in), J0 = mono.jacobian(monolithic_state(in));
  CHECK(agree(J.at("stress").at("strain"), J0.at("stress").at("strain"), 1e-7));
  CHECK(agree(J.at("stress").at("t"), J0.at("stress").at("time_step"), 1e-7));
  CHECK(agree(J.at("stress").at("t~1"), -J0.at("stress").at("time_step"), 1e-7));
  CHECK(agree(J.at("equivalent_plastic_strain").at("equivalent_plastic_strain~1"),
              J0.at("equivalent_plastic_strain").at("old_equivalent_plastic_strain"), 1e-7));
}

TEST_CASE("j2_composed: the graphs --graphs left out are a FatalError that says so", "[j2]")
{
  const Model m(stub(composed), "model", "cpu");
  const TensorMap in = state(3);
  CHECK_THROWS_WITH(m.jvp(in, in),
                    ContainsSubstring("graph 'jvp' was not compiled: neml2-compile --graphs "
                                      "left it out: add jvp to --graphs"));
  CHECK_THROWS_WITH(m.param_jacobian(in),
                    ContainsSubstring("graph 'param_jacobian' was not compiled: neml2-compile "
                                      "--graphs left it out"));
  CHECK_THROWS_WITH(m.param_vjp(in, {}),
                    ContainsSubstring("graph 'param_vjp' was not compiled: neml2-compile "
                                      "--graphs left it out"));
}

TEST_CASE("j2_composed: a point over the iteration cap raises ConvergenceError", "[j2]")
{
  const Model m(stub(composed), "model", "cpu");
  const TensorMap in = with_failing(state(10), {4});
  try
  {
    m.forward(in);
    FAIL("no error");
  }
  catch (const ConvergenceError & e)
  {
    CHECK(e.recoverable());
    CHECK_THAT(e.what(), ContainsSubstring("model 'model': 1 of 10 points did not converge"));
  }
  CHECK_THROWS_AS(m.jacobian(in), ConvergenceError);
  CHECK_NOTHROW(m.forward(state(10)));
}

TEMPLATE_TEST_CASE("j2_composed: dispatched results equal the direct call", "[j2][dispatch]",
                   NEML2_ALL_POLICIES)
{
  const Model direct(stub(composed), "model", "cpu");
  auto m = TestType::make(stub(composed), 7);
  const TensorMap in = state(40);

  const TensorMap got = m.forward(in), want = direct.forward(in);
  REQUIRE(got.size() == outputs.size());
  for (const auto & name : outputs)
  {
    INFO(name);
    if (TestType::exact())
      CHECK(identical(got.at(name), want.at(name))); // a point's solve ignores its chunk
    else
      CHECK(close(got.at(name), want.at(name), 1e-10, 1e-12));
  }

  const DerivMap J = m.jacobian(in), J0 = direct.jacobian(in);
  for (const auto & of : outputs)
    for (const auto & wrt : inputs)
    {
      INFO(of << ":" << wrt);
      if (TestType::exact())
        CHECK(identical(J.at(of).at(wrt), J0.at(of).at(wrt)));
      else
        CHECK(close(J.at(of).at(wrt), J0.at(of).at(wrt), 1e-10, 1e-9));
    }
}

TEMPLATE_TEST_CASE("j2_composed: a failing chunk throws ConvergenceError; the model is reusable",
                   "[j2][dispatch]", NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub(composed), 10);
  const TensorMap in = with_failing(state(40), {25});
  const at::Tensor before = in.at("strain").clone();
  try
  {
    m.forward(in);
    FAIL("no error");
  }
  catch (const ConvergenceError & e)
  {
    CHECK(e.recoverable());
    CHECK_THAT(e.what(), ContainsSubstring("1 of "));
    CHECK_THAT(e.what(), ContainsSubstring("points did not converge"));
  }
  CHECK(identical(in.at("strain"), before));
  const Model direct(stub(composed), "model", "cpu");
  const TensorMap good = state(40);
  CHECK(close(m.forward(good).at("stress"), direct.forward(good).at("stress"), 1e-12, 1e-9));
}
