// Scheduler policies without models: configuration checks, greedy assignment, chunk splitting.
#include "catch.h"
#include "fatal_message.h"

#include "neml2/aoti/schedulers/MPISimple.h"
#include "neml2/aoti/schedulers/Simple.h"
#include "neml2/aoti/schedulers/StaticHybrid.h"

using namespace neml2::aoti;
using neml2_test::fatal_message;

namespace
{
/// Replay a whole dispatch: each chunk completes before the next is asked for
/// unless @p hold is set, in which case nothing completes (fill-up order).
std::vector<Assignment>
fill(const Scheduler & s, int64_t batch)
{
  std::vector<int64_t> load(s.devices().size(), 0);
  std::vector<Assignment> out;
  for (int64_t offset = 0; offset < batch;)
  {
    const auto a = s.next(load, batch - offset);
    if (!a)
      break;
    out.push_back(*a);
    load[a->device] += a->size;
    offset += a->size;
  }
  return out;
}
} // namespace

TEST_CASE("Simple's chunks cover the batch in order", "[chunking]")
{
  // The chunk sizes of a dispatch whose chunks each complete before the next is asked for.
  const auto chunks = [](int64_t batch, int64_t batch_size)
  {
    const Simple s(Simple::Config{"cpu", batch_size});
    std::vector<int64_t> sizes;
    for (int64_t left = batch; left > 0;)
    {
      const auto a = s.next({0}, left);
      REQUIRE(a);
      sizes.push_back(a->size);
      left -= a->size;
    }
    return sizes;
  };
  using V = std::vector<int64_t>;
  CHECK(chunks(10, 4) == V{4, 4, 2});
  CHECK(chunks(10, 0) == V{10});
  CHECK(chunks(3, 1) == V{1, 1, 1});
  CHECK(chunks(0, 4).empty());
  CHECK(chunks(4, 10) == V{4});
}

TEST_CASE("Simple validates its config", "[scheduler]")
{
  const Simple s(Simple::Config{"cpu", 4096});
  CHECK(s.device() == at::Device(at::kCPU));
  CHECK(s.batch_sizes() == std::vector<int64_t>{4096});
  CHECK(s.capacities() == std::vector<int64_t>{8192});
  CHECK(Simple(Simple::Config{"cpu", 0}).next({0}, 123)->size == 123);
  CHECK(Simple(Simple::Config{"cpu", 10}).next({0}, 7)->size == 7);

  CHECK_THAT(fatal_message(
                 [] {
                   Simple(Simple::Config{"cpu", -1});
                 }),
             Catch::Matchers::ContainsSubstring("Simple: batch_size = -1 must be >= 0"));
  CHECK_THAT(fatal_message(
                 [] {
                   Simple(Simple::Config{"cpu", 8, 4});
                 }),
             Catch::Matchers::ContainsSubstring("Simple: capacity = 4 < batch_size = 8"));
  for (const std::string bad : {"gpu", "cpu:0", "cuda:", "cuda:x", "cuda:-1", "mps", " cpu", ""})
  {
    INFO(bad);
    CHECK_THAT(fatal_message(
                   [&] {
                     Simple(Simple::Config{bad, 1});
                   }),
               Catch::Matchers::ContainsSubstring("Simple: device: invalid device '" + bad + "'"));
  }
}

TEST_CASE("a CUDA device that does not exist is refused", "[scheduler]")
{
  const int n = neml2::aoti::detail::cuda_device_count();
  const std::string dev = "cuda:" + std::to_string(n);
  CHECK_THAT(fatal_message(
                 [&] {
                   Simple(Simple::Config{dev, 1});
                 }),
             Catch::Matchers::ContainsSubstring("invalid device '" + dev + "'"));
}

TEST_CASE("StaticHybrid validates every field", "[scheduler]")
{
  using C = StaticHybrid::Config;
  const auto msg = [](C c) { return fatal_message([&] { StaticHybrid s(c); }); };
  using Catch::Matchers::ContainsSubstring;
  CHECK_THAT(msg(C{{}, {1}, {}, {}}), ContainsSubstring("StaticHybrid: devices is empty"));
  CHECK_THAT(msg(C{{"cpu", "cpu"}, {1}, {}, {}}),
             ContainsSubstring("devices[1] = 'cpu' repeats devices[0]"));
  CHECK_THAT(msg(C{{"cpu", "tpu"}, {1}, {}, {}}),
             ContainsSubstring("StaticHybrid: devices[1]: invalid device 'tpu'"));
  CHECK_THAT(msg(C{{"cpu"}, {}, {}, {}}), ContainsSubstring("batch_sizes has 0 entries"));
  CHECK_THAT(msg(C{{"cpu"}, {0}, {}, {}}), ContainsSubstring("batch_sizes[0] = 0 must be > 0"));
  CHECK_THAT(msg(C{{"cpu"}, {4}, {2}, {}}),
             ContainsSubstring("StaticHybrid: capacities[0] = 2 < batch_sizes[0] = 4"));
  CHECK_THAT(msg(C{{"cpu"}, {4}, {8, 8}, {}}), ContainsSubstring("capacities has 2 entries"));
  CHECK_THAT(msg(C{{"cpu"}, {4}, {}, {1, 2}}), ContainsSubstring("priorities has 2 entries"));

  const StaticHybrid ok(C{{"cpu"}, {4}, {}, {}});
  CHECK(ok.capacities() == std::vector<int64_t>{8});
  CHECK(ok.priorities() == std::vector<int64_t>{0});
  CHECK(ok.gpu_lanes() == Scheduler::default_gpu_lanes);
}

