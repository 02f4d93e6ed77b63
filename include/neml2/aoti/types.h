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

/**
 * @brief The run-time settings of one Newton solver of an implicit model (a `[Solvers]`
 * block of its input file): a point has converged once the 2-norm of its residual is at
 * most `abs_tol`, or at most `rel_tol` times its norm at the initial guess; it stops after
 * `max_its` updates either way.
 */
struct SolverSettings
{
  double abs_tol = 0;  ///< absolute tolerance, finite and >= 0
  double rel_tol = 0;  ///< relative tolerance, finite and >= 0
  int64_t max_its = 0; ///< iteration cap, >= 1
};

/// @brief One promoted parameter as a model holds it now (`parameters()` of every handle).
struct ParameterInfo
{
  std::string name;                   ///< e.g. "model.E"
  std::vector<int64_t> shape;         ///< the tensor's shape, e.g. {} for a scalar
  at::Device device = at::kCPU;       ///< where the tensor lives
  at::ScalarType dtype = at::kDouble; ///< the model's dtype
};
} // namespace neml2::aoti
