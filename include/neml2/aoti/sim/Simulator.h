// A virtual-time simulator of devices, to evaluate schedulers without devices or models.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/execution/dispatch_loop.h"
#include "neml2/aoti/schedulers/Scheduler.h"

/// @brief Scheduling in virtual time: simulated devices, no models, no threads.
namespace neml2::aoti::sim
{
/**
 * @brief A simulated device: what one chunk of n points costs.
 *
 * Alone on the device, a chunk takes `latency + handoff + transfer_latency + max(n, knee) *
 * seconds_per_point + n * transfer_seconds_per_point`: a fixed cost per call, the hand-off
 * to a worker lane, a device that is not full below `knee` points, and copies that grow
 * with the chunk (a direct call on inputs the device holds pays neither the hand-off nor
 * the copies: direct_seconds); above `cache_points` the compute costs
 * `cache_penalty` times more per point (the chunk no longer stays in cache). Chunks run on `lanes`
 * worker lanes (as AsyncPolicy gives a GPU two); when k lanes are busy, the device does `1 +
 * (lane_speedup - 1) (k - 1) / (lanes - 1)` times the work of one lane (copies overlapping
 * compute), shared evenly among them. While a chunk runs on the CPU (the device named "cpu"),
 * every other device works `1 + host_contention` times slower: a GPU's staging copies share
 * the host's cores and memory bandwidth with the CPU's chunks.
 *
 * @code
 * sim::Device gpu;
 * gpu.name = "cuda:0";
 * gpu.latency = 40e-6;
 * gpu.seconds_per_point = 0.5e-9;
 * gpu.knee = 65536;
 * gpu.transfer_seconds_per_point = 4e-9;
 * gpu.lanes = 2;
 * gpu.lane_speedup = 1.6;
 * @endcode
 */
struct Device
{
  std::string name = "cpu";     ///< for reports, e.g. "cpu" or "cuda:0"
  double latency = 0;           ///< seconds per chunk: launch and synchronisation
  double handoff = 0;           ///< seconds per chunk for the hand-off to a worker lane
  double seconds_per_point = 0; ///< compute seconds per point on a full device
  int64_t knee = 0;             ///< points below which a chunk costs as much as knee points
  double transfer_latency = 0;  ///< seconds per chunk for the copies (0 on the CPU)
  double transfer_seconds_per_point = 0; ///< copy seconds per point, both directions
  std::size_t lanes = 1;                 ///< chunks that can run at once
  double lane_speedup = 1;               ///< work done with every lane busy, relative to one lane
  double noise = 0;          ///< each chunk's time is scaled by a factor in [1 - noise, 1 + noise]
  double outlier_rate = 0;   ///< fraction of chunks that take outlier_factor times longer
  double outlier_factor = 1; ///< slowdown of an outlier chunk
  double cold_seconds = 0;   ///< extra time of the first chunk the device runs (warm-up)
  int64_t cache_points = 0;  ///< above this many points a chunk no longer stays in cache (0: never)
  double cache_penalty = 1;  ///< compute cost per point of a chunk that does not stay in cache
  double host_contention = 0; ///< slowdown, less 1, while a chunk runs on the CPU (staging)

  /// @brief A chunk's time alone on the device, without noise or warm-up.
  double seconds(int64_t n) const
  {
    return direct_seconds(n) + handoff + transfer_latency + double(n) * transfer_seconds_per_point;
  }

  /// @brief One direct call on @p n points the device holds: no hand-off, no copies.
  double direct_seconds(int64_t n) const
  {
    const double cache = cache_points > 0 && n > cache_points ? cache_penalty : 1;
    return latency + double(std::max(n, knee)) * seconds_per_point * cache;
  }

  /// @brief The device's work rate with @p k chunks running, relative to one lane.
  double speedup(std::size_t k) const
  {
    if (lanes <= 1 || k <= 1)
      return 1;
    const double busy = double(std::min(k, lanes) - 1) / double(lanes - 1);
    return 1 + (lane_speedup - 1) * busy;
  }
};

/// @brief One chunk of a simulated dispatch.
struct Chunk
{
  std::size_t device; ///< index into the scheduler's devices
  int64_t begin;      ///< first row
  int64_t size;       ///< points
  double start;       ///< virtual seconds since the dispatch began
  double end;         ///< virtual seconds since the dispatch began
  bool outlier;       ///< slowed down by Device::outlier_factor
};

/// @brief What one simulated dispatch did.
struct Run
{
  int64_t batch = 0;              ///< points dispatched
  double seconds = 0;             ///< virtual time until the last chunk ended
  std::vector<Chunk> chunks;      ///< in dispatch order
  std::vector<int64_t> points;    ///< points run per device
  std::vector<int64_t> peak_load; ///< most points in flight per device
  std::vector<double> finished;   ///< when each device ran its last chunk (0: none)
  bool whole = false;             ///< the scheduler short-circuited: one direct call, one chunk

