// Execution policies: how chunks run (on the calling thread, or on a thread per device).
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/detail/Worker.h"
#include "neml2/aoti/detail/env.h"
#include "neml2/aoti/detail/openmp.h"
#include "neml2/aoti/execution/dispatch_loop.h"
#include "neml2/aoti/schedulers/Scheduler.h"
#include "neml2/aoti/schedulers/concept.h"

namespace neml2::aoti
{
/**
 * @brief No scheduler: every call goes straight to the one Model on the CPU.
 *
 * `load_model(path, name)` returns a `DispatchedModel<PassThrough>`; there is no
 * slicing and no copy.
 */
struct PassThrough
{
  /// @brief Calls run on the calling thread.
  static constexpr bool asynchronous = false;
};

namespace detail
{
/// Seconds since the dispatch began, on the steady clock.
class DispatchClock
{
public:
  double operator()() const
  {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - _t0).count();
  }

private:
  std::chrono::steady_clock::time_point _t0 = std::chrono::steady_clock::now();
};

/// dispatch()'s backend for SyncPolicy: one chunk at a time, run on the calling thread.
template <class Job> class SyncBackend
{
public:
  explicit SyncBackend(Job & job) : _job(job) {}

  bool accepts(std::size_t in_flight) const { return in_flight == 0; }

  void submit(const Assignment & a, std::size_t ordinal, int64_t begin)
  {
    _done = ChunkDone{a.device, ordinal, a.size, _clock(), 0, nullptr};
    try
    {
      _job(a.device, ordinal, begin, begin + a.size);
    }
    catch (...)
    {
      _done.error = report_current_exception("");
    }
    _done.end = _clock();
  }

  ChunkDone wait() { return std::move(_done); }

private:
  Job & _job;
  DispatchClock _clock;
  ChunkDone _done;
};

/// dispatch()'s backend for AsyncPolicy: chunks go round-robin to their device's worker lanes.
template <class Job> class AsyncBackend
{
public:
  using Lanes = std::vector<std::vector<std::unique_ptr<Worker>>>;

  AsyncBackend(Lanes & lanes, std::vector<std::size_t> & next_lane, Job & job)
      : _lanes(lanes),
        _next_lane(next_lane),
        _job(job)
  {
  }

  bool accepts(std::size_t) const { return true; }

  void submit(const Assignment & a, std::size_t ordinal, int64_t begin)
  {
    // Each chunk's record is a list node made here, on the calling thread, before the chunk
    // is submitted; the worker fills it and splices it into `_done`. Reporting a chunk
    // therefore allocates nothing on the worker: a chunk that fails because the host is out
    // of memory is still reported, never lost (which would hang the call).
    typename std::list<ChunkDone>::iterator slot;
    {
      const std::lock_guard<std::mutex> lock(_mutex);
      slot = _pending.insert(_pending.end(), ChunkDone{a.device, ordinal, a.size, 0, 0, nullptr});
    }
    auto & lanes = _lanes[a.device];
    lanes[_next_lane[a.device] % lanes.size()]->submit(
        [this, slot, begin]() noexcept
        {
          ChunkDone & d = *slot; // only this worker touches it until it is spliced
          d.start = _clock();
          try
          {
            _job(d.device, d.ordinal, begin, begin + d.size);
          }
          catch (...)
          {
            d.error = report_current_exception("");
          }
          d.end = _clock();
          // Notify under the lock: once it is released the dispatcher may return and
          // destroy `_cv`, so this thread must not touch it afterwards.
          const std::lock_guard<std::mutex> lock(_mutex);
          _done.splice(_done.end(), _pending, slot);
          _cv.notify_one();
        });
    ++_next_lane[a.device];
  }

  ChunkDone wait()
  {
    std::unique_lock<std::mutex> lock(_mutex);
    _cv.wait(lock, [&] { return !_done.empty(); });
    ChunkDone d = std::move(_done.front());
    _done.pop_front();
    return d;
  }

private:
  Lanes & _lanes;
  std::vector<std::size_t> & _next_lane;
  Job & _job;
  DispatchClock _clock;
  std::mutex _mutex;
  std::condition_variable _cv;
  std::list<ChunkDone> _pending, _done; // guarded by _mutex
};
} // namespace detail

