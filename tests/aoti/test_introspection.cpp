// Introspection: the names and shapes a host sizes its arrays from, and the promoted
// parameters as held now, on every handle.
#include "fixtures.h"

using namespace neml2_test;
using Catch::Matchers::ContainsSubstring;

namespace
{
std::vector<std::string>
names_of(const std::vector<VariableSpec> & vars)
{
  std::vector<std::string> out;
  for (const auto & v : vars)
    out.push_back(v.name);
  return out;
}
} // namespace

TEST_CASE("introspection: a Model lists its inputs, outputs and parameters", "[introspection]")
{
  Model direct(stub("elastic_promoted"), "model", "cpu");
  REQUIRE(direct.inputs().size() == 1);
  CHECK(direct.inputs()[0].name == "strain");
  CHECK(direct.inputs()[0].shape == std::vector<int64_t>{6});
  CHECK(names_of(direct.outputs()) == std::vector<std::string>{"stress"});
  const auto params = direct.parameters();
  REQUIRE(params.size() == 2);
  CHECK(params[0].name == "model.E");
  CHECK(params[1].name == "model.nu");
  for (const auto & p : params)
  {
    CHECK(p.shape.empty());
    CHECK(p.device == at::Device(at::kCPU));
    CHECK(p.dtype == at::kDouble);
  }
  // sub-batch axes come first in the shape, and are named
  const Model grains(stub("vocabulary"), "model", "cpu");
  CHECK(grains.inputs()[0].shape == std::vector<int64_t>{3, 6});
  CHECK(grains.inputs()[0].sub_batch == std::vector<int64_t>{3});
  CHECK(grains.parameters().empty());
}

TEMPLATE_TEST_CASE("introspection: every handle describes the same boundary", "[introspection]",
                   NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("elastic_promoted"), 4);
  const Model direct(stub("elastic_promoted"), "model", "cpu");
  CHECK(names_of(m.inputs()) == names_of(direct.inputs()));
  CHECK(m.inputs()[0].shape == direct.inputs()[0].shape);
  CHECK(names_of(m.outputs()) == names_of(direct.outputs()));
  CHECK(m.outputs()[0].shape == std::vector<int64_t>{6});
  const auto params = m.parameters();
  REQUIRE(params.size() == 2);
  CHECK(params[0].name == "model.E");
  CHECK(params[1].name == "model.nu");
  CHECK(params[0].shape.empty());
  CHECK(params[0].dtype == at::kDouble);
  CHECK(params[0].device == at::Device(at::kCPU)); // the map the user holds

  // a host array sized from them is accepted as is
  const int64_t batch = 5;
  std::vector<int64_t> shape{batch};
  shape.insert(shape.end(), m.inputs()[0].shape.begin(), m.inputs()[0].shape.end());
  const TensorMap in{{m.inputs()[0].name, 1e-3 * at::ones(shape, f64())}};
  CHECK(m.forward(in).at(m.outputs()[0].name).size(0) == batch);

  // a parameter replaced by one a call refuses: parameters() refuses it the same way
  m.named_parameters()["model.E"] = at::full({2, 2}, 1e5, f64());
  const std::string refused = fatal_message([&] { m.parameters(); });
  CHECK_THAT(refused, ContainsSubstring("parameter 'model.E' must stay a tensor of shape ()"));
  CHECK(refused == fatal_message([&] { m.forward(in); }));
  m.named_parameters()["model.E"] = at::full({}, 2e5, f64());
  CHECK(m.parameters()[0].shape.empty());
}
