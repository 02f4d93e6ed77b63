// Illustrative simulated devices: a many-core CPU and data-centre GPUs on the two benchmark models.
#pragma once

#include <string>
#include <vector>

#include "neml2/aoti/sim/Simulator.h"

namespace neml2::aoti::sim
{
/**
 * @brief Illustrative device profiles for tests and benchmarks: plausible
 * orders of magnitude for a many-core CPU and a data-centre GPU on the two
 * benchmark models, not measurements. Chunk times vary by 1% (noise); the
 * first chunk a device runs pays a warm-up (5 ms on the CPU, 50 ms on a GPU).
 */
namespace profiles
{
/// @brief CPU on a memory-bound model (elastic): 1 ns per point, not full below 16k points.
inline Device
cpu_memory_bound()
{
  Device d;
  d.name = "cpu";
  d.latency = 20e-6;
  d.seconds_per_point = 1e-9;
  d.knee = 16384;
  d.noise = 0.01;
  d.cold_seconds = 5e-3;
  return d;
}

/**
 * @brief GPU on a memory-bound model, CPU-resident data: copies dominate
 * (4 ns per point); two lanes overlap copies with compute (1.8x).
 * @param slowdown multiplies the per-point costs (skewed devices)
 * @param index the N of its "cuda:N" name
 */
inline Device
gpu_memory_bound(double slowdown = 1, int index = 0)
{
  Device d;
  d.name = "cuda:" + std::to_string(index);
  d.latency = 30e-6;
  d.seconds_per_point = 0.05e-9 * slowdown;
  d.knee = 262144;
  d.transfer_latency = 20e-6;
  d.transfer_seconds_per_point = 4e-9 * slowdown;
  d.lanes = 2;
  d.lane_speedup = 1.8;
  d.noise = 0.01;
  d.cold_seconds = 50e-3;
  return d;
}

/// @brief CPU on a compute-bound model (viscoplastic, Newton solve): 100 ns per point.
inline Device
cpu_compute_bound()
{
  Device d;
  d.name = "cpu";
  d.latency = 30e-6;
  d.seconds_per_point = 100e-9;
  d.knee = 4096;
  d.noise = 0.01;
  d.cold_seconds = 5e-3;
  return d;
}

/**
 * @brief GPU on a compute-bound model: 1.5 ns per point of compute plus 4 ns
 * of copies, 200 us per call (the Newton loop's launches), full from 128k points.
 * @param slowdown multiplies the per-point costs (skewed devices)
 * @param index the N of its "cuda:N" name
 */
inline Device
gpu_compute_bound(double slowdown = 1, int index = 0)
{
  Device d;
  d.name = "cuda:" + std::to_string(index);
  d.latency = 200e-6;
  d.seconds_per_point = 1.5e-9 * slowdown;
  d.knee = 131072;
  d.transfer_latency = 20e-6;
  d.transfer_seconds_per_point = 4e-9 * slowdown;
  d.lanes = 2;
  d.lane_speedup = 1.5;
  d.noise = 0.01;
  d.cold_seconds = 50e-3;
  return d;
}

/**
 * @brief The elastic model on an H200 host, CPU-resident batches (doc/performance.md, P2-P4):
 * the CPU at about 140 Mpts/s, the GPU through its staging copies at about 550 with its two
 * lanes busy, and the GPU @p contention (less 1) times slower while the CPU runs a chunk
 * (the staging copies share the host's cores and memory bandwidth). At 0.5, spreading over
 * both reaches about 0.73 of the sum of the two alone, as P4 measured: less than the GPU
 * alone.
 */
inline std::vector<Device>
h200_host(double contention = 0.5)
{
  Device cpu = cpu_memory_bound();
  cpu.seconds_per_point = 7e-9;
  Device gpu = gpu_memory_bound();
  gpu.transfer_seconds_per_point = 3.2e-9;
  gpu.host_contention = contention;
  return {cpu, gpu};
}

/// @brief Slowdowns of GPUs 0..7 in the skewed scenarios (0.3x to 2x the per-point cost).
inline const std::vector<double> &
skew()
{
  static const std::vector<double> s{1, 0.5, 2, 0.75, 1.5, 0.3, 1, 0.6};
  return s;
}

/// @brief 1 CPU + @p gpus skewed GPUs, memory bound (@p compute_bound false) or compute bound.
inline std::vector<Device>
hybrid(std::size_t gpus, bool compute_bound)
{
  std::vector<Device> out{compute_bound ? cpu_compute_bound() : cpu_memory_bound()};
  for (std::size_t k = 0; k < gpus; ++k)
  {
    const double f = skew()[k % skew().size()];
    out.push_back(compute_bound ? gpu_compute_bound(f, int(k)) : gpu_memory_bound(f, int(k)));
  }
  return out;
}
} // namespace profiles
} // namespace neml2::aoti::sim