/**
 * @brief Runs the chunk loop on the calling thread, one chunk at a time.
 *
 * For single-device schedulers (Simple, MPISimple).
 *
 * @par Thread safety
 * One dispatch at a time per policy (its handle's rule), on the dispatching thread.
 */
template <class S> class SyncPolicy
{
  static_assert(check_scheduler<S>(), "SyncPolicy<S>: S must model the scheduler concept");
  static_assert(!detail::asynchronous_or<S>(false),
                "SyncPolicy runs one device on the calling thread; this scheduler spreads work "
                "over several devices at once: use AsyncPolicy<S> instead");

public:
  /// @brief The scheduler policy type.
  using scheduler_type = S;
  /// @brief Chunks run one after another on the calling thread.
  static constexpr bool asynchronous = false;

  /// @brief Bind to @p scheduler (shared with the caller, read only).
  explicit SyncPolicy(std::shared_ptr<S> scheduler) : _scheduler(std::move(scheduler))
  {
    if (!_scheduler)
      throw FatalError("SyncPolicy: the scheduler is null");
  }

  /// @brief The scheduler.
  const S & scheduler() const { return *_scheduler; }
  /// @brief This policy's id in the scheduler's feedback hooks (Scheduler::begin).
  std::uint64_t client() const { return _client; }

  /**
   * @brief Run chunks covering [0, batch) in order.
   * @param batch points in the whole call
   * @param job `job(device, ordinal, begin, end)`; its exception ends the loop and propagates,
   *        normalized to a library Exception
   */
  template <class Job> void execute(int64_t batch, Job && job)
  {
    detail::SyncBackend<std::remove_reference_t<Job>> backend(job);
    detail::dispatch(*_scheduler, _client, batch, backend);
  }

private:
  std::shared_ptr<S> _scheduler;
  std::uint64_t _client = detail::new_client_id();
};

/**
 * @brief Drives a thread-per-device pool: each device works through its chunks
 * while the calling thread hands out new ones as capacity frees up.
 *
 * Threads are created once, reused across calls and joined on destruction. A
 * failing chunk is caught in its worker; no new chunk is handed out, the ones
 * in flight are drained, and then one error is rethrown with its dynamic type,
 * or several as an AggregateError in dispatch order.
 *
 * @par Thread safety
 * One dispatch at a time per policy (its handle's rule); the workers are the policy's
 * own. Several policies may share one scheduler and dispatch at once: the scheduler's
 * calls then come from their dispatching threads concurrently (Scheduler says what that
 * asks of a scheduler).
 */
