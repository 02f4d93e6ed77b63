// Removing a test's temporary folder without std::filesystem::remove_all.
#pragma once

#include <ftw.h>

#include <cstdio>
#include <filesystem>

namespace neml2_test
{
/**
 * Remove @p path and everything under it (nothing if it does not exist), with POSIX calls.
 *
 * Not std::filesystem::remove_all: the torch 2.11 CUDA wheel's libtorch.so exports its
 * own copy of that function, which a program built with GCC 13 then calls, and it jumps
 * to a null address (seen on the lent H200 machine). The library never removes files.
 */
inline void
remove_tree(const std::filesystem::path & path)
{
  // Children first (FTW_DEPTH), links not followed (FTW_PHYS); a file that cannot be
  // removed is left behind and the walk goes on: this is cleanup, not a check.
  const auto remove_one = [](const char * p, const struct stat *, int, struct FTW *)
  {
    std::remove(p);
    return 0;
  };
  ::nftw(path.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS);
}
} // namespace neml2_test
