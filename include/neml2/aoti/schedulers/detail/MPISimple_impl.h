// The MPI side of MPISimple: group the ranks by host, pick this rank's device,
// and agree on failure across the communicator so that no rank is left waiting.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <mpi.h>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/detail/broadcast.h"
#include "neml2/aoti/detail/parse_device.h"
#include "neml2/aoti/schedulers/MPISimple.h"

namespace neml2::aoti
{
namespace detail
{
/**
 * Test-only: when this environment variable is set and non-empty, a rank reports
 * its value instead of its processor name, so that one machine can play several
 * nodes. It is read when a scheduler is constructed. Do not set it in production:
 * ranks that share a GPU would then be told they are on different nodes.
 */
inline constexpr const char * mpi_hostname_variable = "NEML2_MPI_HOSTNAME";

/// Where a rank sits among the ranks of its node.
struct NodePlacement
{
  int local_rank = 0; ///< index among the ranks with the same host, in rank order
  int local_size = 0; ///< number of ranks with the same host
};

/// Place rank @p rank among @p hosts (one host name per rank of the communicator).
inline NodePlacement
node_placement(const std::vector<std::string> & hosts, int rank)
{
  NodePlacement p;
  const std::string & mine = hosts.at(static_cast<std::size_t>(rank));
  for (std::size_t r = 0; r < hosts.size(); ++r)
    if (hosts[r] == mine)
    {
      if (static_cast<int>(r) < rank)
        ++p.local_rank;
      ++p.local_size;
    }
  return p;
}

/// "0, 2, 5" for the ranks whose flag is set.
inline std::string
rank_list(const std::vector<int> & flags)
{
  std::string s;
  for (std::size_t r = 0; r < flags.size(); ++r)
    if (flags[r])
      s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

/**
 * Collective: if any rank of @p comm passes a non-empty @p error, every rank
 * throws the same FatalError, carrying the message of the lowest failing rank
 * and the list of failing ranks. Otherwise every rank returns.
 */
inline void
agree_or_throw(MPI_Comm comm, const std::string & error)
{
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int failed = error.empty() ? 0 : 1;
  std::vector<int> flags(static_cast<std::size_t>(size), 0);
  MPI_Allgather(&failed, 1, MPI_INT, flags.data(), 1, MPI_INT, comm);
  const auto first = std::find(flags.begin(), flags.end(), 1);
  if (first == flags.end())
    return;
  const int root = static_cast<int>(first - flags.begin());

  // The root's message, sent to everyone so that the error reads alike on every rank.
  int length = rank == root ? static_cast<int>(error.size()) : 0;
  MPI_Bcast(&length, 1, MPI_INT, root, comm);
  std::string message(static_cast<std::size_t>(length), '\0');
  if (rank == root)
    message = error;
  if (length > 0)
    MPI_Bcast(message.data(), length, MPI_CHAR, root, comm);
  throw FatalError(message + " (raised on rank(s) " + rank_list(flags) + " of " +
                   std::to_string(size) + " in the scheduler's communicator)");
}
} // namespace detail

inline MPISimple::MPISimple(Config config) : _config(std::move(config))
{
  const std::string cls = "MPISimple: ";

  // Misuse that no other rank can share: report it here, before any collective.
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    throw FatalError(cls + "MPI is not initialized: MPI_Init (or MPI_Init_thread) must be called "
                           "first, before constructing the scheduler");
  MPI_Finalized(&finalized);
  if (finalized)
    throw FatalError(cls + "MPI_Finalize was already called");
  const MPI_Comm comm = _config.comm ? *_config.comm : MPI_COMM_WORLD;
  if (comm == MPI_COMM_NULL)
    throw FatalError(cls + "comm is MPI_COMM_NULL: only the ranks of a communicator may "
                           "construct a scheduler over it");
  int inter = 0;
  MPI_Comm_test_inter(comm, &inter);
  if (inter)
    throw FatalError(cls + "comm is an intercommunicator; pass an intracommunicator");

  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);

  // Everything below may fail on some ranks only, so a failure is recorded and
  // then agreed on: every rank reaches every collective, and all throw alike.
  std::string error;
  const auto record = [&](const std::string & e)
  {
    if (error.empty())
      error = e;
  };