  /// @brief Points per virtual second.
  double throughput() const { return seconds > 0 ? double(batch) / seconds : 0; }
};

/**
 * @brief Runs schedulers against simulated devices in virtual time.
 *
 * First, as DispatchedModel does, it asks the scheduler's short_circuit() with the device
 * that holds the inputs: when that names the device, the batch runs as one direct call
 * (Device::direct_seconds). Else it drives the
 * scheduler through AsyncPolicy's own loop (execution/dispatch_loop.h):
 * `begin`, then `next` until it declines or the batch is assigned, then the
 * earliest completion is reported through `observe` and the loop repeats; only
 * the clock (virtual) and the workers (simulated lanes) differ. Chunks go
 * round-robin to their device's lanes; a lane runs its chunks in order. The
 * same devices, seed and scheduler decisions give the same run, on every platform.
 * Either way, observe_dispatch() is then told the dispatch's time.
 *
 * Device i of the scheduler is `devices[i]` of the simulator. Warm-up
 * (Device::cold_seconds) is paid once per device over the simulator's life,
 * like a process's first call.
 *
 * @code
 * sim::Simulator s({cpu, gpu});
 * AdaptiveHybrid::Config cfg;
 * cfg.devices = {"cpu", "cuda:0"};
 * cfg.virtual_devices = true;
 * AdaptiveHybrid sched(cfg);
 * for (int call = 0; call < 5; ++call)
 *   std::cout << s.run(sched, 1 << 24).throughput() << "\n";
 * @endcode
 */
class Simulator
{
public:
  /// @brief Simulate @p devices; @p seed drives the noise and the outliers.
  explicit Simulator(std::vector<Device> devices, std::uint64_t seed = 1)
      : _devices(std::move(devices)),
        _warm(_devices.size(), false),
        _rng(seed)
  {
    if (_devices.empty())
      throw FatalError("sim::Simulator: no devices");
    for (std::size_t i = 0; i < _devices.size(); ++i)
      if (_devices[i].lanes == 0 || _devices[i].lane_speedup <= 0 || _devices[i].seconds(1) <= 0 ||
          _devices[i].noise < 0 || _devices[i].noise >= 1 || _devices[i].host_contention < 0)
        throw FatalError("sim::Simulator: devices[" + std::to_string(i) +
                         "] needs lanes >= 1, lane_speedup > 0, a positive cost, 0 <= noise < 1 "
                         "and host_contention >= 0");
  }

  /// @brief The simulated devices.
  const std::vector<Device> & devices() const { return _devices; }

  /**
   * @brief Dispatch @p batch points through @p scheduler.
   * @param scheduler the scheduler under test; its devices must match devices() in number
   * @param batch points in the whole dispatch
   * @param client the id passed to Scheduler::begin (as one execution policy would)
   * @param inputs the device that holds the inputs (the host, by default)
   * @throws FatalError when the scheduler assigns a device it does not have, an
   *         empty or oversized chunk, or nothing while every device is idle
   */
  template <class S>
  Run run(const S & scheduler, int64_t batch, std::uint64_t client = 1,
          const at::Device & inputs = at::Device(at::kCPU))
  {
    const std::size_t n = scheduler.devices().size();
    if (n != _devices.size())
      throw FatalError("sim::Simulator: the scheduler has " + std::to_string(n) +
                       " devices, the simulator " + std::to_string(_devices.size()));
    Run run;
    run.batch = batch;
    run.points.assign(n, 0);
    run.peak_load.assign(n, 0);
    run.finished.assign(n, 0);
    const auto whole = batch > 0 ? scheduler.short_circuit(client, batch, inputs) : std::nullopt;
    if (whole && *whole < n && scheduler.devices()[*whole] == inputs)
    {
      const std::size_t d = *whole;
      bool outlier = false;
      const double t = noisy(d, _devices[d].direct_seconds(batch), outlier);
      run.whole = true;
      run.chunks.push_back({d, 0, batch, 0, t, outlier});
      run.points[d] = run.peak_load[d] = batch;
      run.finished[d] = run.seconds = t;
      scheduler.observe_dispatch(client, batch, t);
      return run;
    }
    Backend backend(*this, run);
    detail::dispatch(scheduler, client, batch, backend);
    run.seconds = backend.now();
    if (batch > 0)
      scheduler.observe_dispatch(client, batch, run.seconds);
    return run;
  }

