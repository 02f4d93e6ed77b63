// Execution policies with fake chunk jobs: coverage, ordering and the error contract,
// one test body per policy.
#include "catch.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>

#include "neml2/aoti/execution/policies.h"
#include "neml2/aoti/schedulers/Simple.h"
#include "neml2/aoti/schedulers/StaticHybrid.h"

using namespace neml2::aoti;

namespace
{
template <class P>
P
make_policy(int64_t chunk)
{
  using S = typename P::scheduler_type;
  if constexpr (std::is_same_v<S, Simple>)
    return P(std::make_shared<Simple>(Simple::Config{"cpu", chunk}));
  else
    return P(std::make_shared<StaticHybrid>(StaticHybrid::Config{{"cpu"}, {chunk}, {}, {}}));
}

template <class P>
constexpr bool is_async = std::is_same_v<P, AsyncPolicy<typename P::scheduler_type>>;

struct Chunk
{
  std::size_t device, ordinal;
  int64_t begin, end;
};

/// Runs a dispatch whose chunks fail as @p fail_kind says for ordinals in @p fail.
struct Recorder
{
  std::mutex mutex;
  std::vector<Chunk> chunks;
  std::set<std::size_t> fail;
  char fail_kind = 'c'; // c: ConvergenceError, f: FatalError, m: chunk 0 recoverable, rest fatal,
                        // a: std::bad_alloc, p: ConvergenceError naming the chunk's first row

  void operator()(std::size_t dev, std::size_t ord, int64_t b, int64_t e)
  {
    {
      const std::lock_guard<std::mutex> lock(mutex);
      chunks.push_back({dev, ord, b, e});
    }
    if (!fail.count(ord))
      return;
    const std::string what = "chunk " + std::to_string(ord);
    if (fail_kind == 'c' || (fail_kind == 'm' && ord == 0))
      throw ConvergenceError(what);
    if (fail_kind == 'p')
      throw ConvergenceError(
          what, FailedPoints{0, at::tensor({b}, at::kLong), at::tensor({1.0}, at::kDouble)});
    if (fail_kind == 'a')
      throw std::bad_alloc();
    throw FatalError(what);
  }

  /// Every row covered exactly once, ordinals 0..n-1 in row order.
  void check_coverage(int64_t batch)
  {
    std::sort(chunks.begin(), chunks.end(),
              [](const Chunk & a, const Chunk & b) { return a.ordinal < b.ordinal; });
    int64_t next = 0;
    for (std::size_t i = 0; i < chunks.size(); ++i)
    {
      CHECK(chunks[i].ordinal == i);
      CHECK(chunks[i].begin == next);
      CHECK(chunks[i].end > chunks[i].begin);
      next = chunks[i].end;
    }
    CHECK(next == batch);
  }
};
/// Simple on the CPU whose second assignment is wrong in the way `kind` says (none if empty).
struct Wrong : Simple
{
  Wrong() : Simple(Simple::Config{"cpu", 4}) {}
  std::string name() const override { return "Wrong"; }
  std::optional<Assignment> next(const std::vector<int64_t> & load,
                                 int64_t remaining) const override
  {
    if (kind.empty() || ++calls == 1)
      return Simple::next(load, remaining);
    if (kind == "empty")
      return Assignment{0, 0};
    if (kind == "oversized")
      return Assignment{0, remaining + 1};
    return Assignment{3, 4}; // a device it does not have
  }
  std::string kind;
  mutable int calls = 0;
};
} // namespace

#define POLICIES SyncPolicy<Simple>, AsyncPolicy<Simple>, AsyncPolicy<StaticHybrid>

