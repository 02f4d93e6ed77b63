// DispatchedModel under every execution policy: one test body per behaviour.
#include "fixtures.h"
#include "process.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

using namespace neml2_test;

TEMPLATE_TEST_CASE("dispatched results equal the direct call", "[dispatch]", NEML2_ALL_POLICIES)
{
  const Model direct(stub("elastic_promoted"), "model", "cpu");
  for (const int64_t batch : {0, 1, 7, 1000})
    for (const int64_t chunk : {int64_t(1), int64_t(3), int64_t(4), int64_t(10), batch, int64_t(0)})
    {
      if (chunk == 0 && batch == 0)
        continue;
      INFO("batch " << batch << " chunk " << chunk);
      auto m = TestType::make(stub("elastic_promoted"), chunk);
      const at::Tensor eps = strains(batch);
      const at::Tensor v = strains(batch, 3);
      const TensorMap in{{"strain", eps}};

      check_same<TestType>(m.forward(in).at("stress"), direct.forward(in).at("stress"));
      check_same<TestType>(m.jvp(in, {{"strain", v}}).at("stress"),
                           direct.jvp(in, {{"strain", v}}).at("stress"));
      const auto pj = m.param_jacobian(in), pj0 = direct.param_jacobian(in);
      for (const std::string p : {"model.E", "model.nu"})
      {
        check_same<TestType>(pj.at("stress").at(p), pj0.at("stress").at(p));
        // Adjoints are summed over chunks: equal to round-off.
        const auto a = m.param_vjp(in, {{"stress", v}}).at(p);
        const auto a0 = direct.param_vjp(in, {{"stress", v}}).at(p);
        CHECK(a.dim() == 0);
        CHECK(close(a, a0, 1e-12, 1e-9));
      }
      // The batch-independent block comes back once, unbatched (empty for B = 0).
      const at::Tensor J = m.jacobian(in).at("stress").at("strain");
      if (batch > 0)
        check_same<TestType>(J, direct.jacobian(in).at("stress").at("strain"));
      else
        CHECK(J.numel() == 0);
      CHECK(m.forward(in).at("stress").device() == eps.device());
    }
}

TEMPLATE_TEST_CASE("unbatched inputs give unbatched results", "[dispatch]", NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("elastic_promoted"), 4);
  const at::Tensor eps = strains(1).squeeze(0);
  const at::Tensor s = m.forward({{"strain", eps}}).at("stress");
  CHECK(s.sizes() == eps.sizes());
  CHECK(close(s, at::matmul(stiffness(100000, 0.25), eps), 1e-12, 1e-8));
  // An unbatched tangent next to a batched input goes to every chunk.
  const at::Tensor batch = strains(10);
  const at::Tensor t = m.jvp({{"strain", batch}}, {{"strain", eps}}).at("stress");
  CHECK(close(t, at::matmul(stiffness(100000, 0.25), eps).expand({10, 6}), 1e-12, 1e-8));
}

TEMPLATE_TEST_CASE("parameter changes reach every device copy, and only when changed", "[dispatch]",
                   NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("elastic_promoted"), 3);
  const at::Tensor eps = strains(10);
  const TensorMap in{{"strain", eps}};
  m.forward(in);
  m.forward(in);
  if (TestType::chunked)
    CHECK(m.last_dispatch().parameter_syncs == 0); // nothing changed since the first call

  m.named_parameters().at("model.E").fill_(150e3); // the spec's idiom
  const at::Tensor s = m.forward(in).at("stress");
  CHECK(close(s, at::matmul(eps, stiffness(150000, 0.25).t()), 1e-12, 1e-8));
  if (TestType::chunked)
    CHECK(m.last_dispatch().parameter_syncs >= 1);

  // Replacing the entry works too; a wrong shape is refused and the model stays usable.
  m.named_parameters()["model.nu"] = at::scalar_tensor(0.3, f64());
  CHECK(
      close(m.forward(in).at("stress"), at::matmul(eps, stiffness(150000, 0.3).t()), 1e-12, 1e-8));
  m.named_parameters()["model.nu"] = at::ones({2, 2}, f64());
  CHECK_THAT(fatal_message([&] { m.forward(in); }),
             Catch::Matchers::ContainsSubstring("parameter 'model.nu' must stay a tensor"));
  m.named_parameters()["model.nu"] = at::scalar_tensor(0.25, f64());
  CHECK_NOTHROW(m.forward(in));
}

TEMPLATE_TEST_CASE("bad input is a FatalError and the model stays usable", "[dispatch]",
                   NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("elastic_promoted"), 4);
  const at::Tensor eps = strains(10);
  const at::Tensor before = eps.clone();
  using Catch::Matchers::ContainsSubstring;
  CHECK_THAT(fatal_message(
                 [&] {
                   m.forward({{"strain", at::zeros({10, 5}, f64())}});
                 }),
             ContainsSubstring("model 'model': input 'strain' has shape (10, 5)"));
  CHECK_THAT(fatal_message(
                 [&] {
                   m.forward({{"stran", eps}});
                 }),
             ContainsSubstring("unknown input 'stran'"));
  CHECK_THAT(fatal_message(
                 [&] {
                   m.jvp({{"strain", eps}}, {{"strain", strains(3)}});
                 }),
             ContainsSubstring("batch sizes disagree"));
  CHECK(identical(eps, before));
  CHECK(close(m.forward({{"strain", eps}}).at("stress"),
              at::matmul(eps, stiffness(100000, 0.25).t()), 1e-12, 1e-8));
}

