// AdaptiveHybrid and the virtual-time simulator: configuration, the policies'
// feedback hooks, coverage and bounds, and balance on simulated CPU + GPU
// nodes (deterministic: no devices, no clock).
#include "catch.h"
#include "fatal_message.h"

#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <thread>

#include "neml2/aoti/execution/policies.h"
#include "neml2/aoti/schedulers/AdaptiveHybrid.h"
#include "neml2/aoti/schedulers/Simple.h"
#include "neml2/aoti/schedulers/StaticHybrid.h"
#include "neml2/aoti/sim/Simulator.h"
#include "neml2/aoti/sim/profiles.h"
#include "neml2/aoti/tuning/Sweep.h"

using namespace neml2::aoti;
using neml2_test::fatal_message;

namespace
{
/// StaticHybrid over simulated devices: @p cfg with virtual_devices set.
StaticHybrid
on_virtual(StaticHybrid::Config cfg)
{
  cfg.virtual_devices = true;
  return StaticHybrid(std::move(cfg));
}

/// An AdaptiveHybrid over the simulator's devices (which need not exist here).
AdaptiveHybrid
adaptive_for(const sim::Simulator & s, AdaptiveHybrid::Config cfg = {})
{
  cfg.devices.clear();
  for (const auto & d : s.devices())
    cfg.devices.push_back(d.name);
  cfg.virtual_devices = true;
  return AdaptiveHybrid(cfg);
}

/// Throughput of @p run relative to the sum of the devices' throughputs alone.
double
efficiency(const sim::Simulator & s, const sim::Run & run)
{
  return run.throughput() / s.sum_of_alone_throughputs(run.batch);
}

/// Every row assigned once, in order, in non-empty chunks.
void
check_coverage(const sim::Run & run)
{
  int64_t next = 0;
  for (const auto & c : run.chunks)
  {
    CHECK(c.begin == next);
    CHECK(c.size >= 1);
    CHECK(c.start <= c.end);
    next += c.size;
  }
  CHECK(next == run.batch);
}

/// A Simple that records what the policies report.
struct Spy : Simple
{
  explicit Spy(int64_t chunk) : Simple(Simple::Config{"cpu", chunk}) {}
  mutable std::mutex mutex;
  mutable std::vector<std::pair<std::uint64_t, int64_t>> begins;
  mutable std::vector<Completion> done;
  void begin(std::uint64_t client, int64_t batch) const noexcept override
  {
    const std::lock_guard<std::mutex> lock(mutex);
    begins.emplace_back(client, batch);
  }
  void observe(const Completion & c) const noexcept override
  {
    const std::lock_guard<std::mutex> lock(mutex);
    done.push_back(c);
  }
};

/// A scheduler that never assigns anything.
struct Idle : Simple
{
  Idle() : Simple(Simple::Config{"cpu", 4}) {}
  std::optional<Assignment> next(const std::vector<int64_t> &, int64_t) const
  {
    return std::nullopt;
  }
};
} // namespace

TEST_CASE("AdaptiveHybrid validates its config; errors name the class and the field", "[adaptive]")
{
  using C = AdaptiveHybrid::Config;
  const auto msg = [](C c) { return fatal_message([&] { AdaptiveHybrid s(c); }); };
  using Catch::Matchers::ContainsSubstring;
  CHECK_THAT(msg(C{}), ContainsSubstring("AdaptiveHybrid: devices is empty"));
  C twice;
  twice.devices = {"cpu", "cpu"};
  CHECK_THAT(msg(twice), ContainsSubstring("AdaptiveHybrid: devices[1] = 'cpu' repeats "
                                           "devices[0]"));
  C bad;
  bad.devices = {"cpu", "tpu"};
  CHECK_THAT(msg(bad), ContainsSubstring("AdaptiveHybrid: devices[1]: invalid device 'tpu'"));
  C absent;
  absent.devices = {"cpu", "cuda:" + std::to_string(neml2::aoti::detail::cuda_device_count())};
  CHECK_THAT(msg(absent), ContainsSubstring("devices[1]: invalid device"));
  absent.virtual_devices = true;
  CHECK_NOTHROW(AdaptiveHybrid(absent));

  C bounds;
  bounds.devices = {"cpu"};
  bounds.max_chunks = {8, 8};
  CHECK_THAT(msg(bounds), ContainsSubstring("AdaptiveHybrid: max_chunks has 2 entries"));
  bounds.max_chunks = {-1};
  CHECK_THAT(msg(bounds), ContainsSubstring("max_chunks[0] = -1 must be >= 0"));
  bounds.max_chunks = {8};
  bounds.min_chunk = 16;
  CHECK_THAT(msg(bounds), ContainsSubstring("max_chunks[0] = 8 < min_chunk = 16"));
  bounds.min_chunk = 0;
  CHECK_THAT(msg(bounds), ContainsSubstring("AdaptiveHybrid: min_chunk = 0 must be >= 1"));
  bounds.min_chunk = 1;
  bounds.memory_limits = {0, 1};
  CHECK_THAT(msg(bounds), ContainsSubstring("memory_limits has 2 entries"));
  bounds.memory_limits = {-5};
  CHECK_THAT(msg(bounds), ContainsSubstring("memory_limits[0] = -5 must be >= 0"));
  bounds.memory_limits = {};
  bounds.cpu_threads = -1;
  CHECK_THAT(msg(bounds), ContainsSubstring("cpu_threads = -1 must be >= 0"));

  C ok;
  ok.devices = {"cpu"};
  ok.max_chunks = {100};
  ok.memory_limits = {64};
  const AdaptiveHybrid s(ok);
  CHECK(s.name() == "AdaptiveHybrid");
  CHECK(s.batch_sizes() == std::vector<int64_t>{64}); // the tighter of the two bounds
  CHECK(s.capacities() == std::vector<int64_t>{64});
  static_assert(AdaptiveHybrid::asynchronous, "several devices at once: AsyncPolicy");
  static_assert(std::is_same_v<default_policy_t<AdaptiveHybrid>, AsyncPolicy<AdaptiveHybrid>>);
}

