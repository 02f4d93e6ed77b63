// GPU worker lanes and staging threads: every count gives the direct call's results.
#include "../aoti/fixtures.h"

#include <cstdlib>
#include <string>

using namespace neml2_test;

TEST_CASE("every lane count and staging thread count gives the CPU model's results", "[cuda]")
{
  if (!have_cuda())
    SKIP("no CUDA device is visible");
  const std::string s = stub("elastic_promoted");
  const Model direct(s, "model", "cpu");
  const at::Tensor eps = strains(1000);
  const at::Tensor pinned = eps.pin_memory();
  const at::Tensor want = direct.forward({{"strain", eps}}).at("stress");
  for (const std::string staging : {"", "1", "3"})
  {
    if (staging.empty())
      unsetenv("NEML2_STAGING_THREADS");
    else
      setenv("NEML2_STAGING_THREADS", staging.c_str(), 1);
    for (const int lanes : {1, 2, 3, 4})
    {
      INFO("NEML2_STAGING_THREADS='" << staging << "', " << lanes << " lanes");
      DispatchedModel<AsyncPolicy<Simple>> gpu(
          s, "model", std::make_shared<Simple>(Simple::Config{"cuda:0", 64, 0, lanes}));
      CHECK(gpu.policy().scheduler().capacities() == std::vector<int64_t>{64 * std::max(2, lanes)});
      CHECK(close(gpu.forward({{"strain", eps}}).at("stress"), want, 1e-12, 1e-9));
      CHECK(close(gpu.forward({{"strain", pinned}}).at("stress"), want, 1e-12, 1e-9));
      StaticHybrid::Config cfg{{"cpu", "cuda:0"}, {64}, {}, {}};
      cfg.gpu_lanes = lanes;
      auto hybrid = load_model(s, "model", std::make_shared<StaticHybrid>(cfg));
      CHECK(close(hybrid.forward({{"strain", eps}}).at("stress"), want, 1e-12, 1e-9));
    }
  }
  unsetenv("NEML2_STAGING_THREADS");
}
