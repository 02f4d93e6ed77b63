// Gather: per-chunk graph returns collected into whole-batch results (tensor bookkeeping,
// no devices or threads of its own).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "neml2/aoti/detail/prepare.h"
#include "neml2/aoti/detail/results.h"

namespace neml2::aoti
{
/**
 * @brief Collects per-chunk graph returns into whole-batch results.
 *
 * Per-point returns are written into `(B, *base)` tensors on the inputs' device (no final
 * concatenation copy): the caller's buffers where given, else buffers from a ResultPool
 * or new ones. Batch-independent returns are kept once; adjoints are kept per chunk and
 * summed in chunk order at the end so the result does not depend on which device finished
 * first. Chunks may be added from several threads.
 */
class Gather
{
public:
  /**
   * @brief Prepare the outputs of @p call for a batch of call.batch points.
   * @param meta the model's metadata (dtype, return shapes)
   * @param call the prepared call whose returns are gathered; must outlive the Gather
   * @param pinned allocate per-point results in page-locked host memory, so chunks
   *        computed on a GPU come back at full copy bandwidth (CPU inputs only)
   * @param targets the caller's buffers by return slot (detail::bind_results), or null
   * @param pool where host results come from when the caller gave no buffer, or null
   */
  Gather(const Meta & meta, const detail::Call & call, bool pinned = false,
         const std::vector<at::Tensor> * targets = nullptr, detail::ResultPool * pool = nullptr)
      : _call(call)
  {
    const auto opts = at::TensorOptions()
                          .dtype(meta.dtype)
                          .device(call.device)
                          .pinned_memory(pinned && call.device.is_cpu());
    const std::size_t n = call.spec->returns.size();
    _targets.resize(n);
    _pageable.assign(n, false);
    for (std::size_t i = 0; i < n; ++i)
    {
      if (targets && (*targets)[i].defined())
      {
        _targets[i] = (*targets)[i];
        // A device-to-host copy into pageable memory runs at a fraction of the pinned rate:
        // such chunks go through a page-locked staging buffer (add()).
        _pageable[i] = call.device.is_cpu() && !_targets[i].is_pinned();
      }
      if (call.combine[i] != detail::Combine::concat)
      {
        // A batch-independent block goes into the caller's buffer (add()); an adjoint is
        // summed at the end (finish()).
        _results.push_back(call.combine[i] == detail::Combine::once ? _targets[i] : at::Tensor());
        continue;
      }
      if (_targets[i].defined())
      {
        _results.push_back(call.batched ? _targets[i] : _targets[i].unsqueeze(0));
        continue;
      }
      auto shape = detail::return_base_shape(meta, call.spec->returns[i]);
      shape.insert(shape.begin(), call.batch);
      _results.push_back(pool && call.device.is_cpu() ? pool->take(call.graph, i, shape, opts)
                                                      : at::empty(shape, opts));
    }
  }

  /**
   * @brief The rows [begin, end) of the per-point results, for a chunk on @p device whose
   * graph stores its returns in place (Model::writes_into): one buffer per per-point return
   * slot in order, or none when a result is elsewhere or its rows are not contiguous (the
   * chunk then returns its own tensors and add() copies them).
   */
  std::vector<at::Tensor> destinations(int64_t begin, int64_t end, const at::Device & device) const
  {
    std::vector<at::Tensor> out;
    if (!_call.batched)
      return out;
    for (std::size_t i = 0; i < _results.size(); ++i)
    {
      if (_call.combine[i] != detail::Combine::concat)
        continue;
      const at::Tensor & whole = _results[i];
      if (!whole.defined() || whole.device() != device)
        return {};
      at::Tensor rows = whole.slice(0, begin, end);
      if (!rows.is_contiguous())
        return {};
      out.push_back(std::move(rows));
    }
    return out;
  }

  /// @brief Merge the returns of chunk number @p ordinal, rows [begin, end).
  void add(std::size_t ordinal, int64_t begin, int64_t end, const std::vector<at::Tensor> & returns)
  {
    for (std::size_t i = 0; i < returns.size(); ++i)
    {
      switch (_call.combine[i])
      {
        case detail::Combine::concat:
          copy_into(i, _results[i].slice(0, begin, end), returns[i]);
          break;
        case detail::Combine::once:
          if (ordinal == 0)
          {
            if (_targets[i].defined())
              copy_into(i, _targets[i], returns[i]);
            else
            {
              at::Tensor once = returns[i].to(_call.device);
              const std::lock_guard<std::mutex> lock(_mutex);
              _results[i] = std::move(once);
            }
          }
          break;
        case detail::Combine::sum:
        {
          at::Tensor part = returns[i].to(_call.device);
          const std::lock_guard<std::mutex> lock(_mutex);
          _partials[i][ordinal] = std::move(part);
          break;
        }
        case detail::Combine::status:
          break;
      }
    }
  }

  /// @brief The whole-batch returns, positional as the graph's (status slots undefined);
  /// per-point and batch-independent ones are the caller's buffers where given.
  std::vector<at::Tensor> finish()
  {
    for (auto & [i, parts] : _partials)
    {
      at::Tensor total;
      for (auto & [ordinal, p] : parts)
        total = total.defined() ? total.add_(p) : p.clone();
      if (_targets[i].defined())
        total = _targets[i].copy_(total);
      _results[i] = total;
    }
    return std::move(_results);
  }

private:
  /// dest.copy_(src), through a page-locked buffer when src is on a GPU and dest is the
  /// caller's pageable host memory.
  void copy_into(std::size_t slot, const at::Tensor & dest, const at::Tensor & src)
  {
    if (detail::same_elements(dest, src))
      return; // the graph stored the chunk in place (destinations())
    if (_pageable[slot] && src.is_cuda())
    {
      at::Tensor staged =
          at::empty(src.sizes(), src.options().device(at::kCPU).pinned_memory(true));
      staged.copy_(src);
      dest.copy_(staged);
      return;
    }
    dest.copy_(src);
  }

  const detail::Call & _call;
  std::vector<at::Tensor> _results;
  std::vector<at::Tensor> _targets; // the caller's buffers by slot (undefined: none)
  std::vector<bool> _pageable;      // per slot: the caller's buffer is pageable host memory
  std::map<std::size_t, std::map<std::size_t, at::Tensor>> _partials;
  std::mutex _mutex;
};
} // namespace neml2::aoti