TEST_CASE("a GPU's default capacity keeps every worker lane busy", "[scheduler]")
{
  // Planning devices (virtual_devices): a GPU need not be present.
  StaticHybrid::Config c{{"cpu", "cuda:0", "cuda:1"}, {10, 100, 1000}, {}, {}};
  c.virtual_devices = true;
  CHECK(StaticHybrid(c).capacities() == std::vector<int64_t>{20, 400, 4000});
  CHECK(StaticHybrid(c).gpu_lanes() == 4); // beside the CPU worker, as without it
  StaticHybrid::Config gpus{{"cuda:0", "cuda:1"}, {100}, {}, {}};
  gpus.virtual_devices = true;
  CHECK(StaticHybrid(gpus).gpu_lanes() == 4);
  CHECK(StaticHybrid(gpus).capacities() == std::vector<int64_t>{400, 400});
  for (const int lanes : {1, 2, 3})
  {
    c.gpu_lanes = lanes;
    const StaticHybrid s(c);
    CHECK(s.gpu_lanes() == std::size_t(lanes));
    // One chunk per lane, but at least two: the next chunk is queued while one finishes.
    const int64_t k = std::max(2, lanes);
    CHECK(s.capacities() == std::vector<int64_t>{20, 100 * k, 1000 * k});
  }
  c.capacities = {10, 100, 1000};
  CHECK(StaticHybrid(c).capacities() == std::vector<int64_t>{10, 100, 1000}); // as configured
  using Catch::Matchers::ContainsSubstring;
  for (const int bad : {-1, 17})
  {
    c.gpu_lanes = bad;
    CHECK_THAT(fatal_message([&] { StaticHybrid s(c); }),
               ContainsSubstring("gpu_lanes = " + std::to_string(bad) + " must be between 0"));
  }
  CHECK(Simple(Simple::Config{"cpu", 8, 0, 3}).capacities() == std::vector<int64_t>{16});
}

TEST_CASE("greedy assignment: highest priority with spare capacity, ties in config order",
          "[scheduler]")
{
  // The rule is pure, so a fake three-device scheduler that decides by it exercises it fully.
  struct Fake : Scheduler
  {
    Fake(std::vector<int64_t> bs, std::vector<int64_t> cap, std::vector<int64_t> prio)
    {
      _devices.assign(bs.size(), at::Device(at::kCPU));
      _batch_sizes = std::move(bs);
      _capacities = std::move(cap);
      _priorities = std::move(prio);
    }
    std::string name() const override { return "Fake"; }
    std::optional<Assignment> next(const std::vector<int64_t> & load,
                                   int64_t remaining) const override
    {
      return greedy_next(*this, load, remaining);
    }
    std::optional<DeviceIndex> short_circuit(std::uint64_t, int64_t,
                                             const at::Device &) const override
    {
      return std::nullopt;
    }
  };

  // Equal priorities: device 0 fills first, then 1, then 2.
  const auto a = fill(Fake({2, 3, 4}, {4, 3, 8}, {0, 0, 0}), 100);
  REQUIRE(a.size() == 5);
  CHECK(a[0].device == 0);
  CHECK(a[1].device == 0);
  CHECK(a[2].device == 1);
  CHECK(a[3].device == 2);
  CHECK(a[4].device == 2);
  CHECK(a[2].size == 3);

  // Priorities: device 2 first, then 1, then 0.
  const auto b = fill(Fake({2, 3, 4}, {2, 3, 4}, {0, 1, 5}), 100);
  REQUIRE(b.size() == 3);
  CHECK(b[0].device == 2);
  CHECK(b[1].device == 1);
  CHECK(b[2].device == 0);

  // The last chunk is the remainder, and it fits where a full chunk would not.
  const auto c = fill(Fake({4, 4}, {4, 6}, {0, 0}), 9);
  REQUIRE(c.size() == 3);
  CHECK(c[2].device == 1);
  CHECK(c[2].size == 1);

  // Freed capacity goes back to the preferred device.
  const Fake f({4, 4}, {4, 4}, {1, 0});
  CHECK(f.next({4, 0}, 10)->device == 1);
  CHECK(f.next({0, 4}, 10)->device == 0);
  CHECK_FALSE(f.next({4, 4}, 10));
}

#ifndef NEML2_MPI
TEST_CASE("MPISimple without MPI support says how to enable it", "[scheduler]")
{
  MPISimple::Config cfg;
  cfg.devices = {"cpu"};
  cfg.batch_sizes = {16};
  CHECK_THAT(fatal_message([&] { MPISimple s(cfg); }),
             Catch::Matchers::ContainsSubstring("built without MPI support") &&
                 Catch::Matchers::ContainsSubstring("-DNEML2_MPI=ON"));
}
#else
TEST_CASE("MPISimple before MPI_Init says that MPI_Init must be called first", "[scheduler]")
{
  // The unit tests never initialize MPI (the MPI tests do, under mpiexec).
  int initialized = 1;
  MPI_Initialized(&initialized);
  REQUIRE(initialized == 0);
  MPISimple::Config cfg;
  cfg.devices = {"cpu"};
  cfg.batch_sizes = {16};
  CHECK_THAT(fatal_message([&] { MPISimple s(cfg); }),
             Catch::Matchers::ContainsSubstring("MPISimple: MPI is not initialized") &&
                 Catch::Matchers::ContainsSubstring("MPI_Init"));
}
#endif
