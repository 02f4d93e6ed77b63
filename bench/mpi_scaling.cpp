// Benchmark P6: strong scaling of CPU ranks on one node. A fixed global batch is
// split over the ranks; each rank runs its slice through MPISimple{cpu}
// with one intra-op thread. Rank 0 prints one JSON line per run; the driver
// bench/mpi_scaling.py runs 1..N ranks and turns the lines into a table.
//
//   mpiexec -n 4 --bind-to core mpi_scaling aoti/model_aoti.i [BATCH [REPEAT [CHUNK]]]
#include <cstdio>
#include <iostream>

#ifdef NEML2_MPI

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <ATen/Parallel.h>
#include <mpi.h>

#include "bench_inputs.h"
#include "neml2/aoti/detail/stats.h"
#include "neml2/csrc/dispatchers/MPISimpleScheduler.h"
#include "neml2/csrc/dispatchers/factory.h"

using namespace neml2::aoti;

namespace
{
double
now()
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int
run(int argc, char ** argv, int rank, int size)
{
  if (argc < 2)
  {
    if (rank == 0)
      std::cerr << "usage: " << argv[0] << " STUB [BATCH [REPEAT [CHUNK]]]\n";
    return 2;
  }
  const std::string stub = argv[1];
  const int64_t batch = argc > 2 ? std::stoll(argv[2]) : int64_t(1) << 21;
  const int repeat = argc > 3 ? std::stoi(argv[3]) : 20;
  const int64_t chunk = argc > 4 ? std::stoll(argv[4]) : 0;

  // One thread per rank: the ranks, not the intra-op pool, provide the parallelism.
  at::set_num_threads(1);

  MPISimple::Config cfg;
  cfg.devices = {"cpu"};
  cfg.batch_sizes = {chunk};
  auto model = load_model(stub, "model", std::make_shared<MPISimple>(cfg));

  const int64_t base = batch / size, extra = batch % size;
  const int64_t rows = base + (rank < extra ? 1 : 0);
  // Every input the model declares (strains small and random, history zero, unit time
  // steps), so implicit models run too.
  at::manual_seed(1 + uint64_t(rank));
  const TensorMap inputs = neml2_bench::inputs_for(model.meta(), rows);

  // Warm up (first-call allocations, page faults on the output), then time the
  // slowest rank: each repetition starts and ends at a barrier.
  for (int i = 0; i < 3; ++i)
    model.forward(inputs);
  std::vector<double> wall, local;
  for (int i = 0; i < repeat; ++i)
  {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = now();
    model.forward(inputs);
    const double t1 = now();
    MPI_Barrier(MPI_COMM_WORLD);
    wall.push_back(now() - t0);
    local.push_back(t1 - t0);
  }
  // The busiest rank's own compute time, to separate imbalance from barrier cost.
  double mine = neml2::aoti::detail::median(local), slowest = 0;
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
  {
    const double t = neml2::aoti::detail::median(wall);
    std::printf("{\"ranks\": %d, \"batch\": %lld, \"chunk\": %lld, \"repeat\": %d, "
                "\"threads_per_rank\": %d, \"median_s\": %.6e, \"min_s\": %.6e, "
                "\"slowest_rank_s\": %.6e, \"points_per_s\": %.6e}\n",
                size, (long long)batch, (long long)chunk, repeat, at::get_num_threads(), t,
                *std::min_element(wall.begin(), wall.end()), slowest, batch / t);
  }
  return 0;
}
} // namespace

int
main(int argc, char ** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 1;
  try
  {
    status = run(argc, argv, rank, size);
  }
  catch (const Exception & e)
  {
    std::cerr << "rank " << rank << ": error: " << e.what() << "\n";
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}

#else

int
main()
{
  std::cerr << "mpi_scaling needs MPI: reconfigure NEML2 with -DNEML2_MPI=ON\n";
  return 1;
}

#endif
