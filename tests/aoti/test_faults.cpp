// Fault injection: thousands of random dispatches with chunks failing through the chunk hook,
// checking the error contract every time (type, recoverability, no deadlock, nothing touched,
// the next call correct).
#include "fixtures.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <map>
#include <mutex>
#include <new>
#include <random>
#include <set>
#include <thread>

using namespace neml2_test;

namespace
{
/// What an injected failure throws.
enum class Kind
{
  convergence, ///< ConvergenceError (recoverable)
  fatal,       ///< FatalError
  torch,       ///< a foreign c10::Error from TORCH_CHECK
  bad_alloc    ///< std::bad_alloc
};

const char *
kind_name(Kind k)
{
  switch (k)
  {
    case Kind::convergence:
      return "ConvergenceError";
    case Kind::fatal:
      return "FatalError";
    case Kind::torch:
      return "c10::Error";
    case Kind::bad_alloc:
      return "std::bad_alloc";
  }
  return "?";
}

/// What the message of an injected failure of @p k in chunk @p ordinal contains.
std::string
injected_text(Kind k, std::size_t ordinal)
{
  switch (k)
  {
    case Kind::convergence:
      return "injected convergence failure in chunk " + std::to_string(ordinal);
    case Kind::fatal:
      return "injected fatal error in chunk " + std::to_string(ordinal);
    case Kind::torch:
      return "injected c10 error in chunk " + std::to_string(ordinal);
    case Kind::bad_alloc:
      return "out of memory (std::bad_alloc)";
  }
  return "?";
}

/// A positive integer from the environment, or @p fallback.
long
env_count(const char * name, long fallback)
{
  const char * v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  const long n = std::strtol(v, nullptr, 10);
  return n > 0 ? n : fallback;
}

/// Fails chosen chunks and records every chunk the dispatcher started (thread safe).
struct Injector
{
  std::map<std::size_t, Kind> plan; // ordinal -> failure; fixed while a dispatch runs
  std::mutex mutex;
  std::map<std::size_t, std::pair<int64_t, int64_t>> started; // ordinal -> rows

  void reset(std::map<std::size_t, Kind> p)
  {
    plan = std::move(p);
    started.clear();
  }

