#include "tessera/core/memory_account.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

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
  {
    ScopedMemoryAccount scope(account);
    { Buffer first(std::int64_t{1} << 20); }
    EXPECT_EQ(account->fresh_bytes(), std::int64_t{1} << 20);
    { Buffer second(std::int64_t{1} << 20); }
  }
  EXPECT_EQ(account->fresh_bytes(), std::int64_t{1} << 20);
  EXPECT_EQ(account->peak_bytes(), std::int64_t{1} << 20);
  ReleaseBufferPool();
  SetBufferPoolCapacity(capacity);
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
