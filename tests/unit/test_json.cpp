// The strict JSON reader behind model_meta.json.
#include "catch.h"

#include "neml2/aoti/detail/json.h"

using neml2::aoti::detail::Json;
using neml2::aoti::detail::JsonParser;
using neml2::aoti::detail::JsonSyntaxError;

TEST_CASE("JSON values of every kind", "[json]")
{
  const Json v = JsonParser::parse(
      R"( {"a": [1, -2.5e3, 0.125, true, false, null], "s": "x\"\\\/\n\u00e9\ud83d\ude00", "o": {}} )");
  REQUIRE(v.kind == Json::Kind::Object);
  const Json & a = *v.find("a");
  REQUIRE(a.array.size() == 6);
  CHECK(a.array[0].number == 1);
  CHECK(a.array[1].number == -2500);
  CHECK(a.array[2].number == 0.125);
  CHECK(a.array[3].boolean);
  CHECK(a.array[4].kind == Json::Kind::Bool);
  CHECK(a.array[5].kind == Json::Kind::Null);
  CHECK(v.find("s")->string == "x\"\\/\n\xc3\xa9\xf0\x9f\x98\x80");
  CHECK(v.find("o")->object.empty());
  CHECK(v.find("missing") == nullptr);
  // Keys keep their order.
  CHECK(v.object[0].first == "a");
  CHECK(v.object[2].first == "o");
}

TEST_CASE("JSON syntax errors say where", "[json]")
{
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"{\"a\": 1,}", "expected a string key"},
      {"[1 2]", "expected ']'"},
      {"{\"a\" 1}", "expected ':'"},
      {"\"abc", "unterminated string"},
      {"01", "unexpected text"},
      {"1.", "expected digits after '.'"},
      {"1e", "expected digits in exponent"},
      {"tru", "invalid literal"},
      {"\"\\x\"", "invalid escape"},
      {"\"\\ud800\"", "unpaired surrogate"},
      {"", "expected a value"},
      {"{} {}", "unexpected text"},
      {std::string(100, '['), "nesting deeper"},
  };
  for (const auto & [text, what] : bad)
  {
    INFO(text);
    try
    {
      JsonParser::parse(text);
      FAIL("no error");
    }
    catch (const JsonSyntaxError & e)
    {
      CHECK(std::string(e.what()).find(what) != std::string::npos);
    }
  }
  try
  {
    JsonParser::parse("{\n  \"a\": [1,\n   x]\n}");
    FAIL("no error");
  }
  catch (const JsonSyntaxError & e)
  {
    CHECK(e.line == 3);
    CHECK(e.column == 4);
  }
}
