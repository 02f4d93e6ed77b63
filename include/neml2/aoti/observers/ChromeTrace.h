// An observer that records dispatches as a Chrome trace: one event per chunk phase, viewable
// in Perfetto. DispatchedModel::set_trace and NEML2_TRACE attach it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/Observer.h"
#include "neml2/aoti/detail/env.h"

namespace neml2::aoti
{
/**
 * Complete ("X") events of the Chrome trace format, kept in a ring of `capacity` events
 * and written to one file. Thread-safe; each worker thread is one named track ("cuda:0 #1").
 *
 * Cost is linear in the events. Until the ring first overflows, flush() appends the
 * events added since the last flush to the file (the closing bracket is overwritten),
 * so the file is complete after every call and a host that crashes later still leaves
 * a readable trace. Once events have been dropped, the file is rewritten from the ring
 * (the latest `capacity` events, after a note of how many earlier ones were dropped)
 * whenever `capacity` new events have arrived, and on flush(true) and at destruction:
 * each event is written at most twice.
 */
class ChromeTraceFile
{
public:
  /// Events kept when NEML2_TRACE_EVENTS does not say otherwise.
  static constexpr std::size_t default_capacity = std::size_t(1) << 20;

  /// The trace file asked for by the environment variable NEML2_TRACE, or "".
  static std::string path_from_env()
  {
    const char * p = std::getenv("NEML2_TRACE");
    return p ? std::string(p) : std::string();
  }

  /// The ring's size from NEML2_TRACE_EVENTS (a positive integer), else default_capacity.
  static std::size_t capacity_from_env()
  {
    return detail::positive_from_env("NEML2_TRACE_EVENTS").value_or(default_capacity);
  }

  /// Record into @p path, keeping at most @p capacity events.
  explicit ChromeTraceFile(std::string path, std::size_t capacity = capacity_from_env())
      : _path(std::move(path)),
        _ring(capacity)
  {
    if (capacity == 0)
      throw FatalError("a trace must keep at least one event");
  }

  ChromeTraceFile(const ChromeTraceFile &) = delete;
  ChromeTraceFile & operator=(const ChromeTraceFile &) = delete;

  /// Writes what the file does not hold yet; an error here is dropped (no throw from a
  /// destructor): flush() reports it on the calls before.
  ~ChromeTraceFile()
  {
    try
    {
      flush(true);
    }
    catch (const Exception &)
    {
    }
  }

  /// The trace recording into @p path, shared by every model that traces to that file
  /// (so one file holds all of them, on one clock).
  static std::shared_ptr<ChromeTraceFile> open(const std::string & path)
  {
    static std::mutex registry_mutex;
    static std::map<std::string, std::weak_ptr<ChromeTraceFile>> registry;
    const std::lock_guard<std::mutex> lock(registry_mutex);
    if (auto t = registry[path].lock())
      return t;
    auto t = std::make_shared<ChromeTraceFile>(path);
    registry[path] = t;
    return t;
  }

