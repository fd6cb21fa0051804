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

// Writes one byte (0) in every memory page the `bytes` bytes at `data` span, the partial
// pages at either end included, and only bytes of that range: faults them in now.
void TouchPages(std::byte* data, std::int64_t bytes);

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

// Runs `call`, a library call that allocates its own scratch and frees it before it
// returns (a codec's context and block buffers: Codec's contract), and charges the fresh
// pages it faulted in outside Buffers to the thread's account for the call's duration:
// the account's peak then holds them at the moment they were held, and they are not
// left unaccounted. Counted per call, so scratch that the system allocator maps afresh
// each time is held once, as it is, not summed; pages it reuses cost nothing again.
// Returns what `call` returns. Under AddressSanitizer nothing is charged: the pages a
// call faults there are mostly the sanitizer's (shadow, redzones, quarantine), so they
// stay unaccounted and measured memory stays exactly the Buffers (kChargesCallScratch).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kBuiltWithAddressSanitizer = true;  // GCC
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kBuiltWithAddressSanitizer = true;  // clang
#else
inline constexpr bool kBuiltWithAddressSanitizer = false;
#endif
#else
inline constexpr bool kBuiltWithAddressSanitizer = false;
#endif
inline constexpr bool kChargesCallScratch = !kBuiltWithAddressSanitizer;

template <typename Call>
decltype(auto) ChargeCallScratch(Call&& call) {
  const std::shared_ptr<MemoryAccount>& account = CurrentMemoryAccount();
  if (!kChargesCallScratch || !account) return call();
  const std::int64_t faulted_before = ThreadFaultedBytes();
  const std::int64_t fresh_before = account->fresh_bytes();
  struct Charge {
    MemoryAccount& account;
    std::int64_t faulted_before;
    std::int64_t fresh_before;
    ~Charge() {
      // Pages of Buffers the call allocated were noted by them; the rest are its own.
      const std::int64_t scratch =
          ThreadFaultedBytes() - faulted_before - (account.fresh_bytes() - fresh_before);
      if (scratch <= 0) return;
      account.Charge(scratch);
      account.Credit(scratch);
      account.NoteFresh(scratch);
    }
  } charge{*account, faulted_before, fresh_before};
  return call();
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
