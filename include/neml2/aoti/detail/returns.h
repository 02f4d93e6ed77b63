// A graph's returns back into named results: their shapes checked against model_meta.json,
// the status check of an implicit update, naming the returns, and the empty results of a
// batch of 0 points.
#pragma once

#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/artifact/Meta.h"
#include "neml2/aoti/detail/prepare.h"
#include "neml2/aoti/types.h"

namespace neml2::aoti::detail
{
/**
 * Raise ConvergenceError when a chunk's status says some point did not converge, naming the
 * failed points in the caller's numbering (FailedPoints).
 * @p returns are one chunk's graph returns, rows [@p begin, begin + its size) of the caller's
 * batch of @p batch points; @p where names the chunk.
 */
inline void
check_status(const Meta & meta, const Call & call, const std::vector<at::Tensor> & returns,
             int64_t begin, int64_t batch, const std::string & where)
{
  if (!meta.status)
    return;
  at::Tensor converged, residual;
  for (std::size_t i = 0; i < returns.size(); ++i)
  {
    if (call.spec->returns[i].role == SlotSpec::Role::converged)
      converged = returns[i];
    else if (call.spec->returns[i].role == SlotSpec::Role::residual)
      residual = returns[i];
  }
  if (!converged.defined())
    return;
  const at::Tensor failed = at::nonzero(converged.logical_not().reshape(-1)).reshape(-1);
  const int64_t count = failed.numel();
  if (count == 0)
    return;
  FailedPoints points;
  points.batch = batch;
  points.rows = failed.to(at::kCPU) + begin;
  std::string worst = "unknown";
  if (residual.defined() && residual.numel() == converged.numel())
  {
    points.residual = residual.reshape(-1).index_select(0, failed).to(at::kCPU);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3e", residual.max().item<double>());
    worst = buf;
  }
  else
    points.residual = at::full({count}, std::numeric_limits<double>::quiet_NaN(),
                               at::TensorOptions().dtype(meta.dtype));
  throw ConvergenceError(who(meta) + ": " + std::to_string(count) + " of " +
                             std::to_string(converged.numel()) + " points did not converge" +
                             where + " (worst residual " + worst + ")",
                         std::move(points));
}

/// Per return slot of @p spec: the shape without the batch dimension, -1 first when batched.
inline std::vector<std::vector<int64_t>>
return_shapes(const Meta & meta, const GraphSpec & spec)
{
  std::vector<std::vector<int64_t>> out;
  for (const auto & slot : spec.returns)
  {
    std::vector<int64_t> shape;
    const auto combine = combine_of(meta, slot);
    if (combine == Combine::concat || combine == Combine::status)
      shape.push_back(-1);
    if (combine != Combine::status)
    {
      const auto base = return_base_shape(meta, slot);
      shape.insert(shape.end(), base.begin(), base.end());
    }
    out.push_back(std::move(shape));
  }
  return out;
}

/**
 * Refuse returns whose shape, dtype or device disagree with model_meta.json. A graph file
 * swapped for another one of the same model, or a hand-edited meta, would otherwise hand
 * the caller a tensor of the wrong shape (for one batch size, even the right shape with
 * the wrong numbers); Model::warm_up() runs this once per graph at load.
 */
inline void
check_returns(const Meta & meta, const at::Device & device, const Call & call,
              const std::vector<at::Tensor> & returns, int64_t rows,
              const std::vector<std::vector<int64_t>> & shapes)
{
  for (std::size_t i = 0; i < returns.size(); ++i)
  {
    const at::Tensor & r = returns[i];
    const auto & want = shapes[i];
    const auto role = call.spec->returns[i].role;
    bool ok = r.defined() && r.device() == device &&
              (role == SlotSpec::Role::converged || r.scalar_type() == meta.dtype) &&
              r.dim() == int64_t(want.size());
    for (std::size_t k = 0; ok && k < want.size(); ++k)
      ok = r.size(int64_t(k)) == (want[k] < 0 ? rows : want[k]);
    if (ok)
      continue;
    std::vector<int64_t> declared(want);
    if (!declared.empty() && declared.front() < 0)
      declared.front() = rows;
    const auto & slot = call.spec->returns[i];
    throw FatalError(
        who(meta) + ": graph '" + graph_name(call.graph) + "' return " + std::to_string(i) + " ('" +
        (slot.role == SlotSpec::Role::derivative ? slot.of + ":" + slot.wrt : slot.name) +
        "') is " +
        (r.defined() ? shape_str(r.sizes()) + " " + c10::toString(r.scalar_type()) + " on " +
                           r.device().str()
                     : std::string("undefined")) +
        ", model_meta.json declares " + shape_str(declared) + " " + c10::toString(meta.dtype) +
        " on " + device.str() +
        ": the graph files and model_meta.json do not match; recompile the model with "
        "neml2-compile");
  }
}

/// Results by slot key: (name) for maps, (of, wrt) for derivative blocks.
struct Named
{
  TensorMap map;  ///< outputs, tangents or adjoints
  DerivMap deriv; ///< derivative blocks
};

/// Put positional graph returns under their names, dropping status slots.
inline Named
name_returns(const Call & call, std::vector<at::Tensor> returns)
{
  Named out;
  for (std::size_t i = 0; i < returns.size(); ++i)
  {
    const auto & s = call.spec->returns[i];
    if (call.combine[i] == Combine::status)
      continue;
    if (s.role == SlotSpec::Role::derivative)
      out.deriv[s.of][s.wrt] = std::move(returns[i]);
    else
      out.map[s.name] = std::move(returns[i]);
  }
  return out;
}

/// Drop the batch dimension again when no input had one, then name the returns.
inline Named
finish(const Call & call, std::vector<at::Tensor> returns)
{
  if (!call.batched)
    for (std::size_t i = 0; i < returns.size(); ++i)
      if (call.combine[i] == Combine::concat)
        returns[i] = returns[i].squeeze(0);
  return name_returns(call, std::move(returns));
}

/// Empty (B = 0) results of a call: per-point and batch-independent blocks have a zero-sized
/// batch dimension, adjoints are zeros.
inline std::vector<at::Tensor>
empty_returns(const Meta & meta, const Call & call)
{
  std::vector<at::Tensor> out;
  const auto opts = at::TensorOptions().dtype(meta.dtype).device(call.device);
  for (std::size_t i = 0; i < call.spec->returns.size(); ++i)
  {
    const auto & s = call.spec->returns[i];
    auto shape = return_base_shape(meta, s);
    if (call.combine[i] == Combine::sum)
      out.push_back(at::zeros(shape, opts));
    else if (call.combine[i] == Combine::status)
      out.push_back(at::empty({0}, opts));
    else
    {
      shape.insert(shape.begin(), 0);
      out.push_back(at::empty(shape, opts));
    }
  }
  return out;
}
} // namespace neml2::aoti::detail
