// Settings read from the environment: one parse, one error wording.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

#include "neml2/aoti/Exception.h"

namespace neml2::aoti::detail
{
/**
 * The positive integer in the environment variable @p name: none when it is unset or empty,
 * FatalError ("NAME must be a positive integer, not '...'") for anything else.
 */
inline std::optional<std::size_t>
positive_from_env(const char * name)
{
  const char * p = std::getenv(name);
  if (!p || !*p)
    return std::nullopt;
  char * end = nullptr;
  const unsigned long long n = std::strtoull(p, &end, 10);
  if (*p < '0' || *p > '9' || *end != '\0' || n == 0)
    throw FatalError(std::string(name) + " must be a positive integer, not '" + p + "'");
  return std::size_t(n);
}
} // namespace neml2::aoti::detail
