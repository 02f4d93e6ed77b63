// AdaptiveHybrid: one batch over a CPU and GPUs, with chunk sizes learned from measured chunk
// times. The parts, one header each under schedulers/adaptive/: the cost model (a robust line
// fit), the history kept between calls, the state of one dispatch, and the planner.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/detail/broadcast.h"
#include "neml2/aoti/detail/parse_device.h"
#include "neml2/aoti/schedulers/Scheduler.h"
#include "neml2/aoti/schedulers/adaptive/cost_model.h"
#include "neml2/aoti/schedulers/adaptive/history.h"
#include "neml2/aoti/schedulers/adaptive/planner.h"
#include "neml2/aoti/schedulers/adaptive/session.h"
#include "neml2/aoti/schedulers/adaptive/way_trial.h"

namespace neml2::aoti
{
/**
 * @brief Spreads one batch over several devices and balances itself: no chunk
 * sizes to tune.
 *
 * Every completed chunk is a measurement (Scheduler::observe). Per device,
 * AdaptiveHybrid fits a fixed cost per chunk plus a cost per point, robustly
 * (medians; see CostEstimate), and plans so that all devices finish together:
 * after each measurement it solves for the common finish time of the points
 * left and each device's share. Chunks are guided: a device gets half of its
 * share, then half of the rest, and its last share whole, so chunks are large
 * first and small towards the end; never smaller than what pays for its fixed
 * cost or than the size below which the device was seen not to be full.
 * A GPU (several worker lanes) gets its chunks in rounds of equal size, one per
 * lane, so that its lanes stay busy and finish together.
 *
 * A device not measured yet gets probes first (small, then four times larger:
 * two sizes give the fit its slope), the chunks of a device's first call count
 * as warm-up, and no chunk exceeds 16 times the largest one measured on its
 * device, so the cold first call cannot commit a slow device to a huge chunk.
 * Memory limits bound the points in flight per device.
 *
 * What it learned is kept per client (one per execution policy, so models
 * sharing a scheduler do not mix) and batch size, across calls; a new batch
 * size starts from the nearest one of the same client. Decisions depend only
 * on the measurements, never on a clock, so the same measurements give the
 * same chunks (sim::Simulator relies on that).
 *
 * @par Thread safety
 * Several models may share one scheduler and dispatch at once from different
 * threads: it locks its own state, and a dispatch's state is keyed by the thread
 * that runs it. forget(), learned(), estimate() and trial() may be called from any
 * thread at any time.
 *
 * @code
 * AdaptiveHybrid::Config cfg;
 * cfg.devices = neml2::aoti::devices(); // the CPU and every GPU this process sees
 * auto sched = std::make_shared<AdaptiveHybrid>(cfg);
 * auto m = load_model("aoti/model_aoti.i", "model", sched); // AsyncPolicy<AdaptiveHybrid>
 * const TensorMap in{{"strain", at::rand({1000000, 6}, at::kDouble) * 1e-3}};
 * const TensorMap out = m.forward(in); // the first calls probe; later ones are balanced
 * auto cpu = sched->estimate(m.policy().client(), 1000000, 0); // what it learned of the CPU
 * @endcode
 */
class AdaptiveHybrid : public Scheduler
{
public:
  /// @brief Several devices run at once: asynchronous execution is required.
  static constexpr bool asynchronous = true;

  /// @brief Configuration: only devices is required; the bounds broadcast from length 1.
  struct Config
  {
    std::vector<std::string> devices;   ///< e.g. {"cpu", "cuda:0"}; at most one CPU
    std::vector<int64_t> max_chunks;    ///< largest chunk per device; 0 or empty: no bound
    std::vector<int64_t> memory_limits; ///< most points in flight per device; 0 or empty: no bound
    int64_t min_chunk = 1;              ///< smallest chunk, except for the last points of a batch
    int cpu_threads = 0; ///< intra-op threads of the CPU worker; 0: all cores but one per GPU lane
    int gpu_lanes = 0;   ///< worker lanes per GPU; 0: 4
    /// Accept CUDA devices this process does not see: for planning with sim::Simulator only
    /// (a DispatchedModel cannot load them).
    bool virtual_devices = false;
  };

  /// @brief Samples kept per device and learned entry (the most recent ones).
  static constexpr std::size_t window = detail::adaptive::window;
  /// @brief Learned entries kept (client, batch size), least recently used dropped first.
  static constexpr std::size_t max_entries = detail::adaptive::max_entries;
  /// @brief A lone device without bounds runs batches up to this size whole (short circuit).
  static constexpr int64_t lone_whole = 65536;

