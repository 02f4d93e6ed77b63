// A thread bound to one device that runs submitted tasks in order.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include "neml2/aoti/detail/env.h"
#include "neml2/aoti/detail/openmp.h"

namespace neml2::aoti::detail
{
/**
 * One long-lived thread per device lane. A CUDA worker makes its device current and
 * runs on its own pool stream for its whole life, so two lanes of one GPU overlap
 * one chunk's copies with another chunk's compute (a fresh thread that never set
 * its device fails inside the AOTI runner). Tasks must not throw; anything that
 * escapes is swallowed rather than terminating the process.
 *
 * A worker idle for `NEML2_IDLE_RELEASE_MS` milliseconds (default 5) after a task gives
 * its OpenMP threads back (release_openmp_threads()), so that idle lanes do not slow the
 * short parallel regions of the threads still at work; its next task starts them again.
 * request_release() and wait_released() give them back at once, for a caller about to run
 * a short parallel region of its own right after the lanes were busy.
 */
class Worker
{
public:
  /// Start the thread; with @p threads > 0 it sets its intra-op thread count (the CPU worker's
  /// graphs, a GPU lane's copies into page-locked memory).
  explicit Worker(at::Device device, int threads = 0)
      : _device(device),
        _threads(threads),
        _idle(std::chrono::milliseconds(
            positive_from_env("NEML2_IDLE_RELEASE_MS").value_or(default_idle_ms))),
        _thread([this] { loop(); })
  {
  }

  Worker(const Worker &) = delete;
  Worker & operator=(const Worker &) = delete;

  ~Worker()
  {
    {
      const std::lock_guard<std::mutex> lock(_mutex);
      _stop = true;
    }
    _cv.notify_one();
    _thread.join();
  }

  /// Queue @p task behind the ones already submitted.
  void submit(std::function<void()> task)
  {
    {
      const std::lock_guard<std::mutex> lock(_mutex);
      _tasks.push_back(std::move(task));
    }
    _cv.notify_one();
  }

  /**
   * Ask the worker to give its OpenMP threads back now rather than after its idle period.
   * Returns whether it holds any (false: nothing to wait for). Call wait_released() next.
   */
  bool request_release()
  {
    {
      const std::lock_guard<std::mutex> lock(_mutex);
      if (!_holds)
        return false;
      _release = true;
    }
    _cv.notify_one();
    return true;
  }

  /// Wait until the worker holds no OpenMP threads: after request_release(), once it ran
  /// the release between its tasks (a worker with tasks queued releases before the next).
  void wait_released()
  {
    std::unique_lock<std::mutex> lock(_mutex);
    _released.wait(lock, [this] { return !_holds; });
  }

  /// The device this worker drives.
  const at::Device & device() const { return _device; }

  /// Milliseconds of idleness after which a worker gives its OpenMP threads back.
  static constexpr std::size_t default_idle_ms = 5;

private:
  void loop()
  {
    std::optional<c10::DeviceGuard> device_guard;
    std::optional<c10::StreamGuard> stream_guard;
    if (_threads > 0)
    {
      try
      {
        at::set_num_threads(_threads); // this thread's count with OpenMP
      }
      catch (...)
      {
        // A parallel backend that cannot change it now keeps its own count.
      }
    }
    if (!_device.is_cpu())
    {
      try
      {
        device_guard.emplace(_device);
        const c10::impl::VirtualGuardImpl impl(_device.type());
        stream_guard.emplace(impl.getStreamFromGlobalPool(_device));
      }
      catch (...)
      {
        // The first task on this device reports the problem when it runs.
      }
    }
    const auto ready = [this] { return _stop || _release || !_tasks.empty(); };
    while (true)
    {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(_mutex);
        if (_holds && (!_cv.wait_for(lock, _idle, ready) || _release))
        {
          lock.unlock();
          release_openmp_threads();
          lock.lock();
          _holds = false;
          _release = false;
          _released.notify_all();
          continue;
        }
        _cv.wait(lock, [this] { return _stop || !_tasks.empty(); });
        if (_tasks.empty())
          return;
        task = std::move(_tasks.front());
        _tasks.pop_front();
        _holds = true;
      }
      try
      {
        task();
      }
      catch (...)
      {
      }
    }
  }

  at::Device _device;
  int _threads;
  std::chrono::milliseconds _idle;
  std::mutex _mutex;
  std::condition_variable _cv;
  std::condition_variable _released; // _holds became false
  std::deque<std::function<void()>> _tasks;
  bool _stop = false;
  bool _holds = false;   // ran a task since it last gave its OpenMP threads back
  bool _release = false; // request_release() asks for the release now
  std::thread _thread;
};
} // namespace neml2::aoti::detail
