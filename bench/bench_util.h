// Small helpers the benchmark programs share: comma lists and timing.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <c10/core/impl/VirtualGuardImpl.h>

#include "neml2/aoti/detail/stats.h"

namespace neml2_bench
{
/// The non-empty items of a comma-separated list.
inline std::vector<std::string>
split_list(const std::string & s)
{
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty())
      out.push_back(item);
  return out;
}

/// Wall time of one call of @p f, in seconds.
inline double
seconds_of(const std::function<void()> & f)
{
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Wait for all work on the first GPU.
inline void
sync_cuda()
{
  c10::impl::VirtualGuardImpl(at::kCUDA).synchronizeDevice(0);
}

/// Median time (detail::median) of @p repeat calls of @p f after @p warm untimed calls.
inline double
median_time(const std::function<void()> & f, int warm, int repeat)
{
  for (int i = 0; i < warm; ++i)
    f();
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i)
    t.push_back(seconds_of(f));
  return neml2::aoti::detail::median(std::move(t));
}
} // namespace neml2_bench
