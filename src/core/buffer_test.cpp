#include "tessera/core/buffer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "tessera/core/errors.hpp"
#include "tessera/core/memory_account.hpp"

namespace tessera {
namespace {

TEST(Buffer, AllocatesAlignedUninitializedBytes) {
  Buffer buffer(1000);
  EXPECT_EQ(buffer.size(), 1000);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data()) % 64, 0u);
  std::memset(buffer.data(), 7, 1000);
  EXPECT_EQ(buffer.span()[999], std::byte{7});
}

TEST(Buffer, MoveTransfersOwnership) {
  Buffer a(16);
  std::byte* data = a.data();
  Buffer b(std::move(a));
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(a.size(), 0);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(a.data(), nullptr);
}

TEST(Buffer, CopyAndTruncate) {
  const std::byte bytes[] = {std::byte{1}, std::byte{2}, std::byte{3}};
  Buffer copy = Buffer::CopyOf(bytes);
  ASSERT_EQ(copy.size(), 3);
  EXPECT_EQ(copy.span()[2], std::byte{3});
  Buffer clone = copy.Clone();
  EXPECT_NE(clone.data(), copy.data());
  clone.Truncate(1);
  EXPECT_EQ(clone.size(), 1);
  EXPECT_EQ(clone.capacity(), 3);
  EXPECT_THROW(clone.Truncate(4), InvalidArgument);
  EXPECT_THROW(Buffer(-1), InvalidArgument);
  EXPECT_TRUE(Buffer(0).empty());
}

TEST(Buffer, BorrowKeepsItsOwnerAliveChargesNobodyAndReallocatesToGrowOrResize) {
  auto account = std::make_shared<MemoryAccount>();
  ScopedMemoryAccount scope(account);
  auto bytes = std::make_shared<std::vector<std::byte>>(100, std::byte{7});
  std::weak_ptr<std::vector<std::byte>> watch = bytes;
  Buffer borrowed = Buffer::Borrow(bytes->data(), 100, bytes);
  bytes.reset();
  EXPECT_TRUE(borrowed.borrowed());
  EXPECT_EQ(borrowed.size(), 100);
  EXPECT_EQ(account->live_bytes(), 0);
  Buffer moved = std::move(borrowed);
  EXPECT_FALSE(watch.expired());
  EXPECT_EQ(moved.data()[99], std::byte{7});
  const Buffer copy = moved.Clone();  // a copy owns its bytes
  EXPECT_FALSE(copy.borrowed());
  EXPECT_EQ(copy.data()[0], std::byte{7});
  moved.ResizeUninitialized(10);  // never into the owner's memory
  EXPECT_FALSE(moved.borrowed());
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(account->live_bytes(), 100 + 10);
  EXPECT_THROW(Buffer::Borrow(nullptr, 4, std::make_shared<int>(0)), InvalidArgument);
  EXPECT_THROW(Buffer::Borrow(copy.data(), 4, nullptr), InvalidArgument);
}

TEST(BufferAccounting, ChargesTheCurrentAccountWithItsCapacity) {
  auto account = std::make_shared<MemoryAccount>();
  {
    ScopedMemoryAccount scope(account);
    Buffer a(1000);
    Buffer b(24);
    Buffer none(0);
    EXPECT_EQ(account->live_bytes(), 1024);
    a.Truncate(10);  // the capacity is what is held
    EXPECT_EQ(account->live_bytes(), 1024);
  }
  EXPECT_EQ(account->live_bytes(), 0);
  EXPECT_EQ(account->peak_bytes(), 1024);
}

TEST(BufferAccounting, ChargesNobodyOutsideAScope) {
  auto account = std::make_shared<MemoryAccount>();
  Buffer outside(100);
  {
    ScopedMemoryAccount scope(account);
    Buffer inside(10);
    outside = Buffer();  // freeing a Buffer charged to nobody credits nobody
  }
  EXPECT_EQ(account->live_bytes(), 0);
  EXPECT_EQ(account->peak_bytes(), 10);
}

TEST(BufferAccounting, NestedScopesChargeTheInnermostAccount) {
  auto outer = std::make_shared<MemoryAccount>();
  auto inner = std::make_shared<MemoryAccount>();
  ScopedMemoryAccount outer_scope(outer);
  Buffer a(100);
  {
    ScopedMemoryAccount inner_scope(inner);
    Buffer b(30);
    EXPECT_EQ(inner->live_bytes(), 30);
    EXPECT_EQ(outer->live_bytes(), 100);
    a = Buffer();  // credited to the account it was charged to, not the current one
    EXPECT_EQ(outer->live_bytes(), 0);
    EXPECT_EQ(inner->live_bytes(), 30);
  }
  EXPECT_EQ(inner->live_bytes(), 0);
  EXPECT_EQ(inner->peak_bytes(), 30);
  EXPECT_EQ(outer->peak_bytes(), 100);
}

