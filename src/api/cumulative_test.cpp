#include "tessera/api/cumulative.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "int32_arrays.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

using testing::ErrorOf;
using testing::Iota;

std::vector<std::int64_t> Int64s(const Array& x) {
  const NDArray values = x.compute();
  const auto data = values.data<std::int64_t>();
  return {data.begin(), data.end()};
}

// The running sums of 0, 1, ..., n - 1 (n (n - 1) / 2 at the end), by hand.
std::vector<std::int64_t> Triangular(std::int64_t n) {
  std::vector<std::int64_t> sums;
  std::int64_t total = 0;
  for (std::int64_t i = 0; i < n; ++i) sums.push_back(total += i);
  return sums;
}

TEST(CumulativeTest, SumAcrossManyBlocksOfOneElement) {
  // 37 blocks of 1: the totals are scanned in three rounds (37 -> 19 -> 10 -> ...).
  const Array x = Iota({37}, {1});
  const Array sums = cumulative_sum(x);
  EXPECT_EQ(sums.dtype(), int64);  // int32 accumulates in int64, as sum does
  EXPECT_EQ(sums.chunks(), (Shape{1}));
  EXPECT_EQ(Int64s(sums), Triangular(37));
}

TEST(CumulativeTest, SumAlongEitherAxisOfA2dArray) {
  const Array x = Iota({3, 4}, {2, 3});  // x[i, j] = 4 i + j
  EXPECT_EQ(Int64s(cumulative_sum(x, 1)),
            (std::vector<std::int64_t>{0, 1, 3, 6, 4, 9, 15, 22, 8, 17, 27, 38}));
  EXPECT_EQ(Int64s(cumulative_sum(x, -2)),
            (std::vector<std::int64_t>{0, 1, 2, 3, 4, 6, 8, 10, 12, 15, 18, 21}));
}

TEST(CumulativeTest, ProdAndIncludeInitial) {
  const Array x = Iota({6}, {4}, 1);  // 1 .. 6
  EXPECT_EQ(Int64s(cumulative_prod(x)), (std::vector<std::int64_t>{1, 2, 6, 24, 120, 720}));
  const Array padded = cumulative_prod(x, 0, std::nullopt, true);
  EXPECT_EQ(padded.shape(), (Shape{7}));
  EXPECT_EQ(Int64s(padded), (std::vector<std::int64_t>{1, 1, 2, 6, 24, 120, 720}));
  EXPECT_EQ(Int64s(cumulative_sum(x, 0, std::nullopt, true)),
            (std::vector<std::int64_t>{0, 1, 3, 6, 10, 15, 21}));
}

TEST(CumulativeTest, AZeroInOneBlockZeroesEveryLaterOne) {
  const Array x = Iota({6}, {3}) % 3 * 2 + 1;  // 1 3 5 | 1 3 5
  EXPECT_EQ(Int64s(cumulative_prod(x)), (std::vector<std::int64_t>{1, 3, 15, 15, 45, 225}));
  // 1 0 1 | 4 9 16: the second block starts from the first's total, 0.
  const Array with_zero = Iota({6}, {3}) * (Iota({6}, {3}) - 2) + 1;  // 1 0 1 4 9 16
  EXPECT_EQ(Int64s(cumulative_prod(with_zero)), (std::vector<std::int64_t>{1, 0, 0, 0, 0, 0}));
}

TEST(CumulativeTest, DtypeIsTheAccumulation) {
  const Array x = Iota({5}, {2});
  const Array as_float = cumulative_sum(x, 0, float64);
  EXPECT_EQ(as_float.dtype(), float64);
  const NDArray values = as_float.compute();
  EXPECT_EQ((std::vector<double>(values.data<double>().begin(), values.data<double>().end())),
            (std::vector<double>{0, 1, 3, 6, 10}));
  EXPECT_EQ(cumulative_sum(astype(x, uint8)).dtype(), uint64);
  EXPECT_EQ(cumulative_prod(astype(x, bool_)).dtype(), int64);
}

TEST(CumulativeTest, ErrorsSayWhatWasWrong) {
  const Array x = Iota({3, 4}, {2, 3});
  EXPECT_EQ(ErrorOf([&] { cumulative_sum(x); }),
            "cumulative_sum: x has 2 dimensions; give the axis to accumulate along");
  EXPECT_EQ(ErrorOf([&] { cumulative_prod(x, 2); }),
            "cumulative_prod: axis 2 is out of range for an array of 2 dimensions (use -2 to 1)");
  EXPECT_EQ(ErrorOf([&] { cumulative_sum(x, 0, bool_); }),
            "cumulative_sum: dtype bool cannot accumulate; use an integer or float dtype");
}

}  // namespace
}  // namespace tessera
