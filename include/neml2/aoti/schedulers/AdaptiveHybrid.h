// AdaptiveHybrid: one batch over a CPU and GPUs, with chunk sizes learned from measured chunk
// times.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/detail/device.h"
#include "neml2/aoti/detail/stats.h"
#include "neml2/aoti/schedulers/Scheduler.h"

namespace neml2::aoti
{
/**
 * @brief What AdaptiveHybrid has learned about one device: a chunk of n points
 * costs about `overhead + n * seconds_per_point` seconds of the device's time.
 *
 * "The device's time" is a chunk's share of its device: when two chunks run at
 * once on one GPU (two worker lanes), each is charged half of the time they
 * overlap, so that the costs of consecutive chunks add up to elapsed time.
 */
struct CostEstimate
{
  double overhead = 0;          ///< seconds per chunk, whatever its size
  double seconds_per_point = 0; ///< seconds per point
  std::size_t samples = 0;      ///< measured chunks behind the fit
  int concurrency = 1;          ///< most chunks seen running at once on the device

  /// @brief The predicted device time of a chunk of @p n points.
  double seconds(int64_t n) const { return overhead + seconds_per_point * double(n); }
  /// @brief Points per second in chunks of @p n points.
  double throughput(int64_t n) const { return double(n) / seconds(n); }
};

namespace detail
{
/// One measured chunk: its size and its device time.
struct CostSample
{
  int64_t size;
  double seconds;
};

/**
 * A robust straight-line fit seconds = overhead + n * seconds_per_point: the
 * slope is the median of the pairwise slopes (Theil-Sen), the intercept the
 * median residual, so that a minority of outliers (a page fault, a stalled
 * copy, the cold first chunk) moves neither. With sizes too close to tell a
 * slope from noise, the whole time is charged per point (exact near those sizes).
 */
inline CostEstimate
robust_fit(const std::vector<CostSample> & s)
{
  CostEstimate e;
  e.samples = s.size();
  if (s.empty())
    return e;
  std::vector<double> per_point;
  for (const auto & x : s)
    per_point.push_back(x.seconds / double(std::max<int64_t>(x.size, 1)));
  const double flat = median(per_point);
  // Only pairs of clearly different sizes: the slope of two near sizes is mostly noise.
  std::vector<double> slopes;
  for (std::size_t i = 0; i < s.size(); ++i)
    for (std::size_t j = i + 1; j < s.size(); ++j)
    {
      const auto lo = std::min(s[i].size, s[j].size), hi = std::max(s[i].size, s[j].size);
      if (4 * hi >= 5 * lo + 4)
        slopes.push_back((s[j].seconds - s[i].seconds) / double(s[j].size - s[i].size));
    }
  if (slopes.empty())
  {
    e.seconds_per_point = std::max(flat, 1e-15);
    return e;
  }
  // A flat or falling line (all chunks latency bound, or noise) would make the
  // device look free per point, and a large chunk planned on that would run long:
  // a point never costs less than half of the cheapest one measured.
  const double cheapest = *std::min_element(per_point.begin(), per_point.end());
  e.seconds_per_point = std::max({median(std::move(slopes)), 0.5 * cheapest, 1e-15});
  std::vector<double> residuals;
  for (const auto & x : s)
    residuals.push_back(x.seconds - e.seconds_per_point * double(x.size));
  e.overhead = std::max(0.0, median(std::move(residuals)));
  return e;
}

/// A chunk's interval on its device and its share of the device time in it.
struct Interval
{
  double start, end;
  double charged = 0;
};

/**
 * Charge each interval of one device its share of the device: time when k
 * chunks run at once is split k ways (sum of charges = time the device was busy).
 * @return the most intervals that overlap
 */
inline int
share_device_time(std::vector<Interval> & runs)
{
  std::vector<double> cuts;
  for (auto & r : runs)
  {
    r.charged = 0;
    cuts.push_back(r.start);
    cuts.push_back(r.end);
  }
  std::sort(cuts.begin(), cuts.end());
  int most = runs.empty() ? 0 : 1;
  for (std::size_t c = 0; c + 1 < cuts.size(); ++c)
  {
    const double a = cuts[c], b = cuts[c + 1];
    if (b <= a)
      continue;
    int k = 0;
    for (const auto & r : runs)
      k += r.start <= a && b <= r.end;
    if (k == 0)
      continue;
    most = std::max(most, k);
    for (auto & r : runs)
      if (r.start <= a && b <= r.end)
        r.charged += (b - a) / k;
  }
  return most;
}
} // namespace detail

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
 * Thread safety: several models may share one scheduler and dispatch at once
 * from different threads; a dispatch's state is keyed by the thread that runs it.
 *
 * @code
 * AdaptiveHybridScheduler::Config cfg;
 * cfg.devices = {"cpu", "cuda:0", "cuda:1"};
 * auto m = load_model("aoti/model_aoti.i", "model",
 * std::make_shared<AdaptiveHybridScheduler>(cfg)); auto out = m.forward(inputs); //
 * DispatchedModel<AsyncPolicy<AdaptiveHybrid>>
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
    /// Accept CUDA devices this process does not see: for planning with sim::Simulator only
    /// (a DispatchedModel cannot load them).
    bool virtual_devices = false;
  };

  /// @brief Samples kept per device and learned entry (the most recent ones).
  static constexpr std::size_t window = 32;
  /// @brief Learned entries kept (client, batch size), least recently used dropped first.
  static constexpr std::size_t max_entries = 64;
  /// @brief A lone device without bounds runs batches up to this size whole (short circuit).
  static constexpr int64_t lone_whole = 65536;

  /// @brief Validate @p config; errors name the class, the field and the index.
  explicit AdaptiveHybrid(Config config) : _config(std::move(config))
  {
    const std::string cls = "AdaptiveHybridScheduler: ";
    const std::size_t n = _config.devices.size();
    _devices = detail::parse_device_list(_config.devices, cls, !_config.virtual_devices);
    if (_config.min_chunk < 1)
      throw FatalError(cls + "min_chunk = " + std::to_string(_config.min_chunk) + " must be >= 1");
    _max_chunk = broadcast(_config.max_chunks, "max_chunks");
    _memory = broadcast(_config.memory_limits, "memory_limits");
    for (std::size_t i = 0; i < n; ++i)
    {
      const std::string at = "[" + std::to_string(i) + "] = ";
      if (_max_chunk[i] > 0 && _max_chunk[i] < _config.min_chunk)
        throw FatalError(cls + "max_chunks" + at + std::to_string(_max_chunk[i]) +
                         " < min_chunk = " + std::to_string(_config.min_chunk));
      if (_memory[i] > 0 && _memory[i] < _config.min_chunk)
        throw FatalError(cls + "memory_limits" + at + std::to_string(_memory[i]) +
                         " < min_chunk = " + std::to_string(_config.min_chunk));
    }
    if (_config.cpu_threads < 0)
      throw FatalError(cls + "cpu_threads = " + std::to_string(_config.cpu_threads) +
                       " must be >= 0 (0: automatic)");
    // The base fields describe the bounds. DispatchedModel's short circuit reads
    // batch_sizes: a batch that fits one chunk of a lone device runs whole. Without
    // a bound, that is up to lone_whole points: a larger batch on a lone CPU still
    // gets its chunks sized (a memory-bound model runs faster in chunks that stay
    // in cache), a smaller one pays no hand-off to a worker.
    constexpr int64_t none = std::numeric_limits<int64_t>::max();
    for (std::size_t i = 0; i < n; ++i)
    {
      const int64_t m = _memory[i] > 0 ? _memory[i] : none;
      const int64_t c = std::min(_max_chunk[i] > 0 ? _max_chunk[i] : none, m);
      _batch_sizes.push_back(c == none ? std::max(lone_whole, _config.min_chunk) : c);
      _capacities.push_back(m);
      _priorities.push_back(0);
    }
    _cpu_threads = _config.cpu_threads;
  }

  /// @brief The configuration as given.
  const Config & config() const { return _config; }
  /// @copydoc Scheduler::name
  std::string name() const override { return "AdaptiveHybridScheduler"; }

  /// @copydoc Scheduler::begin
  void begin(std::uint64_t client, int64_t batch) const noexcept override
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

  /**
   * @brief The next chunk: which device, how many points; nothing while the
   * devices that should get more work are busy (some chunk is then in flight).
   * @param load points in flight on each device
   * @param remaining points not yet assigned (> 0)
   */
  std::optional<Assignment> next(const std::vector<int64_t> & load,
                                 int64_t remaining) const noexcept
  {
    try
    {
      const std::lock_guard<std::mutex> lock(_mutex);
      auto it = _sessions.find(std::this_thread::get_id());
      if (it == _sessions.end())
        it = start_session(0, remaining);
      return decide(it->second, load, remaining);
    }
    catch (...)
    {
      // Out of memory in the bookkeeping: still make progress, one bounded chunk.
      for (std::size_t i = 0; i < load.size(); ++i)
        if (load[i] > 0)
          return std::nullopt;
      return Assignment{0, std::min(remaining, _batch_sizes[0] > 0 ? _batch_sizes[0] : remaining)};
    }
  }

  /// @copydoc Scheduler::observe
  void observe(const Completion & chunk) const noexcept override
  {
    try
    {
      const std::lock_guard<std::mutex> lock(_mutex);
      const auto it = _sessions.find(std::this_thread::get_id());
      if (it == _sessions.end() || chunk.device >= _devices.size())
        return;
      record(it->second, chunk);
      Session & s = it->second;
      bool idle = s.assigned >= s.batch;
      for (const auto & d : s.devices)
        idle = idle && d.flights.empty();
      if (idle)
      {
        finish_session(s);
        _sessions.erase(it);
      }
    }
    catch (...)
    {
    }
  }

  /**
   * @brief What was learned about @p device for the dispatches of @p client with
   * @p batch points (nothing before the first measurement).
   */
  std::optional<CostEstimate> estimate(std::uint64_t client, int64_t batch,
                                       std::size_t device) const
  {
    const std::lock_guard<std::mutex> lock(_mutex);
    const auto it = _entries.find({client, batch});
    if (it == _entries.end() || device >= _devices.size())
      return std::nullopt;
    const History & h = it->second->devices[device];
    if (h.window.empty())
      return std::nullopt;
    CostEstimate e = detail::robust_fit(usable(h.window, {}));
    e.concurrency = h.concurrency;
    return e;
  }

  /// @brief Number of learned entries (one per client and batch size).
  std::size_t learned() const
  {
    const std::lock_guard<std::mutex> lock(_mutex);
    return _entries.size();
  }

  /// @brief Forget everything learned (the next call of every model starts cold).
  void forget() const
  {
    const std::lock_guard<std::mutex> lock(_mutex);
    _entries.clear();
    _sessions.clear();
  }

