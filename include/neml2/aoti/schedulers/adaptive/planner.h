// How AdaptiveHybrid picks the next chunk: probes for a device not measured yet, then a plan
// in which every device finishes at once, handed out in guided rounds of one chunk per lane.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "neml2/aoti/schedulers/Scheduler.h"
#include "neml2/aoti/schedulers/adaptive/cost_model.h"
#include "neml2/aoti/schedulers/adaptive/session.h"

namespace neml2::aoti::detail::adaptive
{
/// Largest chunk relative to the largest one measured on its device.
constexpr double extrapolation = 16;
/// A chunk's fixed cost may be at most this fraction of its time (sets the smallest chunk).
constexpr double overhead_fraction = 0.05;
/// Largest probe for a device not measured yet.
constexpr int64_t probe_limit = 4096;

/**
 * The decisions of AdaptiveHybrid::next(), from a session's fits and the configured bounds.
 *
 * Stateless between calls except through the Session it is given: the same session and
 * arguments give the same chunk. Not thread-safe: AdaptiveHybrid calls it under its mutex.
 */
class Planner
{
public:
  /// No bounds, min_chunk 1, no devices (replaced by AdaptiveHybrid's validated bounds).
  Planner() = default;

  /**
   * @param min_chunk smallest chunk, except for the last points of a batch (>= 1)
   * @param max_chunk largest chunk per device (0: no bound), one per device
   * @param memory most points in flight per device (0: no bound), one per device
   */
  Planner(int64_t min_chunk, std::vector<int64_t> max_chunk, std::vector<int64_t> memory)
      : _min_chunk(min_chunk),
        _max_chunk(std::move(max_chunk)),
        _memory(std::move(memory))
  {
  }

  /**
   * The next chunk of session @p s, or nothing while the devices that should get more
   * work are busy (some chunk is then in flight).
   * @param load points in flight on each device, as the execution policy counts them
   * @param remaining points not yet assigned (> 0)
   */
  std::optional<Assignment> decide(Session & s, const std::vector<int64_t> & load,
                                   int64_t remaining) const;

private:
  /// What the plan is made from: per device its costs, when it is ready for more, its floor.
  struct Outlook
  {
    std::vector<CostEstimate> cost; ///< the fit; a device still probed: the fastest one's
    std::vector<double> ready;      ///< free of its work, plus its next round's fixed costs
    std::vector<double> least;      ///< no chunk below: pays its fixed cost, above the knee
    std::vector<std::size_t> order; ///< devices by ready time
  };

  /// The outlook of session @p s, a device still probed taking the costs of @p fastest.
  Outlook outlook(const Session & s, const CostEstimate & fastest) const;

  /**
   * The plan, remade after each measurement: the common finish time T of the
   * points left (sum_d (T - ready_d) / per_point_d = remaining over the devices
   * that take part) and each device's share of them. A device whose share would
   * be a crumb below its least chunk leaves the water-filling; if it can still
   * run its least chunk before the others finish without it, it gets exactly that
   * (at the end of a batch, a fast device with a large fixed cost takes the rest
   * rather than leave it to a slow one).
   */
  void make_plan(Session & s, const Outlook & o, int64_t remaining) const;

  /// Chunks per round on device @p d: its lanes as measured; two until two chunks
  /// have been in flight at once (one chunk per round could never reveal a second lane).
  static int lanes(const Session & s, std::size_t d);

  /// Every device is idle and nothing qualified: the device that would finish the rest first.
  std::optional<Assignment> fallback(Session & s, const std::vector<int64_t> & cap,
                                     int64_t remaining) const;

  /// Hand @p size points (clamped to 1..remaining) to device @p d and count them in flight.
  static Assignment assign(Session & s, std::size_t d, int64_t size, int64_t remaining);

