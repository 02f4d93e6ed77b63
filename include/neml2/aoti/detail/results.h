// Where a call's results go: buffers the caller provides, checked against the graph's
// returns, and the model's own result buffers, kept for the next call of the same shape.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/artifact/Meta.h"
#include "neml2/aoti/detail/prepare.h"
#include "neml2/aoti/detail/returns.h"
#include "neml2/aoti/types.h"

namespace neml2::aoti::detail
{
/// The caller's result maps of one call (either may be null: results are returned instead).
struct Into
{
  TensorMap * map = nullptr;  ///< outputs, tangents or adjoints by name
  DerivMap * deriv = nullptr; ///< derivative blocks by [of][wrt]
};

/// How a results map names return slot @p s: `'stress'`, or `'stress'/'strain'` for a block.
inline std::string
result_label(const SlotSpec & s)
{
  return s.role == SlotSpec::Role::derivative ? "'" + s.of + "'/'" + s.wrt + "'"
                                              : "'" + s.name + "'";
}

/// A prepared call and the caller's buffers for its returns (bind_results).
struct Bound
{
  Call call;                       ///< the validated call
  std::vector<at::Tensor> targets; ///< by return slot; undefined where the caller gave none
};

/// The shape return slot @p i of @p call has in the call's results.
inline std::vector<int64_t>
result_shape(const Meta & meta, const Call & call, std::size_t i)
{
  auto shape = return_base_shape(meta, call.spec->returns[i]);
  if (call.combine[i] == Combine::concat && call.batched)
    shape.insert(shape.begin(), call.batch);
  return shape;
}

/// The bytes [first, last) of @p t's storage that its elements can touch (empty for no elements).
inline std::pair<const char *, const char *>
byte_span(const at::Tensor & t)
{
  if (t.numel() == 0 || !t.has_storage())
    return {nullptr, nullptr};
  const auto * base = static_cast<const char *>(t.storage().data());
  int64_t lo = t.storage_offset(), hi = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d)
  {
    const int64_t reach = (t.size(d) - 1) * t.stride(d);
    (reach < 0 ? lo : hi) += reach;
  }
  const auto item = int64_t(t.element_size());
  return {base + lo * item, base + (hi + 1) * item};
}

/// Whether the memory @p a and @p b can touch intersects (conservative: spans, not elements).
inline bool
may_overlap(const at::Tensor & a, const at::Tensor & b)
{
  if (a.device() != b.device())
    return false;
  const auto x = byte_span(a), y = byte_span(b);
  return x.first && y.first && x.first < y.second && y.first < x.second;
}

/**
 * The caller's result buffers of @p call, positional as the graph's returns (undefined where
 * the caller gave none). Every entry of @p into must name a return of the graph and be a
 * tensor of the result's shape, the model's dtype and the inputs' device, whose elements
 * do not overlap each other, another buffer or an input; anything else is a FatalError
 * naming the buffer, raised before anything runs.
 */
