// One AdaptiveHybrid dispatch in progress: per device, the chunks in flight and those
// measured, and the fit refreshed from them and the learned history after each measurement.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "neml2/aoti/detail/stats.h"
#include "neml2/aoti/schedulers/Scheduler.h"
#include "neml2/aoti/schedulers/adaptive/cost_model.h"
#include "neml2/aoti/schedulers/adaptive/history.h"

namespace neml2::aoti::detail::adaptive
{
/// A chunk assigned and not yet observed.
struct Flight
{
  int64_t size; ///< points
};

/// A chunk observed in this dispatch.
struct Run
{
  int64_t size;      ///< points
  Interval interval; ///< when it ran, and its share of the device time
  bool cold;         ///< it paid (or ran beside) the device's warm-up
};

/// One device within the current dispatch.
struct Track
{
  std::vector<Flight> flights; ///< assigned, not yet observed
  std::vector<Run> runs;       ///< observed in this dispatch
  double busy_start = 0;       ///< since when the device had work in flight
  int64_t busy_chunks = 0;     ///< chunks assigned since then
  int64_t busy_points = 0;     ///< points assigned since then
  CostEstimate fit;            ///< over the history and this dispatch's runs
  bool fitted = false;         ///< some chunk was measured
  bool two_sizes = false;      ///< warm chunks of two sizes were measured: the fit has a slope
  bool known = false;          ///< two sizes, and the probes are done: plan with the fit
  int64_t largest_warm = 0;    ///< largest warm chunk measured
  int64_t knee = 0;            ///< no smaller chunks: they ran far slower than the line
  int64_t ceiling = 0;         ///< no larger chunks: they ran clearly slower per point
  int64_t largest = 0;         ///< largest chunk measured
  double cold_until = 0;       ///< end of the device's first (warm-up) chunk, if in this dispatch
  double plan = 0;             ///< points still planned for the device until the common finish
  int64_t piece = 0;           ///< chunk size of the current round (one chunk per worker lane)
  int round_left = 0;          ///< chunks of the current round still to hand out
};

/// One dispatch: who, how many points, what is known about each device.
struct Session
{
  std::uint64_t client = 0;     ///< Scheduler::begin's client
  int64_t batch = 0;            ///< points in the dispatch
  std::shared_ptr<Entry> entry; ///< the learned history it reads and adds to
  std::vector<Track> devices;   ///< one per device
  double now = 0;       ///< latest chunk end seen: the dispatch's clock, advanced by measurements
  int64_t assigned = 0; ///< points assigned so far
  bool replan = true;   ///< a measurement came in since the plan was made
  /// A device that takes no chunk in this dispatch (WholeTrial's Way::others), or none.
  std::size_t excluded = std::numeric_limits<std::size_t>::max();
};

/// A new session of @p client over @p batch points, fitted from @p entry.
Session open_session(std::uint64_t client, int64_t batch, std::shared_ptr<Entry> entry);

/**
 * The samples to fit: the most recent first (at most `window` warm ones), the cold ones
 * only while there is no other, the small ones only while there are few large ones.
 */
std::vector<CostSample> usable(const std::deque<Sample> & history, const std::vector<Run> & runs);

/// Refresh the fit of device @p d and what the samples show (two sizes, knee, ceiling).
void refit(Session & s, std::size_t d);

/// Take in a completed chunk: its interval, the device time shares, then refit its device.
void record(Session & s, const Completion & c);

/**
 * Fold the dispatch's measurements into its learned entry (keeping the last `window`).
 * @return whether the dispatch was whole, with every device it may use measured beforehand:
 *         one whose wall time tells its way (WholeTrial)
 */
bool finish(Session & s);

// ---------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------

inline Session
open_session(std::uint64_t client, int64_t batch, std::shared_ptr<Entry> entry)
{
  Session s;
  s.client = client;
  s.batch = batch;
  s.entry = std::move(entry);
  s.devices.resize(s.entry->devices.size());
  for (std::size_t d = 0; d < s.devices.size(); ++d)
    refit(s, d);
  return s;
}

inline std::vector<CostSample>
usable(const std::deque<Sample> & history, const std::vector<Run> & runs)
{
  std::vector<CostSample> warm, all;
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
  std::vector<CostSample> large;
  for (const auto & x : warm)
    if (x.size >= biggest / 32)
      large.push_back(x);
  return large.size() >= 3 ? large : warm;
}

inline void
refit(Session & s, std::size_t d)
{
  Track & l = s.devices[d];
  History & h = s.entry->devices[d];
  const auto samples = usable(h.window, l.runs);
  l.fitted = !samples.empty();
  l.fit = robust_fit(samples);
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
  l.two_sizes = hi > 0 && clearly_apart(lo, hi);
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
    per_point[k] = median(v);
  }
  if (!per_point.empty() && h.paired && h.concurrency == 1)
  {
    const auto best =
        std::min_element(per_point.begin(), per_point.end(),
                         [](const auto & a, const auto & b) { return a.second < b.second; });
    for (const auto & [k, c] : per_point)
      if (k >= best->first + 2 && count[k] >= 3 && c > 1.25 * best->second)
        h.ceiling = biggest[best->first];
  }
  l.ceiling = h.ceiling;
  // Explored: the probes grew until a larger chunk no longer cost clearly less
  // per point (on a CPU, that finds the chunks that stay in cache).
  if (l.two_sizes && !h.explored && per_point.size() >= 2)
  {
    const auto top = std::prev(per_point.end()), below = std::prev(top);
    h.explored = top->second >= 0.9 * below->second;
  }
  // Known stays known: a window that holds only chunks of one size (the plan gave the
  // device equal rounds for a while) still gives its per-point cost.
  h.sloped = h.sloped || l.two_sizes;
  l.known = h.sloped && h.explored;
}

inline void
record(Session & s, const Completion & c)
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
  std::vector<Interval> iv;
  for (std::size_t i = first; i < l.runs.size(); ++i)
    iv.push_back(l.runs[i].interval);
  h.concurrency = std::max(h.concurrency, share_device_time(iv));
  for (std::size_t i = first; i < l.runs.size(); ++i)
    l.runs[i].interval.charged = iv[i - first].charged;
  refit(s, c.device);
  s.replan = true;
}

inline bool
finish(Session & s)
{
  bool timed = s.assigned >= s.batch;
  for (std::size_t d = 0; d < s.devices.size(); ++d)
    timed = timed && (d == s.excluded || s.devices[d].known);
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
  return timed;
}
} // namespace neml2::aoti::detail::adaptive
