#include "generators.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <vector>

#include "tessera/core/errors.hpp"

namespace tessera::kernels {
namespace {

using RunAt = std::tuple<Index, Index, Index>;  // global index, count, tile offset

std::vector<RunAt> RunsOf(const TilePosition& tile) {
  std::vector<RunAt> runs;
  ForEachRun(tile, [&](Index global, Index count, Index offset) {
    runs.emplace_back(global, count, offset);
  });
  return runs;
}

TEST(ForEachRun, SplitsATileAtRowsOfTheBlock) {
  // The header's example: block rows 20..29 of a (100, 50) array; the tile starts at
  // block element 120 = (2, 20), i.e. array element (22, 20) = 1120.
  const TilePosition tile{.array_shape = {100, 50},
                          .block_start = {20, 0},
                          .block_shape = {10, 50},
                          .tile_start = 120,
                          .count = 64};
  EXPECT_EQ(RunsOf(tile), (std::vector<RunAt>{{1120, 30, 0}, {1150, 34, 30}}));
}

TEST(ForEachRun, BlockAtAnOffsetInEveryDimension) {
  // Block (3, 4) at (2, 3) of a (6, 8) array; the tile is block elements 2..8.
  const TilePosition tile{.array_shape = {6, 8},
                          .block_start = {2, 3},
                          .block_shape = {3, 4},
                          .tile_start = 2,
                          .count = 7};
  // Block (0, 2) -> array (2, 5) = 21; (1, 0) -> (3, 3) = 27; (2, 0) -> (4, 3) = 35.
  EXPECT_EQ(RunsOf(tile), (std::vector<RunAt>{{21, 2, 0}, {27, 4, 2}, {35, 1, 6}}));
}

TEST(ForEachRun, ThreeDimensionsAndZeroD) {
  const TilePosition cube{.array_shape = {4, 3, 2},
                          .block_start = {2, 1, 0},
                          .block_shape = {2, 2, 2},
                          .tile_start = 1,
                          .count = 6};
  // Block (0,0,1) -> (2,1,1) = 15; (0,1,0) -> (2,2,0) = 16; (1,0,0) -> (3,1,0) = 20;
  // (1,1,0) -> (3,2,0) = 22 (one element left).
  EXPECT_EQ(RunsOf(cube), (std::vector<RunAt>{{15, 1, 0}, {16, 2, 1}, {20, 2, 3}, {22, 1, 5}}));
  const TilePosition scalar{
      .array_shape = {}, .block_start = {}, .block_shape = {}, .tile_start = 0, .count = 1};
  EXPECT_EQ(RunsOf(scalar), (std::vector<RunAt>{{0, 1, 0}}));
  const TilePosition empty{
      .array_shape = {5}, .block_start = {0}, .block_shape = {5}, .tile_start = 5, .count = 0};
  EXPECT_TRUE(RunsOf(empty).empty());
}

TEST(ForEachRun, RejectsATileOutsideItsBlock) {
  const TilePosition past_end{
      .array_shape = {10}, .block_start = {0}, .block_shape = {10}, .tile_start = 8, .count = 3};
  EXPECT_THROW(RunsOf(past_end), InvalidArgument);
  const TilePosition wrong_rank{
      .array_shape = {10, 2}, .block_start = {0}, .block_shape = {10}, .tile_start = 0, .count = 3};
  EXPECT_THROW(RunsOf(wrong_rank), InvalidArgument);
}

TEST(FillConstant, ConvertsTheScalarOnce) {
  std::array<float, 3> floats{};
  FillConstant(Scalar(1.5), float32, floats.data(), 3);
  EXPECT_EQ(floats, (std::array<float, 3>{1.5f, 1.5f, 1.5f}));
  std::array<std::uint8_t, 2> bytes{};
  FillConstant(Scalar(-1), uint8, bytes.data(), 2);
  EXPECT_EQ(bytes, (std::array<std::uint8_t, 2>{255, 255}));
  std::array<std::int8_t, 2> small{};
  FillConstant(Scalar(300), int8, small.data(), 2);
  EXPECT_EQ(small, (std::array<std::int8_t, 2>{44, 44}));
  std::array<bool, 2> flags{};
  FillConstant(Scalar(0.25), bool_, flags.data(), 2);
  EXPECT_EQ(flags, (std::array<bool, 2>{true, true}));
  std::array<std::int64_t, 4> untouched{7, 7, 7, 7};
  FillConstant(Scalar(std::int64_t{-2}), int64, untouched.data(), 3);
  EXPECT_EQ(untouched, (std::array<std::int64_t, 4>{-2, -2, -2, 7}));
}

// The elements [first, first + count) of arange over an array of `size` elements, filled
// through a block starting at `block_start`.
template <class T>
std::vector<T> Arange(double start, double step, Index size, Index first, Index count) {
  std::vector<T> out(static_cast<std::size_t>(count));
  const Index block_start = first / 2;  // any block holding the elements will do
  const TilePosition tile{.array_shape = {size},
                          .block_start = {block_start},
                          .block_shape = {size - block_start},
                          .tile_start = first - block_start,
                          .count = count};
  FillArange(start, step, DTypeOf<T>(), out.data(), tile);
  return out;
}

TEST(FillArange, MatchesNumpy) {
  // np.arange(0.1, 1.05, 0.1)[4:10]: element i is 0.1 + i * (0.2 - 0.1).
  EXPECT_EQ(Arange<double>(0.1, 0.1, 10, 4, 6),
            (std::vector<double>{0.5, 0.6, 0.7000000000000001, 0.8, 0.9, 1.0}));
  EXPECT_EQ(Arange<double>(0.1, 0.1, 10, 0, 3),
            (std::vector<double>{0.1, 0.2, 0.30000000000000004}));
  // np.arange(0.1, 2, 0.3, dtype=np.float32): computed in float32.
  EXPECT_EQ(
      Arange<float>(0.1, 0.3, 7, 0, 7),
      (std::vector<float>{0.10000000149011612f, 0.4000000059604645f, 0.7000000476837158f, 1.0f,
                          1.3000000715255737f, 1.600000023841858f, 1.9000000953674316f}));
  // np.arange(0.3, 3.9, 1.3, dtype=np.float32): element 1 is start + step rounded once,
  // not start + 1 * (second - first).
  EXPECT_EQ(Arange<float>(0.3, 1.3, 3, 0, 3),
            (std::vector<float>{0.30000001192092896f, 1.600000023841858f, 2.8999998569488525f}));
  // np.arange(0, 5, 0.5, dtype=np.int64) is all zeros: the step is int(0.5) - int(0).
  EXPECT_EQ(Arange<std::int64_t>(0, 0.5, 10, 3, 4), (std::vector<std::int64_t>{0, 0, 0, 0}));
  // np.arange(-1.5, 3, 1, dtype=np.int32) == [-1, 0, 1, 2, 3].
  EXPECT_EQ(Arange<std::int32_t>(-1.5, 1, 5, 0, 5), (std::vector<std::int32_t>{-1, 0, 1, 2, 3}));
  // np.arange(100, 200, 10, dtype=np.int8) wraps past 127.
  EXPECT_EQ(Arange<std::int8_t>(100, 10, 10, 1, 5),
            (std::vector<std::int8_t>{110, 120, -126, -116, -106}));
  // np.arange(10, 0, -3, dtype=np.uint8) == [10, 7, 4, 1].
  EXPECT_EQ(Arange<std::uint8_t>(10, -3, 4, 0, 4), (std::vector<std::uint8_t>{10, 7, 4, 1}));
}

TEST(FillArange, RejectsMultidimensionalArrays) {
  double out[4];
  const TilePosition tile{.array_shape = {2, 2},
                          .block_start = {0, 0},
                          .block_shape = {2, 2},
                          .tile_start = 0,
                          .count = 4};
  EXPECT_THROW(FillArange(0, 1, float64, out, tile), InvalidArgument);
}

// Fills a (rows, columns) array of randoms block by block (blocks of block_rows x
// block_columns) and tile by tile (tiles of `tile` elements within each block).
std::vector<double> RandomArray(std::uint64_t seed, Index rows, Index columns, Index block_rows,
                                Index block_columns, Index tile) {
  std::vector<double> array(static_cast<std::size_t>(rows * columns), -1.0);
  for (Index row0 = 0; row0 < rows; row0 += block_rows) {
    for (Index column0 = 0; column0 < columns; column0 += block_columns) {
      const Shape block_shape = {std::min(block_rows, rows - row0),
                                 std::min(block_columns, columns - column0)};
      const Index block_size = block_shape[0] * block_shape[1];
      std::vector<double> block(static_cast<std::size_t>(block_size));
      for (Index start = 0; start < block_size; start += tile) {
        const TilePosition where{.array_shape = {rows, columns},
                                 .block_start = {row0, column0},
                                 .block_shape = block_shape,
                                 .tile_start = start,
                                 .count = std::min(tile, block_size - start)};
        FillRandom(seed, block.data() + start, where);
      }
      for (Index index = 0; index < block_size; ++index) {
        const Index row = row0 + index / block_shape[1];
        const Index column = column0 + index % block_shape[1];
        array[static_cast<std::size_t>(row * columns + column)] =
            block[static_cast<std::size_t>(index)];
      }
    }
  }
  return array;
}

TEST(FillRandom, KnownValuesOfTheDocumentedFormula) {
  // From an independent Python implementation of the formula in generators.cpp:
  //   mix(z): z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9; z = (z ^ z >> 27) * 0x94D049BB133111EB;
  //           z ^ z >> 31 (mod 2^64);  value(s, i) = (mix(mix(s) + (i + 1) * 0x9E37...7C15) >> 11)
  //           / 2^53
  const std::vector<double> values = RandomArray(0, 1, 1001, 1, 1001, 1001);
  EXPECT_EQ(values[0], 0.8833108082136426);
  EXPECT_EQ(values[1], 0.43152799704850997);
  EXPECT_EQ(values[2], 0.026433771592597743);
  EXPECT_EQ(values[1000], 0.17569250689332405);
  const std::vector<double> seeded = RandomArray(42, 1, 12346, 1, 5000, 777);
  EXPECT_EQ(seeded[0], 0.5961188718302076);
  EXPECT_EQ(seeded[12345], 0.27866074737465707);
}

TEST(FillRandom, IndependentOfChunkingAndTiling) {
  const std::vector<double> one_block = RandomArray(7, 37, 23, 37, 23, 37 * 23);
  const std::vector<double> four_blocks = RandomArray(7, 37, 23, 19, 12, 19 * 12);
  const std::vector<double> odd_tiles = RandomArray(7, 37, 23, 10, 7, 13);
  const std::vector<double> single_elements = RandomArray(7, 37, 23, 5, 23, 1);
  EXPECT_EQ(one_block, four_blocks);
  EXPECT_EQ(one_block, odd_tiles);
  EXPECT_EQ(one_block, single_elements);
  EXPECT_NE(one_block, RandomArray(8, 37, 23, 37, 23, 37 * 23));  // the seed matters
  for (double value : one_block) {
    ASSERT_GE(value, 0.0);
    ASSERT_LT(value, 1.0);
  }
}

TEST(FillRandom, UniformOnAverage) {
  constexpr Index kCount = 1'000'000;
  std::vector<double> values(kCount);
  FillRandom(123, values.data(),
             {.array_shape = {kCount},
              .block_start = {0},
              .block_shape = {kCount},
              .tile_start = 0,
              .count = kCount});
  double sum = 0;
  Index below_tenth = 0;
  for (double value : values) {
    sum += value;
    below_tenth += value < 0.1 ? 1 : 0;
  }
  // Standard errors: 0.289 / 1000 for the mean, 300 for the count: both bounds are ~7 sigma.
  EXPECT_NEAR(sum / kCount, 0.5, 0.002);
  EXPECT_NEAR(static_cast<double>(below_tenth), 100'000.0, 2'100.0);
}

TEST(GatherStrided, ContiguousBroadcastAndTransposed) {
  // A (3, 4) int32 block in C order: element (r, c) = 10 * r + c.
  std::array<std::int32_t, 12> source{};
  for (int index = 0; index < 12; ++index)
    source[static_cast<std::size_t>(index)] = 10 * (index / 4) + index % 4;
  const auto* bytes = reinterpret_cast<const std::byte*>(source.data());
  auto gather = [&](const std::byte* from, const Shape& strides, const Shape& block_shape,
                    Index start, Index count) {
    std::vector<std::int32_t> out(static_cast<std::size_t>(count), -1);
    GatherStrided(from, strides, 4, reinterpret_cast<std::byte*>(out.data()),
                  {.array_shape = block_shape,
                   .block_start = Shape(block_shape.size(), 0),
                   .block_shape = block_shape,
                   .tile_start = start,
                   .count = count});
    return out;
  };
  // Contiguous: a straight copy across rows.
  EXPECT_EQ(gather(bytes, {16, 4}, {3, 4}, 2, 7),
            (std::vector<std::int32_t>{2, 3, 10, 11, 12, 13, 20}));
  // Broadcast to (2, 3, 4): a leading stride of 0 repeats the block.
  EXPECT_EQ(gather(bytes, {0, 16, 4}, {2, 3, 4}, 10, 5),
            (std::vector<std::int32_t>{22, 23, 0, 1, 2}));
  // Column 1 as a (3, 1) array broadcast along (3, 4): an innermost stride of 0.
  EXPECT_EQ(gather(bytes + 4, {16, 0}, {3, 4}, 3, 6),
            (std::vector<std::int32_t>{1, 11, 11, 11, 11, 21}));
  // The transpose, (4, 3) with strides (4, 16).
  EXPECT_EQ(gather(bytes, {4, 16}, {4, 3}, 0, 12),
            (std::vector<std::int32_t>{0, 10, 20, 1, 11, 21, 2, 12, 22, 3, 13, 23}));
  // Columns reversed: start at the last column, stride -4.
  EXPECT_EQ(gather(bytes + 12, {16, -4}, {3, 4}, 4, 4),
            (std::vector<std::int32_t>{13, 12, 11, 10}));
  // A 0-d block.
  EXPECT_EQ(gather(bytes + 4 * 5, {}, {}, 0, 1), (std::vector<std::int32_t>{11}));
}

TEST(GatherStrided, EveryItemsize) {
  const std::array<std::uint8_t, 4> small{1, 2, 3, 4};
  std::array<std::uint8_t, 6> small_out{};
  GatherStrided(reinterpret_cast<const std::byte*>(small.data()), {0, 2}, 1,
                reinterpret_cast<std::byte*>(small_out.data()),
                {.array_shape = {3, 2},
                 .block_start = {0, 0},
                 .block_shape = {3, 2},
                 .tile_start = 0,
                 .count = 6});
  EXPECT_EQ(small_out, (std::array<std::uint8_t, 6>{1, 3, 1, 3, 1, 3}));
  const std::array<std::int16_t, 3> shorts{-1, 2, -3};
  std::array<std::int16_t, 4> shorts_out{};
  GatherStrided(
      reinterpret_cast<const std::byte*>(shorts.data()), {0}, 2,
      reinterpret_cast<std::byte*>(shorts_out.data()),
      {.array_shape = {4}, .block_start = {0}, .block_shape = {4}, .tile_start = 0, .count = 4});
  EXPECT_EQ(shorts_out, (std::array<std::int16_t, 4>{-1, -1, -1, -1}));
  const std::array<double, 4> doubles{0.5, 1.5, 2.5, 3.5};
  std::array<double, 2> doubles_out{};
  GatherStrided(
      reinterpret_cast<const std::byte*>(doubles.data()), {16}, 8,
      reinterpret_cast<std::byte*>(doubles_out.data()),
      {.array_shape = {2}, .block_start = {0}, .block_shape = {2}, .tile_start = 0, .count = 2});
  EXPECT_EQ(doubles_out, (std::array<double, 2>{0.5, 2.5}));
  std::byte ignored[16];
  EXPECT_THROW(GatherStrided(ignored, {3}, 3, ignored,
                             {.array_shape = {1},
                              .block_start = {0},
                              .block_shape = {1},
                              .tile_start = 0,
                              .count = 1}),
               InvalidArgument);
}

}  // namespace
}  // namespace tessera::kernels
