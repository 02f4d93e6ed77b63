// The command line and the exit status of the example programs. A user mistake (a bad
// argument, a bad path, a damaged artifact, an impossible batch size) is one line on stderr
// and exit status 2; a failure at run time (a solve that did not converge, a mismatch) is
// exit status 1; no program aborts or prints a backtrace.
#pragma once

#include <cstdint>
#include <exception>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "neml2/aoti.h"

namespace example
{
/// A command-line mistake: printed as one line, exit status 2.
struct UsageError : std::runtime_error
{
  using std::runtime_error::runtime_error;
};

/// @p text as a whole integer of at least @p min, else a UsageError naming @p what.
inline int64_t
integer(const std::string & what, const std::string & text,
        int64_t min = std::numeric_limits<int64_t>::min())
{
  std::size_t used = 0;
  int64_t value = 0;
  try
  {
    value = std::stoll(text, &used);
  }
  catch (const std::exception &)
  {
    used = 0;
  }
  if (used == 0 || used != text.size())
    throw UsageError(what + ": '" + text + "' is not an integer");
  if (value < min)
    throw UsageError(what + ": " + text + " is less than " + std::to_string(min));
  return value;
}

/// @p text split at commas; an empty entry or an empty list is a UsageError naming @p what.
inline std::vector<std::string>
list(const std::string & what, const std::string & text)
{
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
  {
    if (item.empty())
      throw UsageError(what + ": empty entry in '" + text + "'");
    out.push_back(item);
  }
  if (out.empty())
    throw UsageError(what + ": expected a comma-separated list, got '" + text + "'");
  return out;
}

/// @p text as a list of devices this process sees ("cpu", "cuda", "cuda:N"), else a
/// UsageError naming @p what and the devices there are.
inline std::vector<std::string>
devices(const std::string & what, const std::string & text)
{
  const std::vector<std::string> seen = neml2::aoti::devices();
  std::string known;
  for (const auto & d : seen)
    known += (known.empty() ? "" : ", ") + d;
  const auto here = [&](const std::string & d)
  {
    for (const auto & s : seen)
      if (d == s || (d == "cuda" && s == "cuda:0"))
        return true;
    return false;
  };
  const std::vector<std::string> out = list(what, text);
  for (const auto & d : out)
    if (!here(d))
      throw UsageError(what + ": '" + d + "' is not a device of this process (" + known + ")");
  return out;
}

/// The exit status of @p body (a callable returning one), with every error turned into
/// one line on stderr that starts with @p program: a UsageError or a fatal library error
/// (a bad path, a damaged artifact, a wrong input) exits 2, a recoverable one 1, anything
/// else (a bug) 1 with its message.
template <class Body>
int
guarded(const char * program, Body && body)
{
  try
  {
    return body();
  }
  catch (const UsageError & e)
  {
    std::cerr << program << ": " << e.what() << "\n";
    return 2;
  }
  catch (const neml2::aoti::Exception & e)
  {
    std::cerr << program << ": " << (e.recoverable() ? "recoverable" : "fatal")
              << " error: " << e.what() << "\n";
    return e.recoverable() ? 1 : 2;
  }
  catch (const c10::Error & e)
  {
    std::cerr << program << ": " << e.what_without_backtrace() << "\n";
    return 1;
  }
  catch (const std::exception & e)
  {
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  }
}
} // namespace example
