// A program linked with neml2::dispatch finds the C++ runtime's symbols before libtorch's.
#include "catch.h"

#include <dlfcn.h>

#include <string>

namespace
{
/// The file of the object that the program's symbol search resolves @p symbol to.
std::string
resolved_in(const char * symbol)
{
  void * address = ::dlsym(RTLD_DEFAULT, symbol);
  Dl_info info{};
  if (!address || ::dladdr(address, &info) == 0 || !info.dli_fname)
    return "(not found)";
  return info.dli_fname;
}
} // namespace

// torch wheels export copies of standard-library functions (libtorch_cpu.so of 2.13 has
// std::filesystem::remove_all; the 2.11 CUDA wheel's copy crashed when called). The
// library puts libstdc++ first on the link line, so the program's own calls bind to it.
TEST_CASE("std::filesystem::remove_all resolves to libstdc++, not to a copy in libtorch", "[link]")
{
#if _GLIBCXX_USE_CXX11_ABI
  const char * symbol = "_ZNSt10filesystem10remove_allERKNS_7__cxx114pathE";
#else
  const char * symbol = "_ZNSt10filesystem10remove_allERKNS_4pathE";
#endif
  const std::string where = resolved_in(symbol);
  INFO("std::filesystem::remove_all resolves to " << where);
  CHECK(where.find("libstdc++") != std::string::npos);
}

// The 2.11 packages' *.wrapper.so need libtorch.so, and the dynamic linker finds it for
// them only if the program has it loaded already (it is not on their search path).
TEST_CASE("libtorch.so is loaded even though the program calls nothing in it", "[link]")
{
  void * handle = ::dlopen("libtorch.so", RTLD_NOW | RTLD_NOLOAD);
  CHECK(handle != nullptr);
  if (handle)
    ::dlclose(handle);
}
