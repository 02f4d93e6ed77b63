// Observers of a dispatch: the one interface for tracing, profiling, fault injection and users
// (the library's own observers are in neml2/aoti/observers/).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <vector>

#include <ATen/ATen.h>

#include "neml2/aoti/types.h"

namespace neml2::aoti
{
/// @brief What the last call of a DispatchedModel did (for tests, tuning and tracing).
struct DispatchInfo
{
  bool short_circuit = false;             ///< ran as one direct Model call: no slicing, no copy
  std::size_t chunks = 0;                 ///< chunks run (0 for a short circuit or B = 0)
  std::vector<std::size_t> device_chunks; ///< chunks run per scheduler device
  std::size_t parameter_syncs = 0;        ///< device parameter copies refreshed from the master map
};

/// @brief One chunk as an observer sees it: where it runs and which rows it holds.
struct ChunkInfo
{
  at::Device device;   ///< the device the chunk runs on
  std::size_t ordinal; ///< its number in dispatch order (0 for a short circuit)
  int64_t begin;       ///< first row
  int64_t end;         ///< one past the last row
};

/**
 * @brief When one chunk's phases ended, in microseconds on the observers' clock
 * (neml2::aoti::observer_clock_us()). Measured only when an observer asks for it.
 */
struct ChunkTiming
{
  double start;    ///< the chunk began (before its inputs were copied)
  double staged;   ///< its inputs were on the device
  double computed; ///< the graph finished on the device
  double gathered; ///< its results were in the caller's outputs; negative when they are
                   ///< returned as computed (a short circuit)
};

/// @brief Microseconds on the steady clock that every observer's timestamps use.
inline double
observer_clock_us()
{
  using clock = std::chrono::steady_clock;
  static const clock::time_point origin = clock::now();
  return std::chrono::duration<double, std::micro>(clock::now() - origin).count();
}

/**
 * @brief Watches the calls of a DispatchedModel: one interface for every kind of
 * instrumentation (its trace, the chunk hook, torch-profiler scopes, a user's own).
 *
 * Attach one with `DispatchedModel::add_observer`. The call-level methods run on the
 * calling thread; the chunk-level ones on the thread that runs the chunk, possibly
 * several at once, so an observer shared by workers must be thread-safe. Every method
 * has an empty default. An exception thrown by on_chunk_begin is handled exactly like a
 * failure of that chunk (that is how tests inject faults); one thrown elsewhere ends the
 * call with that error.
 *
 * @code
 * struct CountChunks : neml2::aoti::DispatchObserver
 * {
 *   std::atomic<int> chunks{0};
 *   void on_chunk_end(const neml2::aoti::ChunkInfo &, const neml2::aoti::ChunkTiming *) override
 *   {
 *     ++chunks;
 *   }
 * };
 * auto counter = std::make_shared<CountChunks>();
 * model.add_observer(counter);
 * @endcode
 */
class DispatchObserver
{
public:
  virtual ~DispatchObserver() = default;

  /**
   * @brief Whether chunks' phases are timed (ChunkTiming). Timing waits for a GPU's
   * stream between the phases, so it costs the overlap of copies and compute.
   */
  virtual bool wants_timing() const { return false; }

  /// @brief A call of graph @p graph on @p batch points begins (calling thread).
  virtual void on_dispatch(Graph graph, int64_t batch)
  {
    (void)graph;
    (void)batch;
  }
  /// @brief A chunk is about to run (its thread). Throwing fails the chunk.
  virtual void on_chunk_begin(const ChunkInfo & chunk) { (void)chunk; }
  /// @brief A chunk finished; @p timing is null unless some observer wants_timing().
  virtual void on_chunk_end(const ChunkInfo & chunk, const ChunkTiming * timing)
  {
    (void)chunk;
    (void)timing;
  }
  /// @brief A chunk failed with @p error (already in the library's error types; its thread).
  virtual void on_error(const ChunkInfo & chunk, const std::exception & error)
  {
    (void)chunk;
    (void)error;
  }
  /**
   * @brief The call ended (calling thread), successfully or not (@p failed); @p info is
   * what it did, as last_dispatch() will report it.
   */
  virtual void on_dispatch_end(Graph graph, const DispatchInfo & info, bool failed)
  {
    (void)graph;
    (void)info;
    (void)failed;
  }
};

/**
 * @brief Called on the thread that runs a chunk, just before the chunk's graph runs.
 *
 * For instrumentation and fault injection: an exception it throws is handled
 * exactly like a failure of that chunk. Arguments: the device, the chunk's
 * ordinal in dispatch order, and its rows [begin, end). It is the observer
 * interface's on_chunk_begin as one function (DispatchedModel::set_chunk_hook).
 */
using ChunkHook =
    std::function<void(const at::Device & device, std::size_t ordinal, int64_t begin, int64_t end)>;

} // namespace neml2::aoti