TEST_CASE("short circuit: scheduler device == input device and one chunk", "[dispatch]")
{
  const at::Tensor eps = strains(100);
  auto whole = load_model(stub("forward_single"), "model",
                          std::make_shared<Simple>(Simple::Config{"cpu", 0}));
  whole.forward({{"strain", eps}});
  CHECK(whole.last_dispatch().short_circuit);
  CHECK(whole.last_dispatch().chunks == 0);

  auto fits = load_model(stub("forward_single"), "model",
                         std::make_shared<Simple>(Simple::Config{"cpu", 100}));
  fits.forward({{"strain", eps}});
  CHECK(fits.last_dispatch().short_circuit);

  auto chunked = load_model(stub("forward_single"), "model",
                            std::make_shared<Simple>(Simple::Config{"cpu", 30}));
  chunked.forward({{"strain", eps}});
  CHECK_FALSE(chunked.last_dispatch().short_circuit);
  CHECK(chunked.last_dispatch().chunks == 4);
  CHECK(chunked.last_dispatch().device_chunks == std::vector<std::size_t>{4});

  auto pass = load_model(stub("forward_single"), "model");
  pass.forward({{"strain", eps}});
  CHECK(pass.last_dispatch().short_circuit);
}

TEST_CASE("a short circuit on the CPU first takes the idle lanes' OpenMP teams back", "[dispatch]")
{
  setenv("NEML2_IDLE_RELEASE_MS", "60000", 1); // the lanes' own idle release is not what we see
  StaticHybrid::Config cfg;
  cfg.devices = {"cpu"};
  cfg.batch_sizes = {4096};
  cfg.cpu_threads = 2; // a team of two on the CPU lane, whatever the machine's cores
  auto m = load_model(stub("forward_single"), "model", std::make_shared<StaticHybrid>(cfg));
  unsetenv("NEML2_IDLE_RELEASE_MS");

  const Model direct(stub("forward_single"), "model", "cpu");
  const at::Tensor small = strains(100);
  const at::Tensor large = strains(40000);
  m.forward({{"strain", small}}); // the lane's team from its warm-up goes
  REQUIRE(m.last_dispatch().short_circuit);
  // Counted without this thread's own team, which a dispatch to the lanes gives back and a
  // short circuit on this thread starts again.
  neml2::aoti::detail::release_openmp_threads();
  const std::size_t released = threads_now();
  for (int round = 0; round < 2; ++round)
  {
    INFO("round " << round);
    m.forward({{"strain", large}});
    REQUIRE_FALSE(m.last_dispatch().short_circuit);
    CHECK(threads_now() > released); // the CPU lane keeps its team while idle
    const TensorMap got = m.forward({{"strain", small}});
    REQUIRE(m.last_dispatch().short_circuit);
    neml2::aoti::detail::release_openmp_threads();
    CHECK(threads_now() == released);
    CHECK(identical(got.at("stress"), direct.forward({{"strain", small}}).at("stress")));
  }
}

TEST_CASE("a dispatch to worker lanes first gives the calling thread's OpenMP team back",
          "[dispatch]")
{
  REQUIRE(neml2::aoti::detail::can_release_openmp_threads()); // torch's libgomp can
  struct Restore
  {
    int threads = at::get_num_threads();
    ~Restore() { at::set_num_threads(threads); }
  } restore;
  at::set_num_threads(2); // this thread's team: one thread beside it, whatever the machine
  setenv("NEML2_IDLE_RELEASE_MS", "1", 1); // the lane gives its own team back right after
  StaticHybrid::Config cfg;
  cfg.devices = {"cpu"};
  cfg.batch_sizes = {4096};
  cfg.cpu_threads = 2;
  auto m = load_model(stub("forward_single"), "model", std::make_shared<StaticHybrid>(cfg));
  unsetenv("NEML2_IDLE_RELEASE_MS");
  const at::Tensor large = strains(40000);
  const auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(100)); };
  for (int round = 0; round < 2; ++round)
  {
    INFO("round " << round);
    neml2::aoti::detail::release_openmp_threads();
    settle();
    const std::size_t bare = threads_now();              // no team on this thread nor on the lane
    at::ones({int64_t(1) << 20}, at::kDouble).mul_(2.0); // torch's parallel loop: the team
    REQUIRE(threads_now() > bare);
    m.forward({{"strain", large}});
    REQUIRE_FALSE(m.last_dispatch().short_circuit);
    settle();
    CHECK(threads_now() == bare); // this thread's team went before the chunks
  }
}

