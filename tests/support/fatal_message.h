// The message of a FatalError a test expects, shared by every test program.
#pragma once

#include <string>

#include "neml2/aoti/Exception.h"

namespace neml2_test
{
/// The message of the FatalError @p f throws, or a marker when it throws none.
template <class F>
std::string
fatal_message(F && f)
{
  try
  {
    f();
  }
  catch (const neml2::aoti::FatalError & e)
  {
    return e.what();
  }
  return "(no FatalError)";
}
} // namespace neml2_test
