// AdaptiveHybrid (no tuning) vs the best hand-tuned StaticHybrid vs the sum of each device
// alone, on one compiled model, side by side in one process (DESIGN.md section 6, P4).
//
//   adaptive_vs_static STUB [--devices cpu,cuda:0] [--batches 10000,100000,1000000]
//                           [--repeat R] [--json FILE] [--threads N] [--range X]
//
// Per batch size B, inputs and results in host memory:
//   alone     each device alone (AsyncPolicy<Simple>), the best of a few chunk sizes;
//             "sum" is the sum of their throughputs, "best alone" the largest of them;
//             each device's own is printed below the table and in the JSON ("alone")
//   static    StaticHybrid, the best of: the Sweep recommendation from those runs, each
//             device's own best chunk size, and chunks lasting 1/64, 1/16, 1/4 of the
//             ideal time on every device
//   adaptive  AdaptiveHybrid over the same devices: the first (cold) call, then the
//             median of R calls after sixteen more (its learning calls: probes, then
//             the trial of three spread dispatches against up to three with the GPUs
//             alone and three direct calls on the CPU); "way" says which of the three
//             the timed calls took (AdaptiveHybrid::trial), and the trial's medians
//             are printed below the table
// "best tuned" is the better of best alone and best static: what tuning by hand reaches.
// --threads sets the intra-op threads (default: torch's); on a loaded machine, 1 keeps
// a parallel region from waiting on a descheduled thread. --range sets the width of the
// random increments (bench_inputs.h, default 2e-3; 1e-3 for the single crystal).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "neml2/aoti.h"
#include "neml2/aoti/tuning/Sweep.h"

#include "bench_inputs.h"
#include "bench_util.h"

using namespace neml2::aoti;
using neml2_bench::inputs_for;
using neml2_bench::median_time;
using neml2_bench::seconds_of;
using neml2_bench::split_list;

namespace
{
struct Row
{
  int64_t batch;
  double sum, best_alone, best_static, adaptive, adaptive_cold;
  std::string way, static_cfg, layout, trial;
  std::vector<double> alone; ///< each device alone, its best chunk size (pts/s)
};

/// Where one call's chunks ran: per device, chunks, points, time busy and when it finished.
struct Layout : DispatchObserver
{
  struct Lane
  {
    int chunks = 0;
    int64_t points = 0;
    double busy_us = 0, last_end_us = 0;
  };
  std::mutex mutex;
  std::map<std::string, Lane> devices;
  std::map<std::pair<std::string, std::size_t>, double> started;
  double origin = 0;

  void on_dispatch(Graph, int64_t) override { origin = observer_clock_us(); }
  void on_chunk_begin(const ChunkInfo & c) override
  {
    const std::lock_guard<std::mutex> lock(mutex);
    started[{c.device.str(), c.ordinal}] = observer_clock_us();
  }
  void on_chunk_end(const ChunkInfo & c, const ChunkTiming *) override
  {
    const double now = observer_clock_us();
    const std::lock_guard<std::mutex> lock(mutex);
    Lane & l = devices[c.device.str()];
    ++l.chunks;
    l.points += c.end - c.begin;
    l.busy_us += now - started[{c.device.str(), c.ordinal}];
    l.last_end_us = std::max(l.last_end_us, now - origin);
  }
  /// One line: "cpu 3 chunks 41% of the points, busy 1.2 ms, done at 1.3 ms; ...".
  std::string line(int64_t batch) const
  {
    std::ostringstream o;
    for (const auto & [name, l] : devices)
      o << (o.tellp() > 0 ? "; " : "") << name << " " << l.chunks << " chunks, "
        << int(100.0 * double(l.points) / double(batch) + 0.5) << "% of the points, busy "
        << l.busy_us / 1000 << " ms, done at " << l.last_end_us / 1000 << " ms";
    return o.str();
  }
};

int
usage(const char * argv0)
{
  std::fprintf(stderr,
               "usage: %s STUB [--devices cpu,cuda:0] [--batches 10000,100000,1000000] "
               "[--repeat R] [--json FILE] [--threads N] [--range X]\n",
               argv0);
  return 2;
}

/// The way @p t kept (or "learning") and its medians per way, in microseconds.
std::pair<std::string, std::string>
describe(const std::optional<AdaptiveHybrid::Trial> & t)
{
  using neml2::aoti::detail::adaptive::name;
  using neml2::aoti::detail::adaptive::Way;
  if (!t)
    return {"none", "nothing timed"};
  std::ostringstream line;
  for (std::size_t w = 0; w < t->seconds.size(); ++w)
  {
    line << name(Way(w)) << " ";
    if (t->seconds[w].empty())
      line << "-";
    else
      line << neml2::aoti::detail::median(t->seconds[w]) * 1e6 << " us (" << t->seconds[w].size()
           << ")";
    line << (t->out[w] ? " out" : "") << "; ";
  }
  const std::string way = t->decided ? name(t->choice) : "learning";
  line << "kept: " << way;
  return {way, line.str()};
}
} // namespace

