// The single-crystal plasticity model (tests/aoti/crystal/model.i: an implicit update of elastic
// strain, slip hardening and orientation over 12 slip systems) dispatched under every policy,
// equal to one direct call. Its fixture compiles the forward graph only (flags.txt): the
// Newton loop of this model takes minutes to compile per graph.
#include "fixtures.h"

using namespace neml2_test;

namespace
{
/// A loading step from rest: random deformation rate and spin of up to 5e-4 per unit time, the
/// old state zero (an unrotated, unhardened crystal), a time step of one. (At twice that, one
/// point in seven takes Newton from rest past the knee of the n = 9 slip rule and does not
/// converge, eagerly either.)
TensorMap
crystal_inputs(const Meta & meta, int64_t batch)
{
  auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
  TensorMap in;
  for (const auto & v : meta.inputs)
  {
    std::vector<int64_t> shape{batch};
    shape.insert(shape.end(), v.shape.begin(), v.shape.end());
    if (v.name == "t")
      in[v.name] = at::ones(shape, f64());
    else if (v.name.size() > 2 && v.name.compare(v.name.size() - 2, 2, "~1") == 0)
      in[v.name] = at::zeros(shape, f64());
    else
      in[v.name] = (at::rand(shape, gen, f64()) - 0.5) * 1e-3;
  }
  return in;
}
} // namespace

TEMPLATE_TEST_CASE("crystal plasticity dispatches equal to one direct call", "[crystal]",
                   NEML2_ALL_POLICIES)
{
  const Model direct(stub("crystal"), "model", "cpu");
  const int64_t batch = 300;
  const TensorMap in = crystal_inputs(direct.meta(), batch);
  const TensorMap want = direct.forward(in);
  for (const int64_t chunk : {int64_t(64), int64_t(0)})
  {
    INFO("chunk " << chunk);
    auto m = TestType::make(stub("crystal"), chunk);
    const TensorMap got = m.forward(in);
    REQUIRE(got.size() == want.size());
    for (const auto & [name, w] : want)
    {
      INFO(name);
      // Newton iterates the whole chunk until its last point converges, so a point's
      // answer depends on its chunk to within the solver's tolerance.
      CHECK(agree(got.at(name), w, 1e-9));
    }
  }
}
