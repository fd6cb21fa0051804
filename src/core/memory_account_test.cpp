#include "tessera/core/memory_account.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "fresh_pages.hpp"
#include "sanitizers.hpp"
#include "tessera/core/buffer.hpp"
#include "tessera/core/buffer_pool.hpp"

namespace tessera {
namespace {

TEST(MemoryAccount, TracksLiveAndPeak) {
  MemoryAccount account;
  account.Charge(100);
  account.Charge(50);
  account.Credit(100);
  EXPECT_EQ(account.live_bytes(), 50);
  EXPECT_EQ(account.peak_bytes(), 150);
  account.ResetPeak();
  EXPECT_EQ(account.peak_bytes(), 50);
  account.Charge(10);
  EXPECT_EQ(account.peak_bytes(), 60);
  account.Credit(60);
  EXPECT_EQ(account.live_bytes(), 0);
}

TEST(MemoryAccount, ConcurrentChargesKeepExactCounts) {
  MemoryAccount account;
  constexpr int kThreads = 4;
  constexpr int kRounds = 20000;
  std::vector<std::thread> threads;
  for (int thread = 0; thread < kThreads; ++thread) {
    threads.emplace_back([&] {
      for (int round = 0; round < kRounds; ++round) {
        account.Charge(8);
        account.Credit(8);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(account.live_bytes(), 0);
  EXPECT_GE(account.peak_bytes(), 8);
  EXPECT_LE(account.peak_bytes(), 8 * kThreads);
}

TEST(ScopedMemoryAccount, NestsAndRestores) {
  EXPECT_EQ(CurrentMemoryAccount(), nullptr);
  auto outer = std::make_shared<MemoryAccount>();
  auto inner = std::make_shared<MemoryAccount>();
  {
    ScopedMemoryAccount outer_scope(outer);
    EXPECT_EQ(CurrentMemoryAccount(), outer);
    {
      ScopedMemoryAccount inner_scope(inner);
      EXPECT_EQ(CurrentMemoryAccount(), inner);
      {
        ScopedMemoryAccount nobody(nullptr);
        EXPECT_EQ(CurrentMemoryAccount(), nullptr);
      }
      EXPECT_EQ(CurrentMemoryAccount(), inner);
    }
    EXPECT_EQ(CurrentMemoryAccount(), outer);
  }
  EXPECT_EQ(CurrentMemoryAccount(), nullptr);
}

TEST(MemoryAccount, CountsFreshBytesButNotPooledOnes) {
  // Blocks of 1 MiB are pooled: the second allocation reuses the first one's block.
  const std::int64_t capacity = BufferPoolCapacity();
  ReleaseBufferPool();
  SetBufferPoolCapacity(std::int64_t{8} << 20);
  auto account = std::make_shared<MemoryAccount>();
  std::int64_t fresh = 0;
  {
    ScopedMemoryAccount scope(account);
    const std::int64_t before = ThreadFaultedBytes();
    { Buffer first(std::int64_t{1} << 20); }
    // Noted: the pages the new block faulted in, no more than it has.
    fresh = account->fresh_bytes();
    EXPECT_LE(fresh, ThreadFaultedBytes() - before);
    EXPECT_LE(fresh, ((std::int64_t{1} << 20) + 4096) * testing::kFreshPageFactor);
    { Buffer second(std::int64_t{1} << 20); }
  }
  EXPECT_EQ(account->fresh_bytes(), fresh);  // the pool's block is not fresh
  EXPECT_EQ(account->peak_bytes(), std::int64_t{1} << 20);
  ReleaseBufferPool();
  SetBufferPoolCapacity(capacity);
}

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

TEST(ThreadFaultedBytes, CountOnlyThisThreadsFreshPages) {
  // 32 MiB touched on this thread shows here; 32 MiB touched on another thread does not.
  const std::int64_t before = ThreadFaultedBytes();
  EXPECT_EQ(testing::TouchAndUnmap(32 * kMiB), 1);
  const std::int64_t mine = ThreadFaultedBytes() - before;
  EXPECT_GE(mine, 31 * kMiB);
  EXPECT_LE(mine, 34 * kMiB * testing::kFreshPageFactor);
  std::int64_t other = 0;
  std::thread([&] {
    const std::int64_t start = ThreadFaultedBytes();
    EXPECT_EQ(testing::TouchAndUnmap(32 * kMiB), 1);
    other = ThreadFaultedBytes() - start;
  }).join();
  EXPECT_GE(other, 31 * kMiB);
  EXPECT_LE(ThreadFaultedBytes() - before - mine, 2 * kMiB);
}

TEST(ChargeCallScratch, HoldsALibrarysScratchOncePerCallAtItsMoment) {
  // A "library call" that maps, touches and unmaps 4 MiB, as blosc's block buffers are
  // mapped afresh per call: three calls while 1 MiB of Buffers is live peak at 5 MiB,
  // not at 13; nothing stays live; the pages are noted, so not unaccounted.
  if (!kChargesCallScratch) GTEST_SKIP() << "under ASan no call is charged";
  auto account = std::make_shared<MemoryAccount>();
  {
    ScopedMemoryAccount scope(account);
    const std::int64_t before = ThreadFaultedBytes();
    Buffer held(kMiB);
    for (int call = 0; call < 3; ++call) {
      EXPECT_EQ(ChargeCallScratch([] { return testing::TouchAndUnmap(4 * kMiB); }), 1);
    }
    const std::int64_t faulted = ThreadFaultedBytes() - before;
    EXPECT_EQ(account->live_bytes(), kMiB);
    EXPECT_GE(account->peak_bytes(), 5 * kMiB);
    EXPECT_LE(account->peak_bytes(),
              kMiB + static_cast<std::int64_t>(4.1 * kMiB * testing::kFreshPageFactor));
    // Every page of the calls noted: what is left is the test's own (stack, gtest).
    EXPECT_GE(account->fresh_bytes(), 12 * kMiB);
    if (!testing::kAddressSanitizer) {
      EXPECT_LE(faulted - account->fresh_bytes(), 64 << 10);
    }
  }
  // Without an account the call just runs.
  EXPECT_EQ(ChargeCallScratch([] { return testing::TouchAndUnmap(kMiB); }), 1);
}

TEST(ScopedMemoryAccount, IsPerThread) {
  auto account = std::make_shared<MemoryAccount>();
  ScopedMemoryAccount scope(account);
  bool other_thread_has_none = false;
  std::thread([&] { other_thread_has_none = CurrentMemoryAccount() == nullptr; }).join();
  EXPECT_TRUE(other_thread_has_none);
  EXPECT_EQ(CurrentMemoryAccount(), account);
}

}  // namespace
}  // namespace tessera
