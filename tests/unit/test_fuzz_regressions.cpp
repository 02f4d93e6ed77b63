// Inputs that the fuzz targets (tests/fuzz) found crashing or undefined, kept as tests.
#include "catch.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "neml2/aoti/artifact/read_meta.h"

using namespace neml2::aoti;
namespace fs = std::filesystem;

namespace
{
/// read_meta on @p json written to a fresh folder; the FatalError's message, or a marker.
std::string
read_meta_message(const std::string & json)
{
  static std::atomic<int> counter{0};
  const fs::path dir = fs::temp_directory_path() / ("neml2_fuzzreg_" + std::to_string(::getpid()) +
                                                    "_" + std::to_string(counter++));
  fs::create_directories(dir / "cpu");
  std::ofstream(dir / "cpu" / "model_meta.json", std::ios::binary) << json;
  std::ofstream(dir / "cpu" / "forward.pt2", std::ios::binary);
  std::string message = "(no FatalError)";
  try
  {
    read_meta(dir / "cpu", "cpu");
  }
  catch (const FatalError & e)
  {
    message = e.what();
  }
  fs::remove_all(dir);
  return message;
}
} // namespace

// fuzz_meta, crash-0cb97a44ecff837d7525206aa47332c79a2e7e9f: a shape entry beyond int64_t's
// range was converted to an integer before its range was checked (UBSan: "9.22337e+19 is
// outside the range of representable values of type 'long'").
TEST_CASE("fuzz_meta: a shape entry too large for an integer", "[fuzz][meta]")
{
  const std::string crash =
      R"json({"schema": 1, "model": "model", "type": "t%", "device": "cpu", "dtype": "float32", "torch_version": "2.13.0", "inputs": [{"name": "a", "shape": [1, 3]}], "outputs": [{"name": "b", "shape": []}], "parameters": [{"name": "p", "shape": [92233720368547758072], "value": [1, 2]}], "graphs": {"forward": {"fire": "forward.pt2", "args": [{"role": "input", "name": "a"}, {"role": "parameter", "name": "p"}], "returns": [{"role": "output", "name": "b"}]}}})json";
  // The torch version is checked before the shapes: give it this program's.
  std::string json = crash;
  const std::string v =
      std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + ".0";
  json.replace(json.find("2.13.0"), 6, v);
  CHECK_THAT(read_meta_message(json),
             Catch::Matchers::ContainsSubstring("field 'parameters[0].shape' must be an integer"));
}

// The same conversion, reached through the schema field, and its narrowing to int.
TEST_CASE("fuzz_meta: a schema number out of range", "[fuzz][meta]")
{
  using Catch::Matchers::ContainsSubstring;
  for (const std::string n : {"1e300", "-1e300", "9223372036854775808"})
  {
    INFO(n);
    CHECK_THAT(read_meta_message("{\"schema\": " + n + "}"),
               ContainsSubstring("field 'schema' must be an integer"));
  }
  // Beyond a double's range the JSON reader itself refuses the number.
  for (const std::string n : {"1e400", "-1e400"})
    CHECK_THAT(read_meta_message("{\"schema\": " + n + "}"),
               ContainsSubstring("malformed JSON: number overflow parsing '" + n + "'"));
  // 2^32 + 1 narrowed to int is 1: it must not pass for schema 1.
  CHECK_THAT(read_meta_message("{\"schema\": 4294967297}"),
             ContainsSubstring("unknown schema 4294967297 (this library reads schema 1)"));
}