inline std::vector<at::Tensor>
bind_results(const Meta & meta, const Call & call, const Into & into)
{
  const auto & returns = call.spec->returns;
  std::vector<at::Tensor> targets(returns.size());
  const std::string head = who(meta) + ": results of '" + graph_name(call.graph) + "': ";
  const auto listing = [&]
  {
    std::string out;
    for (std::size_t i = 0; i < returns.size(); ++i)
      if (call.combine[i] != Combine::status)
        out += (out.empty() ? "" : ", ") + result_label(returns[i]);
    return out;
  };
  const auto bind = [&](const std::string & label, const at::Tensor & t, bool block)
  {
    std::size_t i = 0;
    for (; i < returns.size(); ++i)
      if (call.combine[i] != Combine::status &&
          (returns[i].role == SlotSpec::Role::derivative) == block &&
          result_label(returns[i]) == label)
        break;
    if (i == returns.size())
      throw FatalError(head + "no result " + label + " (the graph returns " + listing() + ")");
    const std::string what = "the buffer for " + label;
    if (!t.defined())
      throw FatalError(head + what + " is an undefined tensor");
    if (t.scalar_type() != meta.dtype)
      throw FatalError(head + what + " has dtype " + c10::toString(t.scalar_type()) +
                       ", expected " + c10::toString(meta.dtype));
    if (t.device() != call.device)
      throw FatalError(head + what + " is on " + t.device().str() + ", expected " +
                       call.device.str() + " (where the inputs are)");
    const auto want = result_shape(meta, call, i);
    if (!t.sizes().equals(want))
      throw FatalError(head + what + " has shape " + shape_str(t.sizes()) + ", expected " +
                       shape_str(want));
    if (at::has_internal_overlap(t) == at::MemOverlap::Yes)
      throw FatalError(head + what + " has elements that share memory (an expanded tensor?)");
    for (std::size_t k = 0; k < call.args.size(); ++k)
      if (call.args[k].defined() && may_overlap(t, call.args[k]))
        throw FatalError(head + what + " overlaps the memory of argument '" +
                         call.spec->args[k].name + "'");
    for (std::size_t k = 0; k < targets.size(); ++k)
      if (targets[k].defined() && may_overlap(t, targets[k]))
        throw FatalError(head + what + " overlaps the buffer for " + result_label(returns[k]));
    targets[i] = t;
  };
  if (into.map)
    for (const auto & [name, t] : *into.map)
      bind("'" + name + "'", t, false);
  if (into.deriv)
    for (const auto & [of, row] : *into.deriv)
      for (const auto & [wrt, t] : row)
        bind("'" + of + "'/'" + wrt + "'", t, true);
  return targets;
}

/// Whether @p a and @p b are the same elements (the same memory, sizes and strides).
inline bool
same_elements(const at::Tensor & a, const at::Tensor & b)
{
  return a.data_ptr() == b.data_ptr() && a.sizes().equals(b.sizes()) &&
         a.strides().equals(b.strides());
}

/// Put the named results @p out into the caller's maps: a buffer the caller provided gets a
/// copy unless it already holds them; every other result is inserted.
inline void
deliver(Named && out, const Into & into)
{
  const auto put = [](TensorMap & dest, TensorMap & from)
  {
    for (auto & [key, t] : from)
    {
      const auto it = dest.find(key);
      if (it == dest.end())
        dest.emplace(key, std::move(t));
      else if (!same_elements(it->second, t))
        it->second.copy_(t);
    }
  };
  if (into.map)
    put(*into.map, out.map);
  if (into.deriv)
    for (auto & [of, row] : out.deriv)
      put((*into.deriv)[of], row);
}

/**
 * The model's own per-point result buffers on the host, one per graph return slot, handed out
 * again when the caller no longer holds the previous one: a host code that drops each result
 * before the next call reuses the same memory instead of page-faulting a fresh allocation.
 * A buffer the caller still holds (any tensor or view of it) is never handed out.
 */
class ResultPool
{
public:
  /// A `(shape, opts)` buffer for return slot @p slot of graph @p g: the kept one when it is
  /// free and fits, else a new one (kept instead).
  at::Tensor take(Graph g, std::size_t slot, at::IntArrayRef shape, const at::TensorOptions & opts)
  {
    at::Tensor & kept = _kept[std::make_tuple(int(g), slot, opts.pinned_memory())];
    const bool free = kept.defined() && kept.use_count() == 1 && kept.storage().use_count() == 1;
    if (!free || !kept.sizes().equals(shape) || kept.dtype() != opts.dtype())
      kept = at::empty(shape, opts);
    return kept;
  }

  /// Drop every kept buffer (memory the caller still holds stays theirs).
  void clear() { _kept.clear(); }

private:
  std::map<std::tuple<int, std::size_t, bool>, at::Tensor> _kept;
};
} // namespace neml2::aoti::detail
