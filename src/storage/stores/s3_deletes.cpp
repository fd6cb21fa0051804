#include "s3_deletes.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace tessera::s3 {
namespace {

// Threads joined however the scope is left: a joinable std::thread destroyed would call
// std::terminate (a thread's construction failing midway through a pool, say).
class JoinedThreads {
 public:
  JoinedThreads() = default;
  JoinedThreads(const JoinedThreads&) = delete;
  JoinedThreads& operator=(const JoinedThreads&) = delete;
  ~JoinedThreads() {
    for (std::thread& thread : threads_) thread.join();
  }

  // Starts `count` threads running `fn`; stops early, without throwing, when the system
  // refuses a thread.
  template <class Fn>
  void StartUpTo(std::size_t count, const Fn& fn) {
    threads_.reserve(count);
    for (std::size_t started = 0; started < count; ++started) {
      try {
        threads_.emplace_back(fn);
      } catch (const std::system_error&) {
        return;  // no more threads now: those running share the work
      }
    }
  }

 private:
  std::vector<std::thread> threads_;
};

}  // namespace

std::int64_t DeleteObjects(const S3Client& client, std::span<const std::string> object_keys) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::int64_t> removed{0};
  std::atomic<bool> failed{false};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto worker = [&] {
    while (!failed.load()) {
      const std::size_t at = next++;
      if (at >= object_keys.size()) return;
      S3Request request;
      request.method = "DELETE";
      request.key = object_keys[at];
      try {
        const S3Response response = client.Perform(request);
        if (response.status == 204 || response.status == 200) {
          ++removed;
        } else if (response.status != 404 || IsNoSuchBucket(response)) {
          ThrowResponseError(client, request, response);
        }
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        failed = true;
      }
    }
  };
  {
    // The calling thread is one of the workers.
    const std::size_t helpers =
        object_keys.empty() ? 0 : std::min<std::size_t>(kParallelDeletes, object_keys.size()) - 1;
    JoinedThreads threads;
    threads.StartUpTo(helpers, worker);
    worker();
  }
  if (failure) std::rethrow_exception(failure);
  return removed;
}

}  // namespace tessera::s3
