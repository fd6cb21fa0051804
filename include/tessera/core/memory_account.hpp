// MemoryAccount: exact live and peak bytes of the Buffers charged to it.
//
//   auto account = std::make_shared<tessera::MemoryAccount>();
//   {
//     tessera::ScopedMemoryAccount scope(account);   // this thread charges `account`
//     tessera::Buffer block(1 << 20);                // account->live_bytes() == 1 MiB
//   }                                                // freed: live 0, peak stays 1 MiB
//   account->peak_bytes();                           // 1048576
//
// A Buffer is charged, at allocation, to the account current on the allocating thread
// (none by default), remembers it (shared ownership), and credits it when freed or
// reallocated, on whatever thread that happens. So a task run inside a scope knows
// exactly the chunk memory it held at its peak: every decoded block, read and write
// buffer, tile and result of Tessera is a Buffer. Memory the task did not allocate
// (a block it was handed) is not charged to it. Counters are atomic; an account may be
// shared by threads. Scopes nest and restore the previous account when they end.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace tessera {

class MemoryAccount {
 public:
  void Charge(std::int64_t bytes) noexcept;  // live += bytes; peak = max(peak, live)
  void Credit(std::int64_t bytes) noexcept;  // live -= bytes
  std::int64_t live_bytes() const noexcept { return live_.load(std::memory_order_relaxed); }
  std::int64_t peak_bytes() const noexcept { return peak_.load(std::memory_order_relaxed); }
  // Starts a new peak measurement from the current live bytes.
  void ResetPeak() noexcept;
  // Bytes of the charged Buffers that came new from the system allocator rather than
  // from the buffer pool (pages a task touches for the first time; the executor takes
  // them out of what it measures beyond the account). Cumulative.
  void NoteFresh(std::int64_t bytes) noexcept;
  std::int64_t fresh_bytes() const noexcept { return fresh_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> live_{0};
  std::atomic<std::int64_t> peak_{0};
  std::atomic<std::int64_t> fresh_{0};
};

// The account this thread's new Buffers are charged to; null when none.
const std::shared_ptr<MemoryAccount>& CurrentMemoryAccount() noexcept;

class ScopedMemoryAccount {
 public:
  // `account` may be null: allocations in the scope are then charged to nobody.
  explicit ScopedMemoryAccount(std::shared_ptr<MemoryAccount> account);
  ~ScopedMemoryAccount();
  ScopedMemoryAccount(const ScopedMemoryAccount&) = delete;
  ScopedMemoryAccount& operator=(const ScopedMemoryAccount&) = delete;

 private:
  std::shared_ptr<MemoryAccount> previous_;
};

}  // namespace tessera
