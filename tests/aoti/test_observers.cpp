// DispatchObserver: what every observer is told, under every policy.
#include "fixtures.h"

#include <atomic>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include <ATen/record_function.h>

#include "neml2/aoti/observers/ProfilerScopes.h"

using namespace neml2_test;

namespace
{
/// Records everything it is told.
struct Recorder : DispatchObserver
{
  explicit Recorder(bool timing = false) : timing(timing) {}
  bool wants_timing() const override { return timing; }
  void on_dispatch(Graph g, int64_t b) override
  {
    ++dispatches;
    graph = g;
    batch = b;
  }
  void on_chunk_begin(const ChunkInfo & c) override
  {
    const std::lock_guard<std::mutex> lock(mutex);
    begun.emplace_back(c.begin, c.end);
    if (fail_row >= c.begin && fail_row < c.end)
      throw ConvergenceError("observer failed rows [" + std::to_string(c.begin) + ", " +
                             std::to_string(c.end) + ")");
  }
  void on_chunk_end(const ChunkInfo & c, const ChunkTiming * t) override
  {
    const std::lock_guard<std::mutex> lock(mutex);
    ended.emplace_back(c.begin, c.end);
    if (t)
    {
      ++timed;
      ordered = ordered && t->start <= t->staged && t->staged <= t->computed &&
                (t->gathered < 0 || t->computed <= t->gathered);
    }
  }
  void on_error(const ChunkInfo & c, const std::exception & e) override
  {
    const std::lock_guard<std::mutex> lock(mutex);
    errors.emplace_back(c.begin, e.what());
  }
  void on_dispatch_end(Graph, const DispatchInfo & info, bool f) override
  {
    ++ends;
    failed = f;
    chunks = info.chunks;
  }

  bool timing;
  int64_t fail_row = -1;
  std::mutex mutex;
  int dispatches = 0, ends = 0;
  Graph graph = Graph::jvp;
  int64_t batch = -1;
  bool failed = false;
  std::size_t chunks = 0, timed = 0;
  bool ordered = true;
  std::vector<std::pair<int64_t, int64_t>> begun, ended;
  std::vector<std::pair<int64_t, std::string>> errors;
};

/// The rows of @p chunks, sorted: [0, B) once each when they tile the batch.
bool
tiles(std::vector<std::pair<int64_t, int64_t>> chunks, int64_t batch)
{
  std::sort(chunks.begin(), chunks.end());
  int64_t next = 0;
  for (const auto & [b, e] : chunks)
  {
    if (b != next || e <= b)
      return false;
    next = e;
  }
  return next == batch;
}
} // namespace

TEMPLATE_TEST_CASE("observers: one dispatch, every chunk begun and ended once",
                   "[dispatch][observer]", NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("forward_single"), 10);
  const auto plain = std::make_shared<Recorder>(false);
  const auto timed = std::make_shared<Recorder>(true);
  m.add_observer(plain);
  m.add_observer(timed);
  const at::Tensor eps = strains(35);
  const at::Tensor want = m.forward({{"strain", eps}}).at("stress");
  const DispatchInfo info = m.last_dispatch();

  for (const auto * r : {plain.get(), timed.get()})
  {
    CHECK(r->dispatches == 1);
    CHECK(r->ends == 1);
    CHECK_FALSE(r->failed);
    CHECK(r->graph == Graph::forward);
    CHECK(r->batch == 35);
    CHECK(r->chunks == info.chunks);
    CHECK(r->begun.size() == std::max<std::size_t>(info.chunks, 1));
    CHECK(tiles(r->begun, 35));
    CHECK(tiles(r->ended, 35));
    CHECK(r->errors.empty());
  }
  // One observer that wants timing gets it for every dispatched chunk, in phase order;
  // the pass-through calls the Model's own entry point and is not timed.
  CHECK(timed->timed == plain->timed);
  CHECK(timed->ordered);
  if (!std::is_same_v<TestType, PassThroughCase>)
    CHECK(timed->timed == timed->ended.size());

  // Observing changes no result; a detached observer hears nothing more.
  m.remove_observer(plain);
  const at::Tensor again = m.forward({{"strain", eps}}).at("stress");
  CHECK((TestType::exact() ? identical(again, want) : close(again, want, 1e-12, 1e-9)));
  CHECK(plain->dispatches == 1);
  CHECK(timed->dispatches == 2);
  CHECK_THAT(fatal_message([&] { m.add_observer(nullptr); }),
             Catch::Matchers::ContainsSubstring("add_observer: the observer is null"));
}

TEMPLATE_TEST_CASE("observers: a throwing on_chunk_begin fails that chunk; all are told",
                   "[dispatch][observer]", NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("forward_single"), 10);
  const auto failing = std::make_shared<Recorder>();
  const auto watcher = std::make_shared<Recorder>();
  failing->fail_row = 22;
  m.add_observer(failing);
  m.add_observer(watcher);
  const at::Tensor eps = strains(35);
  CHECK_THROWS_AS(m.forward({{"strain", eps}}), ConvergenceError);
  for (const auto * r : {failing.get(), watcher.get()})
  {
    CHECK(r->ends == 1);
    CHECK(r->failed);
    REQUIRE(r->errors.size() == 1);
    CHECK(r->errors.front().first <= 22);
    CHECK_THAT(r->errors.front().second, Catch::Matchers::ContainsSubstring("observer failed"));
  }
  // the failing chunk was begun by the first observer only: the second never saw it
  CHECK(watcher->begun.size() + 1 == failing->begun.size());

  failing->fail_row = -1;
  CHECK_NOTHROW(m.forward({{"strain", eps}}));
  CHECK_FALSE(failing->failed);
}

TEMPLATE_TEST_CASE("observers: ProfilerScopes shows calls and chunks to torch's profiler",
                   "[dispatch][observer]", NEML2_ALL_POLICIES)
{
  auto m = TestType::make(stub("forward_single"), 10);
  m.add_observer(std::make_shared<ProfilerScopes>());
  static std::mutex mutex;
  static std::multiset<std::string> names;
  names.clear();
  const auto handle = at::addGlobalCallback(
      at::RecordFunctionCallback(
          [](const at::RecordFunction & fn) -> std::unique_ptr<at::ObserverContext>
          {
            const std::string name = fn.name();
            if (name.rfind("neml2::", 0) == 0)
            {
              const std::lock_guard<std::mutex> lock(mutex);
              names.insert(name);
            }
            return nullptr;
          })
          .scopes({at::RecordScope::USER_SCOPE}));
  m.forward({{"strain", strains(35)}});
  at::removeCallback(handle);
  const std::size_t chunks = std::max<std::size_t>(m.last_dispatch().chunks, 1);
  CHECK(names.count("neml2::forward") == 1);
  CHECK(names.count("neml2::chunk") == chunks);
}
