// tests/aoti/vocabulary: a compiled model with a sub-batched input (one strain per grain),
// tables from [Tensors] and one variable of each other tensor type (R2, WR2, MRP, Vec, SSR4,
// MillerIndex), dispatched under every policy.
#include "fixtures.h"

using namespace neml2_test;

namespace
{
constexpr int64_t grains = 3;

TensorMap
vocabulary_inputs(int64_t batch, uint64_t seed = 11)
{
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return {{"grain_strain", 1e-2 * at::randn({batch, grains, 6}, gen, f64())},
          {"macro_strain", 1e-2 * at::randn({batch, 6}, gen, f64())},
          {"velocity_gradient", at::randn({batch, 3, 3}, gen, f64())},
          {"orientation", 0.3 * at::randn({batch, 3}, gen, f64())},
          {"velocity", at::randn({batch, 3}, gen, f64())},
          {"stiffness", at::randn({batch, 6, 6}, gen, f64())},
          {"plane", at::randn({batch, 3}, gen, f64())}};
}
} // namespace

TEST_CASE("vocabulary: the metadata declares the sub-batch axes", "[models][sub_batch]")
{
  const Model direct(stub("vocabulary"), "model", "cpu");
  const auto & inputs = direct.meta().inputs;
  REQUIRE(inputs.size() == 7);
  CHECK(inputs[0].name == "grain_strain");
  CHECK(inputs[0].shape == std::vector<int64_t>{grains, 6});
  CHECK(inputs[0].sub_batch == std::vector<int64_t>{grains});
  CHECK(inputs[1].sub_batch.empty());
  const auto & outputs = direct.meta().outputs;
  REQUIRE(outputs.size() == 9);
  CHECK(outputs[0].name == "shifted_strain");
  CHECK(outputs[0].sub_batch == std::vector<int64_t>{grains});
}

TEMPLATE_TEST_CASE("vocabulary: dispatched results equal the direct call", "[models][dispatch]",
                   NEML2_ALL_POLICIES)
{
  const Model direct(stub("vocabulary"), "model", "cpu");
  for (const int64_t batch : {1, 7, 40})
  {
    INFO("batch " << batch);
    auto m = TestType::make(stub("vocabulary"), 3);
    const TensorMap in = vocabulary_inputs(batch);
    const TensorMap got = m.forward(in), want = direct.forward(in);
    REQUIRE(got.size() == 9);
    CHECK(got.at("shifted_strain").sizes() == at::IntArrayRef({batch, grains, 6}));
    CHECK(got.at("scale").sizes() == at::IntArrayRef({batch}));
    CHECK(got.at("rotation").sizes() == at::IntArrayRef({batch, 3, 3}));
    CHECK(got.at("vy").sizes() == at::IntArrayRef({batch}));
    CHECK(got.at("stiffness_copy").sizes() == at::IntArrayRef({batch, 6, 6}));
    CHECK(got.at("slip_plane").sizes() == at::IntArrayRef({batch, 3}));
    for (const auto & [name, t] : want)
    {
      INFO(name);
      check_same<TestType>(got.at(name), t);
    }
    // jvp along a tangent that differs per grain
    const TensorMap v = vocabulary_inputs(batch, 5);
    const TensorMap jvp = m.jvp(in, v), jvp0 = direct.jvp(in, v);
    for (const auto & [name, t] : jvp0)
    {
      INFO("jvp " << name);
      check_same<TestType>(jvp.at(name), t);
    }
    // the full Jacobian of a per-grain output: block-diagonal over the grains
    const DerivMap J = m.jacobian(in), J0 = direct.jacobian(in);
    const at::Tensor block = J.at("shifted_strain").at("grain_strain");
    CHECK(block.sizes() == at::IntArrayRef({batch, grains, 6, grains, 6}));
    check_same<TestType>(block, J0.at("shifted_strain").at("grain_strain"));
    check_same<TestType>(J.at("scale").at("grain_strain"), J0.at("scale").at("grain_strain"));
    check_same<TestType>(J.at("rotation").at("orientation"), J0.at("rotation").at("orientation"));
    check_same<TestType>(J.at("vz").at("velocity"), J0.at("vz").at("velocity"));
    CHECK(J.at("stiffness_copy").at("stiffness").sizes() == at::IntArrayRef({batch, 6, 6, 6, 6}));
    check_same<TestType>(J.at("stiffness_copy").at("stiffness"),
                         J0.at("stiffness_copy").at("stiffness"));
    check_same<TestType>(J.at("slip_plane").at("plane"), J0.at("slip_plane").at("plane"));
  }
}

TEMPLATE_TEST_CASE("vocabulary: a wrong sub-batch shape names the sub-batch axes",
                   "[models][sub_batch]", NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("vocabulary"), 3);
  TensorMap in = vocabulary_inputs(5);
  in["grain_strain"] = at::zeros({5, grains + 1, 6}, f64());
  using Catch::Matchers::ContainsSubstring;
  CHECK_THAT(fatal_message([&] { m.forward(in); }),
             ContainsSubstring("input 'grain_strain' has shape (5, 4, 6), expected (3, 6) or "
                               "(B, 3, 6), of which (3,) are sub-batch axes"));
  // the model stays usable
  CHECK(m.forward(vocabulary_inputs(5)).at("scale").sizes() == at::IntArrayRef({5}));
}
