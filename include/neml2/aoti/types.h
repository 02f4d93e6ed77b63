// The vocabulary shared by every layer: the graphs, named-tensor containers, parameter info.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace neml2::aoti
{
/// @brief The graphs a model may carry, one `.pt2` each.
enum class Graph
{
  forward,
  jvp,
  jacobian,
  param_jacobian,
  param_vjp
};

/// @brief The name of @p g as used in model_meta.json and in messages.
inline const char *
graph_name(Graph g)
{
  switch (g)
  {
    case Graph::forward:
      return "forward";
    case Graph::jvp:
      return "jvp";
    case Graph::jacobian:
      return "jacobian";
    case Graph::param_jacobian:
      return "param_jacobian";
    case Graph::param_vjp:
      return "param_vjp";
  }
  return "?";
}

/// @brief Every graph, in the order of the enumeration.
inline constexpr std::array<Graph, 5> all_graphs{Graph::forward, Graph::jvp, Graph::jacobian,
                                                 Graph::param_jacobian, Graph::param_vjp};

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
