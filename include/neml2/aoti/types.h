// Named-tensor containers shared by every layer.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace neml2::aoti
{
/// @brief Tensors by variable or parameter name (e.g. "strain", "model.E").
using TensorMap = std::map<std::string, at::Tensor>;

/// @brief Derivative blocks: result[of][wrt], e.g. result["stress"]["strain"].
using DerivMap = std::map<std::string, TensorMap>;

/// @brief One promoted parameter as a model holds it now (`parameters()` of every handle).
struct ParameterInfo
{
  std::string name;                   ///< e.g. "model.E"
  std::vector<int64_t> shape;         ///< the tensor's shape, e.g. {} for a scalar
  at::Device device = at::kCPU;       ///< where the tensor lives
  at::ScalarType dtype = at::kDouble; ///< the model's dtype
};
} // namespace neml2::aoti
