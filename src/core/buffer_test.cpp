#include "tessera/core/buffer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "tessera/core/errors.hpp"

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

}  // namespace
}  // namespace tessera
