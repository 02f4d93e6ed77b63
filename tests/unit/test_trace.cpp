// The dispatch trace: a readable file after every flush, linear I/O, a bounded ring.
#include "catch.h"
#include "fatal_message.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "neml2/aoti/artifact/parse_json.h"
#include "neml2/aoti/observers/ChromeTrace.h"

namespace fs = std::filesystem;
using Trace = neml2::aoti::ChromeTraceFile;
using neml2_test::fatal_message;

namespace
{
std::string
temp_trace()
{
  static std::atomic<int> counter{0};
  return (fs::temp_directory_path() / ("neml2_trace_unit_" + std::to_string(::getpid()) + "_" +
                                       std::to_string(counter++) + ".json"))
      .string();
}

neml2::aoti::detail::Json
read_trace(const std::string & path)
{
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return neml2::aoti::detail::parse_json(text.str(), path);
}

/// The complete ("X") events of a trace file, and its notes ("i").
struct Events
{
  std::vector<neml2::aoti::detail::Json> complete, notes;
};

Events
events_of(const std::string & path)
{
  Events e;
  const auto root = read_trace(path);
  for (const auto & event : root.at("traceEvents"))
  {
    if (event.at("ph") == "X")
      e.complete.push_back(event);
    else if (event.at("ph") == "i")
      e.notes.push_back(event);
  }
  return e;
}

/// One call of a dispatch: two chunk phases on the CPU track and the call itself.
void
one_call(Trace & t, int i)
{
  t.add("compute", at::Device("cpu"), i, i + 0.5, 10 * i, 10 * i + 10, std::size_t(i));
  t.add("copy out", at::Device("cpu"), i + 0.5, i + 0.6, 10 * i, 10 * i + 10, std::size_t(i));
  t.add_call("forward", i, i + 0.7, 1);
}
} // namespace

TEST_CASE("trace: the file is a complete trace after every flush", "[trace]")
{
  const std::string path = temp_trace();
  {
    Trace t(path, 1000);
    for (int i = 0; i < 5; ++i)
    {
      one_call(t, i);
      t.flush();
      const Events e = events_of(path);
      CHECK(e.complete.size() == std::size_t(3 * (i + 1)));
      CHECK(e.complete.back().at("name") == "forward");
      CHECK(e.complete.back().at("ts").get<double>() == Approx(i));
    }
    // a flush with nothing new writes nothing
    const std::size_t before = t.bytes_written();
    t.flush();
    CHECK(t.bytes_written() == before);
  }
  // the track of the CPU worker is named once
  int names = 0;
  const auto root = read_trace(path);
  for (const auto & event : root.at("traceEvents"))
    names += event.at("ph") == "M" && event.at("args").at("name") == "cpu #0";
  CHECK(names == 1);
  fs::remove(path);
}

TEST_CASE("trace: 1e5 calls flushed one by one write each event once", "[trace]")
{
  const std::string path = temp_trace();
  const int calls = 100000;
  Trace t(path, 4 * calls);
  for (int i = 0; i < calls; ++i)
  {
    one_call(t, i);
    t.flush();
  }
  const auto size = std::size_t(fs::file_size(path));
  // Appending: the file once, plus each flush's closing bracket that the next overwrites.
  // Rewriting the file per flush (quadratic) would be about calls / 2 times its size.
  CHECK(t.bytes_written() <= size + 4 * std::size_t(calls));
  CHECK(events_of(path).complete.size() == std::size_t(3 * calls));
  CHECK(t.dropped() == 0);
  fs::remove(path);
}

TEST_CASE("trace: a full ring keeps the latest events and says how many it dropped", "[trace]")
{
  const std::string path = temp_trace();
  const std::size_t capacity = 30;
  std::size_t bytes_one_pass = 0;
  {
    Trace t(path, capacity);
    for (int i = 0; i < 100; ++i) // 300 events
    {
      one_call(t, i);
      t.flush();
      if (i == 9)
        bytes_one_pass = t.bytes_written(); // 30 events, appended
    }
    CHECK(t.dropped() == 270);
    CHECK(t.capacity() == capacity);
    // Each event is written at most twice: once appended or rewritten, once more at most.
    CHECK(t.bytes_written() <= 2 * 10 * bytes_one_pass + 4096);
  } // the last rewrite happens here
  const Events e = events_of(path);
  REQUIRE(e.complete.size() == capacity);
  CHECK(e.complete.front().at("ts").get<double>() == Approx(90));
  CHECK(e.complete.back().at("ts").get<double>() == Approx(99));
  REQUIRE(e.notes.size() == 1);
  const std::string note = e.notes.front().at("name");
  CHECK_THAT(note, Catch::Matchers::ContainsSubstring("270 earlier events dropped"));
  CHECK_THAT(note, Catch::Matchers::ContainsSubstring("NEML2_TRACE_EVENTS"));
  fs::remove(path);
}

TEST_CASE("trace: NEML2_TRACE_EVENTS sets the ring's size; a bad value is a FatalError", "[trace]")
{
  ::setenv("NEML2_TRACE_EVENTS", "123", 1);
  CHECK(Trace::capacity_from_env() == 123);
  for (const char * bad : {"0", "-5", "12k", "many"})
  {
    ::setenv("NEML2_TRACE_EVENTS", bad, 1);
    CHECK_THAT(fatal_message([] { Trace::capacity_from_env(); }),
               Catch::Matchers::ContainsSubstring("NEML2_TRACE_EVENTS must be a positive integer"));
  }
  ::unsetenv("NEML2_TRACE_EVENTS");
  CHECK(Trace::capacity_from_env() == Trace::default_capacity);
}

TEST_CASE("trace: an unwritable path is a FatalError that names it", "[trace]")
{
  Trace t("/nonexistent-folder/trace.json", 10);
  one_call(t, 0);
  CHECK_THAT(fatal_message([&] { t.flush(); }),
             Catch::Matchers::ContainsSubstring(
                 "cannot write the trace file '/nonexistent-folder/trace.json'"));
}
