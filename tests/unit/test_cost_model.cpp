// AdaptiveHybrid's cost model on its own: the robust line fit of chunk times and the sharing
// of a device's time among overlapping chunks (pure functions, no scheduler).
#include "catch.h"

#include <cstdint>
#include <vector>

#include "neml2/aoti/schedulers/adaptive/cost_model.h"

using neml2::aoti::CostEstimate;
using neml2::aoti::detail::adaptive::clearly_apart;
using neml2::aoti::detail::adaptive::CostSample;
using neml2::aoti::detail::adaptive::Interval;
using neml2::aoti::detail::adaptive::robust_fit;
using neml2::aoti::detail::adaptive::share_device_time;

namespace
{
/// Samples of seconds = overhead + n * per_point at @p sizes, no noise.
std::vector<CostSample>
line(double overhead, double per_point, const std::vector<int64_t> & sizes)
{
  std::vector<CostSample> s;
  for (const auto n : sizes)
    s.push_back({n, overhead + per_point * double(n)});
  return s;
}
} // namespace

TEST_CASE("CostEstimate predicts a chunk's time and throughput", "[cost_model]")
{
  CostEstimate e;
  e.overhead = 50e-6;
  e.seconds_per_point = 1e-9;
  CHECK(e.seconds(0) == 50e-6);
  CHECK(e.seconds(1000000) == Approx(1.05e-3));
  CHECK(e.throughput(1000000) == Approx(1e6 / 1.05e-3));
}

TEST_CASE("robust_fit recovers a line exactly from clean samples", "[cost_model]")
{
  const double a = 40e-6, b = 2.5e-9;
  const auto e = robust_fit(line(a, b, {1000, 4000, 16000, 64000, 256000}));
  CHECK(e.samples == 5);
  CHECK(e.overhead == Approx(a).epsilon(1e-9));
  CHECK(e.seconds_per_point == Approx(b).epsilon(1e-9));
  CHECK(e.concurrency == 1);
  // The order of the samples does not matter.
  const auto r = robust_fit(line(a, b, {256000, 1000, 64000, 4000, 16000}));
  CHECK(r.overhead == Approx(e.overhead).epsilon(1e-12));
  CHECK(r.seconds_per_point == Approx(e.seconds_per_point).epsilon(1e-12));
}

TEST_CASE("robust_fit ignores a minority of outliers", "[cost_model]")
{
  const double a = 100e-6, b = 1e-9;
  auto s = line(a, b, {2000, 5000, 10000, 30000, 60000, 100000, 200000});
  // Two stalled chunks (a page fault, a preempted worker) that took far longer.
  s.push_back({20000, 8 * (a + b * 20000)});
  s.push_back({150000, 5 * (a + b * 150000)});
  const auto e = robust_fit(s);
  CHECK(e.samples == 9);
  CHECK(e.overhead == Approx(a).epsilon(1e-9));
  CHECK(e.seconds_per_point == Approx(b).epsilon(1e-9));
  // A least-squares line would be pulled far off: the outliers carry most of the time.
  CHECK(e.seconds(150000) < 1.01 * (a + b * 150000));
}

TEST_CASE("robust_fit without two sizes clearly apart charges everything per point", "[cost_model]")
{
  SECTION("no samples")
  {
    const auto e = robust_fit({});
    CHECK(e.samples == 0);
    CHECK(e.overhead == 0);
    CHECK(e.seconds_per_point == 0);
  }
  SECTION("one sample")
  {
    const auto e = robust_fit({{4000, 2e-3}});
    CHECK(e.samples == 1);
    CHECK(e.overhead == 0);
    CHECK(e.seconds_per_point == Approx(2e-3 / 4000));
    CHECK(e.seconds(4000) == Approx(2e-3)); // exact at the measured size
  }
  SECTION("equal sizes: the median time per point")
  {
    const auto e = robust_fit({{1000, 1e-3}, {1000, 3e-3}, {1000, 2e-3}, {1000, 50e-3}});
    CHECK(e.overhead == 0);
    CHECK(e.seconds_per_point == Approx(2.5e-3 / 1000)); // mean of the two middle values
  }
  SECTION("sizes too close to tell a slope from noise")
  {
    CHECK_FALSE(clearly_apart(1000, 1200));
    const auto e = robust_fit({{1000, 1e-3}, {1200, 1.3e-3}});
    CHECK(e.overhead == 0);
    CHECK(e.seconds_per_point == Approx(0.5 * (1e-6 + 1.3e-3 / 1200)));
  }
  SECTION("chunks of no points do not divide by zero")
  {
    const auto e = robust_fit({{0, 1e-4}});
    CHECK(e.seconds_per_point == Approx(1e-4));
  }
}

