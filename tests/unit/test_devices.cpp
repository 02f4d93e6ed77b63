// neml2::aoti::devices(): the visible devices as scheduler configs spell them.
#include "catch.h"

#include <cctype>
#include <string>

#include "neml2/aoti/detail/parse_device.h"
#include "neml2/aoti/devices.h"
#include "neml2/aoti/schedulers/AdaptiveHybrid.h"
#include "neml2/aoti/schedulers/Simple.h"

using namespace neml2::aoti;

TEST_CASE("devices() lists the CPU first, then every visible GPU", "[devices]")
{
  const auto all = devices();
  REQUIRE_FALSE(all.empty());
  CHECK(all.front() == "cpu");
  CHECK(all.size() == std::size_t(neml2::aoti::detail::cuda_device_count()) + 1);
  for (std::size_t i = 1; i < all.size(); ++i)
  {
    // "cuda:k" with k = 0, 1, ... in order, no gaps, no repeats.
    const std::string & s = all[i];
    REQUIRE(s.rfind("cuda:", 0) == 0);
    const std::string digits = s.substr(5);
    REQUIRE_FALSE(digits.empty());
    for (const char c : digits)
      REQUIRE(std::isdigit(static_cast<unsigned char>(c)));
    CHECK(std::stoul(digits) == i - 1);
  }
}

TEST_CASE("devices() gives strings the schedulers accept", "[devices]")
{
  for (const auto & s : devices())
  {
    // Each names a present device, and spells it as the device parser prints it.
    const at::Device d = neml2::aoti::detail::parse_device(s, "test");
    CHECK(neml2::aoti::detail::device_string(d) == s);
    CHECK_NOTHROW(Simple(Simple::Config{s, 1024}));
  }
  // The whole list at once: no device twice, at most one CPU.
  AdaptiveHybrid::Config cfg;
  cfg.devices = devices();
  const AdaptiveHybrid a(cfg);
  CHECK(a.devices().size() == cfg.devices.size());
  CHECK(a.devices().front().is_cpu());
}

TEST_CASE("devices() is the same list on every call", "[devices]")
{
  CHECK(devices() == devices());
}