  int64_t _min_chunk = 1;
  std::vector<int64_t> _max_chunk, _memory;
};

// ---------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------

inline std::optional<Assignment>
Planner::decide(Session & s, const std::vector<int64_t> & load, int64_t remaining) const
{
  const std::size_t n = s.devices.size();
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
    all_known = all_known && (d == s.excluded || s.devices[d].known);
  const double grow = all_known ? extrapolation : 4;
  std::vector<int64_t> cap(n, 0);
  for (std::size_t d = 0; d < n; ++d)
  {
    const Track & l = s.devices[d];
    if (d == s.excluded)
      continue; // no room: it takes no chunk in this dispatch
    const int64_t in = d < load.size() ? load[d] : 0;
    int64_t c = remaining;
    if (_max_chunk[d] > 0)
      c = std::min(c, _max_chunk[d]);
    if (_memory[d] > 0)
      c = std::min(c, _memory[d] - in);
    if (l.largest > 0)
      c = std::min(c, std::max(_min_chunk, int64_t(grow * double(l.largest))));
    if (l.ceiling > 0)
      c = std::min(c, std::max(_min_chunk, l.ceiling));
    const std::size_t depth = std::size_t(std::max(2, l.fit.concurrency + 1));
    // No room for a chunk of min_chunk points (unless that is all there is) is no room.
    if (l.flights.size() < depth && c >= std::min(_min_chunk, remaining))
      cap[d] = c;
  }

  // A device whose costs are not known yet gets probes: rounds of equal chunks
  // as below (so that a GPU is measured with its lanes busy, as it will run),
  // one round at a time, each four times the last, until a larger chunk stops
  // costing clearly less per point (two sizes at least give the fit its slope),
  // never more than an equal split: a wrong guess costs little.
  std::optional<CostEstimate> fastest;
  const int64_t split = std::max<int64_t>(_min_chunk, remaining / int64_t(n));
  for (std::size_t d = 0; d < n; ++d)
  {
    Track & l = s.devices[d];
    if (d == s.excluded)
      continue;
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
          const int64_t first = std::clamp<int64_t>(remaining / int64_t(8 * n), _min_chunk,
                                                    std::max(probe_limit, _min_chunk));
          l.piece = std::max(_min_chunk,
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

  // Between measurements chunks follow the plan, so that a device served
  // late is not squeezed by the rounding of those served first.
  const Outlook o = outlook(s, *fastest);
  if (s.replan)
    make_plan(s, o, remaining);

  // Guided: a device gets half of its share, or its whole share once that is
  // small, in rounds of equal chunks, one per worker lane: a GPU is only fast
  // with all its lanes busy (its charged costs assume so), and lanes that got
  // equal chunks finish together. The device that goes idle first is served first.
  for (const std::size_t d : o.order)
  {
    Track & l = s.devices[d];
    if (cap[d] <= 0 || !l.known)
      continue;
    const CostEstimate & c = o.cost[d];
    const double smallest =
        std::max(o.least[d], c.overhead / (overhead_fraction * c.seconds_per_point));
    int64_t m = 0;
    if (l.round_left > 0 && l.plan >= 0.5 * double(l.piece))
      m = l.piece;
    else
    {
      l.round_left = 0;
      if (l.plan < std::max(1.0, double(_min_chunk)) && l.plan < double(remaining))
        continue;
      // As many pieces as lanes, but none below the floor.
      const double k = std::clamp(std::floor(l.plan / o.least[d]), 1.0, double(lanes(s, d)));
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
    if (others < std::max(1.0, double(_min_chunk)) &&
        (rest * c.seconds_per_point < c.overhead || rest < double(_min_chunk)))
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

inline Planner::Outlook
Planner::outlook(const Session & s, const CostEstimate & fastest) const
{
  const std::size_t n = s.devices.size();
  Outlook o;
  o.cost.resize(n);
  o.ready.resize(n);
  o.least.resize(n);
  o.order.resize(n);
  for (std::size_t d = 0; d < n; ++d)
  {
    const Track & l = s.devices[d];
    const CostEstimate & c = o.cost[d] = l.known ? l.fit : fastest;
    // When each device is free of the work it has, by the current fits.
    const double work =
        c.overhead * double(l.busy_chunks) + c.seconds_per_point * double(l.busy_points);
    const double free_at =
        l.flights.empty() ? s.now : s.now + std::max(0.0, work - (s.now - l.busy_start));
    // Ready to take more: free, plus the fixed costs of the chunks of its next
    // round (or of what is left of the current one).
    const int pieces = l.round_left > 0 ? l.round_left : lanes(s, d);
    o.ready[d] = free_at + c.overhead * double(pieces);
    // No chunk below the size that pays for its own fixed cost, or below the knee.
    o.least[d] = std::max({double(_min_chunk), double(l.knee), c.overhead / c.seconds_per_point});
    o.order[d] = d;
  }
  std::sort(o.order.begin(), o.order.end(),
            [&](std::size_t a, std::size_t b) { return o.ready[a] < o.ready[b]; });
  return o;
}

inline void
Planner::make_plan(Session & s, const Outlook & o, int64_t remaining) const
{
  const auto & order = o.order;
  const auto & cost = o.cost;
  const auto & least = o.least;
  const auto & ready = o.ready;
  const std::size_t n = order.size();
  enum class Part
  {
    open,  // in the water-filling
    out,   // a crumb: no chunk
    fixed, // exactly its least chunk
  };
  std::vector<Part> state(n, Part::open);
  if (s.excluded < n)
    state[s.excluded] = Part::out;
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
      weighted += ready[in[k]] / cost[in[k]].seconds_per_point;
      T = (left + weighted) / rate;
      if (k + 1 == in.size() || T <= ready[in[k + 1]])
        break;
    }
    for (const std::size_t d : in)
      plan[d] =
          s.devices[d].known ? std::max(0.0, (T - ready[d]) / cost[d].seconds_per_point) : 0.0;
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
      if (state[d] == Part::out && d != s.excluded)
      {
        const double end = ready[d] + std::min(left, least[d]) * cost[d].seconds_per_point;
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

inline int
Planner::lanes(const Session & s, std::size_t d)
{
  const History & h = s.entry->devices[d];
  return h.paired ? std::max(1, h.concurrency) : 2;
}

inline std::optional<Assignment>
Planner::fallback(Session & s, const std::vector<int64_t> & cap, int64_t remaining) const
{
  std::optional<std::size_t> best;
  double best_end = std::numeric_limits<double>::infinity();
  for (std::size_t d = 0; d < s.devices.size(); ++d)
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

inline Assignment
Planner::assign(Session & s, std::size_t d, int64_t size, int64_t remaining)
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
} // namespace neml2::aoti::detail::adaptive