TEMPLATE_TEST_CASE("the policies report each dispatch and every completed chunk", "[adaptive]",
                   SyncPolicy<Spy>, AsyncPolicy<Spy>)
{
  auto spy = std::make_shared<Spy>(7);
  TestType policy(spy);
  TestType other(spy);
  CHECK(policy.client() != 0);
  CHECK(policy.client() != other.client());
  std::atomic<int64_t> rows{0};
  for (const int64_t batch : {int64_t(50), int64_t(3)})
    policy.execute(batch, [&](std::size_t, std::size_t, int64_t b, int64_t e) { rows += e - b; });
  other.execute(10, [](std::size_t, std::size_t, int64_t, int64_t) {});
  CHECK(rows == 53);
  using P = std::pair<std::uint64_t, int64_t>;
  CHECK(spy->begins ==
        std::vector<P>{{policy.client(), 50}, {policy.client(), 3}, {other.client(), 10}});
  int64_t observed = 0;
  for (const auto & c : spy->done)
  {
    CHECK(c.device == 0);
    CHECK(c.size >= 1);
    CHECK(c.size <= 7);
    CHECK(0 <= c.start);
    CHECK(c.start <= c.end);
    observed += c.size;
  }
  CHECK(observed == 63);

  // A failing chunk is not a measurement.
  spy->done.clear();
  CHECK_THROWS_AS(policy.execute(14,
                                 [](std::size_t, std::size_t ord, int64_t, int64_t)
                                 {
                                   if (ord == 1)
                                     throw ConvergenceError("no");
                                 }),
                  ConvergenceError);
  for (const auto & c : spy->done)
    CHECK(c.size == 7);
  CHECK(spy->done.size() <= 1);
}

TEMPLATE_TEST_CASE("a policy refuses a scheduler that assigns nothing to idle devices",
                   "[adaptive]", SyncPolicy<Idle>, AsyncPolicy<Idle>)
{
  TestType policy(std::make_shared<Idle>());
  CHECK_THAT(
      fatal_message([&] { policy.execute(5, [](std::size_t, std::size_t, int64_t, int64_t) {}); }),
      Catch::Matchers::ContainsSubstring("no chunk assigned with 5 points left"));
  CHECK_NOTHROW(policy.execute(0, [](std::size_t, std::size_t, int64_t, int64_t) {}));
}

