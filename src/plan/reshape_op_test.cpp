// Reshape groups, the chunks that line up, and the input region of a block.
#include "reshape_op.hpp"

#include <gtest/gtest.h>

#include "tessera/plan/finalized_plan.hpp"
#include "tessera/plan/internal/index_map.hpp"

namespace tessera::planner {
namespace {

std::vector<std::array<std::size_t, 4>> Groups(const Shape& in, const Shape& out) {
  std::vector<std::array<std::size_t, 4>> groups;
  for (const ReshapeGroup& g : ReshapeGroups(in, out))
    groups.push_back({g.in_begin, g.in_end, g.out_begin, g.out_end});
  return groups;
}

TEST(ReshapeOpTest, GroupsPairMergedAndSplitAxes) {
  using G = std::vector<std::array<std::size_t, 4>>;
  EXPECT_EQ(Groups({4, 6}, {24}), (G{{0, 2, 0, 1}}));
  EXPECT_EQ(Groups({24}, {2, 3, 4}), (G{{0, 1, 0, 3}}));
  EXPECT_EQ(Groups({2, 1, 3}, {2, 3}), (G{{0, 1, 0, 1}, {1, 2, 1, 1}, {2, 3, 1, 2}}));
  EXPECT_EQ(Groups({6, 4}, {4, 6}), (G{{0, 2, 0, 2}}));
  EXPECT_EQ(Groups({}, {1, 1}), (G{{0, 0, 0, 1}, {0, 0, 1, 2}}));
}

TEST(ReshapeOpTest, ChunksLineUpWithTheGroups) {
  // (4, 6) -> (3, 8): one group; the input's inner axis whole, its first a multiple of
  // 8 / gcd(6, 8) = 4 rows: 3 -> 4. An output block then holds 4 * 6 / 8 = 3 rows.
  const auto groups = ReshapeGroups({4, 6}, {3, 8});
  const Shape aligned = AlignedInputChunks(groups, {4, 6}, {3, 4}, {3, 8});
  EXPECT_EQ(aligned, (Shape{4, 6}));
  EXPECT_EQ(ReshapeOutputChunks(groups, {4, 6}, aligned, {3, 8}), (Shape{3, 8}));
  // (100,) in chunks of 30 -> (10, 10): chunks of 30 are 3 rows each.
  const auto split = ReshapeGroups({100}, {10, 10});
  EXPECT_EQ(AlignedInputChunks(split, {100}, {30}, {10, 10}), (Shape{30}));
  EXPECT_EQ(ReshapeOutputChunks(split, {100}, {30}, {10, 10}), (Shape{3, 10}));
  EXPECT_EQ(AlignedInputChunks(split, {100}, {25}, {10, 10}), (Shape{20}));
}

TEST(ReshapeOpTest, BlockIsOneInputRegion) {
  Spec spec;
  spec.allowed_mem = 1 << 20;
  spec.total_mem = std::int64_t{1} << 30;
  const NodePtr x = MakeInMemory(NDArray({100}, float64), {30});
  const NodePtr reshaped = MakeReshape(x, {10, 10});
  EXPECT_EQ(reshaped->chunks(), (Shape{3, 10}));
  OpInfo info;
  info.shape = reshaped->shape();
  info.chunks = reshaped->chunks();
  info.dtype = float64;
  const ReshapeOp op(
      info, MakeInMemoryStoredArray(std::make_shared<NDArray>(NDArray({100}, float64)), {30}),
      {100}, std::make_shared<ResultOutput>(Shape{10, 10}, Shape{3, 10}, float64), 0);
  EXPECT_EQ(op.InputRegion({1, 0}), (Region{{30}, {30}}));
  EXPECT_EQ(op.InputRegion({3, 0}), (Region{{90}, {10}}));
  // A task holds its 240 B block and the 240 B region it reads: 480 B.
  EXPECT_EQ(op.projected_mem(0), 480);
  EXPECT_EQ(Finalize({PlanOutput{reshaped, std::nullopt}}, spec, {}).max_projected_mem(), 480);
}

}  // namespace
}  // namespace tessera::planner
