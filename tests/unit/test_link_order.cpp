// A program linked with neml2::dispatch finds the C++ runtime's symbols before libtorch's.
#include "catch.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstring>
#include <fstream>
#include <iterator>
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

/// Whether this program's own dynamic symbol table defines @p symbol: it then holds a
/// copy of the function (a statically linked libstdc++), which its calls use and which
/// takes precedence over every library's. Read from the program's file (ELF64).
bool
program_defines(const char * symbol)
{
  std::ifstream in("/proc/self/exe", std::ios::binary);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (file.size() < sizeof(Elf64_Ehdr))
    return false;
  Elf64_Ehdr eh;
  std::memcpy(&eh, file.data(), sizeof eh);
  const auto section = [&](std::size_t i)
  {
    Elf64_Shdr sh;
    std::memcpy(&sh, file.data() + eh.e_shoff + i * eh.e_shentsize, sizeof sh);
    return sh;
  };
  for (std::size_t i = 0; i < eh.e_shnum; ++i)
  {
    const Elf64_Shdr sh = section(i);
    if (sh.sh_type != SHT_DYNSYM)
      continue;
    const Elf64_Shdr strings = section(sh.sh_link);
    for (std::size_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); ++k)
    {
      Elf64_Sym sym;
      std::memcpy(&sym, file.data() + sh.sh_offset + k * sizeof sym, sizeof sym);
      if (sym.st_shndx != SHN_UNDEF &&
          std::strcmp(file.data() + strings.sh_offset + sym.st_name, symbol) == 0)
        return true;
    }
  }
  return false;
}
} // namespace

// torch wheels export copies of standard-library functions (libtorch_cpu.so of 2.13 has
// std::filesystem::remove_all; the 2.11 CUDA wheel's copy crashed when called). The
// library puts libstdc++ first on the link line, so the program's own calls bind to it:
// to the shared libstdc++, ahead of libtorch in the search order, or, where the compiler
// links libstdc++ statically (the GPU machine's GCC 13), to the copy the linker then
// pulls into the program instead of binding the call to libtorch.so.
TEST_CASE("std::filesystem::remove_all resolves to libstdc++, not to a copy in libtorch", "[link]")
{
#if _GLIBCXX_USE_CXX11_ABI
  const char * symbol = "_ZNSt10filesystem10remove_allERKNS_7__cxx114pathE";
#else
  const char * symbol = "_ZNSt10filesystem10remove_allERKNS_4pathE";
#endif
  if (program_defines(symbol))
    SUCCEED("the program holds its own copy (libstdc++ linked statically)");
  else
  {
    const std::string where = defining_library(symbol);
    INFO("std::filesystem::remove_all resolves to " << where);
    CHECK(where.find("libstdc++") != std::string::npos);
  }
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