TEST_CASE("the simulator: virtual time, lanes, determinism, misuse", "[adaptive][sim]")
{
  sim::Device cpu;
  cpu.latency = 1e-3;
  cpu.seconds_per_point = 1e-6;
  sim::Simulator one({cpu});
  CHECK(one.devices().size() == 1);

  // One device, chunks of 100: ten chunks of 1 ms + 100 us, back to back.
  StaticHybrid::Config cfg;
  cfg.devices = {"cpu"};
  cfg.batch_sizes = {100};
  const StaticHybrid fixed = on_virtual(cfg);
  const sim::Run r = one.run(fixed, 1000);
  check_coverage(r);
  CHECK(r.chunks.size() == 10);
  CHECK(r.seconds == Approx(10 * 1.1e-3));
  CHECK(r.points == std::vector<int64_t>{1000});
  CHECK(r.peak_load == std::vector<int64_t>{200}); // capacity: two chunks in flight
  CHECK(one.alone_seconds(0, 1000) == Approx(2e-3));

  // Two lanes that together do 1.5x the work of one.
  sim::Device gpu = cpu;
  gpu.lanes = 2;
  gpu.lane_speedup = 1.5;
  sim::Simulator two({gpu});
  const sim::Run r2 = two.run(fixed, 1000);
  CHECK(r2.seconds == Approx(10 * 1.1e-3 / 1.5));
  CHECK(r2.chunks[0].end == Approx(r2.chunks[1].end)); // started together, shared the device

  // Noise is deterministic per seed.
  gpu.noise = 0.1;
  sim::Simulator a({gpu}, 9), b({gpu}, 9), c({gpu}, 10);
  CHECK(a.run(fixed, 1000).seconds == b.run(fixed, 1000).seconds);
  CHECK(a.run(fixed, 1000).seconds != c.run(fixed, 1000).seconds);

  // Misuse says what went wrong.
  using Catch::Matchers::ContainsSubstring;
  StaticHybrid::Config two_devices;
  two_devices.devices = {"cpu", "cuda:0"};
  two_devices.batch_sizes = {10};
  CHECK_THAT(fatal_message([&] { one.run(on_virtual(two_devices), 10); }),
             ContainsSubstring("the scheduler has 2 devices, the simulator 1"));
  CHECK_THAT(fatal_message([&] { one.run(Idle(), 10); }),
             ContainsSubstring("no chunk assigned with 10 points left"));
  CHECK_THAT(fatal_message([] { sim::Simulator({}); }), ContainsSubstring("no devices"));
  StaticHybrid::Config zero;
  zero.devices = {"cpu"};
  zero.batch_sizes = {0};
  CHECK_THAT(fatal_message([&] { (void)on_virtual(zero); }),
             ContainsSubstring("batch_sizes[0] = 0 must be > 0"));
}

TEST_CASE("adaptive chunks cover every batch and respect the bounds", "[adaptive][sim]")
{
  sim::Simulator s(sim::profiles::hybrid(3, false));
  AdaptiveHybrid::Config cfg;
  cfg.max_chunks = {50000, 0, 0, 30000};
  cfg.memory_limits = {0, 120000, 0, 0};
  cfg.min_chunk = 16;
  const AdaptiveHybrid a = adaptive_for(s, cfg);
  for (const int64_t batch :
       {int64_t(1), int64_t(15), int64_t(16), int64_t(1000), int64_t(123457), int64_t(2000000)})
    for (int call = 0; call < 3; ++call)
    {
      INFO("batch " << batch << " call " << call);
      const sim::Run r = s.run(a, batch);
      check_coverage(r);
      CHECK(r.peak_load[1] <= 120000);
      for (std::size_t i = 0; i < r.chunks.size(); ++i)
      {
        const auto & c = r.chunks[i];
        if (c.device == 0)
          CHECK(c.size <= 50000);
        if (c.device == 3)
          CHECK(c.size <= 30000);
        // Only a batch's last points may come in a chunk below min_chunk.
        if (c.begin + c.size < batch)
          CHECK(c.size >= 16);
      }
    }
}

TEST_CASE("adaptive chunks of a fixed size when min_chunk = max_chunks", "[adaptive][sim]")
{
  sim::Simulator s(sim::profiles::hybrid(2, true));
  AdaptiveHybrid::Config cfg;
  cfg.min_chunk = 10;
  cfg.max_chunks = {10};
  const AdaptiveHybrid a = adaptive_for(s, cfg);
  for (const int64_t batch : {int64_t(5), int64_t(40), int64_t(12345)})
    for (int call = 0; call < 3; ++call)
    {
      const sim::Run r = s.run(a, batch);
      check_coverage(r);
      for (const auto & c : r.chunks)
        CHECK((c.size == 10 || c.begin + c.size == batch));
    }
}

TEST_CASE("a large min_chunk after small batches still assigns every point", "[adaptive][sim]")
{
  sim::Simulator s(sim::profiles::hybrid(1, false));
  AdaptiveHybrid::Config cfg;
  cfg.min_chunk = 5000;
  const AdaptiveHybrid a = adaptive_for(s, cfg);
  for (const int64_t batch : {int64_t(3), int64_t(7), int64_t(100000), int64_t(4999)})
    check_coverage(s.run(a, batch));
}

