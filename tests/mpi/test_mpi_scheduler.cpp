// MPISimple with real ranks: placement by host, round-robin devices, errors
// agreed on every rank, subcommunicators. Several nodes are simulated on one
// machine with the test-only NEML2_MPI_HOSTNAME override.
#include "mpi_helpers.h"

#include "neml2/csrc/dispatchers/MPISimpleScheduler.h"
#include "neml2/csrc/dispatchers/factory.h"

using namespace neml2_mpi_test;
using Catch::Matchers::ContainsSubstring;

namespace
{
/// What a rank should see, computed from the host names the test hands out.
struct Expected
{
  int local_rank = 0;
  int local_size = 0;
};

Expected
expected_placement(const std::vector<std::string> & hosts, int rank)
{
  Expected e;
  for (int r = 0; r < static_cast<int>(hosts.size()); ++r)
    if (hosts[r] == hosts[rank])
    {
      e.local_size++;
      if (r < rank)
        e.local_rank++;
    }
  return e;
}

/**
 * Run the two-device list {"cpu", "cuda:0"} over simulated nodes named by
 * @p host_of, and check the outcome on every rank: success with
 * devices[local_rank % 2] where every node has >= 2 ranks and the chosen
 * device exists; otherwise the same FatalError on every rank, listing exactly
 * the ranks that lack a device (m < n) or chose a device this machine lacks.
 * Without a GPU this still pins down which rank chose which index.
 */
void
check_two_devices(const std::function<std::string(int)> & host_of)
{
  const int rank = rank_of(), size = size_of();
  std::vector<std::string> hosts;
  for (int r = 0; r < size; ++r)
    hosts.push_back(host_of(r));

  const bool gpu = have_cuda();
  std::vector<int> failing;
  for (int r = 0; r < size; ++r)
  {
    const Expected e = expected_placement(hosts, r);
    if (e.local_size < 2 || (!gpu && e.local_rank % 2 == 1))
      failing.push_back(r);
  }

  MPISimple::Config cfg;
  cfg.devices = {"cpu", "cuda:0"};
  cfg.batch_sizes = {16, 32};
  const HostOverride host(hosts[rank]);
  const Expected mine = expected_placement(hosts, rank);
  INFO("rank " << rank << " of " << size << " on '" << hosts[rank] << "', local rank "
               << mine.local_rank << " of " << mine.local_size);
  if (failing.empty())
  {
    std::optional<MPISimple> s;
    CHECK_NOTHROW(s.emplace(cfg));
    if (s)
    {
      CHECK(s->local_rank() == mine.local_rank);
      CHECK(s->local_size() == mine.local_size);
      const bool odd = mine.local_rank % 2 == 1;
      CHECK(s->device() == (odd ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU)));
      CHECK(s->batch_sizes() == std::vector<int64_t>{odd ? 32 : 16});
    }
    return;
  }
  const std::string error = construction_error(cfg);
  CHECK_THAT(error, ContainsSubstring(raised_on(failing, size)));
  // The message is the lowest failing rank's.
  const Expected first = expected_placement(hosts, failing.front());
  if (first.local_size < 2)
    CHECK_THAT(error, ContainsSubstring(std::to_string(first.local_size) + " rank(s) on host '" +
                                        hosts[failing.front()] + "' for 2 devices"));
  else
    CHECK_THAT(error,
               ContainsSubstring("MPISimple: devices[1]: invalid device "
                                 "'cuda:0'") &&
                   ContainsSubstring("(chosen by local rank " + std::to_string(first.local_rank) +
                                     " on host '" + hosts[failing.front()] + "')"));
}
} // namespace

