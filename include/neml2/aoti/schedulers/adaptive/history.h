// What AdaptiveHybrid keeps between dispatches: per client and batch size, per device, the
// recent chunk times and what they showed, in a table that drops its least recently used entry.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "neml2/aoti/schedulers/adaptive/way_trial.h"

namespace neml2::aoti::detail::adaptive
{
/// Samples kept per device and entry (the most recent ones).
constexpr std::size_t window = 32;
/// Entries kept (client, batch size) before the least recently used one is dropped.
constexpr std::size_t max_entries = 64;

/// One measured chunk, as kept between dispatches.
struct Sample
{
  int64_t size;   ///< points
  double seconds; ///< device time charged to it
  bool cold;      ///< the first chunk a client ran on the device: warm-up, not steady state
};

/// What is kept between dispatches about one device.
struct History
{
  std::deque<Sample> window; ///< the most recent samples, oldest first, at most `window`
  int64_t largest = 0;       ///< largest chunk measured
  int concurrency = 1;       ///< most chunks seen running at once
  bool paired = false;       ///< two chunks were in flight at once: concurrency is measured
  int64_t ceiling = 0;       ///< no larger chunks: they ran clearly slower per point
  bool explored = false;     ///< the probes grew until larger chunks stopped paying
  bool sloped = false;       ///< warm chunks of two sizes were measured: a fit had its slope
  bool ran = false;          ///< some chunk of this client has run on the device
};

/// What was learned for one (client, batch size): one History per device.
struct Entry
{
  std::vector<History> devices; ///< in the scheduler's device order
  std::uint64_t used = 0;       ///< when last used, in HistoryTable::acquire() calls
  /// Per device: the trial of a direct call against spreading, for inputs on that device.
  std::vector<WholeTrial> whole;
};

/**
 * The learned entries, keyed by (client, batch size), at most max_entries of them.
 *
 * A new batch size starts as a copy of the client's entry whose batch size is nearest on
 * a log scale; when the table is full the least recently used entry that no dispatch
 * holds is dropped. Not thread-safe: AdaptiveHybrid calls it under its mutex.
 */
class HistoryTable
{
public:
  /// A table for a scheduler of @p devices devices.
  explicit HistoryTable(std::size_t devices) : _devices(devices) {}

  /// The entry of (@p client, @p batch), created when missing, marked as the most recent.
  std::shared_ptr<Entry> acquire(std::uint64_t client, int64_t batch);
  /// The entry of (@p client, @p batch), or nullptr; does not mark it used.
  std::shared_ptr<Entry> find(std::uint64_t client, int64_t batch);

  /// Number of entries.
  std::size_t size() const { return _entries.size(); }
  /// Drop every entry.
  void clear() { _entries.clear(); }

private:
  std::shared_ptr<Entry> entry_for(std::uint64_t client, int64_t batch);

  std::size_t _devices;
  std::map<std::pair<std::uint64_t, int64_t>, std::shared_ptr<Entry>> _entries;
  std::uint64_t _uses = 0;
};

// ---------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------

inline std::shared_ptr<Entry>
HistoryTable::acquire(std::uint64_t client, int64_t batch)
{
  auto e = entry_for(client, batch);
  e->used = ++_uses;
  return e;
}

inline std::shared_ptr<Entry>
HistoryTable::find(std::uint64_t client, int64_t batch)
{
  const auto it = _entries.find({client, batch});
  return it == _entries.end() ? nullptr : it->second;
}

inline std::shared_ptr<Entry>
HistoryTable::entry_for(std::uint64_t client, int64_t batch)
{
  const auto key = std::make_pair(client, batch);
  const auto it = _entries.find(key);
  if (it != _entries.end())
    return it->second;
  auto e = std::make_shared<Entry>();
  e->devices.resize(_devices);
  e->whole.resize(_devices); // timed per batch size: not taken from the nearest entry
  double best = std::numeric_limits<double>::infinity();
  for (const auto & [k, other] : _entries)
  {
    const double gap = std::abs(std::log(double(std::max<int64_t>(k.second, 1))) -
                                std::log(double(std::max<int64_t>(batch, 1))));
    if (k.first == client && gap < best)
    {
      best = gap;
      e->devices = other->devices;
    }
  }
  if (_entries.size() >= max_entries)
  {
    // An entry a dispatch still holds (use_count > 1) is not dropped under it.
    auto victim = _entries.end();
    for (auto i = _entries.begin(); i != _entries.end(); ++i)
      if (i->second.use_count() == 1 &&
          (victim == _entries.end() || i->second->used < victim->second->used))
        victim = i;
    if (victim != _entries.end())
      _entries.erase(victim);
  }
  _entries.emplace(key, e);
  return e;
}
} // namespace neml2::aoti::detail::adaptive