TEST_CASE("a lone CPU whose large chunks leave the cache gets chunks that stay in it",
          "[adaptive][sim]")
{
  sim::Device cpu = sim::profiles::cpu_memory_bound();
  cpu.cache_points = 65536;
  cpu.cache_penalty = 2;
  sim::Simulator s({cpu});
  const AdaptiveHybrid a = adaptive_for(s);
  // Batches above lone_whole points are not run whole: their chunks are sized.
  CHECK_FALSE(a.short_circuit(1, AdaptiveHybrid::lone_whole + 1, at::Device(at::kCPU)));
  const int64_t batch = 10000000;
  double eff = 0;
  for (int call = 0; call < 5; ++call)
    eff = efficiency(s, s.run(a, batch));
  CHECK(eff >= 0.9);
}

TEST_CASE("a batch that runs faster as one direct call than spread short-circuits to it",
          "[adaptive][sim]")
{
  // CPU + GPU, memory bound, and a CPU chunk's hand-off to its worker costs 150 us (as on a
  // host whose GPU lanes stage beside the CPU worker): 16384 points take one direct call
  // about 36 us, any spread dispatch more; 10^7 points take the CPU alone 10 ms, spread 7.
  auto devices = sim::profiles::hybrid(1, false);
  devices[0].handoff = 150e-6;
  sim::Simulator s(devices, 3);
  const AdaptiveHybrid a = adaptive_for(s);
  const at::Device host(at::kCPU), gpu("cuda:0");
  const int64_t small = 16384, large = 10000000;
  CHECK_FALSE(a.short_circuit(1, small, host)); // nothing measured yet: spread, and learn
  std::vector<sim::Run> few, many;
  for (int call = 0; call < 16; ++call)
  {
    few.push_back(s.run(a, small));
    many.push_back(s.run(a, large));
  }
  const auto count_whole = [](const std::vector<sim::Run> & runs)
  { return std::count_if(runs.begin(), runs.end(), [](const sim::Run & r) { return r.whole; }); };
  // The small batch: the three ways timed, then direct for good, one chunk on the CPU, faster.
  for (std::size_t call = 12; call < few.size(); ++call)
  {
    CHECK(few[call].whole);
    CHECK(few[call].chunks.size() == 1);
    CHECK(few[call].points[0] == small);
  }
  std::vector<double> spread;
  for (const auto & r : few)
    if (!r.whole)
      spread.push_back(r.seconds);
  CHECK(few.back().seconds < 0.5 * spread.back());
  CHECK(a.short_circuit(1, small, host) == std::optional<std::size_t>(0));
  // The large one: two direct calls tried (both more than 1.25 times as slow), then spread.
  CHECK(count_whole(many) == 2);
  CHECK_FALSE(many.back().whole);
  CHECK_FALSE(a.short_circuit(1, large, host));
  CHECK_FALSE(a.short_circuit(2, small, host)); // another client timed nothing

  // Inputs on the GPU: a direct call there copies nothing, whatever was timed.
  CHECK(a.short_circuit(1, small, gpu) == std::optional<std::size_t>(1));
  const sim::Run on_gpu = s.run(a, small, 1, gpu);
  CHECK(on_gpu.whole);
  CHECK(on_gpu.points[1] == small);
  CHECK(on_gpu.seconds == Approx(devices[1].direct_seconds(small)).epsilon(0.05));
  CHECK_FALSE(a.short_circuit(1, small, at::Device("cuda:1"))); // not one of its devices

  a.forget();
  CHECK_FALSE(a.short_circuit(1, small, host));

  // One the CPU's fitted cost puts far above spreading is not tried: compute bound, 10^6
  // points take the CPU alone 0.1 s, spread (mostly on the GPU) a few ms.
  sim::Simulator g(sim::profiles::hybrid(1, true), 3);
  const AdaptiveHybrid b = adaptive_for(g);
  std::vector<sim::Run> slow;
  for (int call = 0; call < 12; ++call)
    slow.push_back(g.run(b, 1000000));
  CHECK(count_whole(slow) == 0);
  CHECK_FALSE(b.short_circuit(1, 1000000, host));

  // Bounds: no direct call above a device's chunk or memory bound.
  AdaptiveHybrid::Config cfg;
  cfg.max_chunks = {4096, 4096};
  const AdaptiveHybrid c = adaptive_for(s, cfg);
  std::vector<sim::Run> bounded;
  for (int call = 0; call < 12; ++call)
    bounded.push_back(s.run(c, small));
  CHECK(count_whole(bounded) == 0);
  CHECK_FALSE(c.short_circuit(1, small, gpu));

  // A lone device runs a batch whole up to its chunk bound, wherever the inputs are.
  AdaptiveHybrid::Config one;
  one.devices = {"cpu"};
  const AdaptiveHybrid lone(one);
  CHECK(lone.short_circuit(7, AdaptiveHybrid::lone_whole, host) == std::optional<std::size_t>(0));
  CHECK_FALSE(lone.short_circuit(7, AdaptiveHybrid::lone_whole + 1, host));
}

