// The one dispatch loop: SyncPolicy, AsyncPolicy and sim::Simulator differ only in their backend.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/schedulers/Scheduler.h"

namespace neml2::aoti::detail
{
/// What a backend reports of one chunk once it has finished (or failed).
struct ChunkDone
{
  std::size_t device = 0;  // index into the scheduler's devices
  std::size_t ordinal = 0; // dispatch order
  int64_t size = 0;        // points
  double start = 0;        // seconds since the dispatch began, on the backend's clock
  double end = 0;
  std::shared_ptr<const Exception> error; // null when the chunk succeeded
};

/**
 * The report of a chunk whose error could not even be copied (no host memory). It is made once,
 * so reporting it allocates nothing; dispatch() names the scheduler in it once the dispatch
 * has drained.
 */
inline const std::shared_ptr<const Exception> &
unreportable_error()
{
  static const std::shared_ptr<const Exception> e =
      std::make_shared<FatalError>("out of host memory while reporting a failed chunk");
  return e;
}

/**
 * The caught exception as a report for ChunkDone::error, or unreportable_error() when even that
 * cannot be allocated. Call it only inside a catch block.
 */
inline std::shared_ptr<const Exception>
report_current_exception(const std::string & context) noexcept
{
  try
  {
    return normalize_current_exception(context);
  }
  catch (...)
  {
    return unreportable_error();
  }
}

/**
 * Drive @p scheduler over [0, @p batch) through @p backend: `begin`, then `next` while the
 * backend accepts chunks and the scheduler assigns them, then wait for the earliest completion,
 * tell the scheduler (`observe`), and repeat. Every assignment is checked (a device the
 * scheduler has, 1 <= size <= points left) before the backend sees it.
 *
 * After the first failed chunk, or an error of the loop itself (the scheduler's next(), a check,
 * the backend refusing a chunk), nothing more is submitted; the chunks in flight are waited for,
 * since they use the caller's frame. A chunk whose solve failed at some of its points (a
 * ConvergenceError that names them) is the exception: the rest of the batch still runs, so that
 * the errors name every failed point of the call. Then one error is rethrown with its dynamic
 * type, or several as an AggregateError: failed chunks in dispatch order, the loop's error last.
 *
 * The backend provides
 * - `bool accepts(std::size_t in_flight)`: whether another chunk may be submitted now;
 * - `void submit(const Assignment &, std::size_t ordinal, int64_t begin)`: start the chunk of
 *   rows [begin, begin + size); it may throw only when it could not start the chunk;
 * - `ChunkDone wait()`: block until a submitted chunk finishes, and report it; it must not throw.
 */
template <class S, class Backend>
void
dispatch(S & scheduler, std::uint64_t client, int64_t batch, Backend & backend)
{
  const std::size_t n = scheduler.devices().size();
  std::vector<int64_t> load(n, 0);
  // Failed chunks (ordinal, error), and the loop's own error: kept until nothing is in flight.
  std::vector<std::pair<std::size_t, std::shared_ptr<const Exception>>> failed;
  std::shared_ptr<const Exception> stop;
  // Whether a failed chunk stops the submission: any error but a ConvergenceError that names
  // its points, after which the rest of the batch still runs so that the error covers it.
  bool halt = false;
  std::size_t in_flight = 0, ordinal = 0;
  int64_t offset = 0;

  scheduler.begin(client, batch);
  while (true)
  {
    while (!halt && !stop && offset < batch && backend.accepts(in_flight))
      try
      {
        const std::optional<Assignment> a = scheduler.next(load, batch - offset);
        if (!a)
          break;
        if (a->device >= n || a->size < 1 || a->size > batch - offset)
          throw FatalError(scheduler.name() + " assigned " + std::to_string(a->size) +
                           " points to device " + std::to_string(a->device) + " of " +
                           std::to_string(n) + " with " + std::to_string(batch - offset) +
                           " points left");
        backend.submit(*a, ordinal, offset);
        ++ordinal;
        ++in_flight;
        load[a->device] += a->size;
        offset += a->size;
      }
      catch (...)
      {
        stop = report_current_exception(scheduler.name());
      }
    if (in_flight == 0)
    {
      // Every device is idle: a scheduler that hands out nothing now would leave rows
      // unassigned, so say so rather than return a partial result.
      if (!halt && !stop && offset < batch)
      {
        FatalError idle(scheduler.name() + ": no chunk assigned with " +
                        std::to_string(batch - offset) + " points left and every device idle");
        if (failed.empty())
          throw idle;
        stop = idle.clone(); // reported after the chunks that failed to converge
      }
      break;
    }
    ChunkDone d = backend.wait();
    load[d.device] -= d.size;
    --in_flight;
    if (!d.error)
      scheduler.observe(Completion{d.device, d.size, d.start, d.end}); // noexcept
    else
      try
      {
        const auto * c = dynamic_cast<const ConvergenceError *>(d.error.get());
        halt = halt || !c || !c->points();
        failed.emplace_back(d.ordinal, std::move(d.error));
      }
      catch (...)
      {
        if (!stop)
          stop = unreportable_error();
      }
  }
  // Nothing is in flight now: the errors can be ordered, named and reported.
  if (failed.empty() && !stop)
    return;
  std::vector<std::shared_ptr<const Exception>> all;
  std::sort(failed.begin(), failed.end(),
            [](const auto & a, const auto & b) { return a.first < b.first; });
  for (auto & f : failed)
    all.push_back(std::move(f.second));
  if (stop)
    all.push_back(std::move(stop));
  for (auto & e : all)
    if (e == unreportable_error())
      e = std::make_shared<FatalError>(scheduler.name() + ": " + e->what());
  if (all.size() == 1)
    all.front()->rethrow();
  throw AggregateError(std::move(all));
}
} // namespace neml2::aoti::detail