  /// @brief Validate @p config; errors name the class, the field and the index.
  explicit AdaptiveHybrid(Config config);

  /// @brief The configuration as given.
  const Config & config() const { return _config; }
  /// @copydoc Scheduler::name
  std::string name() const override { return "AdaptiveHybrid"; }

  /// @copydoc Scheduler::begin
  void begin(std::uint64_t client, int64_t batch) const noexcept override;

  /**
   * @brief The next chunk: which device, how many points; nothing while the
   * devices that should get more work are busy (some chunk is then in flight).
   * @param load points in flight on each device
   * @param remaining points not yet assigned (> 0)
   */
  std::optional<Assignment> next(const std::vector<int64_t> & load,
                                 int64_t remaining) const noexcept override;

  /// @copydoc Scheduler::observe
  void observe(const Completion & chunk) const noexcept override;

  /**
   * @brief The device that should run a batch of @p batch points of @p client whole, as one
   * direct call, with its inputs on @p inputs; else nothing (the batch is spread).
   *
   * A lone device runs a batch whole up to its chunk bound (lone_whole without bounds).
   * Over several devices, a GPU that holds the inputs runs the batch whole at once, within
   * its bounds (max_chunks, memory_limits): a direct call copies nothing, while spreading
   * would copy the other devices' shares off it. With the inputs on the CPU, three ways are
   * timed per client and batch size, by the wall time of the whole dispatch
   * (observe_dispatch()): spread over every device, spread over the other devices only (the
   * CPU's chunks can slow the GPUs' staging more than they add), and one direct call on the
   * CPU (within its bounds; the direct call pays no hand-off to a worker and no stitching).
   * Once every device is measured: three spread dispatches, then each other way (twice, when
   * both were more than 1.25 times as slow as spreading: the first may pay a warm-up; else
   * three times), and the way with the least median is kept until forget()
   * (detail::adaptive::WholeTrial, trial()).
   *
   * Called on the dispatching thread right before the dispatch: the way it picks holds for
   * the dispatch that follows on that thread.
   */
  std::optional<DeviceIndex> short_circuit(std::uint64_t client, int64_t batch,
                                           const at::Device & inputs) const override;

  /// @copydoc Scheduler::observe_dispatch
  void observe_dispatch(std::uint64_t client, int64_t batch,
                        double seconds) const noexcept override;

  /// @brief The trial of the ways to run a batch with its inputs on the host (WholeTrial).
  using Trial = detail::adaptive::WholeTrial;

  /**
   * @brief What was timed of the ways to run a batch of @p batch points of @p client with
   * its inputs on @p inputs (nothing before the first measurement, or for a device that is
   * not one of the scheduler's).
   */
  std::optional<Trial> trial(std::uint64_t client, int64_t batch, const at::Device & inputs) const;

  /**
   * @brief What was learned about @p device for the dispatches of @p client with
   * @p batch points (nothing before the first measurement).
   */
  std::optional<CostEstimate> estimate(std::uint64_t client, int64_t batch,
                                       std::size_t device) const;

  /// @brief Number of learned entries (one per client and batch size).
  std::size_t learned() const;

  /// @brief Forget everything learned (the next call of every model starts cold).
  void forget() const;

private:
  using Sessions = std::map<std::thread::id, detail::adaptive::Session>;

  /// The way short_circuit() picked for the calling thread's next dispatch.
  struct Pending
  {
    std::uint64_t client;      // the dispatch's client
    int64_t batch;             // and its size
    std::size_t inputs;        // the device that holds its inputs
    detail::adaptive::Way way; // the way it takes
    unsigned allowed;          // the ways allowed for it (detail::adaptive::allowed)
    bool timed;                // spread: whole, with every device it used measured
  };

  /// A bound field spread over the devices (empty: no bound), each entry checked >= 0.
  std::vector<int64_t> bounds(const std::vector<int64_t> & v, const std::string & field) const;
  /// A session for the calling thread; one it left unfinished is folded in first.
  Sessions::iterator start_session(std::uint64_t client, int64_t batch) const;

