// MPISimple: each MPI rank drives one device chosen by its rank within its node.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/detail/parse_device.h"
#include "neml2/aoti/schedulers/Scheduler.h"

#ifdef NEML2_MPI
#include <mpi.h>
#endif

namespace neml2::aoti
{
/**
 * @brief For MPI jobs: each rank picks one device from a list by its rank within
 * its node, then chunks exactly like Simple.
 *
 * Ranks are grouped by exact host name (`MPI_Get_processor_name`); a rank's
 * local rank is its index among the ranks of its host, in the communicator's
 * rank order, and `local_rank % devices.size()` indexes the list. With m ranks
 * on a node and n devices, m == n gives one device per rank, m > n shares
 * devices round-robin, and m < n is an error.
 *
 * Construction is collective over the communicator: every rank of it must
 * construct the scheduler. An error on any rank (a malformed device, m < n, a
 * chosen device that this rank cannot see) is thrown on every rank alike, as the
 * same FatalError naming the failing ranks, so no rank is left waiting in a
 * collective. A listed device is required to exist only on the ranks that
 * choose it. The communicator is read during construction only.
 *
 * Requires a build with `-DNEML2_MPI=ON` and `MPI_Init` called by the host.
 * For tests only, the environment variable `NEML2_MPI_HOSTNAME` replaces a
 * rank's host name, so that one machine can play several nodes.
 *
 * @code
 * MPISimple::Config cfg;
 * cfg.devices     = {"cuda:0", "cuda:1"};
 * cfg.batch_sizes = {4096};
 * cfg.comm        = &sub;   // omit for MPI_COMM_WORLD
 * auto m = load_model("aoti/model_aoti.i", "model", std::make_shared<MPISimple>(cfg));
 * @endcode
 *
 * @par Thread safety
 * The constructor is collective over the communicator (every rank constructs it, from one
 * thread each). Immutable afterwards: handles may share it and dispatch at once.
 */
class MPISimple : public Scheduler
{
public:
  /// @brief One device per rank: the chunk loop runs on the calling thread.
  static constexpr bool asynchronous = false;

#ifdef NEML2_MPI
  /// @brief The communicator handle type.
  using Comm = MPI_Comm;
#else
  /// @brief The communicator handle type (opaque without MPI support).
  using Comm = void;
#endif

  /// @brief Configuration of an MPISimple scheduler.
  struct Config
  {
    std::vector<std::string> devices; ///< devices to choose from, e.g. {"cuda:0", "cuda:1"}
    std::vector<int64_t> batch_sizes; ///< points per chunk, per device or one for all (0: no chunking)
    const Comm * comm = nullptr;      ///< communicator; nullptr means MPI_COMM_WORLD
  };

  /// @brief Collective: validate @p config and pick this rank's device.
  explicit MPISimple(Config config);

  /// @brief The configuration as given.
  const Config & config() const { return _config; }
  /// @brief This rank's device.
  const at::Device & device() const { return _devices.front(); }
  /// @brief This rank's index within its node.
  int local_rank() const { return _local_rank; }
  /// @brief Number of ranks on this rank's node (within the communicator).
  int local_size() const { return _local_size; }
  /// @brief The host name this rank was grouped by.
  const std::string & host() const { return _host; }
  /// @copydoc Scheduler::name
  std::string name() const override { return "MPISimple"; }

  /// @brief Chunks of this rank's batch size in turn, as Simple does (greedy_next()).
  std::optional<Assignment> next(const std::vector<int64_t> & load,
                                 int64_t remaining) const override
  {
    return greedy_next(*this, load, remaining);
  }

  /// @brief The whole batch in one direct call when one chunk holds it (or the rank's batch
  /// size is 0), as Simple does.
  std::optional<DeviceIndex> short_circuit(std::uint64_t, int64_t batch,
                                           const at::Device &) const override
  {
    return whole_on_lone_device(*this, batch, _batch_sizes.front());
  }

private:
  Config _config;
  int _local_rank = 0;
  int _local_size = 1;
  std::string _host;
};

#ifndef NEML2_MPI
inline MPISimple::MPISimple(Config config) : _config(std::move(config))
{
  throw FatalError("MPISimple: this program was built without MPI support: "
                   "reconfigure NEML2 with -DNEML2_MPI=ON and link MPI");
}
#endif

/// @brief The spec's name for MPISimple.
using MPISimpleScheduler = MPISimple;
} // namespace neml2::aoti

#ifdef NEML2_MPI
#include "neml2/aoti/schedulers/detail/MPISimple_impl.h"
#endif
