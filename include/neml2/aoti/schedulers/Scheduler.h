// The scheduler interface (which device gets the next chunk, and how big) and the rules the
// library's schedulers share: the greedy choice, the lone-device short circuit, the default
// capacity.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "neml2/aoti/Exception.h"

namespace neml2::aoti
{
/**
 * @brief A device of a scheduler, by its position in Scheduler::devices().
 *
 * The per-device state of a dispatch is indexed the same way: DispatchedModel's models and
 * parameter copies, and AsyncPolicy's workers, are built in the order of devices(), so
 * index i names the same device in each of them.
 */
using DeviceIndex = std::size_t;

/// @brief One scheduling decision: run the next @p size points on device @p device.
struct Assignment
{
  DeviceIndex device; ///< the device, a position in Scheduler::devices()
  int64_t size;       ///< number of points in the chunk
};

/**
 * @brief A chunk that completed without error, as the execution policy measured it.
 *
 * Times are seconds since the dispatch began, taken on the device's worker
 * thread when the chunk's job started and ended. Chunks of one device may
 * overlap in time (a GPU has several worker lanes).
 */
struct Completion
{
  DeviceIndex device; ///< the device, a position in Scheduler::devices()
  int64_t size;       ///< number of points in the chunk
  double start;       ///< when the chunk's job started on its worker
  double end;         ///< when it ended
};

/**
 * @brief The interface of every scheduler policy (Simple, StaticHybrid, AdaptiveHybrid,
 * MPISimple, and a user's own: the contract is in schedulers/concept.h).
 *
 * A scheduler knows devices, chunk sizes and capacities, never models. It holds the
 * table of its devices (filled by its constructor) and answers two questions, each its
 * own: next(), which device runs the next chunk and how big it is, and short_circuit(),
 * which device, if any, runs a whole batch as one direct call. The rules the library's
 * schedulers share are free functions beside it: greedy_next(), whole_on_lone_device()
 * and default_capacity(). Execution policies own the loop and the threads.
 *
 * Thread safety: the device table is immutable after construction. next(), begin(),
 * observe(), short_circuit() and observe_dispatch() of one dispatch come from the thread
 * that runs it; a scheduler shared by models that dispatch from several threads at once
 * must make them safe to call concurrently (the library's static schedulers hold no
 * mutable state; AdaptiveHybrid locks its own).
 */
class Scheduler
{
public:
  virtual ~Scheduler() = default;

  /// @brief The devices, in configuration order.
  const std::vector<at::Device> & devices() const { return _devices; }
  /// @brief Points per chunk, per device (0: the whole remaining batch).
  const std::vector<int64_t> & batch_sizes() const { return _batch_sizes; }
  /// @brief Most points in flight per device.
  const std::vector<int64_t> & capacities() const { return _capacities; }
  /// @brief Device preference, higher first; ties go to the earlier device.
  const std::vector<int64_t> & priorities() const { return _priorities; }

  /**
   * @brief Intra-op threads of the CPU worker when it shares the machine with GPU
   * feeder threads (0: every core but one per GPU lane).
   */
  int cpu_threads() const { return _cpu_threads; }

  /// @brief Worker threads, each with its own stream, per GPU under AsyncPolicy.
  std::size_t gpu_lanes() const { return _gpu_lanes; }

  /**
   * @brief The lanes per GPU when a configuration says 0, with or without a CPU worker beside
   * them. (Beside a CPU on a 16-core H100 host, 4 lanes ran the hybrid 1.02-1.17 times as
   * fast as 2 in three runs: doc/performance.md.)
   */
  static constexpr std::size_t default_gpu_lanes = 4;
  /// @brief The most lanes per GPU a configuration may ask for.
  static constexpr std::size_t max_gpu_lanes = 16;

  /// @brief The class name, for messages.
  virtual std::string name() const = 0;

  // Feedback hooks. The execution policies say when a dispatch begins and when
  // each chunk ran, so that a learning scheduler (AdaptiveHybrid) can measure its
  // devices; the static schedulers keep these no-ops. A dispatch's begin(), next()
  // and observe() calls all come from the one thread that runs the dispatch.

  /**
   * @brief A dispatch begins.
   *
   * The first argument (client) says who dispatches: a process-unique id per
   * execution policy (detail::new_client_id()), so that models sharing a scheduler
   * keep their measurements apart; the second (batch) is the number of points in
   * the whole dispatch.
   *
   * Must not throw: the policies call the hooks while chunks are in flight.
   */
  virtual void begin(std::uint64_t /*client*/, int64_t /*batch*/) const noexcept {}

  /// @brief A chunk of the current dispatch completed without error. Must not throw.
  virtual void observe(const Completion & /*chunk*/) const noexcept {}
  /**
   * @brief A dispatch of @p batch points of @p client, about which short_circuit() was asked
   * right before on this thread, completed without error in @p seconds of wall time on the
   * dispatching thread, whether it ran whole or spread (for a direct call on a GPU, kernels
   * may still run when the call returns). Must not throw.
   */
  virtual void observe_dispatch(std::uint64_t /*client*/, int64_t /*batch*/,
                                double /*seconds*/) const noexcept
  {
  }

