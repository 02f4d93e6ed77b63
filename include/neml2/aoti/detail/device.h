// Device-string validation shared by Model and the schedulers.
#pragma once

#include <cctype>
#include <string>

#include <ATen/ATen.h>
#include <ATen/detail/CUDAHooksInterface.h>

#include "neml2/aoti/Exception.h"

namespace neml2::aoti::detail
{
/// Number of CUDA devices visible to this process (0 with a CPU-only LibTorch).
inline int
cuda_device_count()
{
  return at::detail::getCUDAHooks().getNumGPUs();
}

/**
 * Parse "cpu", "cuda" or "cuda:N" strictly: anything else (other device types,
 * "cpu:1", "cuda:-1", spaces) is a FatalError that starts with @p who.
 * "cuda" means "cuda:0". The device must exist when @p require_present.
 */
inline at::Device
parse_device(const std::string & s, const std::string & who, bool require_present = true)
{
  const auto bad = [&](const std::string & why) -> FatalError
  { return FatalError(who + ": invalid device '" + s + "': " + why); };
  if (s == "cpu")
    return at::Device(at::kCPU);
  if (s.rfind("cuda", 0) != 0)
    throw bad("only 'cpu', 'cuda' and 'cuda:N' are supported");
  int index = 0;
  if (s.size() > 4)
  {
    if (s[4] != ':' || s.size() == 5 || s.size() > 8)
      throw bad("expected 'cuda' or 'cuda:N'");
    index = 0;
    for (std::size_t i = 5; i < s.size(); ++i)
    {
      if (!std::isdigit(static_cast<unsigned char>(s[i])))
        throw bad("expected 'cuda' or 'cuda:N'");
      index = index * 10 + (s[i] - '0');
    }
  }
  if (require_present)
  {
    const int n = cuda_device_count();
    if (index >= n)
      throw bad(n == 0 ? std::string("no CUDA device is visible to this process")
                       : "this process sees " + std::to_string(n) + " CUDA device(s)");
  }
  return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index));
}

/// "cpu" or "cuda:N".
inline std::string
device_string(const at::Device & d)
{
  return d.str();
}
} // namespace neml2::aoti::detail
