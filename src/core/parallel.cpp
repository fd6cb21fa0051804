#include "tessera/core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace tessera {

int HardwareThreads() {
  // Read once: each hardware_concurrency() opens /sys/devices/system/cpu/online, and
  // planning asks hundreds of times (10 ms of a small compute()).
  static const int threads = [] {
    const unsigned online = std::thread::hardware_concurrency();
    return online == 0 ? 1 : static_cast<int>(online);
  }();
  return threads;
}

void ParallelFor(std::int64_t count, int max_threads, const std::function<void(std::int64_t)>& fn) {
  if (count <= 0) return;
  const int threads =
      static_cast<int>(std::clamp<std::int64_t>(count, 1, std::max(1, max_threads)));
  std::atomic<std::int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;

  auto worker = [&] {
    while (!failed.load(std::memory_order_relaxed)) {
      const std::int64_t item = next.fetch_add(1, std::memory_order_relaxed);
      if (item >= count) return;
      try {
        fn(item);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
  };

  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads - 1));
  try {
    for (int thread = 1; thread < threads; ++thread) pool.emplace_back(worker);
  } catch (const std::system_error&) {
    // The system refused another thread (a thread or memory limit): run the items on
    // the threads already started and this one, rather than fail or terminate.
  }
  worker();
  for (std::thread& thread : pool) thread.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace tessera