TEST_CASE("the spec's snippets compile and run verbatim", "[dispatch][spec]")
{
  using namespace neml2::aoti;
  const std::string path = stub("forward_single");
  const TensorMap inputs{{"strain", strains(10000)}};

  // No scheduler -> no dispatch.
  auto m = load_model(path, "model");
  auto out = m.forward(inputs);
  CHECK(out.at("stress").size(0) == 10000);

  // With a scheduler (the spec uses "cuda"; the CPU keeps this test runnable everywhere).
  auto sched = std::make_shared<Simple>(Simple::Config{"cpu", 4096});
  auto md = load_model(path, "model", sched);
  auto out_cpu = md.forward(inputs);
  CHECK(identical(out_cpu.at("stress"), out.at("stress")));
  static_assert(std::is_same_v<decltype(md), DispatchedModel<SyncPolicy<Simple>>>,
                "Simple picks the synchronous policy");

  StaticHybrid::Config cfg;
  cfg.devices = {"cpu"};
  cfg.batch_sizes = {512};
  auto mh = load_model(path, "model", std::make_shared<StaticHybrid>(cfg));
  static_assert(std::is_same_v<decltype(mh), DispatchedModel<AsyncPolicy<StaticHybrid>>>,
                "StaticHybrid picks the asynchronous policy");
  auto outh = mh.forward(inputs);
  CHECK(identical(outh.at("stress"), out.at("stress")));
  CHECK(mh.last_dispatch().chunks == 20);

  bool caught = false;
  try
  {
    auto bad = mh.forward({{"strain", at::zeros({3}, f64())}});
  }
  catch (const neml2::aoti::Exception & e)
  {
    caught = true;
    CHECK_FALSE(e.recoverable());
  }
  CHECK(caught);
}

TEMPLATE_TEST_CASE("a failing chunk keeps its error type; the model is reusable", "[dispatch]",
                   NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("forward_single"), 10);
  const at::Tensor eps = strains(100);
  const at::Tensor before = eps.clone();
  const at::Tensor want = m.forward({{"strain", eps}}).at("stress");

  // Fail the chunk holding row 55 (or the whole call when nothing is chunked).
  m.set_chunk_hook(
      [](const at::Device &, std::size_t, int64_t begin, int64_t end)
      {
        if (begin <= 55 && 55 < end)
          throw ConvergenceError("injected at rows [" + std::to_string(begin) + ", " +
                                 std::to_string(end) + ")");
      });
  try
  {
    m.forward({{"strain", eps}});
    FAIL("no error");
  }
  catch (const ConvergenceError & e)
  {
    CHECK(e.recoverable());
    CHECK_THAT(e.what(), Catch::Matchers::ContainsSubstring("injected at rows"));
  }
  // A foreign error from every chunk becomes FatalError (several at once: an
  // AggregateError of them, which is not recoverable either).
  m.set_chunk_hook([](const at::Device &, std::size_t, int64_t, int64_t)
                   { throw std::runtime_error("device lost"); });
  try
  {
    m.forward({{"strain", eps}});
    FAIL("no error");
  }
  catch (const Exception & e)
  {
    CHECK_FALSE(e.recoverable());
    CHECK_THAT(e.what(), Catch::Matchers::ContainsSubstring("model 'model'") &&
                             Catch::Matchers::ContainsSubstring("device lost"));
    if (const auto * agg = dynamic_cast<const AggregateError *>(&e))
      for (const auto & sub : agg->errors())
        CHECK(dynamic_cast<const FatalError *>(sub.get()));
    else
      CHECK(dynamic_cast<const FatalError *>(&e));
  }

  m.set_chunk_hook({});
  CHECK(identical(eps, before));
  check_same<TestType>(m.forward({{"strain", eps}}).at("stress"), want);
}

TEMPLATE_TEST_CASE("tracing writes one Chrome-trace event per chunk phase", "[dispatch][trace]",
                   NEML2_ALL_POLICIES)
{
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("neml2_trace_" + std::to_string(::getpid()) + ".json"))
                               .string();
  // NEML2_TRACE applies at construction; set_trace() switches it per model.
  ::setenv("NEML2_TRACE", path.c_str(), 1);
  auto m = TestType::make(stub("forward_single"), 10);
  ::unsetenv("NEML2_TRACE");
  m.forward({{"strain", strains(35)}});
  const std::size_t chunks = m.last_dispatch().chunks;

  std::ifstream in(path);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const auto json = neml2::aoti::detail::parse_json(text.str(), path);
  std::map<std::string, int> count;
  for (const auto & e : json.at("traceEvents"))
    if (e.at("ph") == "X")
      ++count[e.at("name").get<std::string>()];
  CHECK(count["forward"] == 1);
  if (chunks > 0)
  {
    CHECK(chunks == 4);
    CHECK(count["copy in"] == 4);
    CHECK(count["compute"] == 4);
    CHECK(count["copy out"] == 4);
  }
  std::filesystem::remove(path);

  m.set_trace("/nonexistent-folder/trace.json");
  CHECK_THAT(fatal_message(
                 [&] {
                   m.forward({{"strain", strains(35)}});
                 }),
             Catch::Matchers::ContainsSubstring("cannot write the trace file"));
  m.set_trace("");
  CHECK_NOTHROW(m.forward({{"strain", strains(35)}}));
}
