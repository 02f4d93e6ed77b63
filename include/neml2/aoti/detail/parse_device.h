// Parsing and validating device strings ("cpu", "cuda", "cuda:N") for Model and the schedulers.
#pragma once

#include <cctype>
#include <string>
#include <vector>

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
/**
 * Parse the device list of a scheduler's config: each entry as parse_device does (named
 * `<cls>devices[i]` in errors), no device twice, at least one device. "cpu" takes no index,
 * so no device twice also means at most one CPU (one CPU worker already uses every core).
 */
inline std::vector<at::Device>
parse_device_list(const std::vector<std::string> & names, const std::string & cls,
                  bool require_present = true)
{
  if (names.empty())
    throw FatalError(cls + "devices is empty");
  std::vector<at::Device> devices;
  for (std::size_t i = 0; i < names.size(); ++i)
  {
    const auto d =
        parse_device(names[i], cls + "devices[" + std::to_string(i) + "]", require_present);
    for (std::size_t j = 0; j < devices.size(); ++j)
      if (devices[j] == d)
        throw FatalError(cls + "devices[" + std::to_string(i) + "] = '" + names[i] +
                         "' repeats devices[" + std::to_string(j) + "]");
    devices.push_back(d);
  }
  return devices;
}
} // namespace neml2::aoti::detail
