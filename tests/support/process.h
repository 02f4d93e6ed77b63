// What a test reads of its own process from /proc (Linux), shared by every test program.
#pragma once

#include <cstddef>
#include <filesystem>

namespace neml2_test
{
/// Entries of the directory @p path.
inline std::size_t
entries(const char * path)
{
  std::size_t n = 0;
  for ([[maybe_unused]] const auto & e : std::filesystem::directory_iterator(path))
    ++n;
  return n;
}

/// Threads of this process now (/proc/self/task).
inline std::size_t
threads_now()
{
  return entries("/proc/self/task");
}

/// Open file descriptors of this process now (/proc/self/fd).
inline std::size_t
open_files()
{
  return entries("/proc/self/fd");
}
} // namespace neml2_test