  /// Microseconds on the observers' clock.
  static double now_us() { return observer_clock_us(); }

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
    const std::string dev = device.str();
    const std::lock_guard<std::mutex> lock(_mutex);
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "{\"name\": \"%s\", \"cat\": \"chunk\", \"ph\": \"X\", \"pid\": 1, \"tid\": %d, "
                  "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"device\": \"%s\", \"rows\": "
                  "\"[%lld, %lld)\", \"chunk\": %zu}}",
                  name, track(dev), t0, t1 - t0, dev.c_str(), (long long)begin, (long long)end,
                  ordinal);
    push(buf);
  }

  /// A whole call on the calling thread ("forward", "jvp", ...), on the host track.
  void add_call(const char * name, double t0, double t1, std::size_t chunks)
  {
    const std::lock_guard<std::mutex> lock(_mutex);
    char buf[256];
    std::snprintf(
        buf, sizeof buf,
        "{\"name\": \"%s\", \"cat\": \"dispatch\", \"ph\": \"X\", \"pid\": 1, \"tid\": 0, "
        "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"chunks\": %zu}}",
        name, t0, t1 - t0, chunks);
    push(buf);
  }

  /**
   * Bring the file up to date: append the new events, or, once events have been dropped,
   * rewrite it from the ring when @p force or when `capacity` events arrived since the
   * last rewrite. An unwritable path is a FatalError.
   */
  void flush(bool force = false)
  {
    const std::lock_guard<std::mutex> lock(_mutex);
    if (_dropped == 0)
      append();
    else if (force || _since_rewrite >= _ring.size())
      rewrite();
  }

  /// Events the ring holds at most.
  std::size_t capacity() const { return _ring.size(); }
  /// Events added so far and no longer held (the ring overflowed).
  std::size_t dropped() const
  {
    const std::lock_guard<std::mutex> lock(_mutex);
    return _dropped;
  }
  /// Bytes written to the file so far, over every flush.
  std::size_t bytes_written() const
  {
    const std::lock_guard<std::mutex> lock(_mutex);
    return _bytes;
  }

private:
  static constexpr const char * header = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n"
                                         "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, "
                                         "\"tid\": 0, \"args\": {\"name\": \"dispatch\"}}";
  static constexpr const char * footer = "\n]}\n";
  static constexpr long footer_size = 4;

  // The ring: _count events ending just before _next; _unwritten of them (the latest)
  // are not in the file yet.
  void push(const char * event)
  {
    _ring[_next] = event;
    _next = (_next + 1) % _ring.size();
    if (_count == _ring.size())
      ++_dropped;
    else
      ++_count;
    _unwritten = std::min(_unwritten + 1, _count);
    ++_since_rewrite;
  }

  const std::string & latest(std::size_t k) const // k = 0 is the oldest held
  {
    return _ring[(_next + _ring.size() - _count + k) % _ring.size()];
  }

  std::string track_meta(const std::string & key, int tid) const
  {
    return ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": " +
           std::to_string(tid) + ", \"args\": {\"name\": \"" + key + "\"}}";
  }

  std::FILE * open_file(const char * mode) const
  {
    std::FILE * f = std::fopen(_path.c_str(), mode);
    if (!f)
      throw FatalError("cannot write the trace file '" + _path + "' (NEML2_TRACE)");
    return f;
  }

  void write(std::FILE * f, const std::string & s)
  {
    if (std::fwrite(s.data(), 1, s.size(), f) != s.size())
    {
      std::fclose(f);
      throw FatalError("cannot write the trace file '" + _path + "' (NEML2_TRACE)");
    }
    _bytes += s.size();
  }

  void close(std::FILE * f)
  {
    if (std::fclose(f) != 0)
      throw FatalError("cannot write the trace file '" + _path + "' (NEML2_TRACE)");
  }

  // Append the tracks and events the file lacks, in place of its closing bracket.
  void append()
  {
    if (_started && _unwritten == 0 && _tracks_written == _track_order.size())
      return;
    std::FILE * f = nullptr;
    if (!_started)
    {
      f = open_file("wb");
      write(f, header);
    }
    else
    {
      f = open_file("r+b");
      if (std::fseek(f, -footer_size, SEEK_END) != 0)
      {
        std::fclose(f);
        throw FatalError("cannot write the trace file '" + _path + "' (NEML2_TRACE)");
      }
    }
    std::string chunk;
    for (; _tracks_written < _track_order.size(); ++_tracks_written)
    {
      const auto & key = _track_order[_tracks_written];
      chunk += track_meta(key, _tracks.at(key));
    }
    for (std::size_t k = _count - _unwritten; k < _count; ++k)
      chunk += ",\n" + latest(k);
    chunk += footer;
    write(f, chunk);
    close(f);
    _started = true;
    _unwritten = 0;
  }

  // Write the whole file from the ring, after a note of the dropped events.
  void rewrite()
  {
    std::FILE * f = open_file("wb");
    std::string text = header;
    for (const auto & key : _track_order)
      text += track_meta(key, _tracks.at(key));
    text += ",\n{\"name\": \"neml2 trace: " + std::to_string(_dropped) +
            " earlier events dropped (the trace keeps the latest " + std::to_string(_ring.size()) +
            "; NEML2_TRACE_EVENTS sets how many)\", \"ph\": \"i\", \"s\": \"g\", \"pid\": 1, "
            "\"tid\": 0, \"ts\": 0}";
    write(f, text);
    for (std::size_t k = 0; k < _count; ++k)
      write(f, ",\n" + latest(k));
    write(f, footer);
    close(f);
    _started = true;
    _unwritten = 0;
    _since_rewrite = 0;
    _tracks_written = _track_order.size();
  }

  // One track per (worker thread, device), numbered from 1 in order of first use.
  int track(const std::string & device)
  {
    const auto id = std::make_pair(std::this_thread::get_id(), device);
    const auto it = _thread_ids.find(id);
    if (it != _thread_ids.end())
      return it->second;
    int lane = 0;
    for (const auto & key : _track_order)
      lane += key.rfind(device + " #", 0) == 0;
    const std::string key = device + " #" + std::to_string(lane);
    const int tid = int(_track_order.size()) + 1;
    _tracks[key] = tid;
    _track_order.push_back(key);
    _thread_ids[id] = tid;
    return tid;
  }

  std::string _path;
  mutable std::mutex _mutex;
  std::vector<std::string> _ring;
  std::size_t _next = 0, _count = 0, _unwritten = 0, _dropped = 0, _since_rewrite = 0;
  bool _started = false;
  std::size_t _bytes = 0;
  std::map<std::string, int> _tracks;
  std::vector<std::string> _track_order;
  std::size_t _tracks_written = 0;
  std::map<std::pair<std::thread::id, std::string>, int> _thread_ids;
};

