// Includes the Catch2 that the build found (v3 on newer systems, the v2 single
// header on Debian 12) and gives both the same spellings, so a test is written once.
#pragma once

// c10's logging header defines a glog-style CHECK that would silently replace Catch2's
// (a failing check would abort instead of being reported). Include it first, once, and
// drop that macro so every CHECK in the tests is Catch2's, whatever the include order.
#include <c10/util/Logging.h>
#undef CHECK

// tests/CMakeLists.txt defines NEML2_CATCH2_MAJOR from the Catch2 it found; the
// fallback lets an editor or clang-tidy parse a test without the build's flags.
#ifndef NEML2_CATCH2_MAJOR
#if __has_include(<catch2/catch_all.hpp>)
#define NEML2_CATCH2_MAJOR 3
#else
#define NEML2_CATCH2_MAJOR 2
#endif
#endif

#if NEML2_CATCH2_MAJOR >= 3

#include <catch2/catch_all.hpp>

// v2 spelled Approx without the namespace; keep both spellings working.
using Catch::Approx;

#else

#include <catch2/catch.hpp>

#include <string>
#include <utility>

namespace Catch
{
// v3 moved Approx into Catch; v2 declares it in Catch::Detail.
using Detail::Approx;

namespace Matchers
{
// v3's name for the substring matcher; v2 calls it Contains.
inline StdString::ContainsMatcher
ContainsSubstring(const std::string & str, CaseSensitive::Choice cs = CaseSensitive::Yes)
{
  return Contains(str, cs);
}

// v3's MessageMatches(string matcher) for exceptions, which v2 lacks.
template <typename StringMatcher>
class ExceptionMessageMatchesMatcher : public MatcherBase<std::exception>
{
public:
  explicit ExceptionMessageMatchesMatcher(StringMatcher matcher) : _matcher(std::move(matcher)) {}

  bool match(const std::exception & e) const override { return _matcher.match(e.what()); }

  std::string describe() const override
  {
    return "exception message matches " + _matcher.toString();
  }

private:
  StringMatcher _matcher;
};

template <typename StringMatcher>
ExceptionMessageMatchesMatcher<StringMatcher>
MessageMatches(StringMatcher matcher)
{
  return ExceptionMessageMatchesMatcher<StringMatcher>(std::move(matcher));
}
} // namespace Matchers
} // namespace Catch

// v2 cannot mark a test case skipped: say why and leave it, so it passes.
#define SKIP(...)                                                                                  \
  do                                                                                               \
  {                                                                                                \
    WARN("skipped: " << __VA_ARGS__);                                                              \
    return;                                                                                        \
  } while (false)

#endif