TEST_CASE("robust_fit keeps the overhead non-negative and the cost per point positive",
          "[cost_model]")
{
  SECTION("a line through a negative intercept")
  {
    const auto e = robust_fit(line(-50e-6, 1e-9, {100000, 200000, 400000, 800000}));
    CHECK(e.overhead == 0);
    CHECK(e.seconds_per_point == Approx(1e-9).epsilon(1e-9));
  }
  SECTION("a flat line (every chunk latency bound): at least half the cheapest point")
  {
    const auto e = robust_fit({{1000, 1e-3}, {4000, 1e-3}, {16000, 1e-3}});
    CHECK(e.seconds_per_point == Approx(0.5 * 1e-3 / 16000));
    CHECK(e.overhead >= 0);
  }
  SECTION("a falling line (noise): still positive per point")
  {
    const auto e = robust_fit({{1000, 2e-3}, {4000, 1.5e-3}, {16000, 1e-3}});
    CHECK(e.seconds_per_point > 0);
    CHECK(e.seconds_per_point == Approx(0.5 * 1e-3 / 16000));
    CHECK(e.overhead >= 0);
  }
  SECTION("zero times")
  {
    const auto e = robust_fit({{1000, 0.0}, {8000, 0.0}});
    CHECK(e.seconds_per_point > 0);
    CHECK(e.overhead == 0);
  }
}

TEST_CASE("clearly_apart needs a quarter more points, plus one", "[cost_model]")
{
  CHECK(clearly_apart(4, 6));
  CHECK_FALSE(clearly_apart(4, 5));
  CHECK(clearly_apart(1000, 1251));
  CHECK_FALSE(clearly_apart(1000, 1250));
  CHECK_FALSE(clearly_apart(7, 7));
  CHECK(clearly_apart(0, 1));
}

TEST_CASE("share_device_time splits overlapping time among the chunks running", "[cost_model]")
{
  SECTION("none")
  {
    std::vector<Interval> none;
    CHECK(share_device_time(none) == 0);
  }
  SECTION("one after another: each is charged its own time")
  {
    std::vector<Interval> runs{{0.0, 1.0}, {1.0, 3.0}, {4.0, 4.5}};
    CHECK(share_device_time(runs) == 1);
    CHECK(runs[0].charged == Approx(1.0));
    CHECK(runs[1].charged == Approx(2.0));
    CHECK(runs[2].charged == Approx(0.5));
  }
  SECTION("two at once: each is charged half")
  {
    std::vector<Interval> runs{{0.0, 2.0}, {0.0, 2.0}};
    CHECK(share_device_time(runs) == 2);
    CHECK(runs[0].charged == Approx(1.0));
    CHECK(runs[1].charged == Approx(1.0));
  }
  SECTION("partial overlap: the charges add up to the busy time")
  {
    // Busy from 0 to 5; [1, 3] runs the first two chunks, [3, 4] the last two.
    std::vector<Interval> runs{{0.0, 3.0}, {1.0, 5.0}, {3.0, 4.0}};
    runs[0].charged = 99; // stale shares are replaced
    CHECK(share_device_time(runs) == 2);
    CHECK(runs[0].charged == Approx(1.0 + 1.0));
    CHECK(runs[1].charged == Approx(1.0 + 0.5 + 1.0));
    CHECK(runs[2].charged == Approx(0.5));
    CHECK(runs[0].charged + runs[1].charged + runs[2].charged == Approx(5.0));
  }
  SECTION("three at once")
  {
    std::vector<Interval> runs{{0.0, 3.0}, {0.0, 3.0}, {0.0, 3.0}};
    CHECK(share_device_time(runs) == 3);
    for (const auto & r : runs)
      CHECK(r.charged == Approx(1.0));
  }
  SECTION("an empty interval is charged nothing")
  {
    std::vector<Interval> runs{{1.0, 1.0}, {0.0, 2.0}};
    CHECK(share_device_time(runs) == 1);
    CHECK(runs[0].charged == 0);
    CHECK(runs[1].charged == Approx(2.0));
  }
}
