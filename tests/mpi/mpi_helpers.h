// Shared by the MPI tests: rank queries, a per-rank host-name override, and
// checks that hold on every rank at once.
//
// Every rank runs every test case in the same order, so a test body must reach
// each collective on every rank: use CHECK, never a REQUIRE that could return
// early on one rank only.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

#include "../aoti/fixtures.h"

namespace neml2_mpi_test
{
using namespace neml2_test;

inline int
rank_of(MPI_Comm comm = MPI_COMM_WORLD)
{
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

inline int
size_of(MPI_Comm comm = MPI_COMM_WORLD)
{
  int s = 0;
  MPI_Comm_size(comm, &s);
  return s;
}

/// Whether @p ok holds on every rank of @p comm (collective).
inline bool
on_every_rank(bool ok, MPI_Comm comm = MPI_COMM_WORLD)
{
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, comm);
  return all != 0;
}

/**
 * Sets the test-only host-name override (NEML2_MPI_HOSTNAME) of this rank for
 * the lifetime of the object, so that one machine plays several nodes; restores
 * what was there before.
 */
class HostOverride
{
public:
  explicit HostOverride(const std::string & host)
  {
    if (const char * old = std::getenv(name))
      _old = old;
    setenv(name, host.c_str(), 1);
  }
  ~HostOverride()
  {
    if (_old)
      setenv(name, _old->c_str(), 1);
    else
      unsetenv(name);
  }
  HostOverride(const HostOverride &) = delete;
  HostOverride & operator=(const HostOverride &) = delete;

private:
  static constexpr const char * name = "NEML2_MPI_HOSTNAME";
  std::optional<std::string> _old;
};

/// The FatalError message of constructing an MPISimple from @p cfg, or a marker when it succeeds.
inline std::string
construction_error(const MPISimple::Config & cfg)
{
  return fatal_message([&] { const MPISimple s(cfg); });
}

/// "0, 1, 3" for the listed ranks, as the scheduler's agreed error spells them.
inline std::string
ranks_string(const std::vector<int> & ranks)
{
  std::string s;
  for (const int r : ranks)
    s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

/// The tail of the error every rank throws when @p failing ranks of @p size failed.
inline std::string
raised_on(const std::vector<int> & failing, int size)
{
  return "(raised on rank(s) " + ranks_string(failing) + " of " + std::to_string(size) +
         " in the scheduler's communicator)";
}

/// Rows [begin, end) of a batch of @p batch rows owned by @p rank of @p size (contiguous,
/// balanced).
inline std::pair<int64_t, int64_t>
slice_of(int64_t batch, int rank, int size)
{
  const int64_t base = batch / size, extra = batch % size;
  const int64_t begin = rank * base + std::min<int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}
} // namespace neml2_mpi_test
