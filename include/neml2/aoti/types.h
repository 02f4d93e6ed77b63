// Named-tensor containers shared by every layer.
#pragma once

#include <map>
#include <string>

#include <ATen/ATen.h>

namespace neml2::aoti
{
/// @brief Tensors by variable or parameter name (e.g. "strain", "model.E").
using TensorMap = std::map<std::string, at::Tensor>;

/// @brief Derivative blocks: result[of][wrt], e.g. result["stress"]["strain"].
using DerivMap = std::map<std::string, TensorMap>;
} // namespace neml2::aoti
