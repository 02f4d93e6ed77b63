// Split and merge rules along the batch dimension: pure tensor bookkeeping, no devices or threads.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "neml2/aoti/detail/call.h"

namespace neml2::aoti
{
/**
 * @brief Fixed-size chunks [begin, end) covering [0, batch).
 *
 * @p chunk_size 0 means one chunk; the last chunk is the remainder.
 * @code
 * split(10, 4); // {{0, 4}, {4, 8}, {8, 10}}
 * @endcode
 */
inline std::vector<std::pair<int64_t, int64_t>>
split(int64_t batch, int64_t chunk_size)
{
  std::vector<std::pair<int64_t, int64_t>> out;
  const int64_t step = chunk_size > 0 ? chunk_size : batch;
  for (int64_t b = 0; b < batch; b += step)
    out.emplace_back(b, std::min(batch, b + step));
  return out;
}

/**
 * @brief Collects per-chunk graph returns into whole-batch results.
 *
 * Per-point returns are written into preallocated `(B, *base)` tensors on the
 * inputs' device (no final concatenation copy); batch-independent returns are
 * kept once; adjoints are kept per chunk and summed in chunk order at the end
 * so the result does not depend on which device finished first. Chunks may be
 * added from several threads.
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
   */
  Gather(const Meta & meta, const detail::Call & call, bool pinned = false) : _call(call)
  {
    const auto opts = at::TensorOptions().dtype(meta.dtype).device(call.device).pinned_memory(
        pinned && call.device.is_cpu());
    for (std::size_t i = 0; i < call.spec->returns.size(); ++i)
    {
      if (call.combine[i] == detail::Combine::concat)
      {
        auto shape = detail::return_base_shape(meta, call.spec->returns[i]);
        shape.insert(shape.begin(), call.batch);
        _results.push_back(at::empty(shape, opts));
      }
      else
        _results.emplace_back();
    }
  }

  /// @brief Merge the returns of chunk number @p ordinal, rows [begin, end).
  void add(std::size_t ordinal, int64_t begin, int64_t end, const std::vector<at::Tensor> & returns)
  {
    for (std::size_t i = 0; i < returns.size(); ++i)
    {
      switch (_call.combine[i])
      {
        case detail::Combine::concat:
          _results[i].slice(0, begin, end).copy_(returns[i]);
          break;
        case detail::Combine::once:
          if (ordinal == 0)
          {
            const std::lock_guard<std::mutex> lock(_mutex);
            _results[i] = returns[i].to(_call.device);
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

  /// @brief The whole-batch returns, positional as the graph's (status slots undefined).
  std::vector<at::Tensor> finish()
  {
    for (auto & [i, parts] : _partials)
    {
      at::Tensor total;
      for (auto & [ordinal, p] : parts)
        total = total.defined() ? total.add_(p) : p.clone();
      _results[i] = total;
    }
    return std::move(_results);
  }

private:
  const detail::Call & _call;
  std::vector<at::Tensor> _results;
  std::map<std::size_t, std::map<std::size_t, at::Tensor>> _partials;
  std::mutex _mutex;
};
} // namespace neml2::aoti
