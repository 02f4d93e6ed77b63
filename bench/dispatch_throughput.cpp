// Side-by-side dispatch benchmarks (DESIGN.md section 6): P1 overhead, P2 CPU chunking,
// P3 GPU pipeline vs the pinned copy bound, P4 hybrid vs the sum of single devices.
// Every ratio compares runs taken in this one process. With a GPU, P4 also sweeps the GPU
// lanes beside the CPU and the threads each lane stages with.
//
//   dispatch_throughput STUB [BATCH] [JSON_OUT]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <c10/core/impl/VirtualGuardImpl.h>

#include "neml2/aoti.h"

#include "bench_util.h"

using namespace neml2::aoti;

namespace
{
using neml2_bench::sync_cuda;

/// Median wall time of @p reps calls after one warm-up call, in seconds.
double
median_time(const std::function<void()> & f, int reps)
{
  return neml2_bench::median_time(f, 1, reps);
}

struct Row
{
  std::string id, what;
  double value;
  std::string unit;
};
} // namespace

int
main(int argc, char ** argv)
{
  if (argc < 2)
  {
    std::fprintf(stderr, "usage: %s STUB [BATCH] [JSON_OUT]\n", argv[0]);
    return 2;
  }
  const std::string stub = argv[1];
  const int64_t B = argc > 2 ? std::stoll(argv[2]) : (int64_t(1) << 20);
  const bool gpu = neml2::aoti::devices().size() > 1;
  std::vector<Row> rows;
  const auto add = [&](std::string id, std::string what, double v, std::string unit)
  {
    std::printf("| %-4s | %-58s | %12.4g | %-8s |\n", id.c_str(), what.c_str(), v, unit.c_str());
    std::fflush(stdout);
    rows.push_back({std::move(id), std::move(what), v, std::move(unit)});
  };
  std::printf("batch %lld, threads %d, gpu %s\n\n", (long long)B, at::get_num_threads(),
              gpu ? "yes" : "no");
  std::printf("| id   | measurement                                                | value        "
              "| unit     |\n");
  std::printf("|------|------------------------------------------------------------|--------------|"
              "----------|\n");

  // P1: per-call overhead at B = 1 over a direct Model call.
  {
    const TensorMap one{{"strain", at::rand({1, 6}, at::kDouble)}};
    const Model direct(stub, "model", "cpu");
    auto pass = load_model(stub, "model");
    auto shorted = load_model(stub, "model", std::make_shared<Simple>(Simple::Config{"cpu", 0}));
    // The raw AOTI call the runtime wraps (forward_single bakes its parameters: one argument).
    torch::inductor::AOTIModelPackageLoader raw(
        direct.meta().graphs.at(Graph::forward).file.string());
    const std::vector<at::Tensor> raw_args{one.at("strain")};
    const int n = 20000;
    const auto per_call = [&](const std::function<void()> & f)
    {
      return median_time(
                 [&]
                 {
                   for (int i = 0; i < n; ++i)
                     f();
                 },
                 5) /
             n * 1e6;
    };
    const double t_direct = per_call([&] { direct.forward(one); });
    const double t_pass = per_call([&] { pass.forward(one); });
    const double t_short = per_call([&] { shorted.forward(one); });
    const double t_raw = per_call([&] { raw.run(raw_args); });
    add("P1", "raw AOTIModelPackageLoader::run, B=1", t_raw, "us/call");
    add("P1", "Model::forward overhead over the raw call", t_direct - t_raw, "us/call");
    add("P1", "pass-through overhead (load_model(path, name))", t_pass - t_direct, "us/call");
    add("P1", "short-circuit overhead (Simple{cpu, 0})", t_short - t_direct, "us/call");
  }

  const TensorMap in{{"strain", at::rand({B, 6}, at::kDouble) * 1e-3}};
  const double mpts = double(B) / 1e6;

  // P2: chunked on the CPU vs unchunked.
  auto cpu_whole = load_model(stub, "model");
  const double t_cpu = median_time([&] { cpu_whole.forward(in); }, 7);
  auto cpu_chunked =
      load_model(stub, "model", std::make_shared<Simple>(Simple::Config{"cpu", B / 16}));
  const double t_cpu16 = median_time([&] { cpu_chunked.forward(in); }, 7);
  add("P2", "CPU unchunked", mpts / t_cpu, "Mpts/s");
  add("P2", "CPU Simple{cpu, B/16}", mpts / t_cpu16, "Mpts/s");
  add("P2", "ratio chunked / unchunked (target >= 0.95)", t_cpu / t_cpu16, "");

  // P2, caller-owned: the results into one buffer the caller allocated once (a host code's
  // array), against the CPU memory bound of the same bytes: a plain copy of an input-sized
  // tensor into a reused result-sized one (48 B read and 48 B written per point here).
  {
    const auto & out_var = cpu_whole.meta().outputs.front();
    std::vector<int64_t> shape{B};
    shape.insert(shape.end(), out_var.shape.begin(), out_var.shape.end());
    at::Tensor buffer = at::zeros(shape, at::kDouble); // touched once, as a host array is
    const at::Tensor source = at::rand(shape, at::kDouble);
    const double t_copy = median_time([&] { buffer.copy_(source); }, 7);
    add("P2", "CPU copy bound: copy_ of the same bytes, reused result", mpts / t_copy, "Mpts/s");
    TensorMap results{{out_var.name, buffer}};
    const double t_into_whole = median_time([&] { cpu_whole.forward(in, results); }, 7);
    add("P2", "CPU unchunked, into a caller-owned buffer", mpts / t_into_whole, "Mpts/s");
    double best = 0;
    std::vector<int64_t> measured;
    for (const int64_t chunk : {B / 16, B / 64, int64_t(1) << 16, int64_t(1) << 14})
    {
      if (chunk <= 0 || chunk > B ||
          std::find(measured.begin(), measured.end(), chunk) != measured.end())
        continue;
      measured.push_back(chunk);
      auto m = load_model(stub, "model", std::make_shared<Simple>(Simple::Config{"cpu", chunk}));
      const double t = median_time([&] { m.forward(in, results); }, 7);
      best = std::max(best, mpts / t);
      add("P2", "CPU Simple{cpu, " + std::to_string(chunk) + "}, into a caller-owned buffer",
          mpts / t, "Mpts/s");
    }
    add("P2", "best caller-owned / copy bound (target >= 0.8)", best * t_copy / mpts, "");
    add("P2", "best caller-owned / CPU unchunked (target >= 3)", best * t_cpu / mpts, "");
  }

  if (gpu)
  {
    const at::Device cuda(at::kCUDA, 0);
    // Pinned copy bound of the same bytes: inputs host->device, outputs device->host.
    const auto pinned = at::TensorOptions().dtype(at::kDouble).pinned_memory(true);
    at::Tensor h_in = at::empty({B, 6}, pinned).copy_(in.at("strain"));
    at::Tensor h_out = at::empty({B, 6}, pinned);
    at::Tensor d = at::empty({B, 6}, at::TensorOptions().dtype(at::kDouble).device(cuda));
    const double t_h2d = median_time(
        [&]
        {
          d.copy_(h_in);
          sync_cuda();
        },
        7);
    const double t_d2h = median_time([&] { h_out.copy_(d); }, 7);
    add("P3", "pinned copy bound (H2D + D2H of the same bytes)", mpts / (t_h2d + t_d2h), "Mpts/s");

    const Model gmodel(stub, "model", "cuda:0");
    const TensorMap gin{{"strain", in.at("strain").to(cuda)}};
    const double t_gpu_compute = median_time(
        [&]
        {
          gmodel.forward(gin);
          sync_cuda();
        },
        7);
    add("P3", "GPU compute only, device-resident batch", mpts / t_gpu_compute, "Mpts/s");

    auto sync16 =
        load_model(stub, "model", std::make_shared<Simple>(Simple::Config{"cuda:0", B / 16}));
    const double t_sync = median_time([&] { sync16.forward(in); }, 7);
    DispatchedModel<AsyncPolicy<Simple>> async16(
        stub, "model", std::make_shared<Simple>(Simple::Config{"cuda:0", B / 16}));
    const double t_async = median_time([&] { async16.forward(in); }, 7);
    add("P3", "CPU batch via GPU, SyncPolicy<Simple>{cuda:0, B/16}", mpts / t_sync, "Mpts/s");
    add("P3",
        "CPU batch via GPU, AsyncPolicy<Simple>{cuda:0, B/16}, " +
            std::to_string(async16.policy().scheduler().gpu_lanes()) + " lanes",
        mpts / t_async, "Mpts/s");
    const TensorMap in_pinned{{"strain", h_in}};
    const double t_async_pinned = median_time([&] { async16.forward(in_pinned); }, 7);
    add("P3", "same, batch already in pinned host memory", mpts / t_async_pinned, "Mpts/s");
    add("P3", "pipelined / pinned bound (target >= 0.80)", (t_h2d + t_d2h) / t_async, "");
    add("P3", "pipelined / unpipelined (target >= 1.5)", t_sync / t_async, "");

    StaticHybrid::Config cfg;
    cfg.devices = {"cpu", "cuda:0"};
    cfg.batch_sizes = {B / 64, B / 16};
    auto hybrid = load_model(stub, "model", std::make_shared<StaticHybrid>(cfg));
    const double t_h = median_time([&] { hybrid.forward(in); }, 7);
    const double sum = mpts / t_cpu + mpts / t_async;
    add("P4",
        "hybrid {cpu, cuda:0}, batch sizes {B/64, B/16}, " +
            std::to_string(Scheduler::default_gpu_lanes) + " GPU lanes",
        mpts / t_h, "Mpts/s");
    add("P4", "sum of CPU alone + GPU alone (async)", sum, "Mpts/s");
    add("P4", "hybrid / sum (target >= 0.95)", (mpts / t_h) / sum, "");

    // The lane default beside a CPU, measured: GPU lanes x the threads each lane stages
    // with (NEML2_STAGING_THREADS, read when the policy starts its lanes; 0 = torch's
    // intra-op count), the CPU lane with the cores left (cpu_threads = 0) each time.
    const char * given = std::getenv("NEML2_STAGING_THREADS");
    const std::string kept = given ? given : "";
    for (const int lanes : {2, 4})
      for (const int staging : {0, 1, 2, 4})
      {
        if (staging > 0)
          setenv("NEML2_STAGING_THREADS", std::to_string(staging).c_str(), 1);
        else
          unsetenv("NEML2_STAGING_THREADS");
        cfg.gpu_lanes = lanes;
        auto h = load_model(stub, "model", std::make_shared<StaticHybrid>(cfg));
        const double t = median_time([&] { h.forward(in); }, 7);
        add("P4",
            "sweep: " + std::to_string(lanes) + " GPU lanes, staging threads " +
                (staging > 0 ? std::to_string(staging) : std::string("default")) + " / sum",
            (mpts / t) / sum, "");
      }
    if (given)
      setenv("NEML2_STAGING_THREADS", kept.c_str(), 1);
    else
      unsetenv("NEML2_STAGING_THREADS");
  }

  if (argc > 3)
  {
    std::ofstream json(argv[3]);
    json << "{\"batch\": " << B << ", \"gpu\": " << (gpu ? "true" : "false") << ", \"rows\": [";
    for (std::size_t i = 0; i < rows.size(); ++i)
      json << (i ? ", " : "") << "{\"id\": \"" << rows[i].id << "\", \"what\": \"" << rows[i].what
           << "\", \"value\": " << rows[i].value << ", \"unit\": \"" << rows[i].unit << "\"}";
    json << "]}\n";
  }
  return 0;
}