  void operator()(const at::Device &, std::size_t ordinal, int64_t begin, int64_t end)
  {
    {
      const std::lock_guard<std::mutex> lock(mutex);
      started[ordinal] = {begin, end};
    }
    const auto it = plan.find(ordinal);
    if (it == plan.end())
      return;
    switch (it->second)
    {
      case Kind::convergence:
        throw ConvergenceError(injected_text(Kind::convergence, ordinal));
      case Kind::fatal:
        throw FatalError(injected_text(Kind::fatal, ordinal));
      case Kind::torch:
        TORCH_CHECK(false, "injected c10 error in chunk ", ordinal);
        break;
      case Kind::bad_alloc:
        throw std::bad_alloc();
    }
  }
};

/// Aborts the process when a dispatch runs past its deadline: a deadlock cannot be caught.
class Watchdog
{
public:
  explicit Watchdog(double seconds) : _limit(seconds), _thread([this] { loop(); }) {}
  ~Watchdog()
  {
    _stop = true;
    _thread.join();
  }
  void arm(const std::string & what)
  {
    {
      const std::lock_guard<std::mutex> lock(_mutex);
      _what = what;
    }
    _armed_at = now();
  }
  void disarm() { _armed_at = -1; }
  double limit() const { return _limit; }

private:
  static double now()
  {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void loop()
  {
    while (!_stop)
    {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const double t = _armed_at;
      if (t >= 0 && now() - t > _limit)
      {
        const std::lock_guard<std::mutex> lock(_mutex);
        std::cerr << "fault injection: " << _what << " still running after " << _limit
                  << " s: deadlock" << std::endl;
        std::abort();
      }
    }
  }
  double _limit;
  std::atomic<double> _armed_at{-1};
  std::atomic<bool> _stop{false};
  std::mutex _mutex;
  std::string _what;
  std::thread _thread;
};

/// The result of one entry point, flattened to named tensors for comparison.
using Flat = std::map<std::string, at::Tensor>;

Flat
flatten(const TensorMap & m)
{
  return Flat(m.begin(), m.end());
}

Flat
flatten(const DerivMap & d)
{
  Flat out;
  for (const auto & [of, row] : d)
    for (const auto & [wrt, t] : row)
      out[of + ":" + wrt] = t;
  return out;
}

constexpr const char * graphs[] = {"forward", "jvp", "jacobian", "param_jacobian", "param_vjp"};

/// Call entry point @p g of @p m on @p in (with @p v as tangent or cotangent).
template <class M>
Flat
call(M & m, int g, const TensorMap & in, const at::Tensor & v)
{
  switch (g)
  {
    case 0:
      return flatten(m.forward(in));
    case 1:
      return flatten(m.jvp(in, {{"strain", v}}));
    case 2:
      return flatten(m.jacobian(in));
    case 3:
      return flatten(m.param_jacobian(in));
    default:
      return flatten(m.param_vjp(in, {{"stress", v}}));
  }
}

/// Deep copies, to check later that nothing was written to the originals.
Flat
snapshot(const Flat & f)
{
  Flat out;
  for (const auto & [k, t] : f)
    out[k] = t.clone();
  return out;
}

bool
same(const Flat & a, const Flat & b, bool exact, bool sums)
{
  if (a.size() != b.size())
    return false;
  for (const auto & [k, t] : a)
  {
    const auto it = b.find(k);
    if (it == b.end())
      return false;
    // Adjoints are sums over chunks: equal to round-off only.
    const bool ok = (exact && !sums) ? identical(t, it->second) : close(t, it->second, 1e-12, 1e-9);
    if (!ok)
      return false;
  }
  return true;
}

/// Counts for the summary line.
struct Tally
{
  long dispatches = 0, failed = 0, aggregates = 0, recoverable = 0;
  std::map<std::string, long> by_type;
  double max_seconds = 0;
};

/// One policy under test: how to build it for a chunk size, and its models by chunk size.
template <class Case> struct Pool
{
  std::map<int64_t, decltype(Case::make(std::string(), 0))> models;
  auto & get(int64_t chunk)
  {
    auto it = models.find(chunk);
    if (it == models.end())
      it = models.emplace(chunk, Case::make(stub("elastic_promoted"), chunk)).first;
    return it->second;
  }
};

/**
 * One random dispatch of @p m with failures injected, and every check of the contract.
 * @p sync: chunks run one at a time on the calling thread, so the first failure ends it.
 */
template <class M>
void
one_dispatch(M & m, Injector & injector, const Model & direct, std::mt19937_64 & rng, bool exact,
             bool sync, Watchdog & watchdog, Tally & tally, const std::string & what)
{
  std::uniform_int_distribution<int> coin(0, 99);
  const int64_t batch = std::uniform_int_distribution<int64_t>(0, 40)(rng);
  const int g = std::uniform_int_distribution<int>(0, 4)(rng);
  INFO(what << ", batch " << batch << ", " << graphs[g]);

  const auto seed = std::uniform_int_distribution<uint64_t>(1, 1u << 30)(rng);
  const at::Tensor eps = strains(batch, seed), v = strains(batch, seed + 1);
  const TensorMap in{{"strain", eps}};
  const at::Tensor eps0 = eps.clone(), v0 = v.clone();
  Flat params0;
  for (const auto & [k, t] : m.named_parameters())
    params0[k] = t.clone();

  // A result held from an earlier, successful call: a failing call must not write into it.
  injector.reset({});
  m.set_chunk_hook(std::ref(injector));
  const Flat held = call(m, g, in, v);
  const Flat held0 = snapshot(held);
  const std::size_t chunks = std::max<std::size_t>(injector.started.size(), 1);

  // The failure plan: each chunk fails with probability p, p itself random, so that most
  // dispatches have one failure and some have many (every chunk, sometimes).
  const int p = std::array<int, 4>{0, 10, 40, 100}[std::size_t(coin(rng) % 4)];
  std::map<std::size_t, Kind> plan;
  for (std::size_t o = 0; o < chunks; ++o)
    if (coin(rng) < p)
      plan[o] = Kind(std::uniform_int_distribution<int>(0, 3)(rng));
  injector.reset(plan);

  const auto t0 = std::chrono::steady_clock::now();
  watchdog.arm(what + ", batch " + std::to_string(batch) + ", " + graphs[g]);
  bool threw = false;
  try
  {
    call(m, g, in, v);
  }
  catch (const Exception & e)
  {
    threw = true;
    watchdog.disarm();
    // The chunks that started: a prefix of the dispatch order, tiling the rows in order.
    std::vector<std::size_t> failed;
    int64_t next_row = 0;
    std::size_t next_ordinal = 0;
    for (const auto & [o, rows] : injector.started)
    {
      CHECK(o == next_ordinal++);
      CHECK(rows.first == next_row);
      next_row = rows.second;
      if (plan.count(o))
        failed.push_back(o);
    }
    REQUIRE_FALSE(failed.empty());
    // The calling thread stops at the first failure; a pool drains what was in flight.
    if (sync)
      CHECK(injector.started.rbegin()->first == failed.front());

    std::vector<const Exception *> errors;
    if (const auto * agg = dynamic_cast<const AggregateError *>(&e))
    {
      ++tally.aggregates;
      for (const auto & sub : agg->errors())
        errors.push_back(sub.get());
      CHECK_FALSE(sync);
    }
    else
      errors.push_back(&e);
    REQUIRE(errors.size() == failed.size());
    bool all_recoverable = true;
    for (std::size_t i = 0; i < errors.size(); ++i)
    {
      const Kind k = plan.at(failed[i]);
      INFO("chunk " << failed[i] << " threw " << kind_name(k) << ": " << errors[i]->what());
      CHECK_FALSE(dynamic_cast<const AggregateError *>(errors[i]));
      if (k == Kind::convergence)
        CHECK(dynamic_cast<const ConvergenceError *>(errors[i]));
      else
        CHECK(dynamic_cast<const FatalError *>(errors[i]));
      CHECK(errors[i]->recoverable() == (k == Kind::convergence));
      CHECK_THAT(errors[i]->what(),
                 Catch::Matchers::ContainsSubstring(injected_text(k, failed[i])));
      all_recoverable = all_recoverable && k == Kind::convergence;
    }
    CHECK(e.recoverable() == all_recoverable);
    ++tally.failed;
    tally.recoverable += e.recoverable();
    ++tally.by_type[errors.size() > 1 ? "AggregateError" : kind_name(plan.at(failed.front()))];
  }
  watchdog.disarm();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  tally.max_seconds = std::max(tally.max_seconds, seconds);
  ++tally.dispatches;
  CHECK(seconds < 20); // generous: a sanitizer build on a loaded machine
  // It fails exactly when a chunk that started was planned to fail.
  bool planned = false;
  for (const auto & [o, rows] : injector.started)
    planned = planned || plan.count(o);
  CHECK(threw == planned);

  // Nothing the caller holds was touched: inputs, parameters, earlier results.
  CHECK(identical(eps, eps0));
  CHECK(identical(v, v0));
  for (const auto & [k, t] : m.named_parameters())
    CHECK(identical(t, params0.at(k)));
  CHECK(same(held, held0, true, false));

  // The next call is correct.
  injector.reset({});
  const Flat again = call(m, g, in, v);
  CHECK(same(again, call(direct, g, in, v), exact, g == 4));
  m.set_chunk_hook({});
}
} // namespace

TEST_CASE("fault injection: random dispatches keep the error contract", "[faults]")
{
  const long n = env_count("NEML2_FAULT_DISPATCHES", 2000);
  const auto seed = uint64_t(env_count("NEML2_FAULT_SEED", 20261202));
  INFO("NEML2_FAULT_SEED=" << seed << " NEML2_FAULT_DISPATCHES=" << n);
  std::mt19937_64 rng(seed);
  const Model direct(stub("elastic_promoted"), "model", "cpu");
  Watchdog watchdog(120);
  Injector injector;
  Tally tally;

  Pool<PassThroughCase> pass;
  Pool<SyncSimpleCase> sync_simple;
  Pool<AsyncSimpleCase> async_simple;
  Pool<AsyncHybridCase> async_hybrid;
  const int64_t chunk_sizes[] = {1, 2, 3, 5, 8, 13, 0};

  for (long i = 0; i < n; ++i)
  {
    const int64_t chunk =
        chunk_sizes[std::uniform_int_distribution<std::size_t>(0, std::size(chunk_sizes) - 1)(rng)];
    const std::string tag = "dispatch " + std::to_string(i) + ", chunk " + std::to_string(chunk);
    switch (std::uniform_int_distribution<int>(0, 3)(rng))
    {
      case 0:
        one_dispatch(pass.get(0), injector, direct, rng, true, true, watchdog, tally,
                     tag + ", PassThrough");
        break;
      case 1:
        one_dispatch(sync_simple.get(chunk), injector, direct, rng, true, true, watchdog, tally,
                     tag + ", SyncPolicy<Simple>");
        break;
      case 2:
        one_dispatch(async_simple.get(chunk), injector, direct, rng, true, false, watchdog, tally,
                     tag + ", AsyncPolicy<Simple>");
        break;
      default:
        one_dispatch(async_hybrid.get(chunk), injector, direct, rng, AsyncHybridCase::exact(),
                     false, watchdog, tally, tag + ", AsyncPolicy<StaticHybrid>");
    }
  }

  std::cout << "fault injection: " << tally.dispatches << " dispatches (seed " << seed << "), "
            << tally.failed << " failed (" << tally.recoverable << " recoverable):";
  for (const auto & [type, count] : tally.by_type)
    std::cout << " " << type << " " << count;
  std::cout << "; slowest failing or passing call " << tally.max_seconds << " s" << std::endl;
  CHECK(tally.dispatches == n);
  CHECK(tally.aggregates > 0); // several concurrent failures did happen
  CHECK(tally.by_type.size() == 5);
}

namespace
{
/// A chunk error that cannot be copied for the report: its clone() runs out of memory.
class Unreportable : public ConvergenceError
{
public:
  Unreportable() : ConvergenceError("unreportable") {}
  std::shared_ptr<const Exception> clone() const override { throw std::bad_alloc(); }
};

/// Simple on the CPU, except that the third call of next() throws, with chunks in flight.
class FailingNext : public Simple
{
public:
  explicit FailingNext(const Simple::Config & cfg) : Simple(cfg) {}
  std::string name() const override { return "FailingNext"; }
  std::optional<Assignment> next(const std::vector<int64_t> & load,
                                 int64_t remaining) const override
  {
    if (++calls == 3)
      throw std::runtime_error("next() failed on purpose");
    return Simple::next(load, remaining);
  }
  mutable int calls = 0;
};
} // namespace

TEST_CASE("an asynchronous dispatch ends and reports even when reporting is in trouble", "[faults]")
{
  const std::string s = stub("forward_single");
  const at::Tensor eps = strains(4096);
  const at::Tensor want = Model(s, "model", "cpu").forward({{"strain", eps}}).at("stress");

  SECTION("a chunk error that cannot be copied for the report becomes a FatalError, not a hang")
  {
    // The policy on its own: the worker's copy of the error is what fails.
    AsyncPolicy<Simple> policy(std::make_shared<Simple>(Simple::Config{"cpu", 256}));
    std::atomic<int> ran{0};
    const auto job = [&](std::size_t, std::size_t ordinal, int64_t, int64_t)
    {
      ++ran;
      if (ordinal == 5)
        throw Unreportable();
    };
    CHECK(fatal_message([&] { policy.execute(4096, job); })
              .find("out of host memory while reporting a failed chunk") != std::string::npos);
    CHECK(ran.load() >= 6);
    ran = 0;
    policy.execute(4096, [&](std::size_t, std::size_t, int64_t, int64_t) { ++ran; });
    CHECK(ran.load() == 16);

    // Through a model: its chunk guard's copy fails first, as an out-of-memory FatalError.
    auto m = AsyncSimpleCase::make(s, 256);
    m.set_chunk_hook(
        [](const at::Device &, std::size_t ordinal, int64_t, int64_t)
        {
          if (ordinal == 5)
            throw Unreportable();
        });
    CHECK(fatal_message(
              [&] {
                m.forward({{"strain", eps}});
              })
              .find("out of memory") != std::string::npos);
    m.set_chunk_hook({});
    CHECK(identical(m.forward({{"strain", eps}}).at("stress"), want));
  }

  SECTION("a scheduler that throws with chunks in flight waits for them, then reports")
  {
    auto sched = std::make_shared<FailingNext>(Simple::Config{"cpu", 256});
    DispatchedModel<AsyncPolicy<FailingNext>> m(s, "model", sched);
    std::atomic<int> running{0}, finished{0};
    m.set_chunk_hook(
        [&](const at::Device &, std::size_t, int64_t, int64_t)
        {
          ++running;
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          ++finished;
        });
    CHECK(fatal_message(
              [&] {
                m.forward({{"strain", eps}});
              })
              .find("next() failed on purpose") != std::string::npos);
    CHECK(running.load() == 2); // the two chunks submitted before next() threw
    CHECK(finished.load() == 2);
    m.set_chunk_hook({});
    sched->calls = 100; // past the failing call
    CHECK(identical(m.forward({{"strain", eps}}).at("stress"), want));
  }
}
