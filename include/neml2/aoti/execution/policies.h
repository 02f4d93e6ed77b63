// Execution policies: how chunks run (on the calling thread, or on a thread per device).
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/detail/Worker.h"
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
};

/**
 * @brief Runs the chunk loop on the calling thread, one chunk at a time.
 *
 * For single-device schedulers (Simple, MPISimple).
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
    const std::vector<int64_t> idle(_scheduler->devices().size(), 0);
    // Feedback for learning schedulers (no-ops for the static ones), as AsyncPolicy gives it.
    const auto t0 = std::chrono::steady_clock::now();
    const auto since_t0 = [&]
    { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    _scheduler->begin(_client, batch);
    std::size_t ordinal = 0;
    for (int64_t offset = 0; offset < batch;)
    {
      const Assignment a = *_scheduler->next(idle, batch - offset);
      const double start = since_t0();
      try
      {
        job(a.device, ordinal++, offset, offset + a.size);
      }
      catch (...)
      {
        rethrow_normalized("");
      }
      _scheduler->observe(Completion{a.device, a.size, start, since_t0()});
      offset += a.size;
    }
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
 */
template <class S> class AsyncPolicy
{
  static_assert(check_scheduler<S>(), "AsyncPolicy<S>: S must model the scheduler concept");

public:
  /// @brief The scheduler policy type.
  using scheduler_type = S;

  /// @brief Worker threads (each with its own stream) per GPU; the CPU gets one.
  static constexpr std::size_t gpu_lanes = 2;

  /// @brief Bind to @p scheduler and start the worker threads: one for the CPU, two per GPU.
  explicit AsyncPolicy(std::shared_ptr<S> scheduler) : _scheduler(std::move(scheduler))
  {
    if (!_scheduler)
      throw FatalError("AsyncPolicy: the scheduler is null");
    const auto & devices = _scheduler->devices();
    std::size_t feeders = 0;
    for (const auto & d : devices)
      feeders += d.is_cpu() ? 0 : gpu_lanes;
    // The CPU worker's graphs use the intra-op pool; leave a core to each GPU feeder.
    int cpu_threads = _scheduler->cpu_threads();
    if (cpu_threads == 0 && feeders > 0)
      cpu_threads = std::max(1, int(std::thread::hardware_concurrency()) - int(feeders));
    _lanes.resize(devices.size());
    _next_lane.assign(devices.size(), 0);
    for (std::size_t i = 0; i < devices.size(); ++i)
      for (std::size_t l = 0; l < (devices[i].is_cpu() ? 1 : gpu_lanes); ++l)
        _lanes[i].push_back(std::make_unique<detail::Worker>(devices[i], cpu_threads));
  }

  /// @brief The scheduler.
  const S & scheduler() const { return *_scheduler; }
  /// @copydoc SyncPolicy::client
  std::uint64_t client() const { return _client; }

  /// @copydoc SyncPolicy::execute
  template <class Job> void execute(int64_t batch, Job && job)
  {
    struct Done
    {
      std::size_t device;
      std::size_t ordinal;
      int64_t size;
      std::shared_ptr<const Exception> error;
      double start, end; // seconds since t0, on the worker: feedback for Scheduler::observe
    };
    const auto t0 = std::chrono::steady_clock::now();
    const auto since_t0 = [t0]
    { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    _scheduler->begin(_client, batch);
    std::mutex mutex;
    std::condition_variable cv;
    // Each chunk's record is a list node made here, on the calling thread, before the
    // chunk is submitted; the worker fills it and splices it into `done`. Reporting a
    // chunk therefore allocates nothing on the worker: a chunk that fails because the
    // host is out of memory is still reported, never lost (which would hang the call).
    std::list<Done> pending, done;
    // What a worker reports when even the chunk's error cannot be allocated.
    const std::shared_ptr<const Exception> no_memory = std::make_shared<FatalError>(
        _scheduler->name() + ": out of host memory while reporting a failed chunk");

    std::vector<int64_t> load(_lanes.size(), 0);
    std::list<Done> failed; // failed chunks, spliced out of `done`
    // An error of the dispatcher itself (the scheduler's next(), or no memory for one more
    // task). Chunks in flight use this frame, so nothing may leave it before they are all back:
    // such an error stops the submission and is reported after the last chunk returns.
    std::shared_ptr<const Exception> stop;
    const auto stop_here = [&]() noexcept
    {
      try
      {
        stop = normalize_current_exception(_scheduler->name());
      }
      catch (...)
      {
        stop = no_memory;
      }
    };
    std::size_t in_flight = 0, ordinal = 0;
    int64_t offset = 0;
    while (true)
    {
      while (failed.empty() && !stop && offset < batch)
        try
        {
          const auto a = _scheduler->next(load, batch - offset);
          if (!a)
            break;
          const int64_t begin = offset, end = offset + a->size;
          typename std::list<Done>::iterator slot;
          {
            const std::lock_guard<std::mutex> lock(mutex);
            slot = pending.insert(pending.end(),
                                  Done{a->device, ordinal, end - begin, nullptr, 0.0, 0.0});
          }
          auto & lanes = _lanes[a->device];
          lanes[_next_lane[a->device] % lanes.size()]->submit(
              [&, slot, begin, end]() noexcept
              {
                Done & d = *slot; // only this worker touches it until it is spliced
                d.start = since_t0();
                try
                {
                  job(d.device, d.ordinal, begin, end);
                }
                catch (...)
                {
                  try
                  {
                    d.error = normalize_current_exception("");
                  }
                  catch (...)
                  {
                    d.error = no_memory;
                  }
                }
                d.end = since_t0();
                // Notify under the lock: once it is released the dispatcher may return and
                // destroy `cv`, so this thread must not touch it afterwards.
                const std::lock_guard<std::mutex> lock(mutex);
                done.splice(done.end(), pending, slot);
                cv.notify_one();
              });
          ++_next_lane[a->device];
          ++ordinal;
          load[a->device] += a->size;
          offset = end;
          ++in_flight;
        }
        catch (...)
        {
          stop_here();
        }
      if (in_flight == 0)
      {
        // Every device is idle: a scheduler that hands out nothing now would
        // leave rows unassigned, so say so rather than return a partial result.
        if (failed.empty() && !stop && offset < batch)
          throw FatalError(_scheduler->name() + ": no chunk assigned with " +
                           std::to_string(batch - offset) + " points left and every device idle");
        break;
      }
      std::list<Done> got;
      {
        std::unique_lock<std::mutex> lock(mutex);
        cv.wait(lock, [&] { return !done.empty(); });
        got.splice(got.end(), done, done.begin());
      }
      const Done & d = got.front();
      load[d.device] -= d.size;
      --in_flight;
      if (d.error)
        failed.splice(failed.end(), got);
      else
        _scheduler->observe(Completion{d.device, d.size, d.start, d.end}); // noexcept
    }
    // Nothing is in flight now: the errors can be ordered and reported.
    std::vector<std::shared_ptr<const Exception>> all;
    failed.sort([](const Done & a, const Done & b) { return a.ordinal < b.ordinal; });
    for (auto & f : failed)
      all.push_back(std::move(f.error));
    if (stop)
      all.push_back(std::move(stop));
    if (all.empty())
      return;
    if (all.size() == 1)
      all.front()->rethrow();
    throw AggregateError(std::move(all));
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
} // namespace neml2::aoti
