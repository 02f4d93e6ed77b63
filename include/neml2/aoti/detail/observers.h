// The observers attached to one DispatchedModel, and how they are told.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <memory>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include "neml2/aoti/Observer.h"

namespace neml2::aoti::detail
{
/**
 * The observers of one model in one list: the chunk hook, the trace (set_hook and
 * set_trace, sugar that each keep one entry) and a user's observers, in that order; `timing` is
 * whether any of them wants ChunkTiming. Notifications that must not replace the error being
 * reported (on_error, a failed call's on_dispatch_end) drop what the observers throw.
 */
class ObserverSet
{
public:
  /// Whether none is attached (the dispatch then skips every notification).
  bool empty() const { return _all.empty(); }
  /// Whether some observer wants the chunks' phases timed.
  bool timing() const { return _timing; }
  /// Every observer, hook and trace first.
  const std::vector<DispatchObserver *> & all() const { return _all; }

  /// The chunk hook as an observer, first in the list (an empty hook clears it).
  void set_hook(ChunkHook hook)
  {
    place(_hook, hook ? std::make_shared<Hook>(std::move(hook)) : nullptr, 0);
  }
  /// The trace's observer, after the hook (null clears it).
  void set_trace(std::shared_ptr<DispatchObserver> trace)
  {
    place(_trace, std::move(trace), _hook ? 1 : 0);
  }
  /// Attach a user's observer after the others.
  void add(std::shared_ptr<DispatchObserver> o)
  {
    _list.push_back(std::move(o));
    collect();
  }
  /// Detach a user's observer.
  void remove(const std::shared_ptr<DispatchObserver> & o)
  {
    _list.erase(std::remove(_list.begin(), _list.end(), o), _list.end());
    collect();
  }

  /**
   * Run @p body as the chunk @p c with everyone told: on_chunk_begin, the body, on_chunk_end.
   * The body gets a ChunkTiming to fill (its start already set) when @p timed and an observer
   * wants timing, else null; on_chunk_end gets the same pointer. If anything throws, on_error
   * is called when @p report (a policy's chunk is reported by its handler instead) and the
   * exception propagates: an exception from on_chunk_begin fails the chunk.
   */
  template <class Body> auto chunk(const ChunkInfo & c, bool report, bool timed, Body && body) const
  {
    try
    {
      for (auto * o : _all)
        o->on_chunk_begin(c);
      ChunkTiming t{observer_clock_us(), 0, 0, -1};
      ChunkTiming * timing = timed && _timing ? &t : nullptr;
      auto out = body(timing);
      for (auto * o : _all)
        o->on_chunk_end(c, timing);
      return out;
    }
    catch (const std::exception & e)
    {
      if (report)
        error(c, e);
      throw;
    }
  }

  /// A chunk failed: tell everyone, dropping what they throw.
  void error(const ChunkInfo & chunk, const std::exception & e) const noexcept
  {
    for (auto * o : _all)
    {
      try
      {
        o->on_error(chunk, e);
      }
      catch (...)
      {
      }
    }
  }

  /// A call ended; after a failure, what the observers throw is dropped.
  void end(Graph g, const DispatchInfo & info, bool failed) const
  {
    for (auto * o : _all)
    {
      if (!failed)
        o->on_dispatch_end(g, info, false);
      else
        try
        {
          o->on_dispatch_end(g, info, true);
        }
        catch (...)
        {
          // The dispatch error is the one to report.
        }
    }
  }

private:
  struct Hook : DispatchObserver
  {
    explicit Hook(ChunkHook f) : hook(std::move(f)) {}
    void on_chunk_begin(const ChunkInfo & c) override { hook(c.device, c.ordinal, c.begin, c.end); }
    ChunkHook hook;
  };

  // Put @p o at @p position of the list in place of the entry @p slot names (set_hook's
  // and set_trace's own entry), and let @p slot name it.
  void place(const DispatchObserver *& slot, std::shared_ptr<DispatchObserver> o,
             std::size_t position)
  {
    _list.erase(std::remove_if(_list.begin(), _list.end(),
                               [&](const auto & e) { return slot && e.get() == slot; }),
                _list.end());
    slot = o.get();
    if (o)
      _list.insert(_list.begin() + std::ptrdiff_t(position), std::move(o));
    collect();
  }

  void collect()
  {
    _all.clear();
    for (const auto & o : _list)
      _all.push_back(o.get());
    _timing = std::any_of(_all.begin(), _all.end(),
                          [](const DispatchObserver * o) { return o->wants_timing(); });
  }

  std::vector<std::shared_ptr<DispatchObserver>> _list;       // the one registration list
  const DispatchObserver *_hook = nullptr, *_trace = nullptr; // the entries the sugar placed
  std::vector<DispatchObserver *> _all;                       // _list, as the dispatch reads it
  bool _timing = false;
};

/// Wait for the current stream of @p device (a no-op on the CPU): timed phases then
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
