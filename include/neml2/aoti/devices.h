// Which devices this process can dispatch to, spelled as the scheduler configs take them.
#pragma once

#include <string>
#include <vector>

#include "neml2/aoti/detail/parse_device.h"

namespace neml2::aoti
{
/**
 * @brief The devices visible to this process: "cpu", then "cuda:0" to "cuda:N-1" for
 * the N CUDA devices it sees (none with a CPU-only LibTorch, or with
 * `CUDA_VISIBLE_DEVICES=""`).
 *
 * Each string is accepted as is in a scheduler config's `devices`, and the list
 * starts with the CPU, so `devices().size() > 1` says whether a GPU is there.
 * Asked anew on each call (a cheap query of the CUDA runtime).
 *
 * @code
 * AdaptiveHybrid::Config cfg;
 * cfg.devices = neml2::aoti::devices(); // the CPU and every GPU
 * const bool has_gpu = neml2::aoti::devices().size() > 1;
 * @endcode
 */
inline std::vector<std::string>
devices()
{
  const int gpus = detail::cuda_device_count();
  std::vector<std::string> out{"cpu"};
  out.reserve(std::size_t(gpus) + 1);
  for (int k = 0; k < gpus; ++k)
    out.push_back("cuda:" + std::to_string(k));
  return out;
}
} // namespace neml2::aoti
