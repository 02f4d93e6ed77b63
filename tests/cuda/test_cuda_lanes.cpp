// GPU worker lanes, staging threads and staging pieces: each gives the direct call's results.
#include "../aoti/fixtures.h"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

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
  const auto set = [](const char * name, const std::string & value)
  {
    if (value.empty())
      unsetenv(name);
    else
      setenv(name, value.c_str(), 1);
  };
  // Chunks of 64 points are 3072 bytes of strain: pieces of 1000 bytes cut each in four.
  for (const auto & [staging, piece] : std::vector<std::pair<std::string, std::string>>{
           {"", ""}, {"1", ""}, {"3", ""}, {"", "1000"}, {"3", "1000"}})
  {
    set("NEML2_STAGING_THREADS", staging);
    set("NEML2_STAGING_PIECE_BYTES", piece);
    for (const int lanes : {1, 2, 3, 4})
    {
      INFO("NEML2_STAGING_THREADS='" << staging << "', NEML2_STAGING_PIECE_BYTES='" << piece
                                     << "', " << lanes << " lanes");
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
  unsetenv("NEML2_STAGING_PIECE_BYTES");
}