private:
  /// Largest chunk relative to the largest one measured on its device.
  static constexpr double extrapolation = 16;
  /// A chunk's fixed cost may be at most this fraction of its time (sets the smallest chunk).
  static constexpr double overhead_fraction = 0.05;
  /// Largest probe for a device not measured yet.
  static constexpr int64_t probe_limit = 4096;

  struct Sample
  {
    int64_t size;
    double seconds;
    bool cold; // the first chunk a client ran on the device: warm-up, not steady state
  };

  // What is kept between dispatches, per device.
  struct History
  {
    std::deque<Sample> window;
    int64_t largest = 0;
    int concurrency = 1;
    bool paired = false; // two chunks were in flight at once: concurrency is measured, not assumed
    int64_t ceiling = 0; // no larger chunks: they ran clearly slower per point
    bool explored = false; // the probes grew until larger chunks stopped paying
    bool ran = false;      // some chunk of this client has run on the device
  };

  struct Entry
  {
    std::vector<History> devices;
    std::uint64_t used = 0;
  };

  struct Flight
  {
    int64_t size;
  };

  struct Run
  {
    int64_t size;
    detail::Interval interval;
    bool cold;
  };

  // One device within the current dispatch.
  struct Track
  {
    std::vector<Flight> flights; // assigned, not yet observed
    std::vector<Run> runs;       // observed in this dispatch
    double busy_start = 0;       // since when the device had work in flight
    int64_t busy_chunks = 0;     // chunks assigned since then
    int64_t busy_points = 0;     // points assigned since then
    CostEstimate fit;            // over the history and this dispatch's runs
    bool fitted = false;         // some chunk was measured
    bool two_sizes = false;      // warm chunks of two sizes were measured: the fit has a slope
    bool known = false;          // two sizes, and the probes are done: plan with the fit
    int64_t largest_warm = 0;
    int64_t knee = 0;    // no smaller chunks: they ran far slower than the line
    int64_t ceiling = 0; // no larger chunks: they ran clearly slower per point
    int64_t largest = 0;
    double cold_until = 0; // end of the device's first (warm-up) chunk, if in this dispatch
    double plan = 0;       // points still planned for the device until the common finish
    int64_t piece = 0;     // chunk size of the current round (one chunk per worker lane)
    int round_left = 0;    // chunks of the current round still to hand out
  };

  struct Session
  {
    std::uint64_t client = 0;
    int64_t batch = 0;
    std::shared_ptr<Entry> entry;
    std::vector<Track> devices;
    double now = 0; // latest chunk end seen: the dispatch's clock, advanced by measurements
    int64_t assigned = 0;
    bool replan = true; // a measurement came in since the plan was made
  };

  std::vector<int64_t> broadcast(const std::vector<int64_t> & v, const std::string & field) const
  {
    const std::size_t n = _config.devices.size();
    std::vector<int64_t> out;
    if (v.empty())
      out.assign(n, 0);
    else if (v.size() == 1)
      out.assign(n, v.front());
    else if (v.size() == n)
      out = v;
    else
      throw FatalError("AdaptiveHybridScheduler: " + field + " has " + std::to_string(v.size()) +
                       " entries; expected 1 or " + std::to_string(n) + " (one per device)");
    for (std::size_t i = 0; i < n; ++i)
      if (out[i] < 0)
        throw FatalError("AdaptiveHybridScheduler: " + field + "[" + std::to_string(i) +
                         "] = " + std::to_string(out[i]) + " must be >= 0 (0: no bound)");
    return out;
  }

  /// The samples to fit: the most recent first, the cold ones only while there is no other,
  /// the small ones only while there are few large ones.
  static std::vector<detail::CostSample> usable(const std::deque<Sample> & history,
                                                const std::vector<Run> & runs)
  {
    std::vector<detail::CostSample> warm, all;
    for (auto r = runs.rbegin(); r != runs.rend() && warm.size() < window; ++r)
    {
      all.push_back({r->size, r->interval.charged});
      if (!r->cold)
        warm.push_back(all.back());
    }
    for (auto h = history.rbegin(); h != history.rend() && warm.size() < window; ++h)
    {
      all.push_back({h->size, h->seconds});
      if (!h->cold)
        warm.push_back(all.back());
    }
    if (warm.empty())
      return all;
    // Fit the regime of the large chunks, which carry the time: below a
    // device's saturation knee, small chunks cost more per point than the line.
    int64_t biggest = 0;
    for (const auto & x : warm)
      biggest = std::max(biggest, x.size);
    std::vector<detail::CostSample> large;
    for (const auto & x : warm)
      if (x.size >= biggest / 32)
        large.push_back(x);
    return large.size() >= 3 ? large : warm;
  }

  std::map<std::thread::id, Session>::iterator start_session(std::uint64_t client,
                                                             int64_t batch) const
  {
    const auto tid = std::this_thread::get_id();
    const auto old = _sessions.find(tid);
    if (old != _sessions.end())
    {
      finish_session(old->second); // an interrupted dispatch: keep what it measured
      _sessions.erase(old);
    }
    Session s;
    s.client = client;
    s.batch = batch;
    s.entry = entry_for(client, batch);
    s.entry->used = ++_uses;
    s.devices.resize(_devices.size());
    for (std::size_t d = 0; d < _devices.size(); ++d)
      refit(s, d);
    return _sessions.emplace(tid, std::move(s)).first;
  }

  /// The learned entry of (client, batch), created from the client's nearest batch size.
  std::shared_ptr<Entry> entry_for(std::uint64_t client, int64_t batch) const
  {
    const auto key = std::make_pair(client, batch);
    const auto it = _entries.find(key);
    if (it != _entries.end())
      return it->second;
    auto e = std::make_shared<Entry>();
    e->devices.resize(_devices.size());
    double best = std::numeric_limits<double>::infinity();
    for (const auto & [k, other] : _entries)
    {
      const double gap = std::abs(std::log(double(std::max<int64_t>(k.second, 1))) -
                                  std::log(double(std::max<int64_t>(batch, 1))));
      if (k.first == client && gap < best)
      {
        best = gap;
        e->devices = other->devices;
      }
    }
    if (_entries.size() >= max_entries)
    {
      auto victim = _entries.end();
      for (auto i = _entries.begin(); i != _entries.end(); ++i)
        if (i->second.use_count() == 1 &&
            (victim == _entries.end() || i->second->used < victim->second->used))
          victim = i;
      if (victim != _entries.end())
        _entries.erase(victim);
    }
    _entries.emplace(key, e);
    return e;
  }

  /// Fold a dispatch's measurements into its learned entry.
  void finish_session(Session & s) const
  {
    for (std::size_t d = 0; d < s.devices.size(); ++d)
    {
      History & h = s.entry->devices[d];
      for (const auto & r : s.devices[d].runs)
      {
        h.window.push_back({r.size, r.interval.charged, r.cold});
        h.largest = std::max(h.largest, r.size);
      }
      while (h.window.size() > window)
        h.window.pop_front();
      s.devices[d].runs.clear();
    }
  }

  void refit(Session & s, std::size_t d) const
  {
    Track & l = s.devices[d];
    const History & h = s.entry->devices[d];
    const auto samples = usable(h.window, l.runs);
    l.fitted = !samples.empty();
    l.fit = detail::robust_fit(samples);
    l.fit.concurrency = h.concurrency;
    l.largest = h.largest;
    for (const auto & r : l.runs)
      l.largest = std::max(l.largest, r.size);
    // Sizes: warm chunks of two clearly different sizes give the fit its slope.
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = 0;
    const auto span = [&](int64_t size, bool cold)
    {
      if (!cold)
      {
        lo = std::min(lo, size);
        hi = std::max(hi, size);
      }
    };
    for (const auto & x : h.window)
      span(x.size, x.cold);
    for (const auto & r : l.runs)
      span(r.size, r.cold);
    l.two_sizes = hi > 0 && 4 * hi >= 5 * lo + 4;
    l.largest_warm = hi;
    // Knee: a chunk far below the large ones that took much longer than the
    // line says was not filling the device; it cost as much as the size the
    // line gives its time, and smaller chunks are not worth running.
    double knee = 0;
    // (A lone chunk of a device with lanes is charged its whole time: allow for that.)
    const double factor = 1.25 * double(std::max(1, l.fit.concurrency));
    const auto slow = [&](int64_t size, double seconds, bool cold)
    {
      if (!cold && 8 * size <= hi && seconds > factor * l.fit.seconds(size))
        knee = std::max(knee, (seconds - l.fit.overhead) / l.fit.seconds_per_point);
    };
    if (l.known && l.fit.samples >= 3)
    {
      for (const auto & x : h.window)
        slow(x.size, x.seconds, x.cold);
      for (const auto & r : l.runs)
        slow(r.size, r.interval.charged, r.cold);
    }
    l.knee = std::min(int64_t(knee), hi / 4);

    // Ceiling: on a device of one lane (a CPU), chunks far above the size with
    // the best cost per point that ran clearly slower per point (they no longer
    // stay in cache) cap the chunks at that size. Three slower samples at least
    // (a preempted chunk only looks slow); kept until the samples say otherwise. (On a device of
    // several lanes, a lone last chunk is charged its whole time and only looks slower.)
    std::map<int, std::vector<double>> by_size; // log2 of the size -> seconds per point
    std::map<int, int64_t> biggest;
    const auto bucket = [&](int64_t size, double seconds, bool cold)
    {
      if (cold || size <= 0)
        return;
      int k = 0;
      while ((int64_t(2) << k) <= size)
        ++k;
      by_size[k].push_back(seconds / double(size));
      biggest[k] = std::max(biggest[k], size);
    };
    for (const auto & x : h.window)
      bucket(x.size, x.seconds, x.cold);
    for (const auto & r : l.runs)
      bucket(r.size, r.interval.charged, r.cold);
    std::map<int, double> per_point;
    std::map<int, std::size_t> count;
    for (auto & [k, v] : by_size)
    {
      count[k] = v.size();
      per_point[k] = detail::median(v);
    }
    History & hist = s.entry->devices[d];
    if (!per_point.empty() && h.paired && h.concurrency == 1)
    {
      const auto best =
          std::min_element(per_point.begin(), per_point.end(),
                           [](const auto & a, const auto & b) { return a.second < b.second; });
      for (const auto & [k, c] : per_point)
        if (k >= best->first + 2 && count[k] >= 3 && c > 1.25 * best->second)
          hist.ceiling = biggest[best->first];
    }
    l.ceiling = hist.ceiling;
    // Explored: the probes grew until a larger chunk no longer cost clearly less
    // per point (on a CPU, that finds the chunks that stay in cache).
    if (l.two_sizes && !hist.explored && per_point.size() >= 2)
    {
      const auto top = std::prev(per_point.end()), below = std::prev(top);
      hist.explored = top->second >= 0.9 * below->second;
    }
    l.known = l.two_sizes && hist.explored;
  }

  void record(Session & s, const Completion & c) const
  {
    Track & l = s.devices[c.device];
    History & h = s.entry->devices[c.device];
    // Chunks of one size are interchangeable here; drop the first in flight with this size.
    const auto f = std::find_if(l.flights.begin(), l.flights.end(),
                                [&](const Flight & x) { return x.size == c.size; });
    if (f != l.flights.end())
      l.flights.erase(f);
    if (l.flights.empty())
      l.busy_chunks = l.busy_points = 0;
    s.now = std::max(s.now, c.end);
    // The first chunk a client runs on a device pays its warm-up, and so do the
    // chunks that ran beside it: none of them tells the steady state.
    const bool cold = !h.ran || (l.cold_until > 0 && c.start < l.cold_until);
    if (!h.ran)
      l.cold_until = std::max(c.end, c.start);
    l.runs.push_back({c.size, {c.start, std::max(c.end, c.start)}, cold});
    h.ran = true;
    // Re-share the device time among the recent runs: a run's share changes when
    // one that overlapped it is measured after it.
    constexpr std::size_t recent = 16;
    const std::size_t first = l.runs.size() > recent ? l.runs.size() - recent : 0;
    std::vector<detail::Interval> iv;
    for (std::size_t i = first; i < l.runs.size(); ++i)
      iv.push_back(l.runs[i].interval);
    h.concurrency = std::max(h.concurrency, detail::share_device_time(iv));
    for (std::size_t i = first; i < l.runs.size(); ++i)
      l.runs[i].interval.charged = iv[i - first].charged;
    refit(s, c.device);
    s.replan = true;
  }

  std::optional<Assignment> decide(Session & s, const std::vector<int64_t> & load,
                                   int64_t remaining) const
  {
    const std::size_t n = _devices.size();
    bool any_in_flight = false;
    for (std::size_t d = 0; d < n; ++d)
    {
      Track & l = s.devices[d];
      if (d < load.size() && load[d] == 0 && !l.flights.empty())
      {
        // Chunks that failed are never observed; the policy's load is the truth.
        l.flights.clear();
        l.busy_chunks = l.busy_points = 0;
      }
      any_in_flight = any_in_flight || (d < load.size() && load[d] > 0);
    }

    // The most a device may take now, and whether it has room for another chunk.
    // While another device is still probed, plans rest on guesses about it: grow
    // more slowly (a slow device must not take a large share before a fast one is known).
    bool all_known = true;
    for (std::size_t d = 0; d < n; ++d)
      all_known = all_known && s.devices[d].known;
    const double grow = all_known ? extrapolation : 4;
    std::vector<int64_t> cap(n, 0);
    for (std::size_t d = 0; d < n; ++d)
    {
      const Track & l = s.devices[d];
      const int64_t in = d < load.size() ? load[d] : 0;
      int64_t c = remaining;
      if (_max_chunk[d] > 0)
        c = std::min(c, _max_chunk[d]);
      if (_memory[d] > 0)
        c = std::min(c, _memory[d] - in);
      if (l.largest > 0)
        c = std::min(c, std::max(_config.min_chunk, int64_t(grow * double(l.largest))));
      if (l.ceiling > 0)
        c = std::min(c, std::max(_config.min_chunk, l.ceiling));
      const std::size_t depth = std::size_t(std::max(2, l.fit.concurrency + 1));
      // No room for a chunk of min_chunk points (unless that is all there is) is no room.
      if (l.flights.size() < depth && c >= std::min(_config.min_chunk, remaining))
        cap[d] = c;
    }

    // A device whose costs are not known yet gets probes: rounds of equal chunks
    // as below (so that a GPU is measured with its lanes busy, as it will run),
    // one round at a time, each four times the last, until a larger chunk stops
    // costing clearly less per point (two sizes at least give the fit its slope),
    // never more than an equal split: a wrong guess costs little.
    std::optional<CostEstimate> fastest;
    const int64_t split = std::max<int64_t>(_config.min_chunk, remaining / int64_t(n));
    for (std::size_t d = 0; d < n; ++d)
    {
      Track & l = s.devices[d];
      if (!l.known && l.two_sizes && 4 * l.largest_warm > split)
      {
        // The next probe would exceed an equal split: probing is done for this batch size.
        s.entry->devices[d].explored = l.known = true;
        l.round_left = 0;
      }
      if (!l.known)
      {
        if (cap[d] > 0 && (l.flights.empty() || l.round_left > 0))
        {
          if (l.flights.empty())
          {
            const int64_t first = std::clamp<int64_t>(remaining / int64_t(8 * n), _config.min_chunk,
                                                      std::max(probe_limit, _config.min_chunk));
            l.piece = std::max(_config.min_chunk,
                               std::min(l.largest_warm > 0 ? 4 * l.largest_warm : first, split));
            l.round_left = lanes(s, d);
          }
          --l.round_left;
          s.replan = true;
          return assign(s, d, std::min(cap[d], l.piece), remaining);
        }
        continue;
      }
      if (!fastest || l.fit.seconds_per_point < fastest->seconds_per_point)
        fastest = l.fit;
    }
    if (!fastest)
      return any_in_flight ? std::nullopt : fallback(s, cap, remaining);

    // When each device is free of the work it has, by the current fits (a device
    // still probed is assumed as fast as the fastest one: that only shrinks the others' shares).
    std::vector<CostEstimate> cost(n);
    std::vector<double> free_at(n);
    for (std::size_t d = 0; d < n; ++d)
    {
      const Track & l = s.devices[d];
      cost[d] = l.known ? l.fit : *fastest;
      const double work = cost[d].overhead * double(l.busy_chunks) +
                          cost[d].seconds_per_point * double(l.busy_points);
      free_at[d] = l.flights.empty() ? s.now : s.now + std::max(0.0, work - (s.now - l.busy_start));
    }

    std::vector<std::size_t> order(n);
    for (std::size_t d = 0; d < n; ++d)
      order[d] = d;
    // Ready to take more: free, plus the fixed costs of the chunks of its next
    // round (or of what is left of the current one).
    const auto ready = [&](std::size_t d)
    {
      const Track & l = s.devices[d];
      const int pieces = l.round_left > 0 ? l.round_left : lanes(s, d);
      return free_at[d] + cost[d].overhead * double(pieces);
    };
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return ready(a) < ready(b); });

    // No chunk below the size that pays for its own fixed cost, or below the knee.
    std::vector<double> least(n);
    for (std::size_t d = 0; d < n; ++d)
      least[d] = std::max({double(_config.min_chunk), double(s.devices[d].knee),
                           cost[d].overhead / cost[d].seconds_per_point});

    // Between measurements chunks follow the plan, so that a device served
    // late is not squeezed by the rounding of those served first.
    if (s.replan)
      make_plan(s, order, cost, least, ready, remaining);

    // Guided: a device gets half of its share, or its whole share once that is
    // small, in rounds of equal chunks, one per worker lane: a GPU is only fast
    // with all its lanes busy (its charged costs assume so), and lanes that got
    // equal chunks finish together. The device that goes idle first is served first.
    for (const std::size_t d : order)
    {
      Track & l = s.devices[d];
      if (cap[d] <= 0 || !l.known)
        continue;
      const CostEstimate & c = cost[d];
      const double smallest =
          std::max(least[d], c.overhead / (overhead_fraction * c.seconds_per_point));
      int64_t m = 0;
      if (l.round_left > 0 && l.plan >= 0.5 * double(l.piece))
        m = l.piece;
      else
      {
        l.round_left = 0;
        if (l.plan < std::max(1.0, double(_config.min_chunk)) && l.plan < double(remaining))
          continue;
        // As many pieces as lanes, but none below the floor.
        const double k = std::clamp(std::floor(l.plan / least[d]), 1.0, double(lanes(s, d)));
        const double want =
            l.plan <= 2 * k * smallest ? l.plan / k : std::max(smallest, l.plan / (2 * k));
        m = int64_t(std::ceil(want));
        l.piece = m;
        l.round_left = int(k);
      }
      m = std::clamp<int64_t>(m, 1, cap[d]);
      // Take along a rest that no other device plans to run, when running it
      // here costs less than another chunk's fixed cost.
      const double rest = double(remaining - m);
      double others = 0;
      for (std::size_t e = 0; e < n; ++e)
        others += e == d ? 0.0 : s.devices[e].plan;
      if (others < std::max(1.0, double(_config.min_chunk)) &&
          (rest * c.seconds_per_point < c.overhead || rest < double(_config.min_chunk)))
      {
        m = std::min(remaining, cap[d]);
        s.replan = true;
      }
      --l.round_left;
      l.plan -= double(m);
      return assign(s, d, m, remaining);
    }
    return any_in_flight ? std::nullopt : fallback(s, cap, remaining);
  }

  /**
   * The plan, remade after each measurement: the common finish time T of the
   * points left (sum_d (T - ready_d) / per_point_d = remaining over the devices
   * that take part) and each device's share of them. A device whose share would
   * be a crumb below its least chunk leaves the water-filling; if it can still
   * run its least chunk before the others finish without it, it gets exactly that
   * (at the end of a batch, a fast device with a large fixed cost takes the rest
   * rather than leave it to a slow one).
   */
  template <class Ready>
  void make_plan(Session & s, const std::vector<std::size_t> & order,
                 const std::vector<CostEstimate> & cost, const std::vector<double> & least,
                 const Ready & ready, int64_t remaining) const
  {
    const std::size_t n = order.size();
    enum class Part
    {
      open,  // in the water-filling
      out,   // a crumb: no chunk
      fixed, // exactly its least chunk
    };
    std::vector<Part> state(n, Part::open);
    std::vector<double> plan(n, 0.0);
    double left = double(remaining);
    const auto solve = [&]
    {
      double T = std::numeric_limits<double>::infinity(), rate = 0, weighted = 0;
      std::vector<std::size_t> in;
      // Devices still probed take part as the fastest one: that only shrinks the others' shares.
      for (const std::size_t d : order)
        if (state[d] == Part::open)
          in.push_back(d);
      for (std::size_t k = 0; k < in.size(); ++k)
      {
        rate += 1 / cost[in[k]].seconds_per_point;
        weighted += ready(in[k]) / cost[in[k]].seconds_per_point;
        T = (left + weighted) / rate;
        if (k + 1 == in.size() || T <= ready(in[k + 1]))
          break;
      }
      for (const std::size_t d : in)
        plan[d] =
            s.devices[d].known ? std::max(0.0, (T - ready(d)) / cost[d].seconds_per_point) : 0.0;
      return T;
    };
    double T = solve();
    for (std::size_t step = 0; step < n && left > 0; ++step)
    {
      std::optional<std::size_t> crumb;
      for (std::size_t d = 0; d < n; ++d)
        if (state[d] == Part::open && plan[d] > 0 && plan[d] < 0.5 * least[d] && plan[d] < left &&
            (!crumb || plan[d] < plan[*crumb]))
          crumb = d;
      if (!crumb)
        break;
      state[*crumb] = Part::out;
      plan[*crumb] = 0;
      T = solve();
      std::optional<std::size_t> best;
      double best_end = T;
      for (std::size_t d = 0; d < n; ++d)
        if (state[d] == Part::out)
        {
          const double end = ready(d) + std::min(left, least[d]) * cost[d].seconds_per_point;
          if (end <= best_end)
          {
            best = d;
            best_end = end;
          }
        }
      if (best)
      {
        state[*best] = Part::fixed;
        plan[*best] = std::min(left, least[*best]);
        left -= plan[*best];
        T = solve();
      }
    }
    for (std::size_t d = 0; d < n; ++d)
      s.devices[d].plan = state[d] == Part::out ? 0.0 : plan[d];
    s.replan = false;
  }

  /// Chunks per round on device @p d: its lanes as measured; two until two chunks
  /// have been in flight at once (one chunk per round could never reveal a second lane).
  int lanes(const Session & s, std::size_t d) const
  {
    const History & h = s.entry->devices[d];
    return h.paired ? std::max(1, h.concurrency) : 2;
  }

  /// Every device is idle and nothing qualified: the device that would finish the rest first.
  std::optional<Assignment> fallback(Session & s, const std::vector<int64_t> & cap,
                                     int64_t remaining) const
  {
    std::optional<std::size_t> best;
    double best_end = std::numeric_limits<double>::infinity();
    for (std::size_t d = 0; d < _devices.size(); ++d)
    {
      if (cap[d] <= 0)
        continue;
      const Track & l = s.devices[d];
      const double end = l.fitted ? l.fit.seconds(cap[d]) / double(cap[d]) * double(remaining) : 0;
      if (!best || end < best_end)
      {
        best = d;
        best_end = end;
      }
    }
    if (!best)
      return std::nullopt; // cannot happen: an idle device always has room
    s.replan = true;
    return assign(s, *best, cap[*best], remaining);
  }

  Assignment assign(Session & s, std::size_t d, int64_t size, int64_t remaining) const
  {
    size = std::clamp<int64_t>(size, 1, remaining);
    Track & l = s.devices[d];
    if (l.flights.empty())
    {
      l.busy_start = s.now;
      l.busy_chunks = l.busy_points = 0;
    }
    if (!l.flights.empty())
      s.entry->devices[d].paired = true;
    l.flights.push_back({size});
    ++l.busy_chunks;
    l.busy_points += size;
    s.assigned += size;
    return Assignment{d, size};
  }

  Config _config;
  std::vector<int64_t> _max_chunk, _memory;
  mutable std::mutex _mutex;
  mutable std::map<std::pair<std::uint64_t, int64_t>, std::shared_ptr<Entry>> _entries;
  mutable std::map<std::thread::id, Session> _sessions;
  mutable std::uint64_t _uses = 0;
};

/// @brief The spec-style name for AdaptiveHybrid.
using AdaptiveHybridScheduler = AdaptiveHybrid;
} // namespace neml2::aoti