template <class S> class AsyncPolicy
{
  static_assert(check_scheduler<S>(), "AsyncPolicy<S>: S must model the scheduler concept");

public:
  /// @brief The scheduler policy type.
  using scheduler_type = S;
  /// @brief Chunks run on worker threads, one per CPU and lanes per GPU, at once.
  static constexpr bool asynchronous = true;

  /**
   * @brief Bind to @p scheduler and start the worker threads: one for the CPU, and
   * `scheduler->gpu_lanes()` per GPU, each with its own stream.
   *
   * The CPU worker's graphs use `cpu_threads()` intra-op threads (0: every core but one per GPU
   * lane). A GPU lane copies pageable inputs into page-locked memory before the upload, with
   * torch's intra-op thread count, or `NEML2_STAGING_THREADS=N` threads when that is set. (On
   * an H200 host with 16 cores, lanes sharing the cores evenly staged 5-25% slower than lanes
   * with every core each: doc/performance.md, bench/gpu_staging.)
   */
  explicit AsyncPolicy(std::shared_ptr<S> scheduler) : _scheduler(std::move(scheduler))
  {
    if (!_scheduler)
      throw FatalError("AsyncPolicy: the scheduler is null");
    const auto & devices = _scheduler->devices();
    const std::size_t lanes = _scheduler->gpu_lanes();
    const int cores = std::max(1, int(std::thread::hardware_concurrency()));
    int feeders = 0;
    for (const auto & d : devices)
      feeders += d.is_cpu() ? 0 : int(lanes);
    int cpu_threads = _scheduler->cpu_threads();
    if (cpu_threads == 0 && feeders > 0)
      cpu_threads = std::max(1, cores - feeders);
    const int staging = int(detail::positive_from_env("NEML2_STAGING_THREADS").value_or(0));
    _lanes.resize(devices.size());
    _next_lane.assign(devices.size(), 0);
    for (std::size_t i = 0; i < devices.size(); ++i)
      for (std::size_t l = 0; l < (devices[i].is_cpu() ? 1 : lanes); ++l)
        _lanes[i].push_back(std::make_unique<detail::Worker>(
            devices[i], devices[i].is_cpu() ? cpu_threads : staging));
  }

  /// @brief The scheduler.
  const S & scheduler() const { return *_scheduler; }
  /// @copydoc SyncPolicy::client
  std::uint64_t client() const { return _client; }

  /// @copydoc SyncPolicy::execute
  template <class Job> void execute(int64_t batch, Job && job)
  {
    // While the lanes work, this thread only hands out chunks and waits. An idle OpenMP team
    // of its own would still count against the cores, and libgomp then cuts the spinning of
    // every team short, so each short parallel region of a lane wakes its threads from sleep:
    // an implicit model's Newton loop runs thousands of them (doc/performance.md). The team
    // is given back first; the caller's next parallel region starts it again.
    detail::release_openmp_threads();
    detail::AsyncBackend<std::remove_reference_t<Job>> backend(_lanes, _next_lane, job);
    detail::dispatch(*_scheduler, _client, batch, backend);
  }

  /**
   * @brief Make every worker lane give its OpenMP threads back now, and wait until they have;
   * lanes that hold none cost nothing.
   *
   * For a short circuit on the calling thread's CPU: lanes that just ran chunks keep their
   * teams for `NEML2_IDLE_RELEASE_MS`, and while they do, each short parallel region of the
   * caller wakes its threads from sleep (Worker says why). Only between dispatches.
   */
  void release_idle_threads()
  {
    std::vector<detail::Worker *> asked;
    for (auto & device : _lanes)
      for (auto & lane : device)
        if (lane->request_release())
          asked.push_back(lane.get());
    for (auto * lane : asked)
      lane->wait_released();
  }

  /**
   * @brief Run `fn(device)` once on every worker lane, on that lane's thread and stream, and
   * wait for all; the first exception is rethrown once every lane is done.
   *
   * The handle warms every lane up this way (Model::warm_up on the lane's stream), so that no
   * dispatch pays a lane's first use.
   */
  template <class Fn> void on_every_lane(Fn && fn)
  {
    std::mutex mutex;
    std::condition_variable cv;
    std::size_t left = 0;
    std::exception_ptr error;
    for (std::size_t d = 0; d < _lanes.size(); ++d)
      for (auto & lane : _lanes[d])
      {
        ++left;
        lane->submit(
            [&, d]() noexcept
            {
              std::exception_ptr e;
              try
              {
                fn(DeviceIndex(d));
              }
              catch (...)
              {
                e = std::current_exception();
              }
              const std::lock_guard<std::mutex> lock(mutex);
              if (e && !error)
                error = e;
              --left;
              cv.notify_one(); // under the lock: the waiter may return and destroy cv
            });
      }
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return left == 0; });
    if (error)
      std::rethrow_exception(error);
  }

private:
  std::shared_ptr<S> _scheduler;
  std::vector<std::vector<std::unique_ptr<detail::Worker>>> _lanes; // per device
  std::vector<std::size_t> _next_lane;                              // round-robin per device
  std::uint64_t _client = detail::new_client_id();
};

/**
 * @brief The execution policy a scheduler gets by default: AsyncPolicy if its devices run
 * at once (`S::asynchronous`), SyncPolicy if not; AsyncPolicy when S does not say.
 */
template <class S>
using default_policy_t =
    std::conditional_t<detail::asynchronous_or<S>(true), AsyncPolicy<S>, SyncPolicy<S>>;

/// @brief Whether @p P is an execution policy: PassThrough, `SyncPolicy<S>` or
/// `AsyncPolicy<S>` for a scheduler S.
template <class P> struct is_execution_policy : std::false_type
{
};
/// @cond
template <> struct is_execution_policy<PassThrough> : std::true_type
{
};
template <class S> struct is_execution_policy<SyncPolicy<S>> : std::true_type
{
};
template <class S> struct is_execution_policy<AsyncPolicy<S>> : std::true_type
{
};
/// @endcond

/// @brief Whether @p P is an execution policy (the value of is_execution_policy).
template <class P> inline constexpr bool is_execution_policy_v = is_execution_policy<P>::value;
} // namespace neml2::aoti
