// The one rule for per-device configuration fields: one entry per device, or one entry for all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "neml2/aoti/Exception.h"

namespace neml2::aoti::detail
{
/**
 * @brief Spread a per-device configuration field over @p n devices.
 *
 * One entry is repeated for every device, @p n entries are kept as given, and
 * an empty field becomes @p n copies of @p empty_fill when that is given.
 * Any other length throws FatalError worded
 * `<owner>field has K entries; expected 1 or N (one per device)`.
 *
 * @param v the field as configured
 * @param n the number of devices
 * @param owner the message prefix naming the class, including its trailing ": "
 * @param field the field's name as the configuration spells it
 * @param empty_fill the value of every entry when @p v is empty; none: empty is an error
 * @return exactly @p n entries
 */
inline std::vector<int64_t>
broadcast(const std::vector<int64_t> & v, std::size_t n, const std::string & owner,
          const std::string & field, std::optional<int64_t> empty_fill = std::nullopt)
{
  if (v.empty() && empty_fill)
    return std::vector<int64_t>(n, *empty_fill);
  if (v.size() == 1)
    return std::vector<int64_t>(n, v.front());
  if (v.size() != n)
    throw FatalError(owner + field + " has " + std::to_string(v.size()) +
                     " entries; expected 1 or " + std::to_string(n) + " (one per device)");
  return v;
}
} // namespace neml2::aoti::detail
