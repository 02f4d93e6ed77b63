// AdaptiveHybrid over the CPU and a GPU: a small host batch, once both ways are timed, runs
// as one direct call on the CPU; a batch on the GPU runs there whole at once; a large batch
// stays spread. Every call gives the CPU model's results.
#include "../aoti/fixtures.h"

using namespace neml2_test;

TEST_CASE("AdaptiveHybrid on cpu and cuda:0 runs a batch whole where that was timed faster",
          "[cuda][adaptive]")
{
  if (!have_cuda())
    SKIP("no CUDA device is visible");
  const std::string s = stub("forward_single");
  const Model direct(s, "model", "cpu");
  AdaptiveHybrid::Config cfg;
  cfg.devices = {"cpu", "cuda:0"};
  auto sched = std::make_shared<AdaptiveHybrid>(cfg);
  auto m = load_model(s, "model", sched);
  const std::uint64_t client = m.policy().client();
  const at::Device host(at::kCPU), gpu("cuda:0");

  // 2000 points take one direct call on the CPU microseconds, less than one GPU round trip
  // or one hand-off to a worker: after the spread dispatches and the direct trials, direct.
  const at::Tensor few = strains(2000);
  const at::Tensor want_few = direct.forward({{"strain", few}}).at("stress");
  CHECK_FALSE(sched->short_circuit(client, 2000, host)); // nothing timed yet
  for (int call = 0; call < 12; ++call)
    CHECK(close(m.forward({{"strain", few}}).at("stress"), want_few, 1e-12, 1e-9));
  CHECK(sched->short_circuit(client, 2000, host) == std::optional<std::size_t>(0));
  CHECK(m.last_dispatch().short_circuit);
  CHECK(m.last_dispatch().chunks == 0);

  // The same batch size with its inputs on the GPU: one direct call there, no copies, and
  // the results stay on the GPU.
  const at::Tensor on_gpu = few.to(gpu);
  const at::Tensor out = m.forward({{"strain", on_gpu}}).at("stress");
  CHECK(m.last_dispatch().short_circuit);
  CHECK(out.device() == gpu);
  CHECK(close(out.cpu(), want_few, 1e-12, 1e-9));

  // 2^20 host points pay for both devices: spread, after at most one direct trial.
  const int64_t many = int64_t(1) << 20;
  const at::Tensor big = strains(many);
  const at::Tensor want_big = direct.forward({{"strain", big}}).at("stress");
  for (int call = 0; call < 10; ++call)
    CHECK(close(m.forward({{"strain", big}}).at("stress"), want_big, 1e-12, 1e-9));
  CHECK_FALSE(m.last_dispatch().short_circuit);
  CHECK(m.last_dispatch().device_chunks.at(1) > 0);
  CHECK_FALSE(sched->short_circuit(client, many, host));
}
