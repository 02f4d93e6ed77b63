// AdaptiveHybrid vs the best StaticHybrid in the virtual-time simulator: 1 CPU + 1..8
// skewed GPUs (sim::profiles), memory- and compute-bound, at several batch sizes; then the
// elastic model on an H200 host (sim::profiles::h200_host), with and without the GPU's
// staging slowed by the CPU's chunks, at 2^14..2^24 points, against each device alone.
// Deterministic: the same build prints the same tables.
//
//   sim_hybrid [--gpus 8] [--batches 1000000,10000000,100000000] [--calls 16] [--json FILE]
//
// Efficiencies are throughput / sum of each device's throughput alone. "bound" is the
// best any scheduler can do (one round of chunks per device, sized to finish together,
// no noise); "static" is the best of the Sweep recommendation and the chunk-duration
// family, tuned on the simulated devices as bench/tune_hybrid tunes real ones.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "neml2/aoti/detail/stats.h"
#include "neml2/aoti/schedulers/AdaptiveHybrid.h"
#include "neml2/aoti/schedulers/StaticHybrid.h"
#include "neml2/aoti/sim/Simulator.h"
#include "neml2/aoti/sim/profiles.h"
#include "neml2/aoti/tuning/Sweep.h"

using namespace neml2::aoti;

namespace
{
/// StaticHybrid over simulated devices: @p cfg with virtual_devices set.
StaticHybrid
on_virtual(StaticHybrid::Config cfg)
{
  cfg.virtual_devices = true;
  return StaticHybrid(std::move(cfg));
}

std::vector<int64_t>
split_list(const std::string & s)
{
  std::vector<int64_t> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty())
      out.push_back(std::stoll(item));
  return out;
}

/// The best StaticHybrid efficiency found by tuning on the simulated devices.
double
best_static(const std::vector<sim::Device> & devices, int64_t batch)
{
  Sweep sweep;
  for (const auto & dev : devices)
    for (int64_t bs = 1024; bs <= (int64_t(1) << 24); bs *= 4)
    {
      StaticHybrid::Config one;
      one.devices = {dev.name};
      one.batch_sizes = {bs};
      sim::Simulator alone({dev});
      alone.run(on_virtual(one), bs); // warm-up
      sweep.add(dev.name, bs, 8 * bs, alone.run(on_virtual(one), 8 * bs).seconds);
    }
  sim::Simulator s(devices, 7);
  s.run(on_virtual(sweep.recommend()), 1024 * int64_t(devices.size())); // warm-up
  const double ideal = double(batch) / s.sum_of_alone_throughputs(batch);
  std::vector<StaticHybrid::Config> candidates{sweep.recommend()};
  for (const double f : {1.0 / 256, 1.0 / 64, 1.0 / 16, 1.0 / 4})
    candidates.push_back(sweep.for_chunk_seconds(f * ideal));
  double best = 0;
  for (const auto & cfg : candidates)
    best = std::max(best, s.run(on_virtual(cfg), batch).throughput());
  return best / s.sum_of_alone_throughputs(batch);
}
} // namespace

