// Removing a test's temporary folder, quietly.
#pragma once

#include <filesystem>
#include <system_error>

namespace neml2_test
{
/**
 * Remove @p path and everything under it (nothing if it does not exist); errors are
 * ignored: this is cleanup, not a check.
 *
 * std::filesystem::remove_all is safe here because neml2::dispatch puts libstdc++ before
 * libtorch on the link line: the torch 2.11 CUDA wheel's libtorch.so exports its own copy
 * of that function, and a program that bound to it crashed (doc/python.md).
 */
inline void
remove_tree(const std::filesystem::path & path)
{
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
}
} // namespace neml2_test