  /**
   * @brief The next chunk: which device runs it and how many points it holds; nothing
   * while every device that should get more work is full (some chunk is then in flight).
   * @param load points in flight on each device
   * @param remaining points not yet assigned (> 0)
   */
  virtual std::optional<Assignment> next(const std::vector<int64_t> & load,
                                         int64_t remaining) const = 0;

  /**
   * @brief The device that should run a whole batch of @p batch points as one direct
   * call, if any: no slicing, and no copy when the inputs are on that device already
   * (DispatchedModel short-circuits only then). The first argument is the client, as
   * in begin(): a learning scheduler answers from what it learned for that client; the
   * third is the device that holds the inputs.
   */
  virtual std::optional<DeviceIndex> short_circuit(std::uint64_t client, int64_t batch,
                                                   const at::Device & inputs) const = 0;

protected:
  /// @brief Subclasses fill these in their validating constructors.
  std::vector<at::Device> _devices;
  /// @copydoc batch_sizes()
  std::vector<int64_t> _batch_sizes;
  /// @copydoc capacities()
  std::vector<int64_t> _capacities;
  /// @copydoc priorities()
  std::vector<int64_t> _priorities;
  /// @copydoc cpu_threads()
  int _cpu_threads = 0;
  /// @copydoc gpu_lanes()
  std::size_t _gpu_lanes = default_gpu_lanes;

  /**
   * @brief Validate a configuration's `gpu_lanes`; errors start with @p cls. 0 picks
   * default_gpu_lanes.
   */
  static std::size_t checked_gpu_lanes(const std::string & cls, int lanes)
  {
    if (lanes < 0 || std::size_t(lanes) > max_gpu_lanes)
      throw FatalError(cls + "gpu_lanes = " + std::to_string(lanes) +
                       " must be between 0 (automatic) and " + std::to_string(max_gpu_lanes));
    return lanes > 0 ? std::size_t(lanes) : default_gpu_lanes;
  }

  /// @brief Validate a configuration's `cpu_threads` (>= 0; 0: automatic); errors start
  /// with @p cls.
  static int checked_cpu_threads(const std::string & cls, int threads)
  {
    if (threads < 0)
      throw FatalError(cls + "cpu_threads = " + std::to_string(threads) +
                       " must be >= 0 (0: automatic)");
    return threads;
  }
};

/**
 * @brief The greedy rule: the next chunk goes to the highest-priority device of @p s whose
 * load plus the chunk stays within its capacity (an idle device always fits; ties go to the
 * earlier device), and holds that device's batch size (or all of @p remaining, for a batch
 * size of 0 or more than remain). Simple, StaticHybrid and MPISimple decide by it.
 * @param s the scheduler whose device table is read
 * @param load points in flight on each device
 * @param remaining points not yet assigned (> 0)
 */
inline std::optional<Assignment>
greedy_next(const Scheduler & s, const std::vector<int64_t> & load, int64_t remaining)
{
  const auto & sizes = s.batch_sizes();
  const auto & capacities = s.capacities();
  const auto & priorities = s.priorities();
  std::optional<Assignment> best;
  for (DeviceIndex i = 0; i < s.devices().size(); ++i)
  {
    const int64_t size = sizes[i] > 0 ? std::min(sizes[i], remaining) : remaining;
    const bool fits = load[i] == 0 || load[i] + size <= capacities[i];
    if (fits && (!best || priorities[i] > priorities[best->device]))
      best = Assignment{i, size};
  }
  return best;
}

/**
 * @brief The lone-device short circuit: device 0 when @p s has one device and @p batch is at
 * most @p limit points (a @p limit of 0: any batch), wherever the inputs are; else nothing.
 */
inline std::optional<DeviceIndex>
whole_on_lone_device(const Scheduler & s, int64_t batch, int64_t limit)
{
  if (s.devices().size() == 1 && (limit == 0 || batch <= limit))
    return DeviceIndex{0};
  return std::nullopt;
}

/**
 * @brief The capacity of a device that a configuration leaves at 0: one chunk of
 * @p batch_size per worker, and at least two chunks (the CPU has one worker, a GPU
 * @p gpu_lanes); unbounded for a device that does not chunk (@p batch_size 0).
 */
inline int64_t
default_capacity(const at::Device & device, int64_t batch_size, std::size_t gpu_lanes)
{
  if (batch_size <= 0)
    return std::numeric_limits<int64_t>::max();
  const std::size_t chunks = device.is_cpu() ? 2 : std::max<std::size_t>(2, gpu_lanes);
  return int64_t(chunks) * batch_size;
}

namespace detail
{
/// @brief A new process-unique, non-zero id for Scheduler::begin().
inline std::uint64_t
new_client_id()
{
  static std::atomic<std::uint64_t> last{0};
  return ++last;
}
} // namespace detail
} // namespace neml2::aoti