TEST(BufferAccounting, FreeingOnAnotherThreadCreditsTheAllocatingAccount) {
  auto account = std::make_shared<MemoryAccount>();
  Buffer buffer;
  {
    ScopedMemoryAccount scope(account);
    buffer = Buffer(4096);
  }
  std::thread([moved = std::move(buffer)]() mutable { moved = Buffer(); }).join();
  EXPECT_EQ(account->live_bytes(), 0);
  EXPECT_EQ(account->peak_bytes(), 4096);
}

TEST(BufferAccounting, TheChargeOutlivesTheScopeAndTheAccountHandle) {
  std::weak_ptr<MemoryAccount> weak;
  Buffer survivor;
  {
    auto account = std::make_shared<MemoryAccount>();
    weak = account;
    ScopedMemoryAccount scope(account);
    survivor = Buffer(64);
  }
  ASSERT_FALSE(weak.expired());  // the Buffer keeps its account alive
  EXPECT_EQ(weak.lock()->live_bytes(), 64);
  survivor = Buffer();
  EXPECT_TRUE(weak.expired());
}

TEST(BufferAccounting, MovesCarryTheCharge) {
  auto first = std::make_shared<MemoryAccount>();
  auto second = std::make_shared<MemoryAccount>();
  Buffer a;
  Buffer b;
  {
    ScopedMemoryAccount scope(first);
    a = Buffer(100);
  }
  {
    ScopedMemoryAccount scope(second);
    b = Buffer(7);
  }
  Buffer c(std::move(a));  // move construction: still charged to `first`
  EXPECT_EQ(first->live_bytes(), 100);
  b = std::move(c);  // move assignment over an owned Buffer credits its account
  EXPECT_EQ(second->live_bytes(), 0);
  EXPECT_EQ(first->live_bytes(), 100);
  Buffer& self = b;
  b = std::move(self);  // self-move keeps the charge
  EXPECT_EQ(first->live_bytes(), 100);
  b = Buffer();
  EXPECT_EQ(first->live_bytes(), 0);
  EXPECT_EQ(first->peak_bytes(), 100);
  EXPECT_EQ(second->peak_bytes(), 7);
}

TEST(BufferAccounting, ResizeReallocatesOnlyToGrow) {
  auto first = std::make_shared<MemoryAccount>();
  auto second = std::make_shared<MemoryAccount>();
  Buffer buffer;
  {
    ScopedMemoryAccount scope(first);
    buffer.ResizeUninitialized(100);
    EXPECT_EQ(first->live_bytes(), 100);
    buffer.ResizeUninitialized(40);  // fits: no reallocation, same charge
    EXPECT_EQ(buffer.size(), 40);
    EXPECT_EQ(buffer.capacity(), 100);
    EXPECT_EQ(first->live_bytes(), 100);
    buffer.ResizeUninitialized(300);  // grows: the old block is credited first
    EXPECT_EQ(first->live_bytes(), 300);
    EXPECT_EQ(first->peak_bytes(), 300);
  }
  {
    ScopedMemoryAccount scope(second);
    buffer.ResizeUninitialized(500);  // the new block is charged to the current account
  }
  EXPECT_EQ(first->live_bytes(), 0);
  EXPECT_EQ(second->live_bytes(), 500);
  EXPECT_EQ(buffer.capacity(), 500);
  buffer = Buffer();
  EXPECT_EQ(second->live_bytes(), 0);
  EXPECT_THROW(buffer.ResizeUninitialized(-1), InvalidArgument);
}

TEST(BufferAccounting, ClonesAreChargedToTheCloningAccount) {
  Buffer original(50);
  auto account = std::make_shared<MemoryAccount>();
  ScopedMemoryAccount scope(account);
  Buffer clone = original.Clone();
  EXPECT_EQ(account->live_bytes(), 50);
}

// Every page a chunk-sized Buffer's allocation faults in is noted to the account, the
// allocator's own (a fresh block's header, its bookkeeping) as well as the block's: a
// thread that only allocates Buffers leaves nothing unaccounted (the executor's
// unaccounted_mem is what the thread faulted in less what its account noted).
TEST(BufferAccounting, AnAllocationsPageFaultsAreAllNoted) {
  if (!kChargesCallScratch) GTEST_SKIP() << "the sanitizer's own pages are faulted in too";
  std::thread([] {
    auto account = std::make_shared<MemoryAccount>();
    ScopedMemoryAccount scope(account);
    std::vector<Buffer> kept;
    kept.reserve(64);
    const std::int64_t faulted_before = ThreadFaultedBytes();
    for (int i = 0; i < 64; ++i) {
      // Sizes between 4 KiB and 3 MiB that are not multiples of a page.
      kept.emplace_back(kTouchedFreshBytes + 1 + (std::int64_t{i} * 49'999) % (3 << 20));
    }
    const std::int64_t faulted = ThreadFaultedBytes() - faulted_before;
    EXPECT_GT(faulted, 0);
    EXPECT_EQ(faulted, account->fresh_bytes());
  }).join();
}

TEST(Buffer, LargeBuffersAreHugePageAligned) {
  Buffer large(std::int64_t{4} << 20);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(large.data()) % (std::uintptr_t{2} << 20), 0u);
  Buffer medium((std::int64_t{1} << 20) + 3);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(medium.data()) % 64, 0u);
}

}  // namespace
}  // namespace tessera