TEST_CASE("the execution policy traits", "[policy]")
{
  STATIC_REQUIRE(is_execution_policy_v<PassThrough>);
  STATIC_REQUIRE(is_execution_policy_v<SyncPolicy<Simple>>);
  STATIC_REQUIRE(is_execution_policy_v<AsyncPolicy<StaticHybrid>>);
  STATIC_REQUIRE_FALSE(is_execution_policy_v<Simple>);
  STATIC_REQUIRE_FALSE(is_execution_policy_v<int>);
  STATIC_REQUIRE_FALSE(PassThrough::asynchronous);
  STATIC_REQUIRE_FALSE(SyncPolicy<Simple>::asynchronous);
  STATIC_REQUIRE(AsyncPolicy<Simple>::asynchronous);
  STATIC_REQUIRE(default_policy_t<StaticHybrid>::asynchronous);
}

TEMPLATE_TEST_CASE("chunks cover the batch once, in order", "[policy]", POLICIES)
{
  for (const int64_t batch : {0, 1, 7, 1000})
    for (const int64_t chunk : {1, 3, 4, 10, 1000})
    {
      INFO("batch " << batch << " chunk " << chunk);
      auto policy = make_policy<TestType>(chunk);
      Recorder r;
      policy.execute(batch, std::ref(r));
      r.check_coverage(batch);
      CHECK(r.chunks.size() == std::size_t((batch + chunk - 1) / chunk));
    }
}

TEMPLATE_TEST_CASE("one failing chunk is rethrown with its type", "[policy]", POLICIES)
{
  auto policy = make_policy<TestType>(4);
  for (const char kind : {'c', 'f'})
  {
    Recorder r;
    r.fail = {2};
    r.fail_kind = kind;
    try
    {
      policy.execute(40, std::ref(r));
      FAIL("no error");
    }
    catch (const Exception & e)
    {
      CHECK(std::string(e.what()) == "chunk 2");
      CHECK(e.recoverable() == (kind == 'c'));
      if (kind == 'c')
        CHECK(dynamic_cast<const ConvergenceError *>(&e));
      else
        CHECK(dynamic_cast<const FatalError *>(&e));
    }
    // No chunk is handed out after the failure beyond those already in flight.
    CHECK(r.chunks.size() < 10);
  }
}

TEMPLATE_TEST_CASE("a foreign error in a chunk becomes FatalError", "[policy]", POLICIES)
{
  auto policy = make_policy<TestType>(4);
  Recorder r;
  r.fail = {0};
  r.fail_kind = 'a';
  CHECK_THROWS_AS(policy.execute(8, std::ref(r)), FatalError);
}

TEMPLATE_TEST_CASE("several failures: aggregated when concurrent, recoverable only if all are",
                   "[policy]", POLICIES)
{
  auto policy = make_policy<TestType>(4);
  for (const char kind : {'c', 'm'})
  {
    Recorder r;
    r.fail = {0, 1, 2, 3};
    r.fail_kind = kind;
    try
    {
      policy.execute(16, std::ref(r));
      FAIL("no error");
    }
    catch (const AggregateError & e)
    {
      // Async keeps two chunks in flight (capacity = 2 x batch size): both fail.
      CHECK(is_async<TestType>);
      REQUIRE(e.errors().size() == 2);
      CHECK(std::string(e.errors()[0]->what()) == "chunk 0");
      CHECK(std::string(e.errors()[1]->what()) == "chunk 1");
      CHECK(e.recoverable() == (kind == 'c'));
    }
    catch (const ConvergenceError & e)
    {
      // Sync stops at the first failure.
      CHECK_FALSE(is_async<TestType>);
      CHECK(std::string(e.what()) == "chunk 0");
    }
  }
}

TEMPLATE_TEST_CASE("a chunk whose error names its failed points does not stop the dispatch",
                   "[policy]", POLICIES)
{
  auto policy = make_policy<TestType>(3);
  Recorder r;
  r.fail = {1, 4};
  r.fail_kind = 'p';
  try
  {
    policy.execute(30, std::ref(r));
    FAIL("no error");
  }
  catch (const AggregateError & e)
  {
    // Every chunk ran, so the two errors together cover the whole batch.
    r.check_coverage(30);
    REQUIRE(e.errors().size() == 2);
    CHECK(std::string(e.errors()[0]->what()) == "chunk 1");
    CHECK(std::string(e.errors()[1]->what()) == "chunk 4");
    CHECK(e.recoverable());
    const std::optional<FailedPoints> failed = e.points();
    REQUIRE(failed);
    CHECK(failed->rows.equal(at::tensor({3, 12}, at::kLong)));
  }
}

