// AdaptiveHybrid on real models: what only a real dispatch shows (the shared
// test bodies in test_dispatch.cpp run under AsyncAdaptiveCase too).
#include "fixtures.h"

#include <mutex>
#include <thread>

using namespace neml2_test;

namespace
{
AdaptiveHybrid::Config
cpu_config()
{
  AdaptiveHybrid::Config cfg;
  cfg.devices = {"cpu"};
  if (have_cuda())
    cfg.devices.push_back("cuda:0");
  return cfg;
}
} // namespace

TEST_CASE("AdaptiveHybrid through load_model: the policy, the runtime selection, the seed header",
          "[dispatch][adaptive]")
{
  const at::Tensor eps = strains(5000);
  const Model direct(stub("forward_single"), "model", "cpu");
  const at::Tensor want = direct.forward({{"strain", eps}}).at("stress");

  auto cfg = cpu_config();
  cfg.max_chunks = {512};
  auto typed = load_model(stub("forward_single"), "model", std::make_shared<AdaptiveHybrid>(cfg));
  static_assert(std::is_same_v<decltype(typed), DispatchedModel<AsyncPolicy<AdaptiveHybrid>>>,
                "AdaptiveHybrid picks the asynchronous policy");
  CHECK(close(typed.forward({{"strain", eps}}).at("stress"), want, 1e-12, 1e-9));
  CHECK(typed.last_dispatch().chunks >= 10);

  std::shared_ptr<Scheduler> base = std::make_shared<AdaptiveHybrid>(cfg);
  AnyDispatchedModel any = load_model(stub("forward_single"), "model", base);
  CHECK(any.asynchronous());
  CHECK(close(any.forward({{"strain", eps}}).at("stress"), want, 1e-12, 1e-9));
}

TEST_CASE("AdaptiveHybrid learns from the real chunks and keeps it per model and batch size",
          "[dispatch][adaptive]")
{
  auto cfg = cpu_config();
  cfg.max_chunks = {2000};
  auto sched = std::make_shared<AdaptiveHybrid>(cfg);
  auto m = load_model(stub("elastic_promoted"), "model", sched);
  const std::uint64_t client = m.policy().client();
  const TensorMap in{{"strain", strains(20000)}};
  CHECK_FALSE(sched->estimate(client, 20000, 0));
  for (int call = 0; call < 3; ++call)
    m.forward(in);
  const auto e = sched->estimate(client, 20000, 0);
  REQUIRE(e);
  CHECK(e->samples >= 3);
  CHECK(e->seconds_per_point > 0);
  CHECK(e->overhead >= 0);
  CHECK(e->concurrency == 1); // one CPU worker
  CHECK(sched->learned() == 1);
  m.forward({{"strain", strains(5000)}});
  CHECK(sched->learned() == 2);
}

TEST_CASE("AdaptiveHybrid keeps the points in flight within the memory limit",
          "[dispatch][adaptive]")
{
  auto cfg = cpu_config();
  cfg.memory_limits = {3000};
  auto m = load_model(stub("forward_single"), "model", std::make_shared<AdaptiveHybrid>(cfg));
  std::mutex mutex;
  std::vector<int64_t> sizes;
  m.set_chunk_hook(
      [&](const at::Device & d, std::size_t, int64_t begin, int64_t end)
      {
        const std::lock_guard<std::mutex> lock(mutex);
        if (d.is_cpu())
          sizes.push_back(end - begin);
      });
  const at::Tensor eps = strains(40000);
  const at::Tensor s = m.forward({{"strain", eps}}).at("stress");
  CHECK(close(s, at::matmul(eps, stiffness(100, 0.3).t()), 1e-12, 1e-9));
  REQUIRE_FALSE(sizes.empty());
  // No chunk exceeds the limit (the simulator tests check the points in flight).
  for (const auto n : sizes)
    CHECK(n <= 3000);
}

TEST_CASE("models sharing one AdaptiveHybrid dispatch concurrently and stay correct",
          "[dispatch][adaptive]")
{
  auto cfg = cpu_config();
  cfg.max_chunks = {700};
  auto sched = std::make_shared<AdaptiveHybrid>(cfg);
  auto a = load_model(stub("forward_single"), "model", sched);
  auto b = load_model(stub("elastic_promoted"), "model", sched);
  const at::Tensor ea = strains(9000, 1), eb = strains(7000, 2);
  const at::Tensor wa = at::matmul(ea, stiffness(100, 0.3).t());
  const at::Tensor wb = at::matmul(eb, stiffness(100000, 0.25).t());
  bool ok_a = true, ok_b = true;
  std::thread ta(
      [&]
      {
        for (int i = 0; i < 5; ++i)
          ok_a = ok_a && close(a.forward({{"strain", ea}}).at("stress"), wa, 1e-12, 1e-9);
      });
  std::thread tb(
      [&]
      {
        for (int i = 0; i < 5; ++i)
          ok_b = ok_b && close(b.forward({{"strain", eb}}).at("stress"), wb, 1e-12, 1e-8);
      });
  ta.join();
  tb.join();
  CHECK(ok_a);
  CHECK(ok_b);
  CHECK(sched->learned() == 2); // one entry per model (client) and batch size
}
