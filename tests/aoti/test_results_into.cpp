// Results into caller-owned buffers, and the model's own result buffers reused, under every
// execution policy.
#include "fixtures.h"

#include <vector>

using namespace neml2_test;

namespace
{
/// A host array of @p n doubles, set to a value no result has, and a tensor over it.
struct HostArray
{
  explicit HostArray(std::vector<int64_t> shape)
  {
    int64_t n = 1;
    for (const auto s : shape)
      n *= s;
    data.assign(std::size_t(n), -7.25);
    tensor = at::from_blob(data.data(), shape, f64());
  }
  std::vector<double> data;
  at::Tensor tensor;
};
} // namespace

TEMPLATE_TEST_CASE("results into caller-owned buffers equal the returned results", "[results]",
                   NEML2_ALL_POLICIES)
{
  const Model direct(stub("elastic_promoted"), "model", "cpu");
  for (const int64_t batch : {1, 7, 1000})
    for (const int64_t chunk : {int64_t(3), int64_t(0)})
    {
      INFO("batch " << batch << " chunk " << chunk);
      auto m = TestType::make(stub("elastic_promoted"), chunk);
      const TensorMap in{{"strain", strains(batch)}};
      const TensorMap v{{"strain", strains(batch, 3)}};
      const TensorMap c{{"stress", strains(batch, 5)}};

      HostArray stress({batch, 6});
      TensorMap out{{"stress", stress.tensor}};
      m.forward(in, out);
      REQUIRE(out.size() == 1);
      CHECK(out.at("stress").data_ptr() == stress.data.data()); // the caller's own buffer
      check_same<TestType>(stress.tensor, direct.forward(in).at("stress"));

      HostArray tangent({batch, 6});
      TensorMap jv{{"stress", tangent.tensor}};
      m.jvp(in, v, jv);
      check_same<TestType>(tangent.tensor, direct.jvp(in, v).at("stress"));

      // The batch-independent block is unbatched, into a buffer of its own shape.
      HostArray block({6, 6});
      DerivMap J{{"stress", {{"strain", block.tensor}}}};
      m.jacobian(in, J);
      check_same<TestType>(block.tensor, direct.jacobian(in).at("stress").at("strain"));

      // A buffer for one parameter block; the other block is inserted into the map.
      const auto pj0 = direct.param_jacobian(in);
      HostArray dE(pj0.at("stress").at("model.E").sizes().vec());
      DerivMap pj{{"stress", {{"model.E", dE.tensor}}}};
      m.param_jacobian(in, pj);
      check_same<TestType>(dE.tensor, pj0.at("stress").at("model.E"));
      REQUIRE(pj.at("stress").count("model.nu") == 1);
      check_same<TestType>(pj.at("stress").at("model.nu"), pj0.at("stress").at("model.nu"));

      // Adjoints are summed over chunks: equal to round-off.
      HostArray aE({});
      TensorMap adj{{"model.E", aE.tensor}};
      m.param_vjp(in, c, adj);
      CHECK(close(aE.tensor, direct.param_vjp(in, c).at("model.E"), 1e-12, 1e-9));
      CHECK(adj.count("model.nu") == 1);
    }
}

TEMPLATE_TEST_CASE("unbatched inputs write into unbatched buffers", "[results]", NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("elastic_promoted"), 4);
  const at::Tensor eps = strains(1).squeeze(0);
  HostArray stress({6});
  TensorMap out{{"stress", stress.tensor}};
  m.forward({{"strain", eps}}, out);
  CHECK(close(stress.tensor, at::matmul(stiffness(100000, 0.25), eps), 1e-12, 1e-8));
}

