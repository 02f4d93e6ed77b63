// A program linked with neml2::dispatch finds the C++ runtime's symbols before libtorch's.
#include "catch.h"

#include <dlfcn.h>
#include <link.h>

#include <string>
#include <vector>

namespace
{
/// The shared objects of this process, in the order the dynamic linker searches them for
/// the program's own references (the program first, then its libraries breadth-first).
std::vector<std::string>
search_order()
{
  std::vector<std::string> names;
  ::dl_iterate_phdr(
      [](struct dl_phdr_info * info, size_t, void * out)
      {
        static_cast<std::vector<std::string> *>(out)->emplace_back(info->dlpi_name);
        return 0;
      },
      &names);
  return names;
}

/// The first library in the search order that defines @p symbol itself: the one the
/// program's calls bind to. The program is skipped: where it is not position-independent,
/// a called function has a stub in it that dlsym would report instead of the definition.
std::string
defining_library(const char * symbol)
{
  const auto names = search_order();
  for (std::size_t i = 1; i < names.size(); ++i)
  {
    void * handle = ::dlopen(names[i].c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!handle)
      continue;
    void * address = ::dlsym(handle, symbol);
    Dl_info info{};
    const bool own =
        address && ::dladdr(address, &info) != 0 && info.dli_fname && names[i] == info.dli_fname;
    ::dlclose(handle);
    if (own)
      return names[i];
  }
  return "(not found)";
}

/// Position in the search order of the first object whose file name contains @p part.
std::size_t
position_of(const std::vector<std::string> & names, const std::string & part)
{
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i].find(part) != std::string::npos)
      return i;
  return names.size();
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
  const std::string where = defining_library(symbol);
  INFO("std::filesystem::remove_all resolves to " << where);
  CHECK(where.find("libstdc++") != std::string::npos);
}

TEST_CASE("libstdc++ comes before every torch library in the search order", "[link]")
{
  const auto names = search_order();
  const auto cxx = position_of(names, "libstdc++");
  INFO("libstdc++ at " << cxx << ", libtorch at " << position_of(names, "libtorch")
                       << ", libc10 at " << position_of(names, "libc10"));
  REQUIRE(cxx < names.size());
  CHECK(cxx < position_of(names, "libtorch"));
  CHECK(cxx < position_of(names, "libc10"));
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
