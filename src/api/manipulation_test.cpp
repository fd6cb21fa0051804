#include "tessera/api/manipulation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "int32_arrays.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/api/indexing.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/plan/internal/node.hpp"

namespace tessera {

using planner::NodeKind;
using planner::NodePtr;

namespace {

using testing::Computed;
using testing::ErrorOf;
using testing::Iota;

TEST(ManipulationTest, PermuteDimsPermutesValuesAndChunks) {
  const Array x = Iota({2, 3, 4}, {1, 2, 3});
  const Array t = permute_dims(x, {2, 0, 1});
  EXPECT_EQ(t.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(t.chunks(), (Shape{3, 1, 2}));
  // t[k, i, j] = x[i, j, k] = 12 i + 4 j + k.
  std::vector<std::int32_t> expected;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) expected.push_back(12 * i + 4 * j + k);
  EXPECT_EQ(Computed(t), expected);
  EXPECT_EQ(Computed(matrix_transpose(Iota({2, 3}, {2, 2}))),
            (std::vector<std::int32_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_NE(ErrorOf([&] {
              permute_dims(x, {0, 1});
            }).find("give a permutation"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { permute_dims(x, {0, 1, -3}); }).find("repeated"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { matrix_transpose(Iota({3}, {2})); }).find("at least 2"),
            std::string::npos);
}

TEST(ManipulationTest, ExpandDimsAndSqueeze) {
  const Array x = Iota({2, 3}, {2, 2});
  const Array e = expand_dims(x, {0, -1});
  EXPECT_EQ(e.shape(), (Shape{1, 2, 3, 1}));
  EXPECT_EQ(e.chunks(), (Shape{1, 2, 2, 1}));
  EXPECT_EQ(Computed(e), (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5}));
  const Array s = squeeze(e, 0);
  EXPECT_EQ(s.shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(squeeze(e).shape(), (Shape{2, 3}));
  EXPECT_EQ(Computed(squeeze(e)), (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(ErrorOf([&] { squeeze(e, 1); }),
            "squeeze: cannot squeeze axis 1 of the array (1, 2, 3, 1): its extent is 2, not 1");
  EXPECT_NE(ErrorOf([&] { expand_dims(x, 3); }).find("out of range"), std::string::npos);
}

TEST(ManipulationTest, ConcatPromotesAndChecksShapes) {
  const Array a = Iota({2, 2}, {1, 2});
  NDArray b_values({2, 1}, int8);
  b_values.mutable_data<std::int8_t>()[0] = -1;
  b_values.mutable_data<std::int8_t>()[1] = -2;
  const Array b = asarray(std::move(b_values), {2, 1}, testing::SmallSpec());
  const Array c = concat({a, b}, 1);
  EXPECT_EQ(c.dtype(), int32);
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(c.chunks(), (Shape{1, 2}));
  EXPECT_EQ(Computed(c), (std::vector<std::int32_t>{0, 1, -1, 2, 3, -2}));
  EXPECT_EQ(Computed(concat({a, a}, std::nullopt)),
            (std::vector<std::int32_t>{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(concat({a, b.astype(float32)}, 1).dtype(), float64);  // numpy: int32 + float32
  EXPECT_EQ(ErrorOf([&] {
              concat({a, b}, 0);
            }),
            "concat: array 1 has shape (2, 1) but array 0 has (2, 2); all must have the same "
            "shape except along axis 0");
  EXPECT_NE(ErrorOf([&] { concat({}, 0); }).find("at least one"), std::string::npos);
  const Array scalar = asarray(NDArray({}, int32), {}, testing::SmallSpec());
  EXPECT_NE(ErrorOf([&] {
              concat({scalar, scalar}, 0);
            }).find("zero-dimensional"),
            std::string::npos);
}

TEST(ManipulationTest, StackAddsAnAxis) {
  const Array a = Iota({3}, {2});
  const Array s = stack({a, a + 10}, 1);
  EXPECT_EQ(s.shape(), (Shape{3, 2}));
  EXPECT_EQ(s.chunks(), (Shape{2, 1}));
  EXPECT_EQ(Computed(s), (std::vector<std::int32_t>{0, 10, 1, 11, 2, 12}));
  EXPECT_NE(ErrorOf([&] { stack({a, Iota({2}, {2})}); }).find("same shape"), std::string::npos);
}

TEST(ManipulationTest, FlipRollRepeatTile) {
  const Array x = Iota({2, 3}, {1, 2});
  EXPECT_EQ(Computed(flip(x)), (std::vector<std::int32_t>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(Computed(flip(x, 1)), (std::vector<std::int32_t>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(flip(x).chunks(), x.chunks());
  EXPECT_EQ(Computed(roll(x, 1, 1)), (std::vector<std::int32_t>{2, 0, 1, 5, 3, 4}));
  EXPECT_EQ(Computed(roll(x, -4, 1)), (std::vector<std::int32_t>{1, 2, 0, 4, 5, 3}));
  EXPECT_EQ(Computed(roll(x, 2)), (std::vector<std::int32_t>{4, 5, 0, 1, 2, 3}));
  EXPECT_EQ(Computed(roll(x, {1, 1}, {0, 1})), (std::vector<std::int32_t>{5, 3, 4, 2, 0, 1}));
  EXPECT_EQ(Computed(repeat(x, 2, 0)),
            (std::vector<std::int32_t>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  EXPECT_EQ(Computed(repeat(Iota({3}, {2}), 2)), (std::vector<std::int32_t>{0, 0, 1, 1, 2, 2}));
  const Array t = tile(Iota({2}, {1}), {2, 2});
  EXPECT_EQ(t.shape(), (Shape{2, 4}));
  EXPECT_EQ(Computed(t), (std::vector<std::int32_t>{0, 1, 0, 1, 0, 1, 0, 1}));
  EXPECT_NE(ErrorOf([&] { repeat(x, -1); }).find(">= 0"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { tile(x, {-1}); }).find(">= 0"), std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              roll(x, {1, 2, 3}, {0, 1});
            }).find("one shift per axis"),
            std::string::npos);
}

TEST(ManipulationTest, ReshapeSplitsAndMergesAxes) {
  const Array x = Iota({4, 6}, {2, 6});  // chunks line up with a merge
  const Array merged = reshape(x, {-1});
  EXPECT_EQ(merged.shape(), (Shape{24}));
  EXPECT_EQ(merged.chunks(), (Shape{12}));
  std::vector<std::int32_t> iota(24);
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(Computed(merged), iota);
  // A split: (24,) in chunks of 12 to (2, 3, 4): chunk 12 is 1 row of 12.
  const Array split = reshape(merged, {2, 3, 4});
  EXPECT_EQ(split.chunks(), (Shape{1, 3, 4}));
  EXPECT_EQ(Computed(split), iota);
  // Chunks that do not line up are rechunked first.
  const Array odd = Iota({4, 6}, {3, 4});
  const Array reshaped = reshape(odd, {3, 8});
  EXPECT_EQ(Computed(reshaped), iota);
  EXPECT_EQ(reshaped.node()->inputs().front()->kind(), NodeKind::kRechunk);
  EXPECT_EQ(reshaped.plan().ops().back().kind, OpKind::kReshape);
  EXPECT_EQ(Computed(reshape(Iota({2, 1, 3}, {1, 1, 2}), {2, 3})),
            (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(ErrorOf([&] {
              reshape(x, {5, -1});
            }),
            "reshape: cannot reshape an array of size 24 into shape (5, -1); the other extents "
            "must divide the size");
  EXPECT_NE(ErrorOf([&] { reshape(x, {-1, -1}); }).find("more than one -1"), std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              reshape(x, {5, 5});
            }).find("cannot reshape an array of size 24"),
            std::string::npos);
}

TEST(ManipulationTest, BroadcastArrays) {
  const std::vector<Array> b = broadcast_arrays({Iota({3, 1}, {2, 1}), Iota({2}, {1})});
  EXPECT_EQ(b[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(b[1].shape(), (Shape{3, 2}));
  EXPECT_EQ(Computed(b[0]), (std::vector<std::int32_t>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(Computed(b[1]), (std::vector<std::int32_t>{0, 1, 0, 1, 0, 1}));
  EXPECT_NE(ErrorOf([&] {
              broadcast_arrays({Iota({3}, {2}), Iota({2}, {1})});
            }).find("cannot be broadcast"),
            std::string::npos);
}

TEST(ManipulationTest, ChainsComposeIntoOneOp) {
  const Array x = Iota({4, 6}, {2, 3});
  const Array chained = flip(permute_dims(flip(x, 0), {1, 0}), 1);
  // Two flips of axis 0 of x cancel out: chained = x.T.
  EXPECT_EQ(chained.node()->inputs().front(), x.node());
  EXPECT_EQ(Computed(chained), Computed(matrix_transpose(x)));
  EXPECT_EQ(chained.plan().ops().size(), 1U);
  // Over a concat or stack: an index of the joined axis reads one input; a permutation
  // that keeps the joined axis whole joins the permuted inputs.
  const Array y = Iota({4, 6}, {3, 3}, 100);
  const Array second = index(stack({x, y}, 2), {ellipsis, 1});
  EXPECT_EQ(second.node()->inputs(), (std::vector<NodePtr>{y.node()}));
  EXPECT_EQ(Computed(second), Computed(y));
  const Array joined_t = matrix_transpose(concat({x, y}, 1));
  EXPECT_EQ(joined_t.node()->inputs(), (std::vector<NodePtr>{x.node(), y.node()}));
  EXPECT_EQ(Computed(joined_t), Computed(concat({matrix_transpose(x), matrix_transpose(y)}, 0)));
  const Array column = index(concat({x, y}, 1), {Slice(), 7});
  EXPECT_EQ(column.node()->inputs(), (std::vector<NodePtr>{y.node()}));
  EXPECT_EQ(Computed(column), (std::vector<std::int32_t>{101, 107, 113, 119}));
}

TEST(ManipulationTest, GathersGoThroughElementwiseOps) {
  // flip(exp(x) * y)[1:3] = exp(flip(x)[1:3]) * flip(y)[1:3]: x and y are gathered (only
  // the chunks needed are read), the elementwise ops compute only the result's elements.
  const Array x = Iota({8}, {2}).astype(float64);
  const Array y = Iota({8}, {2}, 3).astype(float64);
  const Array z = flip(exp(x) * y)[Slice(1, 3)];
  EXPECT_EQ(z.node()->kind(), NodeKind::kBinary);
  const NDArray values = z.compute();
  EXPECT_DOUBLE_EQ(values.data<double>()[0], std::exp(6.0) * 9);
  EXPECT_DOUBLE_EQ(values.data<double>()[1], std::exp(5.0) * 8);
  // Not when the result is larger than the op: repeat computes exp once per element.
  EXPECT_EQ(repeat(exp(x), 3).node()->kind(), NodeKind::kGather);
}

TEST(ManipulationTest, GeneratorsAndConstantsAreGathered) {
  const Array r = arange(10, 3, testing::SmallSpec());
  const Array flipped = flip(r);
  const NDArray values = flipped.compute();
  EXPECT_EQ(values.data<std::int64_t>()[0], 9);
  EXPECT_EQ(values.data<std::int64_t>()[9], 0);
  const Array ones_t = permute_dims(ones({2, 3}, int8, {1, 3}, testing::SmallSpec()), {1, 0});
  EXPECT_EQ(ones_t.node()->kind(), NodeKind::kConstant);
  EXPECT_EQ(ones_t.shape(), (Shape{3, 2}));
}

}  // namespace
}  // namespace tessera
