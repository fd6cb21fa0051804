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
  // Fresh pages (ThreadFaultedBytes) this account's holder touched in memory that is
  // accounted elsewhere: Buffers new from the system allocator (the pool's blocks are
  // not fresh), a result array written for the first time. The executor takes them out
  // of the fresh pages a task touched, leaving what its code allocated itself.
  // Cumulative.
  void NoteFresh(std::int64_t bytes) noexcept;
  std::int64_t fresh_bytes() const noexcept { return fresh_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> live_{0};
  std::atomic<std::int64_t> peak_{0};
  std::atomic<std::int64_t> fresh_{0};
};

// The account this thread's new Buffers are charged to; null when none.
const std::shared_ptr<MemoryAccount>& CurrentMemoryAccount() noexcept;

// Bytes of pages the calling thread has touched for the first time since it started:
// its minor page faults (getrusage RUSAGE_THREAD) times the base page size. The change
// around a piece of work is the fresh memory that work touched on this thread, whoever
// allocated it; a transparent huge page counts once, as one base page. 0 when unknown.
std::int64_t ThreadFaultedBytes();

// Runs `touch` and notes the fresh pages it faulted in on the calling thread to the
// thread's current account (if any): for memory accounted elsewhere that a task writes
// first (MemoryAccount::NoteFresh).
template <typename Touch>
void TouchAccountedMemory(Touch&& touch) {
  const std::shared_ptr<MemoryAccount>& account = CurrentMemoryAccount();
  if (!account) {
    touch();
    return;
  }
  const std::int64_t before = ThreadFaultedBytes();
  touch();
  account->NoteFresh(ThreadFaultedBytes() - before);
}

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