int
main(int argc, char ** argv)
{
  std::size_t max_gpus = 8;
  std::vector<int64_t> batches{1000000, 10000000, 100000000};
  int calls = 16;
  std::string json_path = "sim_hybrid.json";
  for (int i = 1; i + 1 < argc; i += 2)
  {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--gpus")
      max_gpus = std::size_t(std::stoul(v));
    else if (a == "--batches")
      batches = split_list(v);
    else if (a == "--calls")
      calls = std::max(12, std::stoi(v));
    else if (a == "--json")
      json_path = v;
    else
    {
      std::fprintf(stderr, "usage: %s [--gpus N] [--batches B,...] [--calls N] [--json FILE]\n",
                   argv[0]);
      return 2;
    }
  }
  std::printf("| model   | GPUs | batch     | bound | adaptive cold | 2nd call | steady (median "
              "of calls 11..%d) | best static | adaptive / static |\n",
              calls);
  std::printf("|---------|------|-----------|-------|---------------|----------|-------------"
              "----------------|-------------|-------------------|\n");
  std::ofstream json(json_path);
  json << "[\n";
  bool first_row = true;
  for (const bool compute : {false, true})
    for (std::size_t gpus = 1; gpus <= max_gpus; ++gpus)
      for (const int64_t batch : batches)
      {
        const auto devices = sim::profiles::hybrid(gpus, compute);
        sim::Simulator s(devices, 42);
        AdaptiveHybrid::Config cfg;
        for (const auto & d : devices)
          cfg.devices.push_back(d.name);
        cfg.virtual_devices = true;
        const AdaptiveHybrid a(cfg);
        const double sum = s.sum_of_alone_throughputs(batch);
        std::vector<double> eff;
        for (int c = 0; c < calls; ++c)
          eff.push_back(s.run(a, batch).throughput() / sum);
        const double med =
            neml2::aoti::detail::median(std::vector<double>(eff.begin() + 10, eff.end()));
        const double bound = double(batch) / s.balanced_seconds(batch) / sum;
        const double st = best_static(devices, batch);
        const char * model = compute ? "viscop" : "elastic";
        std::printf("| %-7s | %4zu | %9lld | %5.3f | %13.3f | %8.3f | %27.3f | %11.3f | %17.3f |\n",
                    model, gpus, (long long)batch, bound, eff[0], eff[1], med, st, med / st);
        std::fflush(stdout);
        json << (first_row ? "" : ",\n") << "  {\"model\": \"" << model << "\", \"gpus\": " << gpus
             << ", \"batch\": " << batch << ", \"bound\": " << bound << ", \"cold\": " << eff[0]
             << ", \"second\": " << eff[1] << ", \"steady\": " << med << ", \"best_static\": " << st
             << "}";
        first_row = false;
      }
  json << "\n]\n";

  // The H200 host: the way AdaptiveHybrid keeps, against the best single device.
  std::printf("\nH200 host profile, inputs on the host (median of calls 11..%d):\n\n", calls);
  std::printf("| contention | batch    | GPU alone / sum | CPU direct / sum | adaptive / sum | "
              "adaptive / best single | way kept |\n");
  std::printf("|-----------:|---------:|----------------:|-----------------:|---------------:|"
              "-----------------------:|----------|\n");
  for (const double contention : {0.0, 0.5})
    for (int64_t batch = int64_t(1) << 14; batch <= (int64_t(1) << 24); batch *= 4)
    {
      sim::Simulator s(sim::profiles::h200_host(contention), 42);
      AdaptiveHybrid::Config cfg;
      cfg.devices = {"cpu", "cuda:0"};
      cfg.virtual_devices = true;
      const AdaptiveHybrid a(cfg);
      std::vector<double> thr;
      for (int c = 0; c < calls; ++c)
        thr.push_back(s.run(a, batch).throughput());
      const double adaptive =
          neml2::aoti::detail::median(std::vector<double>(thr.begin() + 10, thr.end()));
      const double sum = s.sum_of_alone_throughputs(batch);
      const double gpu = double(batch) / s.alone_seconds(1, batch);
      const double cpu = double(batch) / s.devices()[0].direct_seconds(batch);
      const auto t = a.trial(1, batch, at::Device(at::kCPU));
      const char * kept =
          t && t->decided ? neml2::aoti::detail::adaptive::name(t->choice) : "learning";
      std::printf("| %10.1f | %8lld | %15.3f | %16.3f | %14.3f | %22.3f | %-8s |\n", contention,
                  (long long)batch, gpu / sum, cpu / sum, adaptive / sum,
                  adaptive / std::max(gpu, cpu), kept);
    }
  std::printf("\nwrote %s\n", json_path.c_str());
  return 0;
}
