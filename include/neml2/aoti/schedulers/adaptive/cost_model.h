// AdaptiveHybrid's cost model: a robust straight-line fit of chunk times against chunk sizes,
// and the sharing of a device's time among chunks that overlap on it. Pure functions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "neml2/aoti/detail/stats.h"

namespace neml2::aoti
{
/**
 * @brief What AdaptiveHybrid has learned about one device: a chunk of n points
 * costs about `overhead + n * seconds_per_point` seconds of the device's time.
 *
 * "The device's time" is a chunk's share of its device: when two chunks run at
 * once on one GPU (two worker lanes), each is charged half of the time they
 * overlap, so that the costs of consecutive chunks add up to elapsed time.
 *
 * @code
 * CostEstimate e;
 * e.overhead = 50e-6;         // 50 us per chunk
 * e.seconds_per_point = 1e-9; // 1 ns per point
 * e.seconds(1000000);         // 1.05e-3 s
 * e.throughput(1000000);      // about 9.5e8 points per second
 * @endcode
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

namespace detail::adaptive
{
/// One measured chunk: its size and its device time.
struct CostSample
{
  int64_t size;   ///< points
  double seconds; ///< device time charged to it
};

/// A chunk's interval on its device and its share of the device time in it.
struct Interval
{
  double start;       ///< when it started
  double end;         ///< when it ended (>= start)
  double charged = 0; ///< its share of the device time, set by share_device_time()
};

/**
 * Whether chunk sizes @p lo <= @p hi are far enough apart (hi >= 1.25 lo + 1) for the
 * time between them to tell a slope from noise.
 */
bool clearly_apart(int64_t lo, int64_t hi);

/**
 * A robust straight-line fit seconds = overhead + n * seconds_per_point over @p samples.
 *
 * The slope is the median of the pairwise slopes (Theil-Sen) of clearly different sizes,
 * the intercept the median residual, so that a minority of outliers (a page fault, a
 * stalled copy, the cold first chunk) moves neither. Guards:
 * - no two sizes clearly apart (one sample, equal sizes): the whole time is charged per
 *   point (the median time per point), no overhead: exact near those sizes;
 * - a flat or falling line (all chunks latency bound, or noise) would make the device look
 *   free per point: a point never costs less than half of the cheapest one measured;
 * - the overhead is never negative, the cost per point always positive.
 *
 * `samples` of the result is the number of samples, `concurrency` is left at 1.
 */
CostEstimate robust_fit(const std::vector<CostSample> & samples);

/**
 * Charge each interval of one device its share of the device: time when k chunks run at
 * once is split k ways, so the charges add up to the time the device was busy.
 * @return the most intervals that overlap (0 when there are none)
 */
int share_device_time(std::vector<Interval> & runs);

// ---------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------

inline bool
clearly_apart(int64_t lo, int64_t hi)
{
  return 4 * hi >= 5 * lo + 4;
}

inline CostEstimate
robust_fit(const std::vector<CostSample> & samples)
{
  CostEstimate e;
  e.samples = samples.size();
  if (samples.empty())
    return e;
  std::vector<double> per_point;
  per_point.reserve(samples.size());
  for (const auto & x : samples)
    per_point.push_back(x.seconds / double(std::max<int64_t>(x.size, 1)));
  const double flat = median(per_point);
  // Only pairs of clearly different sizes: the slope of two near sizes is mostly noise.
  std::vector<double> slopes;
  for (std::size_t i = 0; i < samples.size(); ++i)
    for (std::size_t j = i + 1; j < samples.size(); ++j)
    {
      const auto & a = samples[i];
      const auto & b = samples[j];
      if (clearly_apart(std::min(a.size, b.size), std::max(a.size, b.size)))
        slopes.push_back((b.seconds - a.seconds) / double(b.size - a.size));
    }
  if (slopes.empty())
  {
    e.seconds_per_point = std::max(flat, 1e-15);
    return e;
  }
  const double cheapest = *std::min_element(per_point.begin(), per_point.end());
  e.seconds_per_point = std::max({median(std::move(slopes)), 0.5 * cheapest, 1e-15});
  std::vector<double> residuals;
  residuals.reserve(samples.size());
  for (const auto & x : samples)
    residuals.push_back(x.seconds - e.seconds_per_point * double(x.size));
  e.overhead = std::max(0.0, median(std::move(residuals)));
  return e;
}

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
} // namespace detail::adaptive
} // namespace neml2::aoti
