// libFuzzer target: the stub reader (parse_hit, then read_stub on the same bytes in a file).
// Any input must give a result or a FatalError; a crash, a leak or undefined behaviour
// (ASan/UBSan) is a finding.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "neml2/aoti/artifact/Stub.h"

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

/// A folder of this process for the stub file, removed at exit.
struct Folder
{
  Folder() : path(scratch() / ("neml2_fuzz_stub_" + std::to_string(::getpid())))
  {
    std::filesystem::create_directories(path);
  }
  ~Folder()
  {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::filesystem::path path;
};

/// The stub file, rewritten for every input.
const std::filesystem::path &
stub_path()
{
  static const Folder folder;
  static const std::filesystem::path p = folder.path / "model_aoti.i";
  return p;
}
} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t * data, std::size_t size)
{
  using namespace neml2::aoti;
  const std::string text(reinterpret_cast<const char *>(data), size);
  try
  {
    const HitSection root = parse_hit(text, "fuzz.i");
    // Walk what was parsed, as read_stub does.
    if (const HitSection * models = root.section("Models"))
      for (const auto & s : models->sections)
        if (s.field("type") && s.field("artifact_path"))
          (void)s.field("artifact_path")->value.size();
  }
  catch (const FatalError &)
  {
  }

  std::ofstream(stub_path(), std::ios::binary | std::ios::trunc) << text;
  try
  {
    const StubEntry e = read_stub(stub_path().string(), "model");
    (void)e.artifact_folder.string().size();
  }
  catch (const FatalError &)
  {
  }
  return 0;
}
