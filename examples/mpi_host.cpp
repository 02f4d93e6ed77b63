// MPI host program: every rank evaluates its own slice of one global batch through
// an MPISimple, and rank 0 checks the gathered result against a
// single-process evaluation of the whole batch. Exits 1 on a mismatch or an error at run
// time, 2 on a bad BATCH or device list (one line from rank 0).
//
//   neml2-compile tests/aoti/forward_single/model.i --model model --device cpu -d : -o aoti
//   mpiexec -n 4 mpi_host aoti/model_aoti.i [BATCH [DEVICE...]]
//
// DEVICE defaults to cpu; with GPUs, e.g. `cuda:0 cuda:1` gives each rank of a
// node one of them by its rank within the node.
#include <cstdio>
#include <iostream>

#ifdef NEML2_MPI

#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <vector>

#include <mpi.h>

#include "neml2/aoti.h"

#include "arguments.h"

using namespace neml2::aoti;

namespace
{
/// Rows [begin, end) of a batch of @p batch rows that rank @p rank of @p size owns.
std::pair<int64_t, int64_t>
slice_of(int64_t batch, int rank, int size)
{
  const int64_t base = batch / size, extra = batch % size;
  const int64_t begin = rank * base + std::min<int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

/// The same global batch of Mandel strains on every rank, from a fixed seed.
at::Tensor
global_strains(int64_t batch)
{
  auto gen = at::make_generator<at::CPUGeneratorImpl>(2024);
  return (at::rand({batch, 6}, gen, at::TensorOptions().dtype(at::kDouble)) - 0.5) * 1e-3;
}

/// Whether @p ok holds on every rank.
bool
everywhere(bool ok)
{
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all != 0;
}

int
run(int argc, char ** argv, int rank, int size)
{
  if (argc < 2)
  {
    if (rank == 0)
      std::cerr << "usage: " << argv[0] << " STUB [BATCH [DEVICE...]]\n";
    return 2;
  }
  const std::string stub = argv[1];
  int64_t batch = 100000;
  try
  {
    if (argc > 2)
      batch = example::integer("BATCH", argv[2], 0);
  }
  catch (const example::UsageError & e)
  {
    if (rank == 0) // every rank parses the same command line and returns alike
      std::cerr << "mpi_host: " << e.what() << "\n";
    return 2;
  }

  MPISimple::Config cfg;
  for (int i = 3; i < argc; ++i)
    cfg.devices.push_back(argv[i]);
  if (cfg.devices.empty())
    cfg.devices = {"cpu"};
  cfg.batch_sizes = {4096};

  // Construction is collective and fails alike on every rank, so no rank is left waiting.
  std::shared_ptr<MPISimple> sched;
  try
  {
    sched = std::make_shared<MPISimple>(cfg);
  }
  catch (const Exception & e)
  {
    if (rank == 0) // a bad device list: a user mistake
      std::cerr << "mpi_host: " << e.what() << "\n";
    return 2;
  }

  // Each rank's own work. An error here is local, so it is agreed on before any collective.
  const auto [begin, end] = slice_of(batch, rank, size);
  at::Tensor mine;
  double ms = 0;
  std::string error;
  try
  {
    auto model = load_model(stub, "model", sched);
    const at::Tensor strain = global_strains(batch).slice(0, begin, end);
    const auto t0 = std::chrono::steady_clock::now();
    mine = model.forward({{"strain", strain}}).at("stress").contiguous();
    ms = 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  catch (const Exception & e)
  {
    error = e.what();
  }
  if (!error.empty())
    std::cerr << "rank " << rank << ": error: " << error << "\n";
  if (!everywhere(error.empty()))
    return 1;

  // One summary line per rank, in fixed-size slots.
  std::array<char, 256> line{};
  const std::string rows = "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
  std::snprintf(line.data(), line.size(),
                "  rank %-3d host %-12s local rank %d of %d  device %-7s rows %-18s %8.2f ms", rank,
                sched->host().c_str(), sched->local_rank(), sched->local_size(),
                sched->device().str().c_str(), rows.c_str(), ms);
  std::vector<char> lines(rank == 0 ? line.size() * size : 0);
  MPI_Gather(line.data(), (int)line.size(), MPI_CHAR, lines.data(), (int)line.size(), MPI_CHAR, 0,
             MPI_COMM_WORLD);

  // Gather the stresses (6 doubles per row) in rank order.
  std::vector<int> counts(size), displs(size);
  for (int r = 0; r < size; ++r)
  {
    const auto [b, e] = slice_of(batch, r, size);
    counts[r] = static_cast<int>((e - b) * 6);
    displs[r] = static_cast<int>(b * 6);
  }
  at::Tensor gathered =
      at::empty({rank == 0 ? batch : 0, 6}, at::TensorOptions().dtype(at::kDouble));
  MPI_Gatherv(mine.data_ptr<double>(), counts[rank], MPI_DOUBLE, gathered.data_ptr<double>(),
              counts.data(), displs.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);

  int ok = 1;
  if (rank == 0)
  {
    std::printf("mpi_host: %lld points over %d rank(s), model %s\n", (long long)batch, size,
                stub.c_str());
    for (int r = 0; r < size; ++r)
      std::printf("%s\n", lines.data() + r * line.size());
    try
    {
      const at::Tensor want =
          load_model(stub, "model").forward({{"strain", global_strains(batch)}}).at("stress");
      // CPU ranks reproduce the single-process result bitwise; a GPU rounds differently.
      const bool cpu_only = std::all_of(cfg.devices.begin(), cfg.devices.end(),
                                        [](const std::string & d) { return d == "cpu"; });
      const double diff = batch > 0 ? (gathered - want).abs().max().item<double>() : 0.0;
      const bool same =
          cpu_only ? at::equal(gathered, want) : at::allclose(gathered, want, 1e-12, 1e-12);
      std::printf("gathered vs single process: max |diff| = %.3e, %s\n", diff,
                  same ? (cpu_only ? "identical" : "equal to round-off") : "MISMATCH");
      ok = same ? 1 : 0;
    }
    catch (const Exception & e)
    {
      std::cerr << "error: " << e.what() << "\n";
      ok = 0;
    }
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return ok ? 0 : 1;
}
} // namespace

int
main(int argc, char ** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int status = run(argc, argv, rank, size);
  MPI_Finalize();
  return status;
}

#else

int
main()
{
  std::cerr << "mpi_host needs MPI: reconfigure NEML2 with -DNEML2_MPI=ON\n";
  return 1;
}

#endif
