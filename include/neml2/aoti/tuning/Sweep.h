// Sweep: throughput measured per device and batch size, and the StaticHybrid config it recommends.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/schedulers/StaticHybrid.h"

namespace neml2::aoti
{
/**
 * @brief Throughput of each device alone, measured at several batch sizes
 * (chunk sizes), and the StaticHybrid configuration that follows from it.
 *
 * The tuning tool (bench/tune_hybrid.cpp) fills one from real runs; the
 * simulator tests fill one from simulated devices. The recommendation per
 * device is the smallest batch size whose throughput is within @p tolerance
 * of the device's best (small chunks balance better at the end of a batch;
 * smaller ones than that waste the device), capacity twice that (the next
 * chunk is ready when one finishes), and priorities by best throughput (at the
 * end, the last chunks go to the fastest device).
 *
 * @code
 * Sweep s;
 * s.add("cpu", 4096, 1 << 20, 0.0021);
 * s.add("cpu", 65536, 1 << 20, 0.0012);
 * StaticHybrid::Config cfg = s.recommend();
 * std::cout << Sweep::to_cpp(cfg);
 * @endcode
 */
class Sweep
{
public:
  /// @brief One measurement: @p points run in chunks of @p batch_size took @p seconds.
  struct Point
  {
    int64_t batch_size; ///< chunk size
    int64_t points;     ///< points run in the measurement
    double seconds;     ///< time of the measurement

    /// @brief Points per second.
    double throughput() const { return seconds > 0 ? double(points) / seconds : 0; }
  };

  /// @brief Record a measurement of @p device (devices keep the order of their first measurement).
  void add(const std::string & device, int64_t batch_size, int64_t points, double seconds)
  {
    if (batch_size <= 0 || points <= 0 || !(seconds > 0))
      throw FatalError("Sweep: a measurement needs batch_size > 0, points > 0 and seconds > 0");
    const auto i =
        std::size_t(std::find(_devices.begin(), _devices.end(), device) - _devices.begin());
    if (i == _devices.size())
    {
      _devices.push_back(device);
      _points.emplace_back();
    }
    _points[i].push_back({batch_size, points, seconds});
  }

  /// @brief The devices measured.
  const std::vector<std::string> & devices() const { return _devices; }
  /// @brief The measurements of device number @p d, in the order they were added.
  const std::vector<Point> & points(std::size_t d) const { return _points.at(d); }

  /// @brief The best throughput of device number @p d.
  double peak(std::size_t d) const
  {
    double best = 0;
    for (const auto & p : _points.at(d))
      best = std::max(best, p.throughput());
    return best;
  }

  /// @brief The smallest batch size of device @p d within @p tolerance of its peak.
  int64_t knee(std::size_t d, double tolerance = 0.05) const
  {
    const double want = (1 - tolerance) * peak(d);
    int64_t best = 0;
    for (const auto & p : _points.at(d))
      if (p.throughput() >= want && (best == 0 || p.batch_size < best))
        best = p.batch_size;
    return best;
  }

  /// @brief The recommended configuration (see the class description).
  StaticHybrid::Config recommend(double tolerance = 0.05) const
  {
    if (_devices.empty())
      throw FatalError("Sweep: nothing measured");
    StaticHybrid::Config cfg;
    cfg.devices = _devices;
    for (std::size_t d = 0; d < _devices.size(); ++d)
    {
      cfg.batch_sizes.push_back(knee(d, tolerance));
      cfg.capacities.push_back(2 * cfg.batch_sizes.back());
      cfg.priorities.push_back(rank(d));
    }
    return cfg;
  }

  /**
   * @brief A configuration whose chunks last about @p seconds on every device:
   * each device's batch size is its peak throughput times @p seconds (at least
   * its smallest measured size). The one-parameter family a hand tuner searches.
   */
  StaticHybrid::Config for_chunk_seconds(double seconds) const
  {
    StaticHybrid::Config cfg = recommend();
    for (std::size_t d = 0; d < _devices.size(); ++d)
    {
      int64_t smallest = 0;
      for (const auto & p : _points[d])
        smallest = smallest == 0 ? p.batch_size : std::min(smallest, p.batch_size);
      cfg.batch_sizes[d] = std::max(smallest, int64_t(std::llround(peak(d) * seconds)));
      cfg.capacities[d] = 2 * cfg.batch_sizes[d];
    }
    return cfg;
  }

  /// @brief @p cfg as C++ source that builds it.
  static std::string to_cpp(const StaticHybrid::Config & cfg)
  {
    std::ostringstream os;
    const auto list = [&os](const auto & v, bool quote)
    {
      os << "{";
      for (std::size_t i = 0; i < v.size(); ++i)
        os << (i ? ", " : "") << (quote ? "\"" : "") << v[i] << (quote ? "\"" : "");
      os << "};\n";
    };
    os << "StaticHybrid::Config cfg;\n";
    os << "cfg.devices     = ";
    list(cfg.devices, true);
    os << "cfg.batch_sizes = ";
    list(cfg.batch_sizes, false);
    os << "cfg.capacities  = ";
    list(cfg.capacities, false);
    os << "cfg.priorities  = ";
    list(cfg.priorities, false);
    return os.str();
  }

private:
  /// 0 for the slowest device, up to n - 1 for the fastest.
  int64_t rank(std::size_t d) const
  {
    int64_t r = 0;
    for (std::size_t e = 0; e < _devices.size(); ++e)
      r += peak(e) < peak(d) || (peak(e) == peak(d) && e > d);
    return r;
  }

  std::vector<std::string> _devices;
  std::vector<std::vector<Point>> _points;
};
} // namespace neml2::aoti