  /**
   * @brief The best time of device @p d alone on @p batch points, without noise
   * or warm-up: the batch in equal chunks round-robin over its lanes, the best
   * of 1 to 4096 chunks and of chunks of 2^10 to 2^30 points (the baseline of
   * "sum of single-device throughputs").
   */
  double alone_seconds(std::size_t d, int64_t batch) const
  {
    const Device & dev = _devices.at(d);
    double best = std::numeric_limits<double>::infinity();
    // k chunks of `chunk` points, every lane busy until the last round.
    const auto time = [&](int64_t k, int64_t chunk)
    {
      const std::size_t lanes = std::min<std::size_t>(dev.lanes, std::size_t(k));
      const double rounds = std::ceil(double(k) / double(lanes));
      return rounds * dev.seconds(chunk) * double(lanes) / dev.speedup(lanes);
    };
    for (int64_t k = 1; k <= 4096 && k <= batch; k *= 2)
      best = std::min(best, time(k, (batch + k - 1) / k));
    for (int64_t chunk = 1024; chunk < batch && chunk <= (int64_t(1) << 30); chunk *= 2)
      best = std::min(best, time((batch + chunk - 1) / chunk, chunk));
    return best;
  }

  /// @brief Sum over devices of batch / alone_seconds: the ideal co-execution throughput.
  double sum_of_alone_throughputs(int64_t batch) const
  {
    double sum = 0;
    for (std::size_t d = 0; d < _devices.size(); ++d)
      sum += double(batch) / alone_seconds(d, batch);
    return sum;
  }

  /**
   * @brief A bound on any scheduler: the time, without noise or warm-up, when
   * every device gets one round of equal chunks (one per lane) sized so that
   * all devices finish together. Chunking finer only adds fixed costs.
   */
  double balanced_seconds(int64_t batch) const
  {
    // Time of device d on n points in one round over its best number of lanes.
    const auto round = [&](std::size_t d, int64_t n)
    {
      const Device & dev = _devices[d];
      double best = std::numeric_limits<double>::infinity();
      for (std::size_t l = 1; l <= dev.lanes && int64_t(l) <= n; ++l)
        best = std::min(best, dev.seconds((n + int64_t(l) - 1) / int64_t(l)) * double(l) /
                                  dev.speedup(l));
      return best;
    };
    // Points device d finishes by T (the most n with round(d, n) <= T).
    const auto points = [&](std::size_t d, double T)
    {
      int64_t lo = 0, hi = batch;
      while (lo < hi)
      {
        const int64_t mid = lo + (hi - lo + 1) / 2;
        if (round(d, mid) <= T)
          lo = mid;
        else
          hi = mid - 1;
      }
      return lo;
    };
    double lo = 0, hi = std::numeric_limits<double>::infinity();
    for (std::size_t d = 0; d < _devices.size(); ++d)
      hi = std::min(hi, round(d, batch));
    for (int it = 0; it < 100; ++it)
    {
      const double T = 0.5 * (lo + hi);
      int64_t sum = 0;
      for (std::size_t d = 0; d < _devices.size() && sum < batch; ++d)
        sum += points(d, T);
      (sum >= batch ? hi : lo) = T;
    }
    return hi;
  }

private:
  /// detail::dispatch()'s backend: simulated lanes in virtual time.
  class Backend
  {
  public:
    Backend(Simulator & sim, Run & run) : _sim(sim), _run(run), _lanes(run.points.size())
    {
      for (std::size_t d = 0; d < _lanes.size(); ++d)
        _lanes[d].resize(_sim._devices[d].lanes);
      _next_lane.assign(_lanes.size(), 0);
      _load.assign(_lanes.size(), 0);
    }

    /// Virtual seconds since the dispatch began.
    double now() const { return _now; }

    bool accepts(std::size_t) const { return true; }

