#include "tessera/core/memory_account.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace tessera {
namespace {

// The account of this thread's scope. A thread-local shared_ptr: a scope's account lives
// at least as long as the scope, and a Buffer keeps its own reference after that.
thread_local std::shared_ptr<MemoryAccount> current_account;

}  // namespace

void MemoryAccount::Charge(std::int64_t bytes) noexcept {
  const std::int64_t live = live_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  std::int64_t peak = peak_.load(std::memory_order_relaxed);
  // Raise the peak unless another thread already raised it past `live`.
  while (live > peak && !peak_.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

void MemoryAccount::Credit(std::int64_t bytes) noexcept {
  live_.fetch_sub(bytes, std::memory_order_relaxed);
}

void MemoryAccount::NoteFresh(std::int64_t bytes) noexcept {
  fresh_.fetch_add(bytes, std::memory_order_relaxed);
}

void MemoryAccount::ResetPeak() noexcept {
  peak_.store(live_.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

const std::shared_ptr<MemoryAccount>& CurrentMemoryAccount() noexcept { return current_account; }

std::int64_t ThreadFaultedBytes() {
  rusage usage{};
  if (getrusage(RUSAGE_THREAD, &usage) != 0) return 0;
  static const long page = sysconf(_SC_PAGESIZE);
  return static_cast<std::int64_t>(usage.ru_minflt) * (page > 0 ? page : 4096);
}

ScopedMemoryAccount::ScopedMemoryAccount(std::shared_ptr<MemoryAccount> account)
    : previous_(std::exchange(current_account, std::move(account))) {}

ScopedMemoryAccount::~ScopedMemoryAccount() { current_account = std::move(previous_); }

void TouchPages(std::byte* data, std::int64_t bytes) {
  if (bytes <= 0) return;
  constexpr std::uintptr_t kPage = 4096;
  const auto first = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t last = first + static_cast<std::uintptr_t>(bytes) - 1;
  volatile std::byte* const touched = data;
  for (std::uintptr_t page = first & ~(kPage - 1); page <= last; page += kPage) {
    touched[std::max(page, first) - first] = std::byte{0};
  }
}

}  // namespace tessera