  Config _config;
  detail::adaptive::Planner _planner;
  std::vector<int64_t> _whole_limit; // per device: the most points of a direct call
  mutable std::mutex _mutex;
  mutable detail::adaptive::HistoryTable _history;
  mutable Sessions _sessions;
  mutable std::map<std::thread::id, Pending> _pending;
};

/// @brief The spec-style name for AdaptiveHybrid.
using AdaptiveHybridScheduler = AdaptiveHybrid;

// ---------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------

inline AdaptiveHybrid::AdaptiveHybrid(Config config)
    : _config(std::move(config)),
      _history(_config.devices.size())
{
  const std::string cls = "AdaptiveHybrid: ";
  const std::size_t n = _config.devices.size();
  _devices = detail::parse_device_list(_config.devices, cls, !_config.virtual_devices);
  if (_config.min_chunk < 1)
    throw FatalError(cls + "min_chunk = " + std::to_string(_config.min_chunk) + " must be >= 1");
  const auto max_chunk = bounds(_config.max_chunks, "max_chunks");
  const auto memory = bounds(_config.memory_limits, "memory_limits");
  for (std::size_t i = 0; i < n; ++i)
  {
    const std::string at = "[" + std::to_string(i) + "] = ";
    if (max_chunk[i] > 0 && max_chunk[i] < _config.min_chunk)
      throw FatalError(cls + "max_chunks" + at + std::to_string(max_chunk[i]) +
                       " < min_chunk = " + std::to_string(_config.min_chunk));
    if (memory[i] > 0 && memory[i] < _config.min_chunk)
      throw FatalError(cls + "memory_limits" + at + std::to_string(memory[i]) +
                       " < min_chunk = " + std::to_string(_config.min_chunk));
  }
  _cpu_threads = checked_cpu_threads(cls, _config.cpu_threads);
  // The device table holds the bounds: a chunk of at most batch_sizes points (0: no bound),
  // at most capacities points in flight. _whole_limit is the most points a direct call
  // may take on each device.
  constexpr int64_t none = std::numeric_limits<int64_t>::max();
  for (std::size_t i = 0; i < n; ++i)
  {
    const int64_t m = memory[i] > 0 ? memory[i] : none;
    const int64_t c = std::min(max_chunk[i] > 0 ? max_chunk[i] : none, m);
    _batch_sizes.push_back(c == none ? 0 : c);
    _whole_limit.push_back(c);
    _capacities.push_back(m);
    _priorities.push_back(0);
  }
  _gpu_lanes = checked_gpu_lanes(cls, _config.gpu_lanes);
  _planner = detail::adaptive::Planner(_config.min_chunk, max_chunk, memory);
}

inline void
AdaptiveHybrid::begin(std::uint64_t client, int64_t batch) const noexcept
{
  try
  {
    const std::lock_guard<std::mutex> lock(_mutex);
    start_session(client, batch);
  }
  catch (...)
  {
    // Learning is best effort: without a session, next() starts one.
  }
}

inline std::optional<Assignment>
AdaptiveHybrid::next(const std::vector<int64_t> & load, int64_t remaining) const noexcept
{
  try
  {
    const std::lock_guard<std::mutex> lock(_mutex);
    auto it = _sessions.find(std::this_thread::get_id());
    if (it == _sessions.end())
      it = start_session(0, remaining);
    return _planner.decide(it->second, load, remaining);
  }
  catch (...)
  {
    // Out of memory in the bookkeeping: still make progress, one bounded chunk.
    for (std::size_t i = 0; i < load.size(); ++i)
      if (load[i] > 0)
        return std::nullopt;
    return Assignment{0, std::min(remaining, _batch_sizes[0] > 0 ? _batch_sizes[0] : lone_whole)};
  }
}

inline void
AdaptiveHybrid::observe(const Completion & chunk) const noexcept
{
  try
  {
    const std::lock_guard<std::mutex> lock(_mutex);
    const auto it = _sessions.find(std::this_thread::get_id());
    if (it == _sessions.end() || chunk.device >= _devices.size())
      return;
    detail::adaptive::Session & s = it->second;
    detail::adaptive::record(s, chunk);
    bool idle = s.assigned >= s.batch;
    for (const auto & d : s.devices)
      idle = idle && d.flights.empty();
    if (idle)
    {
      const bool timed = detail::adaptive::finish(s);
      const auto p = _pending.find(it->first);
      if (p != _pending.end() && p->second.client == s.client && p->second.batch == s.batch)
        p->second.timed = timed;
      _sessions.erase(it);
    }
  }
  catch (...)
  {
  }
}

inline std::optional<std::size_t>
AdaptiveHybrid::short_circuit(std::uint64_t client, int64_t batch, const at::Device & inputs) const
{
  namespace ad = detail::adaptive;
  // A lone device runs a batch whole up to its chunk bound. Without a bound, that is up
  // to lone_whole points: a larger batch on a lone CPU still gets its chunks sized (a
  // memory-bound model runs faster in chunks that stay in cache), a smaller one pays no
  // hand-off to a worker.
  if (_devices.size() == 1)
    return whole_on_lone_device(*this, batch,
                                _whole_limit[0] == std::numeric_limits<int64_t>::max()
                                    ? std::max(lone_whole, _config.min_chunk)
                                    : _whole_limit[0]);
  std::size_t d = 0;
  while (d < _devices.size() && _devices[d] != inputs)
    ++d;
  try
  {
    const std::lock_guard<std::mutex> lock(_mutex);
    const auto tid = std::this_thread::get_id();
    _pending.erase(tid);
    const bool fits = d < _devices.size() && batch <= _whole_limit[d];
    if (d == _devices.size() || !inputs.is_cpu())
      return fits ? std::optional<std::size_t>(d) : std::nullopt;
    const unsigned allowed = ad::allowed(fits);
    ad::Way way = ad::Way::spread;
    if (const auto entry = _history.find(client, batch))
    {
      ad::WholeTrial & t = entry->whole[d];
      const auto & h = entry->devices[d].window;
      if (fits && !h.empty() && !t.decided)
        ad::consider(t, ad::robust_fit(ad::usable(h, {})).seconds_per_point * double(batch));
      way = ad::next_way(t, allowed);
    }
    _pending[tid] = Pending{client, batch, d, way, allowed, false};
    return way == ad::Way::direct ? std::optional<std::size_t>(d) : std::nullopt;
  }
  catch (...)
  {
    return std::nullopt; // out of memory in the bookkeeping: spread the batch
  }
}

inline void
AdaptiveHybrid::observe_dispatch(std::uint64_t client, int64_t batch, double seconds) const noexcept
{
  namespace ad = detail::adaptive;
  try
  {
    const std::lock_guard<std::mutex> lock(_mutex);
    const auto p = _pending.find(std::this_thread::get_id());
    if (p == _pending.end())
      return;
    const Pending w = p->second;
    _pending.erase(p);
    if (w.client != client || w.batch != batch || !(w.timed || w.way == ad::Way::direct))
      return;
    if (const auto entry = _history.find(client, batch))
      ad::record(entry->whole[w.inputs], w.way, seconds, w.allowed);
  }
  catch (...)
  {
  }
}

inline std::optional<AdaptiveHybrid::Trial>
AdaptiveHybrid::trial(std::uint64_t client, int64_t batch, const at::Device & inputs) const
{
  const std::lock_guard<std::mutex> lock(_mutex);
  const auto entry = _history.find(client, batch);
  for (std::size_t d = 0; entry && d < _devices.size(); ++d)
    if (_devices[d] == inputs)
      return entry->whole[d];
  return std::nullopt;
}

inline std::optional<CostEstimate>
AdaptiveHybrid::estimate(std::uint64_t client, int64_t batch, std::size_t device) const
{
  const std::lock_guard<std::mutex> lock(_mutex);
  const auto entry = _history.find(client, batch);
  if (!entry || device >= _devices.size())
    return std::nullopt;
  const detail::adaptive::History & h = entry->devices[device];
  if (h.window.empty())
    return std::nullopt;
  CostEstimate e = detail::adaptive::robust_fit(detail::adaptive::usable(h.window, {}));
  e.concurrency = h.concurrency;
  return e;
}

inline std::size_t
AdaptiveHybrid::learned() const
{
  const std::lock_guard<std::mutex> lock(_mutex);
  return _history.size();
}

inline void
AdaptiveHybrid::forget() const
{
  const std::lock_guard<std::mutex> lock(_mutex);
  _history.clear();
  _sessions.clear();
}

inline std::vector<int64_t>
AdaptiveHybrid::bounds(const std::vector<int64_t> & v, const std::string & field) const
{
  const std::size_t n = _config.devices.size();
  const auto out = detail::broadcast(v, n, "AdaptiveHybrid: ", field, 0);
  for (std::size_t i = 0; i < n; ++i)
    if (out[i] < 0)
      throw FatalError("AdaptiveHybrid: " + field + "[" + std::to_string(i) +
                       "] = " + std::to_string(out[i]) + " must be >= 0 (0: no bound)");
  return out;
}

inline AdaptiveHybrid::Sessions::iterator
AdaptiveHybrid::start_session(std::uint64_t client, int64_t batch) const
{
  const auto tid = std::this_thread::get_id();
  const auto old = _sessions.find(tid);
  if (old != _sessions.end())
  {
    detail::adaptive::finish(old->second); // an interrupted dispatch: keep what it measured
    _sessions.erase(old);
  }
  auto s = detail::adaptive::open_session(client, batch, _history.acquire(client, batch));
  const auto p = _pending.find(tid);
  if (p != _pending.end() && p->second.client == client && p->second.batch == batch &&
      p->second.way == detail::adaptive::Way::others)
    s.excluded = p->second.inputs;
  return _sessions.emplace(tid, std::move(s)).first;
}
} // namespace neml2::aoti
