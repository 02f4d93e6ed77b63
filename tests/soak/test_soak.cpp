// Soak: ten thousand dispatches of every entry point under every policy, some of them
// failing, with resident memory, threads and open files measured before and after.
#include "../aoti/fixtures.h"
#include "process.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <thread>

#include <unistd.h>

using namespace neml2_test;

// Resident memory is checked in the plain build only. AddressSanitizer keeps freed memory
// in its quarantine (LeakSanitizer checks for leaks at exit instead). ThreadSanitizer's
// shadow memory and per-thread state grow with every thread started, and an asynchronous
// dispatch gives the calling thread's OpenMP team back, so the next call starts new ones.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NEML2_SOAK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NEML2_SOAK_SANITIZED 1
#endif
#endif

namespace
{
/// Resident set size of this process in MiB (/proc/self/statm).
double
rss_mib()
{
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return double(resident) * double(::sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

/// The thread count once idle worker lanes have given their OpenMP threads back (after
/// NEML2_IDLE_RELEASE_MS, 5 ms by default): the count stable over three readings 20 ms
/// apart, at most two seconds. Counted without this thread's own OpenMP team, which a
/// dispatch to the lanes gives back and a call on this thread starts again.
std::size_t
settled_threads()
{
  neml2::aoti::detail::release_openmp_threads();
  std::size_t last = threads_now();
  int same = 0;
  for (int k = 0; k < 100 && same < 3; ++k)
  {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::size_t now = threads_now();
    same = now == last ? same + 1 : 0;
    last = now;
  }
  return last;
}

long
env_count(const char * name, long fallback)
{
  const char * v = std::getenv(name);
  const long n = v ? std::strtol(v, nullptr, 10) : 0;
  return n > 0 ? n : fallback;
}

/// One dispatch of a random entry point; every 20th fails in a chunk, every 50th is bad input.
template <class M>
void
exercise(M & m, std::mt19937_64 & rng, long i)
{
  const int64_t batch = std::uniform_int_distribution<int64_t>(0, 32)(rng);
  const at::Tensor eps = strains(batch, uint64_t(i)), v = strains(batch, uint64_t(i) + 1);
  const TensorMap in{{"strain", eps}};
  if (i % 20 == 0)
    m.set_chunk_hook([](const at::Device &, std::size_t ordinal, int64_t, int64_t)
                     { throw ConvergenceError("soak: chunk " + std::to_string(ordinal)); });
  try
  {
    if (i % 50 == 0)
      m.forward({{"strain", at::zeros({batch, 5}, f64())}});
    switch (std::uniform_int_distribution<int>(0, 4)(rng))
    {
      case 0:
        m.forward(in);
        break;
      case 1:
        m.jvp(in, {{"strain", v}});
        break;
      case 2:
        m.jacobian(in);
        break;
      case 3:
        m.param_jacobian(in);
        break;
      default:
        m.param_vjp(in, {{"stress", v}});
    }
  }
  catch (const Exception &)
  {
  }
  if (i % 20 == 0)
    m.set_chunk_hook({});
}
} // namespace

TEST_CASE("soak: constant memory, threads and files over 10^4 dispatches", "[soak]")
{
  const long n = env_count("NEML2_SOAK_DISPATCHES", 10000);
  const long warm = 1000;
  std::mt19937_64 rng(1234);
  auto pass = PassThroughCase::make(stub("elastic_promoted"), 0);
  auto sync = SyncSimpleCase::make(stub("elastic_promoted"), 4);
  auto async = AsyncSimpleCase::make(stub("elastic_promoted"), 4);
  auto hybrid = AsyncHybridCase::make(stub("elastic_promoted"), 4);
  auto any = AnyHybridCase::make(stub("elastic_promoted"), 4);
  const auto step = [&](long i)
  {
    switch (i % 5)
    {
      case 0:
        exercise(pass, rng, i);
        break;
      case 1:
        exercise(sync, rng, i);
        break;
      case 2:
        exercise(async, rng, i);
        break;
      case 3:
        exercise(hybrid, rng, i);
        break;
      default:
        exercise(any, rng, i);
    }
  };

  for (long i = 0; i < warm; ++i)
    step(i);
  const double rss0 = rss_mib();
  const std::size_t threads0 = settled_threads(), files0 = open_files();
  std::cout << "soak: after " << warm << " warm-up dispatches: RSS " << rss0 << " MiB, " << threads0
            << " threads, " << files0 << " open files" << std::endl;

  const auto t0 = std::chrono::steady_clock::now();
  double rss_half = rss0;
  for (long i = 0; i < n; ++i)
  {
    step(warm + i);
    if (i + 1 == n / 2)
      rss_half = rss_mib();
    if ((i + 1) % (n / 5 > 0 ? n / 5 : 1) == 0)
      std::cout << "soak: " << i + 1 << " dispatches: RSS " << rss_mib() << " MiB, "
                << threads_now() << " threads" << std::endl;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double rss1 = rss_mib();
  const std::size_t threads1 = settled_threads(), files1 = open_files();
  std::cout << "soak: " << n << " dispatches in " << seconds << " s: RSS " << rss0 << " -> " << rss1
            << " MiB (" << rss1 - rss0 << " MiB; second half " << rss1 - rss_half
            << " MiB), threads " << threads0 << " -> " << threads1 << ", open files " << files0
            << " -> " << files1 << std::endl;

  // Measured: about 0.1 MiB over the whole run and nothing over its second half. A leak
  // of 200 bytes per dispatch would grow the second half by 1 MiB.
#ifdef NEML2_SOAK_SANITIZED
  std::cout << "soak: resident memory not checked under a sanitizer (AddressSanitizer's "
               "quarantine holds freed memory, ThreadSanitizer's state grows with every thread "
               "started); the plain build checks it"
            << std::endl;
#else
  CHECK(rss1 - rss0 < 4.0);
  CHECK(rss1 - rss_half < 1.0);
#endif
  CHECK(threads1 == threads0);
  CHECK(files1 == files0);
}
