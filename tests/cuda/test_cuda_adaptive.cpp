// AdaptiveHybrid over the CPU and a GPU, with the inputs on the host: the three ways (spread,
// the GPU alone, one direct call on the CPU) are timed and the fastest kept; a small batch
// ends as a direct call; a batch on the GPU runs there whole at once. Every call gives the
// CPU model's results.
#include "../aoti/fixtures.h"

#include <limits>
#include <sstream>

using namespace neml2_test;

namespace
{
/// The trial's medians, for a failure message.
std::string
describe(const AdaptiveHybrid::Trial & t)
{
  using neml2::aoti::detail::adaptive::name;
  using neml2::aoti::detail::adaptive::Way;
  std::ostringstream s;
  for (std::size_t w = 0; w < t.seconds.size(); ++w)
  {
    s << name(Way(w)) << ":";
    for (const double x : t.seconds[w])
      s << " " << x * 1e6;
    s << (t.out[w] ? " (out)" : "") << " us; ";
  }
  s << (t.decided ? "kept " : "undecided ") << name(t.choice);
  return s.str();
}

/// The least median among the ways timed and not ruled out.
double
best_median(const AdaptiveHybrid::Trial & t)
{
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t w = 0; w < t.seconds.size(); ++w)
    if (!t.out[w] && !t.seconds[w].empty())
      best = std::min(best, neml2::aoti::detail::median(t.seconds[w]));
  return best;
}
} // namespace

TEST_CASE("AdaptiveHybrid on cpu and cuda:0 keeps the way it timed fastest", "[cuda][adaptive]")
{
  if (!have_cuda())
    SKIP("no CUDA device is visible");
  using Way = neml2::aoti::detail::adaptive::Way;
  const std::string s = stub("forward_single");
  const Model direct(s, "model", "cpu");
  AdaptiveHybrid::Config cfg;
  cfg.devices = {"cpu", "cuda:0"};
  auto sched = std::make_shared<AdaptiveHybrid>(cfg);
  auto m = load_model(s, "model", sched);
  const std::uint64_t client = m.policy().client();
  const at::Device host(at::kCPU), gpu("cuda:0");

  // Learn until decided: the probes, three spread dispatches, then up to three of each
  // other way. Then the dispatch follows the way kept, and that way's median is the least.
  const auto learn = [&](int64_t batch)
  {
    const at::Tensor x = strains(batch);
    const at::Tensor want = direct.forward({{"strain", x}}).at("stress");
    CHECK_FALSE(sched->trial(client, batch, host)); // nothing timed yet
    int calls = 0;
    for (auto t = sched->trial(client, batch, host); calls < 24 && !(t && t->decided);
         t = sched->trial(client, batch, host), ++calls)
      CHECK(close(m.forward({{"strain", x}}).at("stress"), want, 1e-12, 1e-9));
    const auto t = sched->trial(client, batch, host);
    REQUIRE(t);
    INFO(batch << " points after " << calls << " calls: " << describe(*t));
    REQUIRE(t->decided);
    CHECK(neml2::aoti::detail::median(t->seconds[std::size_t(t->choice)]) == best_median(*t));
    CHECK(close(m.forward({{"strain", x}}).at("stress"), want, 1e-12, 1e-9));
    const auto & info = m.last_dispatch();
    CHECK(info.short_circuit == (t->choice == Way::direct));
    // The GPUs alone leave the CPU idle. A spread dispatch offers chunks to every device; a
    // CPU that clears the batch first leaves a GPU none, so no count is asked of it.
    if (t->choice == Way::others)
    {
      CHECK(info.device_chunks.at(0) == 0);
      CHECK(info.device_chunks.at(1) > 0);
    }
    return t->choice;
  };

  // 2000 points: the way it timed fastest (learn() checks that), and a short circuit exactly
  // when that is the direct call. One direct call on the CPU takes microseconds, about one GPU
  // round trip, so either may win: on an H100 host the GPU alone measured the least median.
  const Way small = learn(2000);
  CHECK(sched->short_circuit(client, 2000, host).has_value() == (small == Way::direct));

  // The same batch size with its inputs on the GPU: one direct call there, no copies, and
  // the results stay on the GPU.
  const at::Tensor few = strains(2000);
  const at::Tensor out = m.forward({{"strain", few.to(gpu)}}).at("stress");
  CHECK(m.last_dispatch().short_circuit);
  CHECK(out.device() == gpu);
  CHECK(close(out.cpu(), direct.forward({{"strain", few}}).at("stress"), 1e-12, 1e-9));

  // 2^20 host points: the way it timed fastest (learn() checks that). Which one depends on the
  // host: a CPU writing the elastic model's results in place runs near its copy bound, which
  // a GPU fed over PCIe may not beat.
  learn(int64_t(1) << 20);
}
