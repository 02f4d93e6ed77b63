// StaticHybrid: one batch spread over a CPU and GPUs at once, greedy by priority and capacity.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/detail/broadcast.h"
#include "neml2/aoti/detail/parse_device.h"
#include "neml2/aoti/schedulers/Scheduler.h"

namespace neml2::aoti
{
/**
 * @brief Spreads one batch over several devices concurrently (thread-per-device pool).
 *
 * Each chunk goes to the highest-priority device that still has spare capacity
 * (`load + batch_size <= capacity`; ties go to the earlier device), so faster
 * devices stay filled. At most one CPU (its graph already saturates the
 * intra-op thread pool) plus distinct GPUs.
 *
 * @code
 * StaticHybrid::Config cfg;
 * cfg.devices     = {"cpu", "cuda:0", "cuda:1"};
 * cfg.batch_sizes = {512, 4096, 4096};
 * auto m = load_model("aoti/model_aoti.i", "model", std::make_shared<StaticHybrid>(cfg));
 * @endcode *
 * @par Thread safety
 * Immutable after construction: handles may share it and dispatch at once.
 */
class StaticHybrid : public Scheduler
{
public:
  /// @brief Several devices run at once: asynchronous execution is required.
  static constexpr bool asynchronous = true;

  /// @brief Configuration; batch_sizes, capacities and priorities broadcast from length 1.
  struct Config
  {
    std::vector<std::string> devices; ///< e.g. {"cpu", "cuda:0"}
    std::vector<int64_t> batch_sizes; ///< points per chunk, per device (> 0)
    std::vector<int64_t> capacities;  ///< points in flight per device; default: one chunk per
                                      ///< worker lane, and at least two chunks
    std::vector<int64_t> priorities;  ///< higher first; default all equal (configuration order)
    int cpu_threads = 0; ///< intra-op threads of the CPU worker; 0: all cores but one per GPU lane
    int gpu_lanes = 0;   ///< worker lanes per GPU; 0: 4
    /// Accept CUDA devices this process does not see: for planning with sim::Simulator only
    /// (a DispatchedModel cannot load them).
    bool virtual_devices = false;
  };

  /// @brief Validate @p config; errors name the class, the field and the index.
  explicit StaticHybrid(Config config) : _config(std::move(config))
  {
    const std::string cls = "StaticHybrid: ";
    const std::size_t n = _config.devices.size();
    _devices = detail::parse_device_list(_config.devices, cls, !_config.virtual_devices);
    _batch_sizes = detail::broadcast(_config.batch_sizes, n, cls, "batch_sizes");
    for (std::size_t i = 0; i < n; ++i)
      if (_batch_sizes[i] <= 0)
        throw FatalError(cls + "batch_sizes[" + std::to_string(i) +
                         "] = " + std::to_string(_batch_sizes[i]) + " must be > 0");
    _gpu_lanes = checked_gpu_lanes(cls, _config.gpu_lanes);
    _capacities = detail::broadcast(_config.capacities, n, cls, "capacities", 0);
    for (std::size_t i = 0; i < n; ++i)
    {
      if (_config.capacities.empty())
        _capacities[i] = default_capacity(_devices[i], _batch_sizes[i], _gpu_lanes);
      else if (_capacities[i] < _batch_sizes[i])
        throw FatalError(cls + "capacities[" + std::to_string(i) +
                         "] = " + std::to_string(_capacities[i]) + " < batch_sizes[" +
                         std::to_string(i) + "] = " + std::to_string(_batch_sizes[i]));
    }
    _priorities = detail::broadcast(_config.priorities, n, cls, "priorities", 0);
    _cpu_threads = checked_cpu_threads(cls, _config.cpu_threads);
  }

  /// @brief The configuration as given.
  const Config & config() const { return _config; }
  /// @copydoc Scheduler::name
  std::string name() const override { return "StaticHybrid"; }

  /// @brief The highest-priority device with spare capacity gets the next chunk (greedy_next()).
  std::optional<Assignment> next(const std::vector<int64_t> & load,
                                 int64_t remaining) const override
  {
    return greedy_next(*this, load, remaining);
  }

  /// @brief A lone device runs a batch that one of its chunks holds as one direct call;
  /// several devices always share the batch.
  std::optional<DeviceIndex> short_circuit(std::uint64_t, int64_t batch,
                                           const at::Device &) const override
  {
    return whole_on_lone_device(*this, batch, _batch_sizes.front());
  }

private:
  Config _config;
};

/// @brief The spec's name for StaticHybrid.
using StaticHybridScheduler = StaticHybrid;
} // namespace neml2::aoti
