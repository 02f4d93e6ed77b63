// detail::median: the one median of the library and the benchmarks, and its even-count rule.
#include "catch.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "neml2/aoti/detail/stats.h"

using neml2::aoti::detail::median;

TEST_CASE("median of an odd count is the middle value", "[stats]")
{
  CHECK(median({3.0, 1.0, 2.0}) == 2.0);
  CHECK(median({5.0, -1.0, 4.0, 100.0, 0.0}) == 4.0);
  // Repeated values count once each.
  CHECK(median({7.0, 7.0, 1.0}) == 7.0);
}

TEST_CASE("median of an even count is the mean of the two middle values", "[stats]")
{
  CHECK(median({4.0, 1.0, 3.0, 2.0}) == 2.5);
  CHECK(median({10.0, 0.0}) == 5.0);
  // Not the upper or the lower middle value alone.
  CHECK(median({1.0, 2.0, 3.0, 1000.0}) == 2.5);
  CHECK(median({-3.0, -1.0}) == -2.0);
}

TEST_CASE("median of one value is that value; of none, NaN", "[stats]")
{
  CHECK(median({42.5}) == 42.5);
  CHECK(std::isnan(median({})));
}

TEST_CASE("median leaves the caller's vector as it was", "[stats]")
{
  const std::vector<double> v{9.0, 2.0, 7.0, 1.0, 5.0, 3.0};
  std::vector<double> copy = v;
  CHECK(median(copy) == 4.0);
  CHECK(copy == v);
}

TEST_CASE("median does not depend on the order of the values", "[stats]")
{
  std::vector<double> v{0.5, 8.0, -2.0, 3.25, 3.25, 11.0, 6.0, -7.5};
  const double m = median(v);
  CHECK(m == 3.25);
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> reversed(sorted.rbegin(), sorted.rend());
  CHECK(median(sorted) == m);
  CHECK(median(reversed) == m);
}
