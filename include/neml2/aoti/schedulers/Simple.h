// Simple: the whole batch on one device, in fixed-size chunks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/detail/parse_device.h"
#include "neml2/aoti/schedulers/Scheduler.h"

namespace neml2::aoti
{
/**
 * @brief Sends the whole batch to one device, chunked.
 *
 * Synchronous by default (`DispatchedModel<SyncPolicy<Simple>>`, the chunk loop
 * runs on the calling thread); `AsyncPolicy<Simple>` keeps up to `capacity`
 * points in flight on a worker thread so copies overlap compute.
 *
 * @code
 * auto sched = std::make_shared<Simple>(Simple::Config{"cuda", 4096});
 * auto md = load_model("aoti/model_aoti.i", "model", sched);
 * @endcode *
 * @par Thread safety
 * Immutable after construction: handles may share it and dispatch at once.
 */
class Simple : public Scheduler
{
public:
  /// @brief Synchronous execution is the default for a single device.
  static constexpr bool asynchronous = false;

  /// @brief Configuration of a Simple scheduler.
  struct Config
  {
    std::string device = "cpu"; ///< "cpu", "cuda" or "cuda:N"
    int64_t batch_size = 0;     ///< points per chunk; 0 means no chunking
    int64_t capacity = 0; ///< points in flight under AsyncPolicy; 0: one chunk per worker lane,
                          ///< and at least two chunks
    int gpu_lanes = 0;    ///< worker lanes of a GPU under AsyncPolicy; 0: 4
  };

  /// @brief Validate @p config; errors name the class and the field.
  explicit Simple(Config config) : _config(std::move(config))
  {
    _devices = {detail::parse_device(_config.device, "Simple: device")};
    if (_config.batch_size < 0)
      throw FatalError("Simple: batch_size = " + std::to_string(_config.batch_size) +
                       " must be >= 0 (0 means no chunking)");
    if (_config.capacity < 0 || (_config.capacity > 0 && _config.capacity < _config.batch_size))
      throw FatalError("Simple: capacity = " + std::to_string(_config.capacity) +
                       " < batch_size = " + std::to_string(_config.batch_size));
    _gpu_lanes = checked_gpu_lanes("Simple: ", _config.gpu_lanes);
    _batch_sizes = {_config.batch_size};
    _capacities = {_config.capacity > 0
                       ? _config.capacity
                       : default_capacity(device(), _config.batch_size, _gpu_lanes)};
    _priorities = {0};
  }

  /// @brief The configuration as given.
  const Config & config() const { return _config; }
  /// @brief The one device.
  const at::Device & device() const { return _devices.front(); }
  /// @copydoc Scheduler::name
  std::string name() const override { return "Simple"; }

  /// @brief Chunks of batch_size in turn, at most capacity points in flight (greedy_next()).
  std::optional<Assignment> next(const std::vector<int64_t> & load,
                                 int64_t remaining) const override
  {
    return greedy_next(*this, load, remaining);
  }

  /// @brief The whole batch in one direct call when one chunk holds it (or batch_size is 0).
  std::optional<DeviceIndex> short_circuit(std::uint64_t, int64_t batch,
                                           const at::Device &) const override
  {
    return whole_on_lone_device(*this, batch, _config.batch_size);
  }

private:
  Config _config;
};

/// @brief The spec's name for Simple.
using SimpleScheduler = Simple;
} // namespace neml2::aoti
