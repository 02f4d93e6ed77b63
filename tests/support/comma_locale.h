// A comma-decimal C locale for the tests that check a host's locale changes nothing.
#pragma once

#include <clocale>
#include <cstdlib>
#include <string>

namespace neml2_test
{
/**
 * Switches the C locale to one whose decimal separator is a comma for its lifetime, and
 * back to "C" after. It tries the system's de_DE and fr_FR locales, then the de_DE.UTF-8
 * that the ctest fixture `comma_locale` generates with localedef into
 * NEML2_TEST_LOCALE_DIR (tests/CMakeLists.txt); active() says whether one was found.
 */
class CommaLocale
{
public:
  CommaLocale()
  {
    if (try_names())
      return;
#ifdef NEML2_TEST_LOCALE_DIR
    // glibc reads LOCPATH at each setlocale call.
    ::setenv("LOCPATH", NEML2_TEST_LOCALE_DIR, 1);
    const bool found = try_names();
    ::unsetenv("LOCPATH");
    if (found)
      return;
#endif
    std::setlocale(LC_ALL, "C");
  }
  ~CommaLocale()
  {
    std::setlocale(LC_ALL, "C");
  }
  CommaLocale(const CommaLocale &) = delete;
  CommaLocale & operator=(const CommaLocale &) = delete;

  /// Whether a comma-decimal locale is in force.
  bool active() const
  {
    return _active;
  }

private:
  bool try_names()
  {
    for (const char * name : {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"})
      if (std::setlocale(LC_ALL, name) && std::string(std::localeconv()->decimal_point) == ",")
        return _active = true;
    return false;
  }

  bool _active = false;
};
} // namespace neml2_test
