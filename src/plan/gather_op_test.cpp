// GatherOp: which chunk sub-boxes a block reads, and its projection worked by hand
// (docs/memory-model.md, "Manipulation and indexing").
#include "gather_op.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "node_detail.hpp"
#include "tessera/plan/finalized_plan.hpp"
#include "tessera/plan/internal/index_map.hpp"

namespace tessera::planner {
namespace {

Spec SpecWith(std::int64_t allowed_mem) {
  Spec spec;
  spec.allowed_mem = allowed_mem;
  spec.total_mem = std::int64_t{1} << 30;
  return spec;
}

// 0, 1, ..., 99 (int32) in chunks of 10, held in memory.
NodePtr Hundred() {
  NDArray values({100}, int32);
  auto data = values.mutable_data<std::int32_t>();
  std::iota(data.begin(), data.end(), 0);
  return MakeInMemory(std::move(values), {10});
}

// x[::-3]: 34 elements, 99, 96, ..., 0, in chunks of 10.
NodePtr EveryThirdReversed(const NodePtr& x) {
  return MakeGather({x}, OneSourceMap({AxisMap{0, 99, -3}}, {-1}, {34}), {34}, {10}, int32);
}

TEST(GatherOpTest, ProjectionIsTheBlockPlusTheLargestRead) {
  // Block 0 (99, 96, ..., 72) reads 99..90 from chunk 9 (10 elements), 87..81 from
  // chunk 8 (7) and 78..72 from chunk 7 (7), one at a time: its 40 B block plus the
  // largest read, 40 B, = 80 B; the result output writes nothing more.
  const FinalizedPlan plan =
      Finalize({PlanOutput{EveryThirdReversed(Hundred()), std::nullopt}}, SpecWith(80), {});
  ASSERT_EQ(plan.ops().size(), 1U);
  EXPECT_EQ(plan.ops()[0].kind, OpKind::kGather);
  EXPECT_EQ(plan.ops()[0].projected_mem, 80);
  EXPECT_EQ(plan.ops()[0].num_tasks, 4);
  // Blocks 0-2 touch 3 chunks each, block 3 (9, 6, 3, 0) one.
  EXPECT_EQ(plan.ops()[0].chunk_reads, 10);
  EXPECT_THROW(
      Finalize({PlanOutput{EveryThirdReversed(Hundred()), std::nullopt}}, SpecWith(79), {}),
      MemoryBudgetError);
}

TEST(GatherOpTest, PiecesGroupIndicesByInputChunk) {
  const NodePtr x = Hundred();
  const NodePtr gathered = EveryThirdReversed(x);
  OpInfo info;
  info.name = "g";
  info.shape = gathered->shape();
  info.chunks = gathered->chunks();
  info.dtype = int32;
  const GatherOp op(info, gathered->detail().index_map,
                    {std::shared_ptr<const StoredArray>(MakeInMemoryStoredArray(
                        std::make_shared<NDArray>(NDArray({100}, int32)), {10}))},
                    {x->grid()}, std::make_shared<ResultOutput>(Shape{34}, Shape{10}, int32), 0);
  const auto pieces = op.Pieces(0, Region{{0}, {10}});
  ASSERT_EQ(pieces.size(), 1U);
  ASSERT_EQ(pieces[0].size(), 3U);
  EXPECT_EQ(pieces[0][0].first, 90);
  EXPECT_EQ(pieces[0][0].last, 99);
  // Positions 0..3 read 99, 96, 93, 90; positions 4..6 read 87, 84, 81.
  using Segment = GatherOp::Segment;
  EXPECT_EQ(pieces[0][0].segments, (std::vector<Segment>{{0, 99, 4, -3, 1}}));
  EXPECT_EQ(pieces[0][1].segments, (std::vector<Segment>{{4, 87, 3, -3, 1}}));
  EXPECT_EQ(pieces[0][2].first, 72);
}

TEST(GatherOpTest, ComposedMapsReadTheFirstInput) {
  const NodePtr x = Hundred();
  // (x[::-3])[1::2] = x[96::-6]: one gather of x.
  const NodePtr twice = MakeGather({EveryThirdReversed(x)},
                                   OneSourceMap({AxisMap{0, 1, 2}}, {-1}, {17}), {17}, {10}, int32);
  EXPECT_EQ(twice->inputs().front(), x);
  EXPECT_EQ(twice->detail().index_map->sources[0].axes[0], (AxisMap{0, 96, -6}));
  // A modular map over an affine one composes; an affine one over a divided one doesn't.
  const NodePtr repeated =
      MakeGather({x}, OneSourceMap({AxisMap{0, 0, 1, 2}}, {-1}, {200}), {200}, {10}, int32);
  const NodePtr sliced =
      MakeGather({repeated}, OneSourceMap({AxisMap{0, 1, 2}}, {-1}, {100}), {100}, {10}, int32);
  EXPECT_EQ(sliced->inputs().front(), repeated);
}

TEST(GatherOpTest, RepeatRunsAreOneSegment) {
  // repeat(x, 3)[0:30]: 0, 0, 0, 1, 1, 1, ... 9, 9, 9 all in chunk 0: one segment.
  const NodePtr x = Hundred();
  const NodePtr repeated =
      MakeGather({x}, OneSourceMap({AxisMap{0, 0, 1, 3}}, {-1}, {300}), {300}, {30}, int32);
  OpInfo info;
  info.name = "r";
  info.shape = repeated->shape();
  info.chunks = repeated->chunks();
  info.dtype = int32;
  const GatherOp op(
      info, repeated->detail().index_map,
      {MakeInMemoryStoredArray(std::make_shared<NDArray>(NDArray({100}, int32)), {10})},
      {x->grid()}, std::make_shared<ResultOutput>(Shape{300}, Shape{30}, int32), 0);
  const auto pieces = op.Pieces(0, Region{{0}, {30}});
  ASSERT_EQ(pieces[0].size(), 1U);
  EXPECT_EQ(pieces[0][0].segments, (std::vector<GatherOp::Segment>{{0, 0, 30, 1, 3}}));
}

}  // namespace
}  // namespace tessera::planner