TEST_CASE("on a host whose CPU chunks slow the GPU's staging, the GPU alone is kept",
          "[adaptive][sim]")
{
  namespace ad = neml2::aoti::detail::adaptive;
  const at::Device host(at::kCPU);
  for (const double contention : {0.0, 0.5})
    for (const int64_t batch :
         {int64_t(16384), int64_t(1) << 18, int64_t(1) << 20, int64_t(1) << 22})
    {
      // The elastic model on an H200 host: spreading reaches 0.73 of the sum at 0.5, less
      // than the GPU alone; without contention, more.
      sim::Simulator s(sim::profiles::h200_host(contention), 7);
      const AdaptiveHybrid a = adaptive_for(s);
      for (int call = 0; call < 12; ++call)
        s.run(a, batch);
      const auto t = a.trial(1, batch, host);
      REQUIRE(t);
      INFO("contention " << contention << ", " << batch << " points: kept way "
                         << std::size_t(t->choice) << " (0 spread, 1 GPU alone, 2 direct)");
      REQUIRE(t->decided);
      double least = std::numeric_limits<double>::infinity();
      for (std::size_t w = 0; w < ad::ways; ++w)
        if (!t->out[w] && !t->seconds[w].empty())
          least = std::min(least, neml2::aoti::detail::median(t->seconds[w]));
      CHECK(neml2::aoti::detail::median(t->seconds[std::size_t(t->choice)]) == least);
      const sim::Run r = s.run(a, batch);
      CHECK(r.seconds <= 1.05 * least);
      if (batch < (int64_t(1) << 18))
        continue;
      const double gpu_alone = double(batch) / s.alone_seconds(1, batch);
      if (contention > 0)
      {
        CHECK(t->choice == ad::Way::others);
        CHECK(r.points[0] == 0);
        CHECK(r.throughput() >= 0.95 * gpu_alone);
      }
      else
      {
        CHECK(t->choice == ad::Way::spread);
        CHECK(efficiency(s, r) >= 0.9);
      }
    }
}

TEST_CASE("a device fitted with a slope once stays known when its window holds one size",
          "[adaptive]")
{
  namespace ad = neml2::aoti::detail::adaptive;
  // Explored, and once measured at two sizes; now its window holds 32 chunks of one size
  // (the plan gave it equal rounds). Probing it again would hand it a chunk 4 times its
  // largest at the start of the next dispatch.
  auto entry = std::make_shared<ad::Entry>();
  entry->devices.resize(1);
  entry->whole.resize(1);
  ad::History & h = entry->devices[0];
  h.explored = true;
  h.ran = true;
  for (int k = 0; k < 4; ++k)
    h.window.push_back(
        {int64_t(1) << (12 + 2 * k), 1e-6 * double(int64_t(1) << (12 + 2 * k)), false});
  ad::Session first = ad::open_session(1, 1 << 22, entry);
  CHECK(first.devices[0].two_sizes);
  CHECK(first.devices[0].known);
  h.window.clear();
  for (int k = 0; k < int(ad::window); ++k)
    h.window.push_back({1 << 20, 1.0e-3 * (1 + 0.01 * (k % 3)), false});
  const ad::Session later = ad::open_session(1, 1 << 22, entry);
  CHECK_FALSE(later.devices[0].two_sizes);
  CHECK(later.devices[0].known);
  CHECK(later.devices[0].fit.seconds_per_point == Approx(1e-9).epsilon(0.05));
}

