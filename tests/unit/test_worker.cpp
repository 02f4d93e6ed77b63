// The worker lane: an idle lane gives its OpenMP threads back and takes them again for its
// next task.
#include "catch.h"

#include <chrono>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "neml2/aoti/detail/Worker.h"
#include "process.h"

using neml2::aoti::detail::Worker;
using neml2_test::threads_now;

namespace
{
/// Run a parallel region on @p worker and wait for it.
void
parallel_task(Worker & worker)
{
  std::promise<void> done;
  worker.submit(
      [&done]
      {
        // an operator of libtorch's (at::parallel_for in this file would be serial unless
        // the test itself were built with OpenMP)
        const auto x = at::ones({1 << 20}, at::kDouble);
        (void)(x * x);
        done.set_value();
      });
  done.get_future().wait();
}

/// Poll until the thread count is @p n (or two seconds pass); the last count seen.
std::size_t
settles_at(std::size_t n)
{
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  std::size_t now = threads_now();
  while (now != n && std::chrono::steady_clock::now() < until)
  {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    now = threads_now();
  }
  return now;
}
} // namespace

TEST_CASE("an idle worker gives its OpenMP threads back and starts them for its next task",
          "[worker]")
{
  // torch's Linux builds run OpenMP (libgomp, with OpenMP 5.0's omp_pause_resource_all)
  INFO(at::get_parallel_info());
  REQUIRE(at::get_parallel_info().find("OpenMP") != std::string::npos);
  REQUIRE(neml2::aoti::detail::can_release_openmp_threads());
  setenv("NEML2_IDLE_RELEASE_MS", "100", 1); // long enough to see the team while it stays
  Worker worker(at::kCPU, 2);                // regions of two threads: one thread more
  unsetenv("NEML2_IDLE_RELEASE_MS");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::size_t idle = threads_now();

  parallel_task(worker);
  const std::size_t working = threads_now(); // the team stays while the lane is busy
  CHECK(working == idle + 1);
  CHECK(settles_at(idle) == idle); // 100 ms idle: the team is gone

  parallel_task(worker);
  CHECK(threads_now() == idle + 1); // and back for the next task
  CHECK(settles_at(idle) == idle);
}

TEST_CASE("a worker asked to release gives its OpenMP threads back at once", "[worker]")
{
  REQUIRE(neml2::aoti::detail::can_release_openmp_threads());
  setenv("NEML2_IDLE_RELEASE_MS", "60000", 1); // the idle release cannot be what we see
  Worker worker(at::kCPU, 2);
  unsetenv("NEML2_IDLE_RELEASE_MS");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::size_t idle = threads_now();
  CHECK_FALSE(worker.request_release()); // it never ran a task: it holds nothing

  for (int round = 0; round < 2; ++round)
  {
    INFO("round " << round);
    parallel_task(worker);
    CHECK(threads_now() == idle + 1);
    const auto asked = std::chrono::steady_clock::now();
    REQUIRE(worker.request_release());
    worker.wait_released();
    CHECK(std::chrono::steady_clock::now() - asked < std::chrono::seconds(30));
    CHECK(threads_now() == idle); // gone when wait_released() returns
    CHECK_FALSE(worker.request_release());
  }
}
