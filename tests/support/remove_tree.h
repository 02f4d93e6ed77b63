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
 * own copy of that function, and a GCC 13 program on the GPU machine that bound to it
 * crashed. neml2::dispatch now links libstdc++ first so that programs bind to the real one
 * (tests/unit/test_link_order.cpp checks it); these folders keep the POSIX walk until the
 * test programs have run there with that rule (doc/python.md). The library never removes files.
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