    void submit(const Assignment & a, std::size_t /*ordinal: the index into run.chunks*/,
                int64_t begin)
    {
      const std::size_t d = a.device;
      _run.chunks.push_back({d, begin, a.size, _now, _now, false});
      auto & lane = _lanes[d][_next_lane[d]++ % _lanes[d].size()];
      lane.push_back({_run.chunks.size() - 1, _sim.cost(d, a.size, _run.chunks.back().outlier)});
      _load[d] += a.size;
      _run.peak_load[d] = std::max(_run.peak_load[d], _load[d]);
    }

    detail::ChunkDone wait()
    {
      // The next completion: running chunks share their device's rate.
      double dt = std::numeric_limits<double>::infinity();
      std::size_t done_dev = 0, done_lane = 0;
      for (std::size_t d = 0; d < _lanes.size(); ++d)
      {
        const double rate = this->rate(d);
        for (std::size_t l = 0; l < _lanes[d].size(); ++l)
          if (!_lanes[d][l].empty() && _lanes[d][l].front().work / rate < dt)
          {
            dt = _lanes[d][l].front().work / rate;
            done_dev = d;
            done_lane = l;
          }
      }
      for (std::size_t d = 0; d < _lanes.size(); ++d)
      {
        const double rate = this->rate(d);
        for (auto & lane : _lanes[d])
          if (!lane.empty())
            lane.front().work -= dt * rate;
      }
      _now += dt;
      auto & lane = _lanes[done_dev][done_lane];
      const std::size_t index = lane.front().chunk;
      lane.pop_front();
      Chunk & c = _run.chunks[index];
      c.end = _now;
      if (!lane.empty())
        _run.chunks[lane.front().chunk].start = _now; // it waited for the lane until now
      _load[done_dev] -= c.size;
      _run.points[done_dev] += c.size;
      _run.finished[done_dev] = _now;
      return detail::ChunkDone{done_dev, index, c.size, c.start, c.end, nullptr};
    }

  private:
    /// Work per second of each running chunk on device @p d, with the CPU's contention.
    double rate(std::size_t d) const
    {
      bool host_busy = false;
      for (std::size_t e = 0; e < _lanes.size(); ++e)
        if (e != d && _sim._devices[e].name == "cpu")
          for (const auto & lane : _lanes[e])
            host_busy = host_busy || !lane.empty();
      const double contention = host_busy ? 1 + _sim._devices[d].host_contention : 1;
      return _sim.device_rate(d, _lanes[d]) / contention;
    }

    struct Active
    {
      std::size_t chunk; // index into run.chunks
      double work;       // seconds left at one lane's rate
    };
    Simulator & _sim;
    Run & _run;
    std::vector<std::vector<std::deque<Active>>> _lanes; // per device, per lane
    std::vector<std::size_t> _next_lane;
    std::vector<int64_t> _load;
    double _now = 0;
  };

  /// Seconds a chunk of @p size needs at one lane's rate, with noise, outliers and warm-up.
  double cost(std::size_t d, int64_t size, bool & outlier)
  {
    return noisy(d, _devices[d].seconds(size), outlier);
  }
  /// @p t with device @p d's noise, outliers and warm-up.
  double noisy(std::size_t d, double t, bool & outlier)
  {
    const Device & dev = _devices[d];
    if (dev.noise > 0)
      t *= 1 + dev.noise * (2 * uniform() - 1);
    outlier = dev.outlier_rate > 0 && uniform() < dev.outlier_rate;
    if (outlier)
      t *= dev.outlier_factor;
    if (!_warm[d])
    {
      t += dev.cold_seconds;
      _warm[d] = true;
    }
    return t;
  }

  /// Work per second of each running chunk on device @p d.
  template <class Lanes> double device_rate(std::size_t d, const Lanes & lanes) const
  {
    std::size_t busy = 0;
    for (const auto & l : lanes)
      busy += !l.empty();
    return busy == 0 ? 1 : _devices[d].speedup(busy) / double(busy);
  }

  /// A uniform number in [0, 1) from splitmix64: the same sequence on every platform.
  double uniform()
  {
    std::uint64_t z = (_rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return double(z >> 11) * 0x1.0p-53;
  }

  std::vector<Device> _devices;
  std::vector<bool> _warm;
  std::uint64_t _rng;
};
} // namespace neml2::aoti::sim