TEST_CASE("the way with the least median of its timed dispatches is kept", "[adaptive]")
{
  namespace ad = neml2::aoti::detail::adaptive;
  using ad::Way;
  const unsigned all = ad::allowed(true);
  ad::WholeTrial t;
  CHECK(next_way(t, all) == Way::spread);
  record(t, Way::direct, 1e-6, all); // not a trial: spreading was not timed yet
  CHECK(t.seconds[2].empty());
  for (const double x : {9e-3, 10e-3, 11e-3, 10e-3})
    record(t, Way::spread, x, all);
  CHECK(t.seconds[0] == std::vector<double>{10e-3, 11e-3, 10e-3}); // the last three
  CHECK(next_way(t, all) == Way::others); // the other devices alone come next
  record(t, Way::others, 12e-3, all);
  record(t, Way::others, 30e-3, all); // one slow dispatch does not decide
  record(t, Way::others, 11e-3, all);
  CHECK_FALSE(t.decided);
  consider(t, 40e-3); // the fit: 4 times the spread dispatches, worth a trial
  CHECK(next_way(t, all) == Way::direct);
  record(t, Way::direct, 9e-3, all);
  record(t, Way::direct, 30e-3, all);
  CHECK_FALSE(t.decided);
  record(t, Way::direct, 9.5e-3, all);
  CHECK(t.decided);
  CHECK(t.choice == Way::direct); // median 9.5 ms < 10 ms (spread) < 12 ms (others)
  CHECK(next_way(t, all) == Way::direct);
  record(t, Way::direct, 1.0, all); // decided: later dispatches change nothing
  CHECK(t.choice == Way::direct);

  // Two first dispatches both more than 1.25 times as slow as spreading rule their way out
  // (one alone may have paid a warm-up); the faster other devices alone are kept.
  ad::WholeTrial u;
  for (const double x : {1e-3, 1e-3, 1e-3})
    record(u, Way::spread, x, all);
  record(u, Way::others, 0.5e-3, all);
  record(u, Way::others, 0.4e-3, all);
  record(u, Way::others, 0.6e-3, all);
  CHECK(next_way(u, all) == Way::direct);
  record(u, Way::direct, 1.3e-3, all);
  CHECK_FALSE(u.out[2]); // one slow call: a second is timed
  CHECK(next_way(u, all) == Way::direct);
  record(u, Way::direct, 1.4e-3, all);
  CHECK(u.out[2]);
  CHECK(u.decided);
  CHECK(u.choice == Way::others);

  // A direct call the fit puts 6 times above spreading is not tried; a batch above the
  // host's bounds allows none: spreading and the other devices only.
  ad::WholeTrial v;
  for (const double x : {1e-3, 1e-3, 1e-3})
    record(v, Way::spread, x, all);
  consider(v, 6e-3);
  CHECK(v.out[2]);
  // ... unless the fit puts it under 5 ms: 49 times above spreading, still tried
  ad::WholeTrial small;
  for (const double x : {0.1e-3, 0.1e-3, 0.1e-3})
    record(small, Way::spread, x, all);
  consider(small, 4.9e-3);
  CHECK_FALSE(small.out[2]);
  consider(small, 5.1e-3);
  CHECK(small.out[2]);
  record(v, Way::others, 2e-3, all);
  record(v, Way::others, 0.9e-3, all); // the first paid a warm-up: the way stays in
  CHECK_FALSE(v.out[1]);
  record(v, Way::others, 1.2e-3, all);
  CHECK(v.decided);
  CHECK(v.choice == Way::spread);

  const unsigned no_direct = ad::allowed(false);
  ad::WholeTrial w;
  for (const double x : {1e-3, 1e-3, 1e-3, 0.9e-3, 0.9e-3, 0.9e-3})
    record(w, x < 1e-3 ? Way::others : Way::spread, x, no_direct);
  CHECK(w.decided);
  CHECK(w.choice == Way::others);
}

TEST_CASE("adaptive scheduling is deterministic given the same measurements", "[adaptive][sim]")
{
  const auto trace = []
  {
    sim::Simulator s(sim::profiles::hybrid(4, true), 3);
    const AdaptiveHybrid a = adaptive_for(s);
    std::vector<std::pair<std::size_t, int64_t>> out;
    for (int call = 0; call < 4; ++call)
      for (const auto & c : s.run(a, 5000000).chunks)
        out.emplace_back(c.device, c.size);
    return out;
  };
  CHECK(trace() == trace());
}

TEST_CASE("adaptive balance: 1 CPU + 1..8 skewed GPUs reach 0.95 of the sum of their "
          "throughputs",
          "[adaptive][sim]")
{
  // Memory-bound at 10^7 points, compute-bound (200 us per GPU call) at 10^8:
  // sizes where one round of chunks per device keeps fixed costs within a few percent.
  for (const bool compute : {false, true})
    for (std::size_t gpus = 1; gpus <= 8; ++gpus)
    {
      const int64_t batch = compute ? 100000000 : 10000000;
      sim::Simulator s(sim::profiles::hybrid(gpus, compute), 42);
      const AdaptiveHybrid a = adaptive_for(s);
      std::vector<double> eff;
      for (int call = 0; call < 14; ++call)
        eff.push_back(efficiency(s, s.run(a, batch)));
      std::vector<double> steady(eff.begin() + 10, eff.end());
      std::sort(steady.begin(), steady.end());
      INFO((compute ? "compute" : "memory")
           << " bound, " << gpus << " GPUs: first call " << eff[0] << ", second " << eff[1]
           << ", third " << eff[2] << ", calls 11..14 from " << steady.front() << " to "
           << steady.back());
      INFO("bound of any scheduler: " << double(batch) / s.balanced_seconds(batch) /
                                             s.sum_of_alone_throughputs(batch));
      // The first call pays each GPU's 50 ms warm-up and the next ones probe and
      // grow the chunks; then come the trial's dispatches (way_trial.h): three spread, up to
      // three with the GPUs alone (one, when that is clearly slower) and up to three direct
      // calls on the CPU (none, when its fit puts it 5 times above spreading). From the
      // eleventh call on, the way kept, balanced (1% noise per chunk).
      CHECK(eff[1] >= 0.7);
      CHECK(steady[steady.size() / 2] >= 0.95);
      // One call in a few may lose up to a tenth when a fast GPU's last round is split
      // unevenly (planner.h's guided rounds, 1% noise per chunk): a known gap of the planner.
      CHECK(steady.front() >= 0.88);
    }
}

