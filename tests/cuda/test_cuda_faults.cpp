// CUDA out-of-memory in a chunk: a FatalError under every policy, and the model stays usable.
#include "../aoti/fixtures.h"

#include <vector>

using namespace neml2_test;

namespace
{
using Catch::Matchers::ContainsSubstring;

/// The message of the error @p f throws, checked to be an unrecoverable out-of-memory.
template <class F>
void
check_oom(F && f)
{
  bool threw = false;
  try
  {
    f();
  }
  catch (const Exception & e)
  {
    threw = true;
    INFO(e.what());
    CHECK_FALSE(e.recoverable());
    if (const auto * agg = dynamic_cast<const AggregateError *>(&e))
      for (const auto & sub : agg->errors())
        CHECK(dynamic_cast<const FatalError *>(sub.get()));
    else
      CHECK(dynamic_cast<const FatalError *>(&e));
    CHECK_THAT(e.what(), ContainsSubstring("out of memory", Catch::CaseSensitive::No));
  }
  CHECK(threw);
}

/// Every CUDA policy: a chunk on the GPU allocates more than the device has, then the
/// same call without the hook must give the CPU model's results.
template <class M>
void
oom_in_chunk(M & m, const Model & direct, const at::Device & inputs_on)
{
  INFO("inputs on " << inputs_on);
  const at::Tensor eps = strains(100).to(inputs_on);
  const at::Tensor before = eps.clone();
  m.set_chunk_hook(
      [](const at::Device & d, std::size_t, int64_t, int64_t)
      {
        if (d.is_cuda()) // 64 TiB: more than any GPU has
          (void)at::empty({int64_t(1) << 46}, at::TensorOptions().dtype(at::kByte).device(d));
      });
  check_oom([&] { m.forward({{"strain", eps}}); });
  m.set_chunk_hook({});
  CHECK(identical(eps, before));
  const at::Tensor want = direct.forward({{"strain", eps.cpu()}}).at("stress");
  CHECK(close(m.forward({{"strain", eps}}).at("stress"), want, 1e-12, 1e-9));
}
} // namespace

TEST_CASE("a CUDA out-of-memory chunk is a FatalError and the model stays usable", "[cuda]")
{
  if (!have_cuda())
    SKIP("no CUDA device is visible");
  const Model direct(stub("elastic_promoted"), "model", "cpu");
  const std::string s = stub("elastic_promoted");
  for (const auto & on : {at::Device(at::kCPU), at::Device(at::kCUDA, 0)})
  {
    auto sync = load_model(s, "model", std::make_shared<Simple>(Simple::Config{"cuda:0", 8}));
    oom_in_chunk(sync, direct, on);
    DispatchedModel<AsyncPolicy<Simple>> async(
        s, "model", std::make_shared<Simple>(Simple::Config{"cuda:0", 8}));
    oom_in_chunk(async, direct, on);
    auto hybrid = load_model(
        s, "model",
        std::make_shared<StaticHybrid>(StaticHybrid::Config{{"cpu", "cuda:0"}, {8}, {}, {}}));
    oom_in_chunk(hybrid, direct, on);
  }
}

TEST_CASE("a full GPU: the chunk's own allocation fails, then the next call works", "[cuda]")
{
  if (!have_cuda())
    SKIP("no CUDA device is visible");
  const Model direct(stub("elastic_promoted"), "model", "cpu");
  auto m = load_model(stub("elastic_promoted"), "model",
                      std::make_shared<Simple>(Simple::Config{"cuda:0", 0}));
  const at::Tensor eps = strains(1 << 20); // 48 MiB in and out: the copy to the GPU needs room
  const at::Tensor want = direct.forward({{"strain", eps}}).at("stress");
  CHECK(close(m.forward({{"strain", eps}}).at("stress"), want, 1e-12, 1e-9));

  // Take every byte the caching allocator can get, in ever smaller blocks.
  std::vector<at::Tensor> blockers;
  const auto opts = at::TensorOptions().dtype(at::kByte).device(at::kCUDA, 0);
  for (const int64_t block : {int64_t(1) << 30, int64_t(1) << 26, int64_t(1) << 20})
    while (true)
    {
      try
      {
        blockers.push_back(at::empty({block}, opts));
      }
      catch (const c10::Error &)
      {
        break;
      }
    }
  INFO(blockers.size() << " blocks hold the GPU's memory");
  check_oom([&] { m.forward({{"strain", eps}}); });
  blockers.clear();
  CHECK(close(m.forward({{"strain", eps}}).at("stress"), want, 1e-12, 1e-9));
}
