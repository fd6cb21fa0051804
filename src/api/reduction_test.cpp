// Reductions (WIP, issue 5): axes and result dtypes as numpy has them.
#include "tessera/api/reduction.hpp"

#include <gtest/gtest.h>

#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

TEST(AxesTest, ResolvesLikeNumpy) {
  EXPECT_EQ(Axes().Resolve(3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(Axes(-1).Resolve(3), (std::vector<int>{2}));
  EXPECT_EQ(Axes({2, 0}).Resolve(3), (std::vector<int>{0, 2}));
  EXPECT_TRUE(Axes().Resolve(0).empty());
  EXPECT_THROW(Axes(3).Resolve(3), InvalidArgument);
  EXPECT_THROW(Axes(-4).Resolve(3), InvalidArgument);
  EXPECT_THROW(Axes({1, -2}).Resolve(3), InvalidArgument);  // the same axis twice
}

}  // namespace
}  // namespace tessera
