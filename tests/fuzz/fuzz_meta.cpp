// libFuzzer target: the model_meta.json reader (detail::parse_json, then read_meta on the
// same bytes written as <tmp>/cpu/model_meta.json next to an empty forward.pt2). Any
// input must give a Meta or a FatalError; a crash or undefined behaviour is a finding.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "neml2/aoti/artifact/read_meta.h"

namespace
{
/// Where the per-input file goes: memory when the system has it (truncating a file on a
/// disk can cost milliseconds, which would slow the fuzzer a hundredfold).
std::filesystem::path
scratch()
{
  std::error_code ec;
  return std::filesystem::is_directory("/dev/shm", ec) ? std::filesystem::path("/dev/shm")
                                                       : std::filesystem::temp_directory_path();
}

/// The per-device folder of this process, with graph files that read_meta can find;
/// removed at exit.
struct Folder
{
  Folder() : root(scratch() / ("neml2_fuzz_meta_" + std::to_string(::getpid()))), cpu(root / "cpu")
  {
    std::filesystem::create_directories(cpu);
    for (const char * g :
         {"forward.pt2", "jvp.pt2", "jacobian.pt2", "param_jacobian.pt2", "param_vjp.pt2"})
      std::ofstream(cpu / g, std::ios::binary);
  }
  ~Folder()
  {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }
  std::filesystem::path root, cpu;
};

const std::filesystem::path &
folder()
{
  static const Folder f;
  return f.cpu;
}
} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t * data, std::size_t size)
{
  namespace aoti = neml2::aoti;
  const std::string text(reinterpret_cast<const char *>(data), size);
  try
  {
    const aoti::detail::Json j = aoti::detail::parse_json(text, "fuzz");
    (void)aoti::detail::kind_name(aoti::detail::kind_of(j));
  }
  catch (const aoti::FatalError &)
  {
  }

  std::ofstream(folder() / "model_meta.json", std::ios::binary | std::ios::trunc) << text;
  try
  {
    const aoti::Meta m = aoti::read_meta(folder(), "cpu");
    (void)m.graphs.size();
  }
  catch (const aoti::FatalError &)
  {
  }
  return 0;
}