TEST_CASE("adaptive matches or beats the best static configuration in the simulator",
          "[adaptive][sim]")
{
  for (const std::size_t gpus : {std::size_t(1), std::size_t(4)})
  {
    const int64_t batch = 10000000;
    sim::Simulator s(sim::profiles::hybrid(gpus, false), 5);
    // Tune: each device alone over batch sizes 2^10..2^22, as bench/tune_hybrid does.
    Sweep sweep;
    for (std::size_t d = 0; d < s.devices().size(); ++d)
      for (int64_t bs = 1024; bs <= 4194304; bs *= 4)
      {
        StaticHybrid::Config one;
        one.devices = {s.devices()[d].name};
        one.batch_sizes = {bs};
        sim::Simulator alone({s.devices()[d]});
        alone.run(on_virtual(one), bs); // warm-up
        sweep.add(s.devices()[d].name, bs, 8 * bs, alone.run(on_virtual(one), 8 * bs).seconds);
      }
    double best_static = efficiency(s, s.run(on_virtual(sweep.recommend()), batch));
    for (const double tau : {1e-4, 3e-4, 1e-3, 3e-3})
      best_static = std::max(best_static,
                             efficiency(s, s.run(on_virtual(sweep.for_chunk_seconds(tau)), batch)));
    const AdaptiveHybrid a = adaptive_for(s);
    double adaptive = 0;
    for (int call = 0; call < 12; ++call) // learning, with the trial of the ways
      adaptive = efficiency(s, s.run(a, batch));
    INFO(gpus << " GPUs: adaptive " << adaptive << ", best static " << best_static);
    CHECK(adaptive >= best_static - 0.01);
  }
}

TEST_CASE("adaptive learning is robust to outliers and to the cold first call", "[adaptive][sim]")
{
  auto devices = sim::profiles::hybrid(2, false);
  for (auto & d : devices)
  {
    d.noise = 0.03;
    d.outlier_rate = 0.05;
    d.outlier_factor = 4;
  }
  sim::Simulator s(devices, 11);
  const AdaptiveHybrid a = adaptive_for(s);
  const int64_t batch = 20000000;
  const sim::Run cold = s.run(a, batch, 1);
  check_coverage(cold);
  // The cold call is not balanced (the GPUs spend 50 ms warming up), but no device
  // was committed to a huge chunk before it was measured.
  CHECK(cold.seconds < 0.05 + s.alone_seconds(0, batch));
  // An outlier chunk delays its call whatever the plan (a chunk cannot be
  // taken back); the plans themselves stay sound: calls without one are balanced.
  std::size_t clean = 0;
  for (int call = 0; call < 16; ++call)
  {
    const sim::Run r = s.run(a, batch, 1);
    const bool hit = std::any_of(r.chunks.begin(), r.chunks.end(),
                                 [](const sim::Chunk & c) { return c.outlier; });
    if (!hit && call > 8) // after the trial of the ways
    {
      ++clean;
      CHECK(efficiency(s, r) >= 0.93);
    }
  }
  CHECK(clean >= 2);
  // The fitted per-point cost of the CPU is within 10% of the truth despite the outliers.
  const auto e = a.estimate(1, batch, 0);
  REQUIRE(e);
  CHECK(e->seconds_per_point == Approx(devices[0].seconds_per_point).epsilon(0.1));
  CHECK(e->concurrency == 1);
  const auto g = a.estimate(1, batch, 1);
  REQUIRE(g);
  CHECK(g->concurrency == 2); // the GPU's two lanes were seen running at once
}