TEST_CASE("MPISimple over MPI_COMM_WORLD with {cpu}: every rank gets the CPU", "[mpi]")
{
  const int rank = rank_of();

  // Independent oracle for the real node: the ranks that share memory with this one.
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  const int node_rank = rank_of(node), node_size = size_of(node);
  MPI_Comm_free(&node);

  MPISimple::Config cfg;
  cfg.devices = {"cpu"};
  cfg.batch_sizes = {64};
  const MPISimple s(cfg);
  CHECK(s.name() == "MPISimple");
  CHECK(s.device() == at::Device(at::kCPU));
  CHECK(s.devices() == std::vector<at::Device>{at::Device(at::kCPU)});
  CHECK(s.batch_sizes() == std::vector<int64_t>{64});
  CHECK(s.capacities() == std::vector<int64_t>{128});
  CHECK(s.priorities() == std::vector<int64_t>{0});
  CHECK(s.local_rank() == node_rank);
  CHECK(s.local_size() == node_size);
  CHECK_FALSE(s.host().empty());
  CHECK(s.config().comm == nullptr);
  // Chunks exactly like Simple.
  CHECK(s.next({0}, 100)->size == 64);
  CHECK(s.next({0}, 10)->size == 10);

  // An explicit MPI_COMM_WORLD is the same thing; batch size 0 means no chunking.
  MPI_Comm world = MPI_COMM_WORLD;
  cfg.comm = &world;
  cfg.batch_sizes = {0};
  const MPISimple w(cfg);
  CHECK(w.local_rank() == node_rank);
  CHECK(w.local_size() == node_size);
  CHECK(w.next({0}, 12345)->size == 12345);
  CHECK(w.capacities().front() == std::numeric_limits<int64_t>::max());
}

TEST_CASE("simulated nodes, one rank per node and one device (m == n)", "[mpi]")
{
  const int rank = rank_of();
  const std::string name = "node-" + std::to_string(rank);
  const HostOverride host(name);
  MPISimple::Config cfg;
  cfg.devices = {"cpu"};
  cfg.batch_sizes = {8};
  const MPISimple s(cfg);
  CHECK(s.host() == name);
  CHECK(s.local_rank() == 0);
  CHECK(s.local_size() == 1);
  CHECK(s.device() == at::Device(at::kCPU));
}

TEST_CASE("simulated nodes, several ranks per node share the device (m > n)", "[mpi]")
{
  const int rank = rank_of(), size = size_of();
  for (const int per_node : {2, 3, 4})
  {
    INFO(per_node << " ranks per node");
    const HostOverride host("node-" + std::to_string(rank / per_node));
    MPISimple::Config cfg;
    cfg.devices = {"cpu"};
    cfg.batch_sizes = {8};
    const MPISimple s(cfg);
    CHECK(s.local_rank() == rank % per_node);
    CHECK(s.local_size() == std::min(per_node, size - (rank / per_node) * per_node));
    CHECK(s.device() == at::Device(at::kCPU));
  }
}

TEST_CASE("two devices are assigned round-robin by local rank", "[mpi]")
{
  // m == n where the job has 2 ranks per node; m > n with 3 or 4; a short last node is m < n.
  SECTION("two ranks per node")
  {
    check_two_devices([](int r) { return "pair-" + std::to_string(r / 2); });
  }
  SECTION("three ranks per node")
  {
    check_two_devices([](int r) { return "trio-" + std::to_string(r / 3); });
  }
  SECTION("one node")
  {
    check_two_devices([](int) { return std::string("all"); });
  }
  SECTION("the last rank alone")
  {
    const int last = size_of() - 1;
    check_two_devices([last](int r) { return r == last ? "alone" : "rest"; });
  }
}

