// What an idle OpenMP team beside the worker lanes costs an asynchronous CPU dispatch.
//
//   caller_team STUB [BATCH] [CHUNK] [RANGE]
//
// AsyncPolicy gives the calling thread's OpenMP team back before it hands out chunks, so
// that while the CPU lane works, its team is the only one awake. This program shows why, in
// one run: it times forward of BATCH points (default 4096) through
// AsyncPolicy<Simple>{cpu, CHUNK} (default BATCH/4), the median of 15 calls, with the
// calling thread running a parallel region of its own before every call (as a host code
// does between calls; its team is given back inside the timed call), two ways:
//   - "alone": no other team in the process;
//   - "idle team beside": another thread holds an idle OpenMP team of every core, as the
//     calling thread's own team did before AsyncPolicy gave it back.
// The direct call of the same batch on the calling thread is the reference. RANGE (default
// 2e-3) is the width of the random increments (bench/bench_inputs.h; 1e-3 for the single
// crystal). Rows alternate, three rounds, so that drift of the machine shows.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "neml2/aoti.h"

#include "bench_inputs.h"
#include "bench_util.h"

using namespace neml2::aoti;

namespace
{
/// A parallel loop of torch over every intra-op thread of the calling thread (2^20 doubles,
/// 32 grains of torch's elementwise loops): it starts, or keeps, that thread's OpenMP team.
void
touch_team()
{
  at::ones({int64_t(1) << 20}, at::kDouble).mul_(2.0);
}

/// A thread that ran a parallel region over every core and then waits, holding its idle
/// OpenMP team, until destroyed.
class IdleTeam
{
public:
  IdleTeam()
      : _thread(
            [this]
            {
              touch_team();
              std::unique_lock<std::mutex> lock(_mutex);
              _ready = true;
              _cv.notify_all();
              _cv.wait(lock, [this] { return _stop; });
            })
  {
    std::unique_lock<std::mutex> lock(_mutex);
    _cv.wait(lock, [this] { return _ready; });
  }
  IdleTeam(const IdleTeam &) = delete;
  IdleTeam & operator=(const IdleTeam &) = delete;
  ~IdleTeam()
  {
    {
      const std::lock_guard<std::mutex> lock(_mutex);
      _stop = true;
    }
    _cv.notify_all();
    _thread.join();
  }

private:
  std::mutex _mutex;
  std::condition_variable _cv;
  bool _ready = false;
  bool _stop = false;
  std::thread _thread;
};

/// Median milliseconds of @p call, each after the calling thread's own parallel region,
/// after two warm-up calls.
template <class F>
double
median_ms(F && call)
{
  std::vector<double> took;
  for (int k = 0; k < 17; ++k)
  {
    touch_team();
    const auto start = std::chrono::steady_clock::now();
    call();
    const std::chrono::duration<double, std::milli> t = std::chrono::steady_clock::now() - start;
    if (k >= 2)
      took.push_back(t.count());
  }
  return neml2::aoti::detail::median(std::move(took));
}
} // namespace

int
main(int argc, char ** argv)
{
  if (argc < 2)
  {
    std::fprintf(stderr, "usage: %s STUB [BATCH] [CHUNK] [RANGE]\n", argv[0]);
    return 2;
  }
  const std::string stub = argv[1];
  const int64_t batch = argc > 2 ? std::stoll(argv[2]) : 4096;
  const int64_t chunk = argc > 3 ? std::stoll(argv[3]) : std::max<int64_t>(1, batch / 4);
  const double range = argc > 4 ? std::stod(argv[4]) : 2e-3;
  const Model direct(stub, "model", "cpu");
  const TensorMap in = neml2_bench::inputs_for(direct.meta(), batch, range);
  DispatchedModel<AsyncPolicy<Simple>> dispatched(
      stub, "model", std::make_shared<Simple>(Simple::Config{"cpu", chunk}));
  std::printf("forward of %lld points, AsyncPolicy<Simple>{cpu, %lld}, %d intra-op threads "
              "(median ms)\n\n%-6s %12s %12s %20s\n",
              (long long)batch, (long long)chunk, at::get_num_threads(), "round", "direct", "alone",
              "idle team beside");
  for (int round = 1; round <= 3; ++round)
  {
    const double t_direct = median_ms([&] { direct.forward(in); });
    const double t_alone = median_ms([&] { dispatched.forward(in); });
    double t_beside = 0;
    {
      const IdleTeam other;
      t_beside = median_ms([&] { dispatched.forward(in); });
    }
    std::printf("%-6d %12.2f %12.2f %20.2f\n", round, t_direct, t_alone, t_beside);
    std::fflush(stdout);
  }
  return 0;
}
