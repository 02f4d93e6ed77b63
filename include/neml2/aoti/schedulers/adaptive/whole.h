// Whether AdaptiveHybrid runs a batch whole, as one direct call on the device that holds its
// inputs, or spreads it: decided by timing both, per client and batch size.
#pragma once

#include <cstddef>
#include <vector>

#include "neml2/aoti/detail/stats.h"

namespace neml2::aoti::detail::adaptive
{
/// Spread dispatches timed (every device measured) before a direct call is tried.
constexpr std::size_t spread_samples = 3;
/// Direct calls timed before the choice is made.
constexpr std::size_t direct_samples = 3;
/// A first direct call this many times slower than the spread dispatches ends the trial.
constexpr double hopeless = 1.25;
/// No trial when the device's per-point cost, fitted from its chunks of spread dispatches,
/// says a direct call would take this many times longer than spreading. (Beside a GPU lane's
/// staging copies, a CPU chunk on an H200 host cost 3 to 10 times a direct call's time per
/// point, doc/performance.md: a direct call can win where the fit says it takes 4 times longer.)
constexpr double implausible = 5;

/**
 * The trial of one way against the other, for one batch size with its inputs on one device.
 *
 * A chunk cost fitted from the policy's chunks does not say what one direct call costs: the
 * direct call pays no hand-off to a worker, no slicing and no stitching, and it does not run
 * beside a GPU lane's staging copies, which share the cores and the memory bandwidth. So both
 * are timed: first `spread_samples` spread dispatches, then up to `direct_samples` direct
 * calls (one, when it was `hopeless` times slower), and the faster way by the medians is kept.
 * A direct call the fit puts `implausible` times above spreading is not tried.
 */
struct WholeTrial
{
  /// What is done with the batch.
  enum class Choice
  {
    undecided, ///< still timing
    direct,    ///< one direct call on the device that holds the inputs
    spread     ///< spread over the devices by the policy
  };
  std::vector<double> spread;        ///< wall seconds of the last spread dispatches
  std::vector<double> direct;        ///< wall seconds of the direct calls tried
  Choice choice = Choice::undecided; ///< the way kept, once decided
};

/// Whether the next batch runs as a direct call: the choice, or a trial once spread is timed.
inline bool
take_direct(const WholeTrial & t)
{
  if (t.choice != WholeTrial::Choice::undecided)
    return t.choice == WholeTrial::Choice::direct;
  return t.spread.size() >= spread_samples;
}

/**
 * Before the first trial: rule the direct call out when @p estimate, its seconds by the
 * device's fitted per-point cost, is `implausible` times the spread dispatches' median.
 */
inline void
consider(WholeTrial & t, double estimate)
{
  if (t.choice == WholeTrial::Choice::undecided && t.direct.empty() &&
      t.spread.size() >= spread_samples && estimate > implausible * median(t.spread))
    t.choice = WholeTrial::Choice::spread;
}

/// Take in a spread dispatch of @p seconds (every device measured), keeping the last ones.
inline void
record_spread(WholeTrial & t, double seconds)
{
  t.spread.push_back(seconds);
  if (t.spread.size() > spread_samples)
    t.spread.erase(t.spread.begin());
}

/// Take in a direct call of @p seconds; decide once enough are timed.
inline void
record_direct(WholeTrial & t, double seconds)
{
  if (t.choice != WholeTrial::Choice::undecided || t.spread.size() < spread_samples)
    return; // not a trial: the choice stands, or spread is not timed yet
  t.direct.push_back(seconds);
  const double spread = median(t.spread);
  if (t.direct.size() == 1 && seconds > hopeless * spread)
    t.choice = WholeTrial::Choice::spread;
  else if (t.direct.size() >= direct_samples)
    t.choice = median(t.direct) <= spread ? WholeTrial::Choice::direct : WholeTrial::Choice::spread;
}
} // namespace neml2::aoti::detail::adaptive
