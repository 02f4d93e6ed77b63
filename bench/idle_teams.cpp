// What idle worker lanes cost a short direct CPU call on the calling thread.
//
//   idle_teams STUB [BATCH] [DEVICES]
//
// Times Model::forward of BATCH points (default 16384) on the calling thread, the median of
// 300 calls, three ways in one run: alone; beside a dispatched model whose lanes each ran
// chunks and keep their OpenMP teams (NEML2_IDLE_RELEASE_MS=1000000); and beside the same
// dispatched model with the default release (idle lanes give their teams back after 5 ms).
// A fourth column times what a short circuit pays for taking the lanes' teams back at once
// (AsyncPolicy::release_idle_threads right after every lane ran a parallel region).
// DEVICES (default "cpu"; e.g. "cpu,cuda:0") are the dispatched model's
// (AsyncPolicy<StaticHybrid>, 8 chunks per device over 2^20 points). Rows alternate, three
// rounds, so that drift of the machine shows.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "neml2/aoti.h"

#include "bench_inputs.h"
#include "bench_util.h"

using namespace neml2::aoti;

namespace
{
/// Median microseconds of one direct call, after 20 warm-up calls.
double
direct_us(const Model & direct, const TensorMap & in)
{
  return 1e6 * neml2_bench::median_time([&] { direct.forward(in); }, 20, 300);
}

/// A dispatched model over @p devices whose lanes give their teams back after @p release_ms,
/// after one dispatch of 2^20 points in 8 chunks per device, then 50 ms of rest.
std::unique_ptr<DispatchedModel<AsyncPolicy<StaticHybrid>>>
busy_then_idle(const std::string & stub, const std::vector<std::string> & devices,
               const char * release_ms)
{
  setenv("NEML2_IDLE_RELEASE_MS", release_ms, 1);
  StaticHybrid::Config cfg;
  cfg.devices = devices;
  const int64_t big = int64_t(1) << 20;
  cfg.batch_sizes = {big / int64_t(8 * devices.size())};
  auto m = std::make_unique<DispatchedModel<AsyncPolicy<StaticHybrid>>>(
      stub, "model", std::make_shared<StaticHybrid>(cfg));
  unsetenv("NEML2_IDLE_RELEASE_MS");
  m->forward(neml2_bench::inputs_for(m->meta(), big));
  for (const auto & d : devices)
    if (d.rfind("cuda", 0) == 0)
    {
      neml2_bench::sync_cuda();
      break;
    }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return m;
}

/// Microseconds that AsyncPolicy::release_idle_threads() takes right after every lane of a
/// policy over @p devices ran parallel regions (the median of 9).
double
release_us(const std::vector<std::string> & devices)
{
  setenv("NEML2_IDLE_RELEASE_MS", "1000000", 1); // only the request releases
  StaticHybrid::Config cfg;
  cfg.devices = devices;
  cfg.batch_sizes = {1024};
  AsyncPolicy<StaticHybrid> policy(std::make_shared<StaticHybrid>(cfg));
  unsetenv("NEML2_IDLE_RELEASE_MS");
  const at::Tensor x = at::ones({int64_t(1) << 20}, at::kDouble);
  const int64_t chunks = 16 * int64_t(devices.size());
  std::vector<double> took;
  for (int k = 0; k < 9; ++k)
  {
    policy.execute(1024 * chunks,
                   [&x](std::size_t, std::size_t, int64_t, int64_t) { (void)(x * x); });
    const auto start = std::chrono::steady_clock::now();
    policy.release_idle_threads();
    took.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count());
  }
  return neml2::aoti::detail::median(std::move(took));
}
} // namespace

int
main(int argc, char ** argv)
{
  if (argc < 2)
  {
    std::fprintf(stderr, "usage: %s STUB [BATCH] [DEVICES]\n", argv[0]);
    return 2;
  }
  const std::string stub = argv[1];
  const int64_t batch = argc > 2 ? std::stoll(argv[2]) : 16384;
  const auto devices = neml2_bench::split_list(argc > 3 ? argv[3] : "cpu");
  const Model direct(stub, "model", "cpu");
  const TensorMap in = neml2_bench::inputs_for(direct.meta(), batch);
  std::printf("direct CPU forward of %lld points on the calling thread (median us), beside "
              "idle lanes of {",
              (long long)batch);
  for (std::size_t i = 0; i < devices.size(); ++i)
    std::printf("%s%s", i ? ", " : "", devices[i].c_str());
  std::printf("}\n\n%-6s %10s %16s %18s %20s\n", "round", "alone", "teams kept", "teams released",
              "release on request");
  for (int round = 1; round <= 3; ++round)
  {
    const double alone = direct_us(direct, in);
    double kept = 0, released = 0;
    {
      const auto lanes = busy_then_idle(stub, devices, "1000000");
      kept = direct_us(direct, in);
    }
    {
      const auto lanes = busy_then_idle(stub, devices, "5");
      released = direct_us(direct, in);
    }
    const double request = release_us(devices);
    std::printf("%-6d %10.1f %16.1f %18.1f %20.1f\n", round, alone, kept, released, request);
  }
  return 0;
}
