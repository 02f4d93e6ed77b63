// Inputs for the AdaptiveHybrid benchmarks: a plausible state for any compiled model.
#pragma once

#include <string>
#include <vector>

#include "neml2/aoti.h"

namespace neml2_bench
{
/**
 * @brief Inputs of batch @p b in host memory for every input @p meta declares:
 * strains and other increments small and random (uniform, @p range wide around zero),
 * history ("old_*", "*~1") zero, the time ("t", "*time*") one, so time steps are one. The
 * default range suits the elastic and viscoplastic models; a stiffer implicit model (the
 * single crystal) needs half of it for Newton to converge from rest at every point.
 */
inline neml2::aoti::TensorMap
inputs_for(const neml2::aoti::Meta & meta, int64_t b, double range = 2e-3)
{
  neml2::aoti::TensorMap in;
  const auto opt = at::TensorOptions().dtype(meta.dtype);
  for (const auto & v : meta.inputs)
  {
    std::vector<int64_t> shape{b};
    shape.insert(shape.end(), v.shape.begin(), v.shape.end());
    const bool old = v.name.rfind("old_", 0) == 0 ||
                     (v.name.size() > 2 && v.name.compare(v.name.size() - 2, 2, "~1") == 0);
    if (!old && (v.name == "t" || v.name.find("time") != std::string::npos))
      in[v.name] = at::ones(shape, opt);
    else if (old)
      in[v.name] = at::zeros(shape, opt);
    else
      in[v.name] = (at::rand(shape, opt) - 0.5) * range;
  }
  return in;
}
} // namespace neml2_bench
