// P3 in detail: a CPU-resident batch sent through one GPU, against the copy bounds, all in one run.
//
//   gpu_staging STUB [BATCH] [JSON_OUT]
//
// Rows: the serial pinned bound (H2D, then D2H, of the batch's bytes), the duplex bound (both
// directions at once, on two streams), the batch already in pinned host memory, and a pageable
// batch under AsyncPolicy<Simple>{cuda:0} over worker lanes per GPU x chunk size x staging
// threads per lane ("torch": torch's intra-op count, the default; "shared": the cores shared
// evenly among the lanes, NEML2_STAGING_THREADS = cores / lanes), and uploads piece by piece
// (NEML2_STAGING_PIECE_BYTES). Needs a CUDA device.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include "neml2/aoti.h"

#include "bench_util.h"

using namespace neml2::aoti;

namespace
{
using neml2_bench::sync_cuda;

/// Median seconds of 7 calls after one warm-up.
double
timed(const std::function<void()> & f)
{
  return neml2_bench::median_time(f, 1, 7);
}

/// @p f on its own thread with its own stream of cuda:0, then that stream synchronised.
std::thread
on_stream(const std::function<void()> & f)
{
  return std::thread(
      [f]
      {
        const at::Device cuda(at::kCUDA, 0);
        const c10::impl::VirtualGuardImpl impl(at::kCUDA);
        const c10::Stream s = impl.getStreamFromGlobalPool(cuda);
        const c10::StreamGuard guard(s);
        f();
        impl.synchronizeStream(s);
      });
}
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
  const int64_t B = argc > 2 ? std::stoll(argv[2]) : (int64_t(1) << 22);
  if (neml2::aoti::devices().size() < 2)
  {
    std::fprintf(stderr, "gpu_staging: no CUDA device is visible\n");
    return 2;
  }
  const double mpts = double(B) / 1e6;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::printf("batch %lld (%.0f MB in, %.0f MB out), %u cores\n\n", (long long)B, B * 48e-6,
              B * 48e-6, cores);

  const at::Device cuda(at::kCUDA, 0);
  const auto pinned = at::TensorOptions().dtype(at::kDouble).pinned_memory(true);
  const at::Tensor pageable = at::rand({B, 6}, at::kDouble) * 1e-3;
  const at::Tensor h_in = at::empty({B, 6}, pinned).copy_(pageable);
  at::Tensor h_out = at::empty({B, 6}, pinned);
  at::Tensor d_in = at::empty({B, 6}, at::TensorOptions().dtype(at::kDouble).device(cuda));
  at::Tensor d_out = at::empty_like(d_in);

  std::ofstream json;
  if (argc > 3)
    json.open(argv[3]);
  json << "[\n";
  bool first = true;
  const auto row = [&](const std::string & what, int lanes, int64_t chunk,
                       const std::string & staging, double seconds)
  {
    std::printf("| %-34s | %5s | %8s | %7s | %8.0f |\n", what.c_str(),
                lanes ? std::to_string(lanes).c_str() : "",
                chunk ? ("B/" + std::to_string(B / chunk)).c_str() : "", staging.c_str(),
                mpts / seconds);
    std::fflush(stdout);
    json << (first ? "" : ",\n") << "  {\"what\": \"" << what << "\", \"lanes\": " << lanes
         << ", \"chunk\": " << chunk << ", \"staging\": \"" << staging
         << "\", \"mpts\": " << mpts / seconds << "}";
    first = false;
  };
  std::printf("| %-34s | lanes | chunk    | staging | Mpts/s   |\n", "measurement");
  std::printf("|------------------------------------|-------|----------|---------|----------|\n");

  const double t_h2d = timed(
      [&]
      {
        d_in.copy_(h_in);
        sync_cuda();
      });
  const double t_d2h = timed([&] { h_out.copy_(d_out); });
  row("serial pinned bound (H2D + D2H)", 0, 0, "", t_h2d + t_d2h);
  const double t_duplex = timed(
      [&]
      {
        std::thread up = on_stream([&] { d_in.copy_(h_in, /*non_blocking=*/true); });
        std::thread down = on_stream([&] { h_out.copy_(d_out, /*non_blocking=*/true); });
        up.join();
        down.join();
      });
  row("duplex bound (H2D and D2H at once)", 0, 0, "", t_duplex);
  const double t_pageable_copy = timed([&] { at::Tensor(h_out).copy_(pageable); });
  row("pageable -> pinned host copy alone", 0, 0, "torch", t_pageable_copy);

  const TensorMap in{{"strain", pageable}};
  const TensorMap in_pinned{{"strain", h_in}};
  for (const int lanes : {1, 2, 3, 4})
    for (const int64_t parts : {8, 16, 32, 64})
      for (const char * staging : {"torch", "shared"})
      {
        if (std::string(staging) == "shared")
          setenv("NEML2_STAGING_THREADS", std::to_string(std::max(1u, cores / lanes)).c_str(), 1);
        else
          unsetenv("NEML2_STAGING_THREADS");
        Simple::Config cfg{"cuda:0", B / parts, 0, lanes};
        DispatchedModel<AsyncPolicy<Simple>> m(stub, "model", std::make_shared<Simple>(cfg));
        row("pageable batch, AsyncPolicy<Simple>", lanes, B / parts, staging,
            timed([&] { m.forward(in); }));
        if (parts == 16 && std::string(staging) == "torch")
          row("pinned batch, AsyncPolicy<Simple>", lanes, B / parts, staging,
              timed([&] { m.forward(in_pinned); }));
      }
  unsetenv("NEML2_STAGING_THREADS");
  // The upload piece by piece, overlapping the copy of the next piece.
  for (const char * piece : {"1048576", "4194304"})
  {
    setenv("NEML2_STAGING_PIECE_BYTES", piece, 1);
    for (const int lanes : {2, 3, 4})
      for (const int64_t parts : {16, 32})
      {
        DispatchedModel<AsyncPolicy<Simple>> m(
            stub, "model", std::make_shared<Simple>(Simple::Config{"cuda:0", B / parts, 0, lanes}));
        row(std::string("pageable, pieces of ") + (piece[0] == '1' ? "1" : "4") + " MiB", lanes,
            B / parts, "torch", timed([&] { m.forward(in); }));
      }
  }
  unsetenv("NEML2_STAGING_PIECE_BYTES");
  json << "\n]\n";
  return 0;
}
