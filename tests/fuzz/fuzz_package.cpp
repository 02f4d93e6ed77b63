// libFuzzer target: the .pt2 integrity check (detail::zip_damage on bytes in memory).
// Any input must give "" or a reason; a crash, an out-of-range read or undefined
// behaviour is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "neml2/aoti/detail/zip.h"

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t * data, std::size_t size)
{
  neml2::aoti::detail::MemoryBytes bytes(data, size);
  const std::string damage = neml2::aoti::detail::zip_damage(bytes);
  (void)damage.size();
  return 0;
}
