// main() for the MPI tests: Catch2 runs between MPI_Init and MPI_Finalize, and
// every rank returns the worst result so mpiexec reports a failure on any rank.
// Catch2 v2 compiles its implementation, without a main, into this file.
#define CATCH_CONFIG_RUNNER
#include "catch.h"

#if NEML2_CATCH2_MAJOR >= 3
#include <catch2/catch_session.hpp>
#endif

#include <mpi.h>

int
main(int argc, char * argv[])
{
  MPI_Init(&argc, &argv);
  int result = Catch::Session().run(argc, argv);
  int worst = result;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
