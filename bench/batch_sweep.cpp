// Throughput and peak memory vs batch size, per device, for one compiled model:
// the curves behind tuning a batch size (doc/performance.md).
//
//   batch_sweep STUB DEVICE [MAX_LOG2] [CSV_OUT]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <c10/core/impl/VirtualGuardImpl.h>

#include "neml2/aoti.h"
#include "neml2/aoti/detail/stats.h"

using namespace neml2::aoti;

namespace
{
double
peak_rss_mib()
{
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0; // kilobytes on Linux
}

/// Random inputs of batch @p b on @p dev for every input the model declares.
TensorMap
inputs_for(const Meta & meta, int64_t b, const at::Device & dev)
{
  TensorMap in;
  for (const auto & v : meta.inputs)
  {
    std::vector<int64_t> shape{b};
    shape.insert(shape.end(), v.shape.begin(), v.shape.end());
    in[v.name] = at::rand(shape, at::TensorOptions().dtype(meta.dtype).device(dev)) * 1e-3;
  }
  return in;
}
} // namespace

int
main(int argc, char ** argv)
{
  if (argc < 3)
  {
    std::fprintf(stderr, "usage: %s STUB DEVICE [MAX_LOG2] [CSV_OUT]\n", argv[0]);
    return 2;
  }
  try
  {
    const std::string stub = argv[1];
    const Model model(stub, "model", argv[2]);
    const int max_log2 = argc > 3 ? std::stoi(argv[3]) : 22;
    const at::Device dev = model.device();
    std::ofstream csv;
    if (argc > 4)
    {
      csv.open(argv[4]);
      csv << "device,batch,seconds,mpts_per_s,peak_rss_mib\n";
    }
    std::printf(
        "| device | batch | time (ms) | Mpts/s | peak RSS (MiB) |\n|---|---:|---:|---:|---:|\n");
    for (int k = 0; k <= max_log2; k += 2)
    {
      const int64_t b = int64_t(1) << k;
      const TensorMap in = inputs_for(model.meta(), b, dev);
      const auto sync = [&]
      {
        if (dev.is_cuda())
          c10::impl::VirtualGuardImpl(dev.type()).synchronizeDevice(dev.index());
      };
      model.forward(in);
      sync();
      const int reps = std::max(3, int(std::min<int64_t>(200, (int64_t(1) << 22) / b)));
      std::vector<double> t;
      for (int r = 0; r < reps; ++r)
      {
        const auto t0 = std::chrono::steady_clock::now();
        model.forward(in);
        sync();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      const double s = neml2::aoti::detail::median(std::move(t));
      std::printf("| %s | %lld | %.4f | %.2f | %.0f |\n", dev.str().c_str(), (long long)b, s * 1e3,
                  b / s / 1e6, peak_rss_mib());
      if (csv)
        csv << dev.str() << "," << b << "," << s << "," << b / s / 1e6 << "," << peak_rss_mib()
            << "\n";
    }
  }
  catch (const Exception & e)
  {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
