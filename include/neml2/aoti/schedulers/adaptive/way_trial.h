// How AdaptiveHybrid runs a batch whose inputs are on the host: spread over every device,
// spread over the other devices only, or whole as one direct call on the host: decided by
// timing the three ways, per client and batch size.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include "neml2/aoti/detail/stats.h"

namespace neml2::aoti::detail::adaptive
{
/// Spread dispatches timed (every device measured) before another way is tried.
constexpr std::size_t spread_samples = 3;
/// Dispatches of another way timed before the choice is made.
constexpr std::size_t way_samples = 3;
/// Dispatches of a way judged before its trial may end early (the first may pay a warm-up:
/// page-locked buffers for larger chunks, a direct call's first run at that size).
constexpr std::size_t first_samples = 2;
/// The first dispatches of a way all this many times slower than spreading end its trial.
constexpr double hopeless = 1.25;
/// No direct call is tried when the device's per-point cost, fitted from its chunks of
/// spread dispatches, says it would take this many times longer than spreading. (Beside a
/// GPU lane's staging copies, a CPU chunk on an H200 host cost 3 to 10 times a direct
/// call's time per point, doc/performance.md: a direct call can win where the fit says it
/// takes 4 times longer.)
constexpr double implausible = 5;
/// A direct call whose fitted time is below this many seconds is tried whatever the fit says:
/// the fit of a device's small chunks carries their fixed costs (a hand-off to a worker, its
/// threads woken or started) and the slowdown of running beside the GPU lanes' staging, so it
/// overestimates a direct call most where that call is short, and two such calls (the most a
/// trial times of a hopeless way) cost little once per batch size. (On an H100 host the fit
/// ruled out direct calls of 2000 points, and of 16384 points that took 31 us in the runs
/// that tried them, against a fit of at least 2.2 ms: the GPU alone was kept at 0.04 of the
/// best tuned throughput, doc/performance.md. Tried up to 20 ms, the whole batch's direct
/// call skewed the host's fit in the simulator, whose large chunks fall out of cache.)
constexpr double always_tried = 5e-3;

/// The ways to run a batch, in the order they are tried.
enum class Way : std::size_t
{
  spread = 0, ///< over every device, as the planner shares it
  others = 1, ///< over the devices other than the one that holds the inputs
  direct = 2, ///< one direct call on the device that holds the inputs
};

/// Number of ways.
constexpr std::size_t ways = 3;

/// The name of Way @p w, for reports: "spread", "others" or "direct".
constexpr const char *
name(Way w)
{
  return w == Way::spread ? "spread" : w == Way::others ? "others" : "direct";
}

/**
 * The trial of the ways against each other, for one batch size with its inputs on one device.
 *
 * A chunk cost fitted from the policy's chunks does not say what a dispatch costs: a direct
 * call pays no hand-off to a worker, no slicing and no stitching, and it does not run beside
 * a GPU lane's staging copies, which share the cores and the memory bandwidth; and a host
 * device whose chunks are slow beside the GPUs' staging can make spreading slower than the
 * GPUs alone. So each way is timed, by the wall time of the whole dispatch: first
 * `spread_samples` spread dispatches, then up to `way_samples` of each other way that is
 * allowed (`first_samples`, when each was `hopeless` times slower than spreading), and the
 * way with the least median is kept until AdaptiveHybrid::forget(). A direct call the fit
 * puts `implausible` times above spreading, and at least `always_tried` seconds, is not tried.
 */
struct WholeTrial
{
  std::array<std::vector<double>, ways> seconds{}; ///< per way: wall seconds of its dispatches
  std::array<bool, ways> out{};                    ///< per way: ruled out
  bool decided = false;                            ///< the choice is made
  Way choice = Way::spread;                        ///< the way kept, once decided
};

/// The ways allowed for a batch (bit `w` set when Way `w` may be taken): spreading and the
/// other devices always, a direct call when @p direct (the batch is within the host's bounds).
constexpr unsigned
allowed(bool direct)
{
  return 1u | 2u | (direct ? 4u : 0u);
}

/// Whether Way @p w is in the set @p allowed.
constexpr bool
is_allowed(unsigned allowed, Way w)
{
  return (allowed >> std::size_t(w)) & 1u;
}

/// The way the next dispatch takes: the choice, else the next one in the trial.
inline Way
next_way(const WholeTrial & t, unsigned allowed)
{
  if (t.decided)
    return t.choice;
  if (t.seconds[0].size() < spread_samples)
    return Way::spread;
  for (std::size_t w = 1; w < ways; ++w)
    if (is_allowed(allowed, Way(w)) && !t.out[w] && t.seconds[w].size() < way_samples)
      return Way(w);
  return Way::spread; // not reached: record() decides once every way is timed
}

/**
 * Before a trial of a direct call: rule it out when @p estimate, its seconds by the device's
 * fitted per-point cost, is `implausible` times the spread dispatches' median and at least
 * `always_tried` seconds.
 */
inline void
consider(WholeTrial & t, double estimate)
{
  const auto & spread = t.seconds[0];
  const auto & direct = t.seconds[std::size_t(Way::direct)];
  if (!t.decided && direct.empty() && spread.size() >= spread_samples &&
      estimate > implausible * median(spread) && estimate >= always_tried)
    t.out[std::size_t(Way::direct)] = true;
}

/**
 * Take in a dispatch of Way @p w that took @p seconds; decide once every way in @p allowed
 * is timed or ruled out. Spread dispatches keep the last `spread_samples`; another way counts
 * only once spreading is timed.
 */
inline void
record(WholeTrial & t, Way w, double seconds, unsigned allowed)
{
  if (t.decided)
    return;
  auto & spread = t.seconds[0];
  if (w == Way::spread)
  {
    spread.push_back(seconds);
    if (spread.size() > spread_samples)
      spread.erase(spread.begin());
  }
  else if (spread.size() >= spread_samples && !t.out[std::size_t(w)])
  {
    auto & mine = t.seconds[std::size_t(w)];
    mine.push_back(seconds);
    if (mine.size() == first_samples &&
        *std::min_element(mine.begin(), mine.end()) > hopeless * median(spread))
      t.out[std::size_t(w)] = true;
  }
  if (spread.size() < spread_samples)
    return;
  double best = median(spread);
  Way pick = Way::spread;
  for (std::size_t v = 1; v < ways; ++v)
  {
    if (!is_allowed(allowed, Way(v)) || t.out[v])
      continue;
    if (t.seconds[v].size() < way_samples)
      return; // still to be timed
    const double m = median(t.seconds[v]);
    if (m < best)
    {
      best = m;
      pick = Way(v);
    }
  }
  t.decided = true;
  t.choice = pick;
}
} // namespace neml2::aoti::detail::adaptive
