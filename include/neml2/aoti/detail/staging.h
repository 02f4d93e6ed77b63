// One chunk's arguments on its device: sliced, and staged through page-locked memory on
// the way to a GPU.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "neml2/aoti/detail/env.h"
#include "neml2/aoti/detail/prepare.h"

namespace neml2::aoti::detail
{
/**
 * The argument @p i of @p call for the rows [begin, end), on @p device, in the
 * layout a graph expects: batched and contiguous.
 */
inline at::Tensor
chunk_arg(const Call & call, std::size_t i, int64_t begin, int64_t end, const at::Device & device)
{
  const at::Tensor & a = call.args[i];
  if (call.arg_batched[i])
  {
    at::Tensor s = (begin == 0 && end == a.size(0)) ? a : a.slice(0, begin, end);
    if (device.is_cuda() && s.device().is_cpu() && !s.is_pinned())
    {
      // A pageable upload goes through the driver's single-threaded staging (a quarter
      // of the pinned bandwidth, and it serialises the lanes of a GPU). Stage through
      // page-locked memory instead: the caching host allocator reuses the buffer once
      // the upload recorded on this stream is done, and the CPU copy into it is
      // parallel. The upload is then asynchronous on the stream the graph runs on.
      // With NEML2_STAGING_PIECE_BYTES set, the copy and the upload go piece by piece, so
      // that the upload of one piece overlaps the copy of the next.
      at::Tensor staged = at::empty(s.sizes(), s.options().pinned_memory(true));
      const int64_t rows = s.size(0);
      const int64_t row_bytes = rows > 0 ? int64_t(s.nbytes()) / rows : 1;
      const auto piece = positive_from_env("NEML2_STAGING_PIECE_BYTES");
      if (!piece || rows * row_bytes <= int64_t(*piece))
      {
        staged.copy_(s);
        return staged.to(device, /*non_blocking=*/true);
      }
      at::Tensor out = at::empty(s.sizes(), s.options().device(device));
      const int64_t step = std::max<int64_t>(1, int64_t(*piece) / std::max<int64_t>(1, row_bytes));
      for (int64_t r = 0; r < rows; r += step)
      {
        const int64_t e = std::min(rows, r + step);
        at::Tensor part = staged.slice(0, r, e);
        part.copy_(s.slice(0, r, e));
        out.slice(0, r, e).copy_(part, /*non_blocking=*/true);
      }
      return out;
    }
    return s.to(device).contiguous();
  }
  std::vector<int64_t> shape{end - begin};
  shape.insert(shape.end(), a.sizes().begin(), a.sizes().end());
  return a.to(device).expand(shape).contiguous();
}

} // namespace neml2::aoti::detail
