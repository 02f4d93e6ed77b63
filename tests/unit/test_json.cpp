// The JSON layer behind model_meta.json: nlohmann/json with our error wording and kinds.
#include "catch.h"
#include "comma_locale.h"
#include "fatal_message.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "neml2/aoti/artifact/parse_json.h"

using neml2::aoti::detail::Json;
using neml2::aoti::detail::JsonKind;
using neml2::aoti::detail::kind_name;
using neml2::aoti::detail::kind_of;
using neml2::aoti::detail::parse_json;
using neml2_test::CommaLocale;
using neml2_test::fatal_message;

TEST_CASE("JSON values of every kind, members in file order", "[json]")
{
  const Json v = parse_json(
      R"( {"z": [1, -2.5e3, 0.125, true, false, null], "s": "x\"\\\/\n\u00e9\ud83d\ude00", "a": {}} )",
      "f.json");
  REQUIRE(kind_of(v) == JsonKind::object);
  const Json & z = v.at("z");
  REQUIRE(z.size() == 6);
  CHECK(z[0].get<double>() == 1);
  CHECK(z[1].get<double>() == -2500);
  CHECK(z[2].get<double>() == 0.125);
  CHECK(kind_of(z[3]) == JsonKind::boolean);
  CHECK(kind_of(z[5]) == JsonKind::null);
  CHECK(v.at("s").get<std::string>() == "x\"\\/\n\xc3\xa9\xf0\x9f\x98\x80");
  CHECK(v.at("a").empty());
  CHECK(std::string(kind_name(kind_of(z))) == "an array");
  CHECK(std::string(kind_name(kind_of(v.at("s")))) == "a string");
  // Members keep the order of the file, not the alphabet.
  CHECK(v.begin().key() == "z");
  CHECK((--v.end()).key() == "a");
}

TEST_CASE("JSON syntax errors are one FatalError with file, line and column", "[json]")
{
  const std::vector<std::string> bad = {"{\"a\": 1,}",
                                        "[1 2]",
                                        "{\"a\" 1}",
                                        "\"abc",
                                        "01",
                                        "1.",
                                        "1e",
                                        "tru",
                                        "\"\\x\"",
                                        "\"\\ud800\"",
                                        "",
                                        "{} {}",
                                        "{\"a\": NaN}",
                                        "// no comments\n{}"};
  for (const auto & text : bad)
  {
    INFO(text);
    const std::string what = fatal_message([&] { parse_json(text, "meta.json"); });
    CHECK_THAT(what, Catch::Matchers::StartsWith("meta.json:1:"));
    CHECK_THAT(what, Catch::Matchers::ContainsSubstring(": malformed JSON: "));
    CHECK(what.find('\n') == std::string::npos);
  }
  CHECK_THAT(fatal_message([] { parse_json("{\n  \"a\": [1,\n   x]\n}", "meta.json"); }),
             Catch::Matchers::StartsWith("meta.json:3:4: malformed JSON: syntax error"));
}

TEST_CASE("Deep nesting is read without exhausting the stack", "[json]")
{
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(parse_json(deep, "deep.json").is_array());
}

TEST_CASE("Numbers read the same under a comma-decimal locale", "[json][locale]")
{
  CommaLocale locale;
  INFO("no comma-decimal locale: neither de_DE nor fr_FR is installed and the ctest fixture "
       "comma_locale could not generate de_DE.UTF-8 (install the Debian package locales, as "
       "scripts/setup.sh does)");
  REQUIRE(locale.active());
  // The locale is in force: the C library now stops at the '.'.
  CHECK(std::strtod("200000.5", nullptr) == 200000);
  const Json v = parse_json(R"({"E": 200000.5, "nu": 0.3, "tiny": 1.5e-300})", "meta.json");
  CHECK(v.at("E").get<double>() == 200000.5);
  CHECK(v.at("nu").get<double>() == 0.3);
  CHECK(v.at("tiny").get<double>() == 1.5e-300);
}
