// Giving a thread's OpenMP threads back to the system.
#pragma once

#include <dlfcn.h>

#include <initializer_list>

namespace neml2::aoti::detail
{
/// A function of the OpenMP runtime torch loaded, by name, or null where none is loaded:
/// looked up at run time so that nothing links against an OpenMP runtime torch does not use.
inline void *
openmp_symbol(const char * name)
{
  if (void * symbol = dlsym(RTLD_DEFAULT, name))
    return symbol;
  for (const char * library : {"libgomp.so.1", "libiomp5.so", "libomp.so"})
    if (void * handle = dlopen(library, RTLD_LAZY | RTLD_NOLOAD))
      if (void * symbol = dlsym(handle, name))
        return symbol;
  return nullptr;
}

/// The type of OpenMP 5.0's `omp_pause_resource_all`.
using openmp_pause_fn = int (*)(int);

/// `omp_pause_resource_all` of the OpenMP runtime torch loaded, or null where none is.
inline openmp_pause_fn
openmp_pause()
{
  static const auto pause =
      reinterpret_cast<openmp_pause_fn>(openmp_symbol("omp_pause_resource_all"));
  return pause;
}

/// The type of `omp_in_parallel`.
using openmp_in_parallel_fn = int (*)();

/// `omp_in_parallel` of the OpenMP runtime torch loaded, or null where none is.
inline openmp_in_parallel_fn
openmp_in_parallel()
{
  static const auto in_parallel =
      reinterpret_cast<openmp_in_parallel_fn>(openmp_symbol("omp_in_parallel"));
  return in_parallel;
}

/// Whether release_openmp_threads() can do anything here (without doing it).
inline bool
can_release_openmp_threads()
{
  return openmp_pause() != nullptr;
}

/**
 * Frees the OpenMP thread team that the calling thread's parallel regions made (libgomp
 * keeps one per thread that ever ran a region, until that thread exits). Returns whether
 * a runtime took the request.
 *
 * Why: libgomp shortens the spinning of every idle team in the process to almost nothing
 * once its threads outnumber the cores, so each short parallel region then wakes its
 * threads from sleep. A worker lane that keeps the team of its last chunk makes every
 * small call on the other threads pay that wake-up (a 2^14-point direct CPU call beside
 * idle GPU lanes took 50 us against 10 us alone on a 16-core host: doc/performance.md).
 *
 * The call goes through `omp_pause_resource_all(omp_pause_soft)` of OpenMP 5.0
 * (openmp_symbol); where no runtime is loaded it does nothing. Inside a parallel region (a host
 * that dispatches from its own OpenMP loop) it does nothing either: the team is in use.
 */
inline bool
release_openmp_threads()
{
  const auto pause = openmp_pause();
  const auto in_parallel = openmp_in_parallel();
  if (!pause || (in_parallel && in_parallel()))
    return false;
  constexpr int omp_pause_soft = 1; // omp_pause_resource_t of OpenMP 5.0
  return pause(omp_pause_soft) == 0;
}
} // namespace neml2::aoti::detail