TEMPLATE_TEST_CASE("a wrong buffer is a FatalError naming it, before anything runs",
                   "[results][errors]", NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("elastic_promoted"), 3);
  const at::Tensor eps = strains(10);
  const TensorMap in{{"strain", eps}};
  const auto refused = [&](TensorMap out, const std::string & message)
  {
    INFO(message);
    const auto before = out;
    std::vector<at::Tensor> copies;
    for (const auto & [k, t] : out)
      copies.push_back(t.defined() && t.device().is_cpu() ? t.clone() : t);
    CHECK(fatal_message([&] { m.forward(in, out); }) == message);
    CHECK(out.size() == before.size()); // the map gained nothing
    std::size_t k = 0;
    for (const auto & [name, t] : out)
    {
      if (t.defined() && t.device().is_cpu())
        CHECK(identical(t, copies[k])); // and no buffer was written
      ++k;
    }
  };
  const std::string head = "model 'model': results of 'forward': ";
  refused({{"stress", at::zeros({10, 3}, f64())}},
          head + "the buffer for 'stress' has shape (10, 3), expected (10, 6)");
  refused({{"stress", at::zeros({10, 6}, at::kFloat)}},
          head + "the buffer for 'stress' has dtype Float, expected Double");
  refused({{"stress", at::zeros({10, 6}, f64().device(at::kMeta))}},
          head + "the buffer for 'stress' is on meta, expected cpu (where the inputs are)");
  refused({{"stress", at::Tensor()}}, head + "the buffer for 'stress' is an undefined tensor");
  refused({{"strain", at::zeros({10, 6}, f64())}},
          head + "no result 'strain' (the graph returns 'stress')");
  refused({{"stress", at::zeros({6}, f64()).expand({10, 6})}},
          head + "the buffer for 'stress' has elements that share memory (an expanded tensor?)");
  refused({{"stress", eps}},
          head + "the buffer for 'stress' overlaps the memory of argument 'strain'");
  DerivMap blocks{{"stress", {{"model.E", at::zeros({6, 6}, f64())}}}};
  CHECK(fatal_message([&] { m.jacobian(in, blocks); }) ==
        "model 'model': results of 'jacobian': no result 'stress'/'model.E' (the graph returns "
        "'stress'/'strain')");
  // The model is ready for the next call.
  HostArray stress({10, 6});
  TensorMap out{{"stress", stress.tensor}};
  m.forward(in, out);
  CHECK(close(stress.tensor, m.forward(in).at("stress")));
}

TEMPLATE_TEST_CASE("a result the caller holds is never overwritten; a dropped one is reused",
                   "[results]", NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("elastic_promoted"), 100);
  const TensorMap a{{"strain", strains(1000, 1)}}, b{{"strain", strains(1000, 2)}};
  const at::Tensor held = m.forward(a).at("stress");
  const at::Tensor want = held.clone();
  const at::Tensor other = m.forward(b).at("stress");
  CHECK(identical(held, want));
  CHECK(held.data_ptr() != other.data_ptr());
  CHECK(!identical(other, want));
  // Dropped before the next call: a policy that gathers chunks on the host writes the next
  // result into the same memory (a whole-batch call returns the graph's own result).
  const void * where = nullptr;
  {
    const at::Tensor dropped = m.forward(a).at("stress");
    where = dropped.data_ptr();
  }
  const at::Tensor again = m.forward(b).at("stress");
  const bool gathered = !m.last_dispatch().short_circuit;
  if (gathered)
    CHECK(again.data_ptr() == where);
  // A view keeps the result held too.
  const at::Tensor row = again.slice(0, 0, 1).clone();
  const at::Tensor view = again.slice(0, 0, 1);
  const at::Tensor next = m.forward(a).at("stress");
  CHECK(identical(view, row));
  CHECK(next.data_ptr() != again.data_ptr());
  // After release_buffers the model keeps nothing: the next result is new memory.
  m.release_buffers();
  check_same<TestType>(m.forward(b).at("stress"), again); // GPU chunks: to round-off
}

TEST_CASE("a graph's in-place variant stores its per-point returns in the given buffers",
          "[results]")
{
  // elastic_promoted is compiled with --into forward.
  const Model m(stub("elastic_promoted"), "model", "cpu");
  CHECK(m.writes_into(Graph::forward));
  CHECK_FALSE(m.writes_into(Graph::param_jacobian)); // not asked for
  CHECK_FALSE(m.writes_into(Graph::jvp));
  CHECK_FALSE(m.writes_into(Graph::jacobian));
  const int64_t batch = 9;
  const TensorMap in{{"strain", strains(batch)}};
  {
    const auto call = neml2::aoti::detail::prepare(m.meta(), Graph::forward, in, nullptr);
    const auto plain = m.run(call, 2, 7);
    std::vector<at::Tensor> buffers;
    for (const auto slot : m.written_slots(*call.spec))
      buffers.push_back(at::full_like(plain[slot], -7.25));
    REQUIRE_FALSE(buffers.empty());
    const auto stored = m.run(call, 2, 7, &buffers);
    const auto slots = m.written_slots(*call.spec);
    for (std::size_t k = 0; k < slots.size(); ++k)
    {
      CHECK(stored[slots[k]].data_ptr() == buffers[k].data_ptr());
      CHECK(at::equal(buffers[k], plain[slots[k]]));
    }
  }
}