/// The observer that records a model's calls into a (shared) ChromeTraceFile and flushes it after
/// each call.
class ChromeTrace : public DispatchObserver
{
public:
  /// Record into @p trace.
  explicit ChromeTrace(std::shared_ptr<ChromeTraceFile> trace) : _trace(std::move(trace)) {}
  /// Record into the file @p path, shared with every other ChromeTrace of that path.
  explicit ChromeTrace(const std::string & path) : ChromeTrace(ChromeTraceFile::open(path)) {}
  bool wants_timing() const override { return true; }
  void on_dispatch(Graph, int64_t) override { _t0 = ChromeTraceFile::now_us(); }
  void on_chunk_end(const ChunkInfo & c, const ChunkTiming * t) override
  {
    if (!t)
      return;
    _trace->add("copy in", c.device, t->start, t->staged, c.begin, c.end, c.ordinal);
    _trace->add("compute", c.device, t->staged, t->computed, c.begin, c.end, c.ordinal);
    if (t->gathered >= 0)
      _trace->add("copy out", c.device, t->computed, t->gathered, c.begin, c.end, c.ordinal);
  }
  /// Adds the call and flushes; a flush error is a FatalError unless the call failed,
  /// whose own error is then the one to report.
  void on_dispatch_end(Graph g, const DispatchInfo & info, bool failed) override
  {
    _trace->add_call(graph_name(g), _t0, ChromeTraceFile::now_us(), info.chunks);
    try
    {
      _trace->flush();
    }
    catch (const Exception &)
    {
      if (!failed)
        throw;
    }
  }
  /// The trace recorded into.
  const std::shared_ptr<ChromeTraceFile> & trace() const { return _trace; }

private:
  std::shared_ptr<ChromeTraceFile> _trace;
  double _t0 = 0;
};
} // namespace neml2::aoti
