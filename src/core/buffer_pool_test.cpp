#include "tessera/core/buffer_pool.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "tessera/core/buffer.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/memory_account.hpp"

namespace tessera {
namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

// Each test starts from an empty pool of a known capacity and restores the default.
class BufferPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_capacity_ = BufferPoolCapacity();
    ReleaseBufferPool();
    SetBufferPoolCapacity(64 * kMiB);
  }
  void TearDown() override {
    ReleaseBufferPool();
    SetBufferPoolCapacity(saved_capacity_);
  }

 private:
  std::int64_t saved_capacity_ = 0;
};

TEST(BufferPoolDefaults, CapacityIsAtMost256MiB) {
  EXPECT_GT(BufferPoolCapacity(), 0);
  EXPECT_LE(BufferPoolCapacity(), 256 * kMiB);
  EXPECT_THROW(SetBufferPoolCapacity(-1), InvalidArgument);
}

TEST_F(BufferPoolTest, AFreedBlockIsReused) {
  const BufferPoolStats before = GetBufferPoolStats();
  std::byte* first = nullptr;
  {
    Buffer buffer(8 * kMiB);
    first = buffer.data();
    std::memset(buffer.data(), 1, 8 * kMiB);
  }
  EXPECT_EQ(BufferPoolRetainedBytes(), 8 * kMiB);
  Buffer again(8 * kMiB);
  EXPECT_EQ(again.data(), first);
  EXPECT_EQ(BufferPoolRetainedBytes(), 0);
  const BufferPoolStats after = GetBufferPoolStats();
  EXPECT_EQ(after.hits - before.hits, 1);
  EXPECT_EQ(after.misses - before.misses, 1);
}

// The data of a fresh Buffer of `size`, freed at once (so its block is in the pool).
std::byte* FreedBlock(std::int64_t size) {
  Buffer buffer(size);
  return buffer.data();
}

TEST_F(BufferPoolTest, ABlockServesSlightlySmallerRequestsOnly) {
  // Blocks of 4 MiB and more are whole huge pages (2 MiB): 8 MiB - 12345 bytes take 8 MiB.
  std::byte* block = FreedBlock(8 * kMiB);
  {
    Buffer much_smaller(6 * kMiB);  // would waste a quarter of the block
    EXPECT_NE(much_smaller.data(), block);
  }
  ReleaseBufferPool();
  block = FreedBlock(8 * kMiB);
  {
    auto account = std::make_shared<MemoryAccount>();
    ScopedMemoryAccount scope(account);
    Buffer a_bit_smaller(8 * kMiB - 12345);
    EXPECT_EQ(a_bit_smaller.data(), block);
    // Charged like a fresh Buffer: its capacity, not the block's size.
    EXPECT_EQ(account->live_bytes(), 8 * kMiB - 12345);
    EXPECT_EQ(a_bit_smaller.capacity(), 8 * kMiB - 12345);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a_bit_smaller.data()) % (std::uintptr_t{2} << 20),
              0u);
  }
  ReleaseBufferPool();
  block = FreedBlock(18 * kMiB);  // serves 16 MiB: an eighth wasted at most
  EXPECT_EQ(Buffer(16 * kMiB).data(), block);
  ReleaseBufferPool();
  block = FreedBlock(3 * kMiB);
  EXPECT_NE(Buffer(5 * kMiB / 2).data(), block);   // 2.5 MiB would waste a sixth
  EXPECT_EQ(Buffer(11 * kMiB / 4).data(), block);  // 2.75 MiB wastes a twelfth
}

TEST_F(BufferPoolTest, SmallBuffersBypassThePool) {
  { Buffer small(kBufferPoolMinBytes - 64); }  // 64-byte aligned: its block is as small
  EXPECT_EQ(BufferPoolRetainedBytes(), 0);
  { Buffer smallest_pooled(kBufferPoolMinBytes - 63); }  // rounds up to the floor
  EXPECT_EQ(BufferPoolRetainedBytes(), kBufferPoolMinBytes);
}

TEST_F(BufferPoolTest, TheOldestBlocksLeaveWhenFull) {
  SetBufferPoolCapacity(16 * kMiB);
  std::vector<Buffer> buffers;
  for (int index = 0; index < 3; ++index) buffers.emplace_back(8 * kMiB);
  std::byte* newest = buffers[2].data();
  const BufferPoolStats before = GetBufferPoolStats();
  buffers.clear();  // destroyed in order: the first block is evicted for the third
  EXPECT_EQ(BufferPoolRetainedBytes(), 16 * kMiB);
  EXPECT_EQ(GetBufferPoolStats().evicted - before.evicted, 1);
  EXPECT_EQ(GetBufferPoolStats().retained_blocks, 2);
  Buffer reused(8 * kMiB);
  EXPECT_EQ(reused.data(), newest);  // the most recently returned block first
  { Buffer too_large(17 * kMiB); }
  EXPECT_EQ(BufferPoolRetainedBytes(), 8 * kMiB);
  SetBufferPoolCapacity(4 * kMiB);  // lowering the capacity frees what no longer fits
  EXPECT_EQ(BufferPoolRetainedBytes(), 0);
}

TEST_F(BufferPoolTest, CapacityZeroDisablesThePool) {
  SetBufferPoolCapacity(0);
  { Buffer buffer(8 * kMiB); }
  EXPECT_EQ(BufferPoolRetainedBytes(), 0);
}

TEST_F(BufferPoolTest, ConcurrentUseStaysWithinCapacity) {
  SetBufferPoolCapacity(8 * kMiB);
  std::vector<std::thread> threads;
  for (int thread = 0; thread < 4; ++thread) {
    threads.emplace_back([thread] {
      auto account = std::make_shared<MemoryAccount>();
      ScopedMemoryAccount scope(account);
      for (int round = 0; round < 200; ++round) {
        Buffer buffer((1 + (round + thread) % 3) * kMiB + round);
        buffer.data()[0] = std::byte{1};
        buffer.data()[buffer.size() - 1] = std::byte{2};
      }
      EXPECT_EQ(account->live_bytes(), 0);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(BufferPoolRetainedBytes(), 8 * kMiB);
  EXPECT_GT(GetBufferPoolStats().hits, 0);
}

}  // namespace
}  // namespace tessera
