// detail::broadcast: the one length-1 rule for per-device configuration fields and its wording.
#include "catch.h"
#include "fatal_message.h"

#include <cstdint>
#include <string>
#include <vector>

#include "neml2/aoti/detail/broadcast.h"
#include "neml2/aoti/schedulers/AdaptiveHybrid.h"
#include "neml2/aoti/schedulers/StaticHybrid.h"

using neml2::aoti::detail::broadcast;
using V = std::vector<int64_t>;

const auto message = [](auto && f) { return neml2_test::fatal_message(f); };

TEST_CASE("broadcast repeats one entry and keeps one per device", "[broadcast]")
{
  CHECK(broadcast({7}, 3, "X: ", "f") == V{7, 7, 7});
  CHECK(broadcast({1, 2, 3}, 3, "X: ", "f") == V{1, 2, 3});
  CHECK(broadcast({5}, 1, "X: ", "f") == V{5});
  // One device and one entry: the length-1 and the per-device readings agree.
  CHECK(broadcast({-4}, 1, "X: ", "f", 0) == V{-4});
}

TEST_CASE("broadcast fills an empty field only when a fill is given", "[broadcast]")
{
  CHECK(broadcast({}, 2, "X: ", "f", 9) == V{9, 9});
  CHECK(broadcast({}, 0, "X: ", "f", 9).empty());
  CHECK(message([] { broadcast({}, 2, "X: ", "f"); }) ==
        "X: f has 0 entries; expected 1 or 2 (one per device)");
}

TEST_CASE("broadcast rejects any other length with one wording", "[broadcast]")
{
  CHECK(message(
            [] {
              broadcast({1, 2}, 3, "Owner: ", "batch_sizes");
            }) == "Owner: batch_sizes has 2 entries; expected 1 or 3 (one per device)");
  CHECK(message(
            [] {
              broadcast({1, 2, 3, 4}, 3, "Owner: ", "priorities", 0);
            }) == "Owner: priorities has 4 entries; expected 1 or 3 (one per device)");
  // No devices: only an empty field is accepted.
  CHECK(message([] { broadcast({1}, 0, "Owner: ", "f", 0); }) == "(no FatalError)");
}

TEST_CASE("the schedulers word a bad length alike", "[broadcast]")
{
  using namespace neml2::aoti;
  StaticHybrid::Config s;
  s.devices = {"cpu"};
  s.batch_sizes = {4};
  s.capacities = {8, 8};
  CHECK(message([&] { (void)StaticHybrid{s}; }) ==
        "StaticHybrid: capacities has 2 entries; expected 1 or 1 (one per device)");

  AdaptiveHybrid::Config a;
  a.devices = {"cpu"};
  a.max_chunks = {8, 8};
  CHECK(message([&] { (void)AdaptiveHybrid{a}; }) ==
        "AdaptiveHybrid: max_chunks has 2 entries; expected 1 or 1 (one per device)");
}