int
main(int argc, char ** argv)
{
  if (argc < 2 || argv[1][0] == '-')
    return usage(argv[0]);
  const std::string stub = argv[1];
  std::vector<std::string> devices{"cpu"};
  if (neml2::aoti::devices().size() > 1)
    devices.push_back("cuda:0");
  std::vector<int64_t> batches{10000, 100000, 1000000};
  int repeat = 5;
  double range = 2e-3;
  std::string json_path = "adaptive_vs_static.json";
  for (int i = 2; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (i + 1 >= argc)
      return usage(argv[0]);
    const std::string v = argv[++i];
    if (a == "--devices")
      devices = split_list(v);
    else if (a == "--batches")
    {
      batches.clear();
      for (const auto & b : split_list(v))
        batches.push_back(std::stoll(b));
    }
    else if (a == "--repeat")
      repeat = std::max(1, std::stoi(v));
    else if (a == "--json")
      json_path = v;
    else if (a == "--range")
      range = std::stod(v);
    else if (a == "--threads")
      at::set_num_threads(std::max(1, std::stoi(v)));
    else
      return usage(argv[0]);
  }

  try
  {
    std::printf("stub %s, devices", stub.c_str());
    for (const auto & d : devices)
      std::printf(" %s", d.c_str());
    std::printf(", intra-op threads %d, median of %d\n\n", at::get_num_threads(), repeat);
    std::printf("| batch      | sum alone (pts/s) | best alone / sum | best static / sum | "
                "adaptive / sum | adaptive / best tuned | way      | cold call / sum |\n");
    std::printf("|------------|-------------------|------------------|-------------------|"
                "----------------|-----------------------|----------|-----------------|\n");
    std::vector<Row> rows;
    for (const int64_t B : batches)
    {
      Row row{B, 0, 0, 0, 0, 0, "", "", "", "", {}};
      TensorMap in;
      // Each device alone, the best of a few chunk sizes.
      Sweep sweep;
      std::vector<int64_t> own_best;
      for (const auto & dev : devices)
      {
        double best = 0;
        int64_t best_bs = B;
        for (const int64_t bs : {B, int64_t(1) << 20, int64_t(1) << 18, int64_t(1) << 16})
        {
          if (bs > B || (bs != B && B / bs > 4096))
            continue;
          DispatchedModel<AsyncPolicy<Simple>> m(stub, "model",
                                                 std::make_shared<Simple>(Simple::Config{dev, bs}));
          if (in.empty())
            in = inputs_for(m.meta(), B, range);
          const double t = median_time([&] { m.forward(in); }, 1, repeat);
          sweep.add(dev, bs, B, t);
          if (best == 0 || t < best)
          {
            best = t;
            best_bs = bs;
          }
        }
        own_best.push_back(best_bs);
        row.alone.push_back(double(B) / best);
        row.sum += double(B) / best;
        row.best_alone = std::max(row.best_alone, double(B) / best);
      }

      // StaticHybrid: the best of the candidate configurations.
      std::vector<StaticHybrid::Config> candidates{sweep.recommend()};
      StaticHybrid::Config own = sweep.recommend();
      own.batch_sizes = own_best;
      for (std::size_t d = 0; d < own.capacities.size(); ++d)
        own.capacities[d] = 2 * own_best[d];
      candidates.push_back(own);
      const double ideal = double(B) / row.sum;
      for (const double f : {1.0 / 64, 1.0 / 16, 1.0 / 4})
        candidates.push_back(sweep.for_chunk_seconds(f * ideal));
      double best_static = 0;
      for (const auto & cfg : candidates)
      {
        auto m = load_model(stub, "model", std::make_shared<StaticHybrid>(cfg));
        const double t = median_time([&] { m.forward(in); }, 1, repeat);
        if (best_static == 0 || t < best_static)
        {
          best_static = t;
          row.static_cfg = Sweep::to_cpp(cfg);
        }
      }
      row.best_static = double(B) / best_static;

      // AdaptiveHybrid: nothing to tune.
      AdaptiveHybrid::Config acfg;
      acfg.devices = devices;
      const auto sched = std::make_shared<AdaptiveHybrid>(acfg);
      auto am = load_model(stub, "model", sched);
      row.adaptive_cold = double(B) / seconds_of([&] { am.forward(in); });
      row.adaptive = double(B) / median_time([&] { am.forward(in); }, 16, repeat);
      if (devices.size() > 1)
        std::tie(row.way, row.trial) = describe(sched->trial(am.policy().client(), B, at::kCPU));
      else
        std::tie(row.way, row.trial) = std::make_pair("lone", "one device: no trial of ways");
      // One more call, watched: where adaptive's chunks ran (printed below the table).
      auto layout = std::make_shared<Layout>();
      am.add_observer(layout);
      const double watched = seconds_of([&] { am.forward(in); });
      am.remove_observer(layout);
      row.layout = layout->line(B) + " (call " + std::to_string(watched * 1e3) + " ms)";
      const double tuned = std::max(row.best_alone, row.best_static);
      std::printf("| %10lld | %17.4g | %16.3f | %17.3f | %14.3f | %21.3f | %-8s | %15.3f |\n",
                  (long long)B, row.sum, row.best_alone / row.sum, row.best_static / row.sum,
                  row.adaptive / row.sum, row.adaptive / tuned, row.way.c_str(),
                  row.adaptive_cold / row.sum);
      std::fflush(stdout);
      rows.push_back(row);
    }

    std::printf("\nthroughput (pts/s): each device alone, best static, adaptive:\n");
    for (const Row & r : rows)
    {
      std::printf("  %10lld:", (long long)r.batch);
      for (std::size_t d = 0; d < devices.size(); ++d)
        std::printf(" %s %.4g;", devices[d].c_str(), r.alone[d]);
      std::printf(" static %.4g; adaptive %.4g\n", r.best_static, r.adaptive);
    }
    std::printf("\nadaptive's trial of the ways (median wall time per way):\n");
    for (const Row & r : rows)
      std::printf("  %10lld: %s\n", (long long)r.batch, r.trial.c_str());
    std::printf("\nadaptive's chunks, one call after the timed ones:\n");
    for (const Row & r : rows)
      std::printf("  %10lld: %s\n", (long long)r.batch, r.layout.c_str());
    std::ofstream json(json_path);
    json << "{\n  \"stub\": \"" << stub << "\",\n  \"threads\": " << at::get_num_threads()
         << ",\n  \"devices\": [";
    for (std::size_t d = 0; d < devices.size(); ++d)
      json << (d ? ", " : "") << "\"" << devices[d] << "\"";
    json << "],\n  \"rows\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i)
    {
      const Row & r = rows[i];
      std::string cfg;
      for (const char c : r.static_cfg)
        cfg += c == '"' ? std::string("\\\"") : c == '\n' ? std::string("\\n") : std::string(1, c);
      json << "    {\"batch\": " << r.batch << ", \"sum_alone\": " << r.sum << ", \"alone\": [";
      for (std::size_t d = 0; d < r.alone.size(); ++d)
        json << (d ? ", " : "") << r.alone[d];
      json << "], \"best_alone\": " << r.best_alone << ", \"best_static\": " << r.best_static
           << ", \"adaptive\": " << r.adaptive << ", \"way\": \"" << r.way << "\""
           << ", \"adaptive_cold\": " << r.adaptive_cold << ", \"layout\": \"" << r.layout << "\""
           << ", \"static_config\": \"" << cfg << "\"}" << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    json << "  ]\n}\n";
    std::printf("\nwrote %s\n", json_path.c_str());
    return 0;
  }
  catch (const std::exception & e)
  {
    std::fprintf(stderr, "adaptive_vs_static: %s\n", e.what());
    return 1;
  }
}
