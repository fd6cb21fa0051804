// InMemoryStoredArray (stored_arrays.cpp): a region that is one run of the array's
// memory is a read-only view of it, any other region a copy; both read the same values.
#include <gtest/gtest.h>

#include <numeric>

#include "op_output.hpp"
#include "region_copy.hpp"

namespace tessera::planner {
namespace {

// 0, 1, ..., 59 (int32) as a (3, 4, 5) array.
std::shared_ptr<const NDArray> Sixty() {
  auto values = std::make_shared<NDArray>(Shape{3, 4, 5}, int32);
  auto data = values->mutable_data<std::int32_t>();
  std::iota(data.begin(), data.end(), 0);
  return values;
}

TEST(RegionCopyTest, OneRunIsRowsOfWholeTrailingDimensions) {
  const Shape whole{3, 4, 5};
  EXPECT_TRUE(IsOneRun(whole, Region{{0, 0, 0}, {3, 4, 5}}));
  EXPECT_TRUE(IsOneRun(whole, Region{{1, 0, 0}, {2, 4, 5}}));   // whole rows
  EXPECT_TRUE(IsOneRun(whole, Region{{2, 1, 0}, {1, 2, 5}}));   // rows of one plane
  EXPECT_TRUE(IsOneRun(whole, Region{{2, 3, 1}, {1, 1, 3}}));   // part of one row
  EXPECT_FALSE(IsOneRun(whole, Region{{0, 0, 0}, {2, 2, 5}}));  // skips rows between
  EXPECT_FALSE(IsOneRun(whole, Region{{0, 1, 0}, {1, 2, 4}}));  // part of two rows
  EXPECT_TRUE(IsOneRun(Shape{}, Region{{}, {}}));               // 0-d
}

TEST(InMemoryStoredArrayTest, OneRunIsAViewOtherRegionsACopy) {
  const std::shared_ptr<const NDArray> sixty = Sixty();
  const std::shared_ptr<StoredArray> stored = MakeInMemoryStoredArray(sixty, {1, 4, 5});

  const std::shared_ptr<const NDArray> plane = stored->Read(Region{{1, 0, 0}, {1, 4, 5}});
  EXPECT_TRUE(plane->borrowed());
  EXPECT_EQ(plane->bytes().data(), sixty->bytes().data() + 20 * 4);  // no copy
  EXPECT_EQ(plane->shape(), (Shape{1, 4, 5}));
  EXPECT_EQ(plane->data<std::int32_t>()[0], 20);
  EXPECT_EQ(plane->data<std::int32_t>()[19], 39);
  // Read-only: written through, it throws instead of changing the caller's array.
  NDArray view = *plane;  // copying gives an array of its own
  EXPECT_FALSE(view.borrowed());
  view.mutable_data<std::int32_t>()[0] = -1;
  EXPECT_EQ(sixty->data<std::int32_t>()[20], 20);
  EXPECT_THROW(std::const_pointer_cast<NDArray>(plane)->mutable_data<std::int32_t>(),
               InvalidArgument);

  const std::shared_ptr<const NDArray> column = stored->Read(Region{{0, 1, 2}, {3, 2, 1}});
  EXPECT_FALSE(column->borrowed());
  EXPECT_EQ(std::vector<std::int32_t>(column->data<std::int32_t>().begin(),
                                      column->data<std::int32_t>().end()),
            (std::vector<std::int32_t>{7, 12, 27, 32, 47, 52}));

  // A view keeps the array alive after the store's last other reference is gone.
  std::shared_ptr<const NDArray> kept;
  {
    const std::shared_ptr<StoredArray> alone = MakeInMemoryStoredArray(Sixty(), {3, 4, 5});
    kept = alone->Read(Region{{2, 3, 0}, {1, 1, 5}});
  }
  EXPECT_EQ(kept->data<std::int32_t>()[4], 59);
  // Projected as the copy it replaces.
  EXPECT_EQ(stored->ProjectRead(Region{{1, 0, 0}, {1, 4, 5}}), 20 * 4);
}

}  // namespace
}  // namespace tessera::planner