  // 1. The configuration, syntax only: a device need only exist on the rank that uses it.
  const std::size_t n = _config.devices.size();
  std::vector<at::Device> devices;
  std::vector<int64_t> bs; // one batch size per device
  try
  {
    devices = detail::parse_device_list(_config.devices, cls, false);
    bs = detail::broadcast(_config.batch_sizes, n, cls, "batch_sizes");
    for (std::size_t i = 0; i < bs.size(); ++i)
      if (bs[i] < 0)
        throw FatalError(cls + "batch_sizes[" + std::to_string(i) + "] = " + std::to_string(bs[i]) +
                         " must be >= 0 (0 means no chunking)");
  }
  catch (const FatalError & e)
  {
    record(e.what());
  }

  // 2. Host names, exact, in fixed-size slots (a longer override is an error, never truncated).
  constexpr int slot = MPI_MAX_PROCESSOR_NAME;
  std::vector<char> mine(static_cast<std::size_t>(slot), '\0');
  const char * override_host = std::getenv(detail::mpi_hostname_variable);
  if (override_host && *override_host)
  {
    if (std::strlen(override_host) >= static_cast<std::size_t>(slot))
      record(cls + detail::mpi_hostname_variable + " is longer than " + std::to_string(slot - 1) +
             " characters");
    else
      std::memcpy(mine.data(), override_host, std::strlen(override_host));
  }
  else
  {
    int length = 0;
    MPI_Get_processor_name(mine.data(), &length);
  }
  std::vector<char> all(static_cast<std::size_t>(slot) * static_cast<std::size_t>(size), '\0');
  MPI_Allgather(mine.data(), slot, MPI_CHAR, all.data(), slot, MPI_CHAR, comm);
  std::vector<std::string> hosts(static_cast<std::size_t>(size));
  for (std::size_t r = 0; r < hosts.size(); ++r)
  {
    const char * s = all.data() + r * static_cast<std::size_t>(slot);
    hosts[r] = std::string(s, std::find(s, s + slot, '\0'));
  }
  const auto placement = detail::node_placement(hosts, rank);
  _local_rank = placement.local_rank;
  _local_size = placement.local_size;
  _host = hosts[static_cast<std::size_t>(rank)];
  const std::string & host = _host;

  // 3. The ranks of a node must choose from lists of one length, or they would overlap.
  const int my_n = static_cast<int>(std::min<std::size_t>(n, std::numeric_limits<int>::max()));
  std::vector<int> counts(static_cast<std::size_t>(size), 0);
  MPI_Allgather(&my_n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  for (std::size_t r = 0; r < hosts.size(); ++r)
    if (hosts[r] == host && counts[r] != my_n)
    {
      record(cls + "devices has " + std::to_string(my_n) + " entries on rank " +
             std::to_string(rank) + " but " + std::to_string(counts[r]) + " on rank " +
             std::to_string(r) + " of the same host '" + host +
             "'; every rank of a node must pass the same devices");
      break;
    }

  // 4. No idle device: every listed device needs a rank on this node.
  if (error.empty() && static_cast<std::size_t>(_local_size) < n)
    record(cls + std::to_string(_local_size) + " rank(s) on host '" + host + "' for " +
           std::to_string(n) +
           " devices: idle devices are not allowed; launch more ranks per node or pass fewer "
           "devices");

  // 5. This rank's device, round-robin over the list, which must exist here.
  const std::size_t index = n > 0 ? static_cast<std::size_t>(_local_rank) % n : 0;
  if (error.empty())
  {
    try
    {
      devices[index] = detail::parse_device(_config.devices[index],
                                            cls + "devices[" + std::to_string(index) + "]", true);
    }
    catch (const FatalError & e)
    {
      record(std::string(e.what()) + " (chosen by local rank " + std::to_string(_local_rank) +
             " on host '" + host + "')");
    }
  }

  detail::agree_or_throw(comm, error);

  const int64_t batch_size = bs[index];
  _devices = {devices[index]};
  _batch_sizes = {batch_size};
  _capacities = {default_capacity(_devices.front(), batch_size, _gpu_lanes)};
  _priorities = {0};
}
} // namespace neml2::aoti
