// Order statistics shared by AdaptiveHybrid's cost model and the benchmark programs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace neml2::aoti::detail
{
/**
 * The median of @p values: the middle value of an odd count, the mean of the two
 * middle values of an even count, NaN when there is none. The vector is taken by
 * value, so the caller's copy keeps its order; move it in when it is not needed after.
 * Linear time (a partial sort), not a full sort.
 */
inline double
median(std::vector<double> values)
{
  if (values.empty())
    return std::numeric_limits<double>::quiet_NaN();
  const auto half = static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), values.begin() + half, values.end());
  const double upper = values[std::size_t(half)];
  if (values.size() % 2 != 0)
    return upper;
  // nth_element leaves the smaller half in front: its largest is the lower middle value.
  const double lower = *std::max_element(values.begin(), values.begin() + half);
  return 0.5 * (lower + upper);
}
} // namespace neml2::aoti::detail