TEST_CASE("fewer ranks on a node than devices is an error on every rank (m < n)", "[mpi]")
{
  const int rank = rank_of(), size = size_of();
  const HostOverride host("solo-" + std::to_string(rank));
  MPISimple::Config cfg;
  cfg.devices = {"cpu", "cuda:0"};
  cfg.batch_sizes = {8};
  const std::string error = construction_error(cfg);
  std::vector<int> all;
  for (int r = 0; r < size; ++r)
    all.push_back(r);
  CHECK_THAT(error, ContainsSubstring("MPISimple: 1 rank(s) on host 'solo-0' for 2 "
                                      "devices") &&
                        ContainsSubstring("launch more ranks per node or pass fewer devices") &&
                        ContainsSubstring(raised_on(all, size)));
  // Every rank came back from the collective: the job is still in step.
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("host names are compared exactly, whatever their length", "[mpi]")
{
  // Names that share a long prefix and differ in their last character.
  const int rank = rank_of(), size = size_of();
  const std::string prefix(MPI_MAX_PROCESSOR_NAME - 2, 'h');
  const HostOverride host(prefix + std::to_string(rank % 2));
  MPISimple::Config cfg;
  cfg.devices = {"cpu"};
  cfg.batch_sizes = {8};
  const MPISimple s(cfg);
  CHECK(s.host() == prefix + std::to_string(rank % 2));
  CHECK(s.local_rank() == rank / 2);
  CHECK(s.local_size() == (size - rank % 2 + 1) / 2);
}

TEST_CASE("an invalid configuration on any rank fails on every rank", "[mpi]")
{
  const int rank = rank_of(), size = size_of();
  std::vector<int> all;
  for (int r = 0; r < size; ++r)
    all.push_back(r);
  MPISimple::Config cfg;
  cfg.batch_sizes = {8};

  SECTION("a bad device string on rank 0 only")
  {
    cfg.devices = {rank == 0 ? "tpu" : "cpu"};
    CHECK_THAT(construction_error(cfg),
               ContainsSubstring("MPISimple: devices[0]: invalid device 'tpu'") &&
                   ContainsSubstring(raised_on({0}, size)));
  }
  SECTION("malformed devices and batch sizes, as every rank passes them")
  {
    const std::vector<std::pair<MPISimple::Config, std::string>> cases{
        {{{}, {8}, nullptr}, "MPISimple: devices is empty"},
        {{{"cpu", "cpu"}, {8}, nullptr}, "MPISimple: devices[1] = 'cpu' repeats devices[0]"},
        {{{"cuda:0", "cuda"}, {8}, nullptr}, "devices[1] = 'cuda' repeats devices[0]"},
        {{{"cpu", "cuda:x"}, {8}, nullptr}, "MPISimple: devices[1]: invalid device 'cuda:x'"},
        {{{"cpu:0"}, {8}, nullptr}, "MPISimple: devices[0]: invalid device 'cpu:0'"},
        {{{"cpu"}, {}, nullptr}, "MPISimple: batch_sizes has 0 entries; expected 1 or 1"},
        {{{"cpu"}, {1, 2}, nullptr}, "batch_sizes has 2 entries; expected 1 or 1 (one per device)"},
        {{{"cpu"}, {-1}, nullptr}, "MPISimple: batch_sizes[0] = -1 must be >= 0"},
    };
    for (const auto & [c, want] : cases)
    {
      INFO(want);
      CHECK_THAT(construction_error(c),
                 ContainsSubstring(want) && ContainsSubstring(raised_on(all, size)));
    }
  }
  SECTION("ranks of one node that disagree on the number of devices")
  {
    if (size < 2)
      SKIP("needs 2 ranks");
    const HostOverride host("shared");
    cfg.devices =
        rank == 0 ? std::vector<std::string>{"cpu"} : std::vector<std::string>{"cpu", "cuda:0"};
    CHECK_THAT(construction_error(cfg),
               ContainsSubstring("MPISimple: devices has 1 entries on rank 0 but "
                                 "2 on rank 1 of the same host 'shared'") &&
                   ContainsSubstring(raised_on(all, size)));
  }
  SECTION("a host-name override too long to gather exactly")
  {
    const HostOverride host(rank == size - 1 ? std::string(MPI_MAX_PROCESSOR_NAME, 'x') : "fine");
    cfg.devices = {"cpu"};
    CHECK_THAT(construction_error(cfg), ContainsSubstring("NEML2_MPI_HOSTNAME is longer than") &&
                                            ContainsSubstring(raised_on({size - 1}, size)));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("a subcommunicator confines the scheduler to its ranks", "[mpi]")
{
  const int rank = rank_of(), size = size_of();
  // Even ranks form the subcommunicator; odd ranks are not in it.
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2 == 0 ? 0 : MPI_UNDEFINED, rank, &sub);
  const int sub_size = (size + 1) / 2;
  const HostOverride host("one-node");

  MPISimple::Config cfg;
  cfg.devices = {"cpu"};
  cfg.batch_sizes = {5};
  cfg.comm = &sub;
  if (sub == MPI_COMM_NULL)
  {
    // Not a member: refused locally, without entering any collective.
    CHECK_THAT(construction_error(cfg), ContainsSubstring("comm is MPI_COMM_NULL"));
  }
  else
  {
    {
      MPISimple s(cfg);
      CHECK(s.local_rank() == rank / 2);
      CHECK(s.local_size() == sub_size);
      // The communicator is only read during construction: free it, keep using the scheduler.
      MPI_Comm sub2;
      MPI_Comm_dup(sub, &sub2);
      cfg.comm = &sub2;
      const MPISimple t(cfg);
      MPI_Comm_free(&sub2);
      CHECK(t.local_rank() == rank / 2);
      auto m = load_model(stub("forward_single"), "model", std::make_shared<MPISimple>(t));
      const at::Tensor eps = strains(11);
      CHECK(identical(
          m.forward({{"strain", eps}}).at("stress"),
          load_model(stub("forward_single"), "model").forward({{"strain", eps}}).at("stress")));
    }
    // An error inside the subcommunicator is raised on its ranks only, and lists sub ranks.
    const HostOverride solo("solo-" + std::to_string(rank));
    cfg.comm = &sub;
    cfg.devices = {"cpu", "cuda:0"};
    std::vector<int> all;
    for (int r = 0; r < sub_size; ++r)
      all.push_back(r);
    CHECK_THAT(construction_error(cfg), ContainsSubstring("launch more ranks") &&
                                            ContainsSubstring(raised_on(all, sub_size)));
    MPI_Comm_free(&sub);
  }
  // The odd ranks were never drawn into the even ranks' collectives.
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("local ranks follow the rank order of the scheduler's communicator", "[mpi]")
{
  const int rank = rank_of(), size = size_of();
  // Reverse the order: world rank size-1 becomes rank 0 of the new communicator.
  MPI_Comm reversed;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &reversed);
  const HostOverride host("one-node");
  MPISimple::Config cfg;
  cfg.devices = {"cpu"};
  cfg.batch_sizes = {5};
  cfg.comm = &reversed;
  const MPISimple s(cfg);
  CHECK(s.local_rank() == size - 1 - rank);
  CHECK(s.local_size() == size);
  MPI_Comm_free(&reversed);
}

TEST_CASE("the spec's MPI snippet compiles and runs as written", "[mpi]")
{
  using namespace neml2::aoti;
  // clang-format off
  MPI_Comm sub = MPI_COMM_WORLD;
  MPISimple::Config cfg;
  cfg.devices     = {"cuda:0", "cuda:1"};
  cfg.batch_sizes = {4096};
  cfg.comm        = &sub;   // omit for MPI_COMM_WORLD
  // clang-format on

  // Two GPUs and two ranks per node are needed; anything less fails alike on every rank.
  std::optional<std::string> error;
  try
  {
    auto m = load_model(stub("forward_single"), "model", std::make_shared<MPISimple>(cfg));
    const at::Tensor eps = strains(100);
    CHECK(close(m.forward({{"strain", eps}}).at("stress"),
                load_model(stub("forward_single"), "model").forward({{"strain", eps}}).at("stress"),
                1e-12, 1e-9));
  }
  catch (const FatalError & e)
  {
    error = e.what();
  }
  const bool failed = error.has_value();
  const bool all_failed = on_every_rank(failed), none_failed = on_every_rank(!failed);
  CHECK(all_failed != none_failed);
  if (neml2::aoti::detail::cuda_device_count() < 2)
    CHECK(failed);
}
