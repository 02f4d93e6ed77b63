// Every rank evaluates its slice of one global batch through its MPISimple
// scheduler; the results equal a single-process evaluation of the same rows.
#include "mpi_helpers.h"

using namespace neml2_mpi_test;

namespace
{
std::shared_ptr<MPISimple>
cpu_scheduler(int64_t batch_size)
{
  MPISimple::Config cfg;
  cfg.devices = {"cpu"};
  cfg.batch_sizes = {batch_size};
  return std::make_shared<MPISimple>(cfg);
}

/// Forward, JVP and Jacobian of @p m on this rank's slice, against @p direct on all rows.
template <class M>
void
check_slice(M & m, DispatchedModel<PassThrough> & direct, int64_t batch)
{
  const int rank = rank_of(), size = size_of();
  const auto [begin, end] = slice_of(batch, rank, size);
  INFO("rank " << rank << " rows [" << begin << ", " << end << ") of " << batch);
  const at::Tensor eps = strains(batch), v = strains(batch, 3);
  const TensorMap all{{"strain", eps}}, mine{{"strain", eps.slice(0, begin, end)}};

  const at::Tensor stress = direct.forward(all).at("stress");
  const at::Tensor tangent = direct.jvp(all, {{"strain", v}}).at("stress");
  CHECK(identical(m.forward(mine).at("stress"), stress.slice(0, begin, end)));
  CHECK(identical(m.jvp(mine, {{"strain", v.slice(0, begin, end)}}).at("stress"),
                  tangent.slice(0, begin, end)));
  const at::Tensor J = m.jacobian(mine).at("stress").at("strain");
  if (end > begin)
    CHECK(identical(J, direct.jacobian(all).at("stress").at("strain")));
  else
    CHECK(J.numel() == 0);
}
} // namespace

TEST_CASE("each rank's results equal the single-process evaluation of its rows", "[mpi]")
{
  // The single-process evaluation, which every rank can redo on its own.
  auto direct = load_model(stub("forward_single"), "model");
  // Chunk sizes that do and do not divide the slices (0: one direct call);
  // batches smaller than the rank count leave some ranks without rows.
  const std::vector<int64_t> batches{1, 3, 1001};
  for (const int64_t chunk : {int64_t(0), int64_t(1), int64_t(7)})
  {
    INFO("batch_sizes {" << chunk << "}");
    const auto sched = cpu_scheduler(chunk);
    {
      INFO("SyncPolicy<MPISimple> from load_model");
      auto m = load_model(stub("forward_single"), "model", sched);
      static_assert(std::is_same_v<decltype(m), DispatchedModel<SyncPolicy<MPISimple>>>);
      for (const int64_t batch : batches)
        check_slice(m, direct, batch);
    }
    {
      INFO("AsyncPolicy<MPISimple>");
      DispatchedModel<AsyncPolicy<MPISimple>> m(stub("forward_single"), "model", sched);
      for (const int64_t batch : batches)
        check_slice(m, direct, batch);
    }
    {
      INFO("AnyDispatchedModel, the scheduler known by its base class");
      std::shared_ptr<Scheduler> base = sched;
      auto m = load_model(stub("forward_single"), "model", base);
      for (const int64_t batch : batches)
        check_slice(m, direct, batch);
    }
  }
}

TEST_CASE("the gathered results equal the single-process batch", "[mpi]")
{
  const int rank = rank_of(), size = size_of();
  const int64_t batch = 4099;
  const at::Tensor eps = strains(batch, 11);
  const auto [begin, end] = slice_of(batch, rank, size);

  auto m = load_model(stub("forward_single"), "model", cpu_scheduler(256));
  const at::Tensor mine =
      m.forward({{"strain", eps.slice(0, begin, end)}}).at("stress").contiguous();
  CHECK(m.last_dispatch().chunks == static_cast<std::size_t>((end - begin + 255) / 256));

  std::vector<int> counts(size), displs(size);
  for (int r = 0; r < size; ++r)
  {
    const auto [b, e] = slice_of(batch, r, size);
    counts[r] = static_cast<int>((e - b) * 6);
    displs[r] = static_cast<int>(b * 6);
  }
  at::Tensor gathered = at::empty({rank == 0 ? batch : 0, 6}, f64());
  MPI_Gatherv(mine.data_ptr<double>(), counts[rank], MPI_DOUBLE, gathered.data_ptr<double>(),
              counts.data(), displs.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0)
  {
    const at::Tensor want =
        load_model(stub("forward_single"), "model").forward({{"strain", eps}}).at("stress");
    CHECK(identical(gathered, want));
  }
}

TEST_CASE("parameter adjoints summed over the ranks equal the single-process adjoint", "[mpi]")
{
  const int rank = rank_of(), size = size_of();
  auto m = load_model(stub("elastic_promoted"), "model", cpu_scheduler(13));
  const auto & params = m.meta().parameters;
  // The fixture promotes every parameter (tests/aoti/elastic_promoted/flags.txt: -p :);
  // every rank reads the same artifact, so every rank fails alike without them.
  REQUIRE_FALSE(params.empty());

  const int64_t batch = 1001;
  const at::Tensor eps = strains(batch, 5), v = strains(batch, 6);
  const auto [begin, end] = slice_of(batch, rank, size);
  // A host changes a parameter on every rank alike, then reduces the adjoints.
  m.named_parameters().at("model.E").fill_(150e3);
  const TensorMap adjoint =
      m.param_vjp({{"strain", eps.slice(0, begin, end)}}, {{"stress", v.slice(0, begin, end)}});

  auto direct = load_model(stub("elastic_promoted"), "model");
  direct.named_parameters().at("model.E").fill_(150e3);
  const TensorMap want = direct.param_vjp({{"strain", eps}}, {{"stress", v}});
  for (const auto & p : params)
  {
    INFO(p.name);
    double mine = adjoint.at(p.name).item<double>(), total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total == Approx(want.at(p.name).item<double>()).epsilon(1e-12));
  }
}
