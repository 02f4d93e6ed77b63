// Tuning tool: sweep batch sizes per device for one compiled model, print the measured
// throughputs and the recommended StaticHybrid::Config as C++, write CSV and JSON for
// bench/plot_tuning.py (throughput vs batch size per device).
//
//   tune_hybrid STUB [--devices cpu,cuda:0] [--min-log2 10] [--max-log2 20]
//               [--points N] [--repeat R] [--tolerance 0.05] [--csv FILE] [--json FILE]
//               [--threads N]
//
// Each device runs alone, as it would inside a hybrid dispatch: AsyncPolicy<Simple>,
// inputs in host memory, results back in host memory. A measurement runs
// max(N, batch size) points (N = 2^20 by default) and keeps the median of R repetitions
// after one warm-up call.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "neml2/aoti.h"
#include "neml2/aoti/tuning/Sweep.h"

#include "bench_inputs.h"
#include "bench_util.h"

using namespace neml2::aoti;
using neml2::aoti::detail::median;
using neml2_bench::inputs_for;
using neml2_bench::split_list;

namespace
{
int
usage(const char * argv0)
{
  std::fprintf(
      stderr,
      "usage: %s STUB [--devices cpu,cuda:0] [--min-log2 10] [--max-log2 20] "
      "[--points N] [--repeat R] [--tolerance 0.05] [--csv FILE] [--json FILE] [--threads N]\n",
      argv0);
  return 2;
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
  int min_log2 = 10, max_log2 = 20, repeat = 3;
  int64_t points = int64_t(1) << 20;
  double tolerance = 0.05;
  std::string csv_path = "tune_hybrid.csv", json_path = "tune_hybrid.json";
  for (int i = 2; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (i + 1 >= argc)
      return usage(argv[0]);
    const std::string v = argv[++i];
    if (a == "--devices")
      devices = split_list(v);
    else if (a == "--min-log2")
      min_log2 = std::stoi(v);
    else if (a == "--max-log2")
      max_log2 = std::stoi(v);
    else if (a == "--points")
      points = std::stoll(v);
    else if (a == "--repeat")
      repeat = std::max(1, std::stoi(v));
    else if (a == "--tolerance")
      tolerance = std::stod(v);
    else if (a == "--csv")
      csv_path = v;
    else if (a == "--json")
      json_path = v;
    else if (a == "--threads")
      at::set_num_threads(std::max(1, std::stoi(v)));
    else
      return usage(argv[0]);
  }

  try
  {
    Sweep sweep;
    std::printf("stub %s, intra-op threads %d\n\n", stub.c_str(), at::get_num_threads());
    std::printf("| device   | batch size | points     | seconds    | points/s     |\n");
    std::printf("|----------|------------|------------|------------|--------------|\n");
    for (const auto & dev : devices)
    {
      for (int k = min_log2; k <= max_log2; ++k)
      {
        const int64_t bs = int64_t(1) << k;
        const int64_t n = std::max(points, bs);
        DispatchedModel<AsyncPolicy<Simple>> m(stub, "model",
                                               std::make_shared<Simple>(Simple::Config{dev, bs}));
        const TensorMap in = inputs_for(m.meta(), n);
        m.forward(in); // warm-up: first-call allocations, the device's own start
        std::vector<double> t;
        for (int r = 0; r < repeat; ++r)
        {
          const auto t0 = std::chrono::steady_clock::now();
          m.forward(in);
          t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        const double s = median(t);
        sweep.add(dev, bs, n, s);
        std::printf("| %-8s | %10lld | %10lld | %10.4g | %12.4g |\n", dev.c_str(), (long long)bs,
                    (long long)n, s, double(n) / s);
        std::fflush(stdout);
      }
    }

    const StaticHybrid::Config cfg = sweep.recommend(tolerance);
    std::printf("\nper device: best throughput, smallest batch size within %.0f%% of it\n",
                100 * tolerance);
    for (std::size_t d = 0; d < sweep.devices().size(); ++d)
      std::printf("  %-8s %12.4g points/s at batch size >= %lld\n", sweep.devices()[d].c_str(),
                  sweep.peak(d), (long long)sweep.knee(d, tolerance));
    const std::string cpp = Sweep::to_cpp(cfg);
    std::printf("\nrecommended:\n\n%s", cpp.c_str());

    std::ofstream csv(csv_path);
    csv << "device,batch_size,points,seconds,throughput\n";
    for (std::size_t d = 0; d < sweep.devices().size(); ++d)
      for (const auto & p : sweep.points(d))
        csv << sweep.devices()[d] << "," << p.batch_size << "," << p.points << "," << p.seconds
            << "," << p.throughput() << "\n";

    std::ofstream json(json_path);
    json << "{\n  \"stub\": \"" << stub << "\",\n  \"threads\": " << at::get_num_threads()
         << ",\n  \"tolerance\": " << tolerance << ",\n  \"devices\": [\n";
    for (std::size_t d = 0; d < sweep.devices().size(); ++d)
    {
      json << "    {\"device\": \"" << sweep.devices()[d] << "\", \"peak\": " << sweep.peak(d)
           << ", \"batch_size\": " << cfg.batch_sizes[d] << ", \"points\": [";
      const auto & pts = sweep.points(d);
      for (std::size_t i = 0; i < pts.size(); ++i)
        json << (i ? ", " : "") << "{\"batch_size\": " << pts[i].batch_size
             << ", \"seconds\": " << pts[i].seconds << ", \"throughput\": " << pts[i].throughput()
             << "}";
      json << "]}" << (d + 1 < sweep.devices().size() ? "," : "") << "\n";
    }
    std::string escaped;
    for (const char c : cpp)
      escaped += c == '"'    ? std::string("\\\"")
                 : c == '\n' ? std::string("\\n")
                             : std::string(1, c);
    json << "  ],\n  \"cpp\": \"" << escaped << "\"\n}\n";
    std::printf("\nwrote %s and %s (plot: python3 bench/plot_tuning.py %s)\n", csv_path.c_str(),
                json_path.c_str(), csv_path.c_str());
    return 0;
  }
  catch (const std::exception & e)
  {
    std::fprintf(stderr, "tune_hybrid: %s\n", e.what());
    return 1;
  }
}