TEST_CASE("what is learned is kept per client and batch size", "[adaptive][sim]")
{
  // Two "models" on one scheduler: the second costs ten times as much per point.
  auto slow = sim::profiles::hybrid(1, false);
  for (auto & d : slow)
  {
    d.seconds_per_point *= 10;
    d.transfer_seconds_per_point *= 10;
  }
  sim::Simulator fast_model(sim::profiles::hybrid(1, false)), slow_model(slow);
  const AdaptiveHybrid a = adaptive_for(fast_model);
  CHECK(a.learned() == 0);
  CHECK_FALSE(a.estimate(1, 1000000, 0));
  for (int call = 0; call < 3; ++call)
  {
    fast_model.run(a, 1000000, 1);
    slow_model.run(a, 1000000, 2);
  }
  CHECK(a.learned() == 2);
  const double fast_cpu = a.estimate(1, 1000000, 0)->seconds_per_point;
  const double slow_cpu = a.estimate(2, 1000000, 0)->seconds_per_point;
  CHECK(slow_cpu / fast_cpu == Approx(10).epsilon(0.15));

  // A new batch size of a client starts from that client's nearest one: balanced at once.
  const double eff = efficiency(fast_model, fast_model.run(a, 2000000, 1));
  CHECK(eff >= 0.9);
  CHECK(a.learned() == 3);
  a.forget();
  CHECK(a.learned() == 0);
}

TEST_CASE("guided: a device's chunks shrink towards the end of a large batch", "[adaptive][sim]")
{
  sim::Simulator s(sim::profiles::hybrid(1, true));
  const AdaptiveHybrid a = adaptive_for(s);
  sim::Run r;
  for (int call = 0; call < 10; ++call) // past the trial of the ways: spread is kept
    r = s.run(a, 200000000);
  for (std::size_t d = 0; d < 2; ++d)
  {
    std::vector<int64_t> sizes;
    for (const auto & c : r.chunks)
      if (c.device == d)
        sizes.push_back(c.size);
    INFO("device " << d);
    REQUIRE(sizes.size() >= 3);
    CHECK(sizes.front() >= 2 * sizes.back());
  }
}

TEST_CASE("models sharing one scheduler dispatch concurrently from their threads",
          "[adaptive][sim]")
{
  // Each thread's dispatches must be what they are alone: sessions are per thread.
  const auto alone = [](std::uint64_t client)
  {
    sim::Simulator s(sim::profiles::hybrid(2, false), client);
    const AdaptiveHybrid a = adaptive_for(s);
    std::vector<int64_t> sizes;
    for (int call = 0; call < 5; ++call)
      for (const auto & c : s.run(a, 3000000, client).chunks)
        sizes.push_back(c.size);
    return sizes;
  };
  const auto want1 = alone(1), want2 = alone(2);
  sim::Simulator probe(sim::profiles::hybrid(2, false));
  const AdaptiveHybrid shared = adaptive_for(probe);
  std::vector<int64_t> got1, got2;
  const auto work = [&shared](std::uint64_t client, std::vector<int64_t> & sizes)
  {
    sim::Simulator s(sim::profiles::hybrid(2, false), client);
    for (int call = 0; call < 5; ++call)
      for (const auto & c : s.run(shared, 3000000, client).chunks)
        sizes.push_back(c.size);
  };
  std::thread t1(work, 1, std::ref(got1)), t2(work, 2, std::ref(got2));
  t1.join();
  t2.join();
  CHECK(got1 == want1);
  CHECK(got2 == want2);
}

TEST_CASE("Sweep recommends a StaticHybrid config and prints it as C++", "[adaptive][tuning]")
{
  Sweep s;
  s.add("cpu", 1024, 1 << 20, 2.0);
  s.add("cpu", 4096, 1 << 20, 1.02);
  s.add("cpu", 16384, 1 << 20, 1.0);
  s.add("cuda:0", 4096, 1 << 20, 0.5);
  s.add("cuda:0", 65536, 1 << 20, 0.1);
  CHECK(s.devices() == std::vector<std::string>{"cpu", "cuda:0"});
  CHECK(s.peak(1) == Approx(double(1 << 20) / 0.1));
  const StaticHybrid::Config cfg = s.recommend();
  CHECK(cfg.batch_sizes == std::vector<int64_t>{4096, 65536});
  CHECK(cfg.capacities == std::vector<int64_t>{8192, 131072});
  CHECK(cfg.priorities == std::vector<int64_t>{0, 1});
  CHECK(Sweep::to_cpp(cfg) == "StaticHybrid::Config cfg;\n"
                              "cfg.devices     = {\"cpu\", \"cuda:0\"};\n"
                              "cfg.batch_sizes = {4096, 65536};\n"
                              "cfg.capacities  = {8192, 131072};\n"
                              "cfg.priorities  = {0, 1};\n");
  CHECK(s.for_chunk_seconds(1e-3).batch_sizes == std::vector<int64_t>{1049, 10486});
  CHECK_THROWS_AS(s.add("cpu", 0, 1, 1.0), FatalError);
  CHECK_THROWS_AS(Sweep().recommend(), FatalError);
}
