// Chrome-trace recording of dispatches: one event per chunk phase, viewable in Perfetto.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include "neml2/aoti/Exception.h"

namespace neml2::aoti::detail
{
/**
 * Collects complete ("X") events of the Chrome trace format and rewrites the file
 * after each dispatch, so a host that crashes later still leaves a readable trace.
 * Thread-safe; each worker thread becomes one named track ("cuda:0 #1").
 */
class Trace
{
public:
  /// The trace file asked for by the environment variable NEML2_TRACE, or "".
  static std::string path_from_env()
  {
    const char * p = std::getenv("NEML2_TRACE");
    return p ? std::string(p) : std::string();
  }

  /// Record into @p path (written by flush()).
  explicit Trace(std::string path) : _path(std::move(path)), _origin(clock::now()) {}

  /// The trace recording into @p path, shared by every model that traces to that file
  /// (so one file holds all of them, on one clock).
  static std::shared_ptr<Trace> open(const std::string & path)
  {
    static std::mutex registry_mutex;
    static std::map<std::string, std::weak_ptr<Trace>> registry;
    const std::lock_guard<std::mutex> lock(registry_mutex);
    if (auto t = registry[path].lock())
      return t;
    auto t = std::make_shared<Trace>(path);
    registry[path] = t;
    return t;
  }

  /// Microseconds since this trace started.
  double now_us() const
  {
    return std::chrono::duration<double, std::micro>(clock::now() - _origin).count();
  }

  /**
   * One phase of one chunk on the calling thread.
   * @param name phase, e.g. "copy in", "compute", "copy out"
   * @param device the chunk's device (names the track)
   * @param t0,t1 start and end from now_us()
   * @param begin,end the chunk's rows
   * @param ordinal the chunk's number in dispatch order
   */
  void add(const char * name, const at::Device & device, double t0, double t1, int64_t begin,
           int64_t end, std::size_t ordinal)
  {
    const std::lock_guard<std::mutex> lock(_mutex);
    if (_events.size() >= max_events)
      return;
    const int tid = track(device);
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "{\"name\": \"%s\", \"cat\": \"chunk\", \"ph\": \"X\", \"pid\": 1, \"tid\": %d, "
                  "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"device\": \"%s\", \"rows\": "
                  "\"[%lld, %lld)\", \"chunk\": %zu}}",
                  name, tid, t0, t1 - t0, device.str().c_str(), (long long)begin, (long long)end,
                  ordinal);
    _events.emplace_back(buf);
  }

  /// A whole call on the calling thread ("forward", "jvp", ...), on the host track.
  void add_call(const char * name, double t0, double t1, std::size_t chunks)
  {
    const std::lock_guard<std::mutex> lock(_mutex);
    if (_events.size() >= max_events)
      return;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "{\"name\": \"%s\", \"cat\": \"dispatch\", \"ph\": \"X\", \"pid\": 1, \"tid\": 0, "
                  "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"chunks\": %zu}}",
                  name, t0, t1 - t0, chunks);
    _events.emplace_back(buf);
  }

  /// Rewrite the trace file with every event so far; an unwritable path is a FatalError.
  void flush()
  {
    const std::lock_guard<std::mutex> lock(_mutex);
    std::ofstream out(_path, std::ios::trunc);
    if (!out)
      throw FatalError("cannot write the trace file '" + _path + "' (NEML2_TRACE)");
    out << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n"
        << "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, \"args\": "
           "{\"name\": \"dispatch\"}}";
    for (const auto & [key, tid] : _tracks)
      out << ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": " << tid
          << ", \"args\": {\"name\": \"" << key << "\"}}";
    for (const auto & e : _events)
      out << ",\n" << e;
    out << "\n]}\n";
  }

  /// Events kept at most; later ones are dropped so a long run cannot exhaust memory.
  static constexpr std::size_t max_events = 1 << 20;

private:
  using clock = std::chrono::steady_clock;

  // One track per (worker thread, device), numbered from 1 in order of first use.
  int track(const at::Device & device)
  {
    const auto id = std::make_pair(std::this_thread::get_id(), device.str());
    const auto it = _thread_ids.find(id);
    if (it != _thread_ids.end())
      return it->second;
    int lane = 0;
    for (const auto & [k, v] : _tracks)
      lane += k.rfind(device.str() + " #", 0) == 0;
    const std::string key = device.str() + " #" + std::to_string(lane);
    const int tid = int(_tracks.size()) + 1;
    _tracks[key] = tid;
    _thread_ids[id] = tid;
    return tid;
  }

  std::string _path;
  clock::time_point _origin;
  std::mutex _mutex;
  std::vector<std::string> _events;
  std::map<std::string, int> _tracks;
  std::map<std::pair<std::thread::id, std::string>, int> _thread_ids;
};
/// Wait for the current stream of @p device (a no-op on the CPU): traced phases then
/// measure the device's work, not just the launches.
inline void
sync_stream(const at::Device & device)
{
  if (device.is_cpu())
    return;
  const c10::impl::VirtualGuardImpl impl(device.type());
  impl.synchronizeStream(impl.getStream(device));
}
} // namespace neml2::aoti::detail