TEMPLATE_TEST_CASE("the policy is reusable after an error", "[policy]", POLICIES)
{
  auto policy = make_policy<TestType>(3);
  Recorder bad;
  bad.fail = {1};
  CHECK_THROWS_AS(policy.execute(30, std::ref(bad)), ConvergenceError);
  Recorder good;
  policy.execute(30, std::ref(good));
  good.check_coverage(30);
}

TEMPLATE_TEST_CASE("random failure sets never deadlock and always report", "[policy]", POLICIES)
{
  std::mt19937 rng(1234);
  auto policy = make_policy<TestType>(5);
  for (int trial = 0; trial < 300; ++trial)
  {
    const int64_t batch = std::uniform_int_distribution<int64_t>(0, 60)(rng);
    const auto nchunks = std::size_t((batch + 4) / 5);
    Recorder r;
    for (std::size_t i = 0; i < nchunks; ++i)
      if (std::uniform_int_distribution<int>(0, 3)(rng) == 0)
        r.fail.insert(i);
    r.fail_kind = "cfm"[trial % 3];
    bool threw = false;
    try
    {
      policy.execute(batch, std::ref(r));
    }
    catch (const Exception &)
    {
      threw = true;
    }
    CHECK(threw == !r.fail.empty());
    if (r.fail.empty())
      r.check_coverage(batch);
  }
}

TEST_CASE("policies refuse a null scheduler", "[policy]")
{
  CHECK_THROWS_AS(SyncPolicy<Simple>(nullptr), FatalError);
  CHECK_THROWS_AS(AsyncPolicy<StaticHybrid>(nullptr), FatalError);
}

TEMPLATE_TEST_CASE("a chunk the scheduler may not assign is refused before it runs", "[policy]",
                   SyncPolicy<Wrong>, AsyncPolicy<Wrong>)
{
  const std::map<std::string, std::string> said{
      {"empty", "Wrong assigned 0 points to device 0 of 1 with 6 points left"},
      {"oversized", "Wrong assigned 7 points to device 0 of 1 with 6 points left"},
      {"device", "Wrong assigned 4 points to device 3 of 1 with 6 points left"}};
  for (const auto & [kind, message] : said)
  {
    INFO(kind);
    auto scheduler = std::make_shared<Wrong>();
    scheduler->kind = kind;
    TestType policy(scheduler);
    Recorder r;
    try
    {
      policy.execute(10, std::ref(r));
      FAIL("no error");
    }
    catch (const FatalError & e)
    {
      CHECK(std::string(e.what()) == message);
    }
    // Only the first, valid chunk ran; the policy still works.
    REQUIRE(r.chunks.size() == 1);
    CHECK(r.chunks[0].begin == 0);
    CHECK(r.chunks[0].end == 4);
    scheduler->kind.clear();
    Recorder again;
    policy.execute(10, std::ref(again));
    again.check_coverage(10);
  }
}

TEST_CASE("a bad NEML2_STAGING_THREADS or NEML2_IDLE_RELEASE_MS is refused when the policy is "
          "made",
          "[policy]")
{
  const auto make = [] {
    AsyncPolicy<Simple> p(std::make_shared<Simple>(Simple::Config{"cpu", 4}));
  };
  for (const std::string name : {"NEML2_STAGING_THREADS", "NEML2_IDLE_RELEASE_MS"})
  {
    for (const std::string bad : {"0", "-2", "x", "3 "})
    {
      setenv(name.c_str(), bad.c_str(), 1);
      std::string what = "(no FatalError)";
      try
      {
        make();
      }
      catch (const FatalError & e)
      {
        what = e.what();
      }
      CHECK(what == name + " must be a positive integer, not '" + bad + "'");
    }
    setenv(name.c_str(), "2", 1);
    CHECK_NOTHROW(make());
    unsetenv(name.c_str());
  }
}
