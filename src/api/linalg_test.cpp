// Linear algebra end to end: matmul, tensordot, vecdot and outer against naive loops
// written here (numpy is the truth of tests/interop/test_linalg.py), their shapes,
// chunks and dtypes, numpy's 1-d and batch rules, integer wrap-around, the errors, and
// the contraction's memory: slab widths that follow allowed_mem, projections checked
// by hand, and every task's measured peak at or below its projection.
#include "tessera/api/linalg.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "task_bounds.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera {
namespace {

Spec TestSpec(std::int64_t allowed = 64 << 20, std::int64_t reserved = 0) {
  Spec spec;
  spec.allowed_mem = allowed;
  spec.reserved_mem = reserved;
  spec.max_workers = 2;
  return spec;
}

// Values in [-4, 4] in steps of 1/8: exact in every float type, small for integers.
NDArray Values(const Shape& shape, DType dtype, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> pick(-32, 32);
  NDArray array(shape, dtype);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (T& value : array.mutable_data<T>()) {
      const int drawn = pick(random);
      if constexpr (std::is_same_v<T, bool>) {
        value = drawn > 0;
      } else if constexpr (std::is_floating_point_v<T>) {
        value = static_cast<T>(drawn) / 8;
      } else if constexpr (kIsComplex<T>) {
        using R = typename T::value_type;
        value = T(static_cast<R>(drawn) / 8, static_cast<R>(pick(random)) / 8);
      } else {
        value = static_cast<T>(std::is_signed_v<T> ? drawn / 4 : (drawn + 32) / 4);
      }
    }
  });
  return array;
}

// C-order index of `index` in `shape`, where a dimension of extent 1 repeats
// (numpy broadcasting of a batch dimension).
Index Flat(const Shape& shape, const Shape& index) {
  Index flat = 0;
  for (std::size_t d = 0; d < shape.size(); ++d)
    flat = flat * shape[d] + (shape[d] == 1 ? 0 : index[d]);
  return flat;
}

// Naive batched matmul of a (..., M, K) and b (..., K, N) (at least 2-d each), as
// doubles, batch dimensions broadcast.
std::vector<double> NaiveMatmul(const NDArray& a, const NDArray& b, const Shape& result) {
  const std::size_t nb = result.size() - 2;
  const Index m = result[nb];
  const Index n = result[nb + 1];
  const Index k = a.shape().back();
  const Shape a_batch(a.shape().begin(), a.shape().end() - 2);
  const Shape b_batch(b.shape().begin(), b.shape().end() - 2);
  std::vector<double> out;
  Shape index(nb, 0);
  const Index batches = ShapeSize(Shape(result.begin(), result.end() - 2));
  for (Index batch = 0; batch < batches; ++batch) {
    const Shape a_index(index.end() - static_cast<std::ptrdiff_t>(a_batch.size()), index.end());
    const Shape b_index(index.end() - static_cast<std::ptrdiff_t>(b_batch.size()), index.end());
    const Index a_base = Flat(a_batch, a_index) * m * k;
    const Index b_base = Flat(b_batch, b_index) * k * n;
    for (Index i = 0; i < m; ++i) {
      for (Index j = 0; j < n; ++j) {
        double sum = 0;
        for (Index p = 0; p < k; ++p) {
          sum += a.GetAsDouble(a_base + i * k + p) * b.GetAsDouble(b_base + p * n + j);
        }
        out.push_back(sum);
      }
    }
    for (std::size_t d = nb; d-- > 0;) {
      if (++index[d] < result[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

void ExpectValues(const NDArray& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), static_cast<Index>(expected.size()));
  for (std::size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(actual.GetAsDouble(static_cast<Index>(i)), expected[i]) << "element " << i;
  }
}

TEST(LinalgTest, MatmulShapesChunksAndDtypes) {
  const Spec spec = TestSpec();
  const Array a = asarray(Values({2, 5, 3}, int32, 1), {1, 2, 3}, spec);
  const Array b = asarray(Values({3, 4}, float32, 2), {3, 3}, spec);
  const Array c = matmul(a, b);
  EXPECT_EQ(c.shape(), (Shape{2, 5, 4}));
  EXPECT_EQ(c.chunks(), (Shape{1, 2, 3}));
  EXPECT_EQ(c.dtype(), float64);  // ResultType(int32, float32)
  const Array square = asarray(Values({4, 4}, int8, 3), {3, 3}, spec);
  EXPECT_EQ(matmul(square, square.rechunk({2, 2})).dtype(), int8);
  EXPECT_EQ(matmul(square, square.rechunk({2, 2})).chunks(), (Shape{3, 2}));
}

TEST(LinalgTest, MatmulBroadcastsBatchDimensions) {
  const Spec spec = TestSpec();
  const NDArray a = Values({2, 1, 3, 4}, float64, 3);
  const NDArray b = Values({5, 4, 2}, float64, 4);
  const NDArray c = matmul(asarray(a, {1, 1, 2, 3}, spec), asarray(b, {2, 3, 1}, spec)).compute();
  EXPECT_EQ(c.shape(), (Shape{2, 5, 3, 2}));
  ExpectValues(c, NaiveMatmul(a, b, {2, 5, 3, 2}));
}

TEST(LinalgTest, MatmulPromotesAndRemovesOneDimensionalOperands) {
  const Spec spec = TestSpec();
  const NDArray v = Values({3}, float64, 5);
  const NDArray m = Values({3, 4}, float64, 6);
  const NDArray batched = Values({2, 4, 3}, float64, 7);
  const Array vector = asarray(v, {2}, spec);
  const NDArray row_times = matmul(vector, asarray(m, {2, 3}, spec)).compute();
  EXPECT_EQ(row_times.shape(), (Shape{4}));
  ExpectValues(row_times,
               NaiveMatmul(NDArray::FromValues<double>({1, 3}, v.data<double>()), m, {1, 4}));
  const NDArray times_column = matmul(asarray(batched, {1, 3, 2}, spec), vector).compute();
  EXPECT_EQ(times_column.shape(), (Shape{2, 4}));
  ExpectValues(
      times_column,
      NaiveMatmul(batched, NDArray::FromValues<double>({3, 1}, v.data<double>()), {2, 4, 1}));
  const NDArray dot = matmul(vector, vector).compute();
  EXPECT_EQ(dot.shape(), Shape{});
  const auto x = v.data<double>();
  EXPECT_EQ(dot.GetAsDouble(0), x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
}

TEST(LinalgTest, IntegersWrapAroundAsNumpy) {
  const Spec spec = TestSpec();
  // 100 * 100 * 3 = 30000 wraps modulo 256 in int8 (numpy: 48); uint16 wraps modulo 2^16.
  const NDArray a = NDArray::Full({2, 3}, int8, 100);
  const NDArray c =
      matmul(asarray(a, {1, 2}, spec), asarray(NDArray::Full({3, 2}, int8, 100), {2, 1}, spec))
          .compute();
  for (const std::int8_t value : c.data<std::int8_t>())
    EXPECT_EQ(value, static_cast<std::int8_t>(30000 % 256 - 256 * (30000 % 256 >= 128)));
  const NDArray big = NDArray::Full({1, 5}, uint16, 60000);
  const NDArray d = matmul(asarray(big, {1, 2}, spec),
                           asarray(NDArray::Full({5, 1}, uint16, 60000), {3, 1}, spec))
                        .compute();
  EXPECT_EQ(d.data<std::uint16_t>()[0],
            static_cast<std::uint16_t>((60000ULL * 60000ULL * 5) % 65536));
  const NDArray i64 = NDArray::Full({1, 2}, int64, static_cast<double>(1LL << 62));
  const NDArray e =
      matmul(asarray(i64, {1, 1}, spec), asarray(NDArray::Full({2, 1}, int64, 4), {1, 1}, spec))
          .compute();
  EXPECT_EQ(e.data<std::int64_t>()[0], 0);  // 2 * 2^64 wraps to 0
}

TEST(LinalgTest, BoolIsLogicalOrOfAnds) {
  const Spec spec = TestSpec();
  const NDArray a = Values({4, 6}, bool_, 8);
  const NDArray b = Values({6, 3}, bool_, 9);
  const NDArray c = matmul(asarray(a, {3, 4}, spec), asarray(b, {4, 2}, spec)).compute();
  ASSERT_EQ(c.dtype(), bool_);
  std::vector<double> expected = NaiveMatmul(a, b, {4, 3});
  for (double& value : expected) value = value > 0 ? 1 : 0;
  ExpectValues(c, expected);
}

TEST(LinalgTest, TensordotPairsAxesInAnyLayout) {
  const Spec spec = TestSpec();
  const NDArray a = Values({3, 4, 5}, float64, 10);
  const NDArray b = Values({5, 2, 3}, float64, 11);
  // Sum over a's axes (0, 2) with b's (2, 0): result (4, 2).
  const NDArray c =
      tensordot(asarray(a, {2, 3, 2}, spec), asarray(b, {2, 1, 2}, spec), {0, 2}, {2, 0}).compute();
  ASSERT_EQ(c.shape(), (Shape{4, 2}));
  for (Index i = 0; i < 4; ++i) {
    for (Index j = 0; j < 2; ++j) {
      double sum = 0;
      for (Index p = 0; p < 3; ++p) {
        for (Index q = 0; q < 5; ++q)
          sum += a.GetAsDouble((p * 4 + i) * 5 + q) * b.GetAsDouble((q * 2 + j) * 3 + p);
      }
      EXPECT_EQ(c.GetAsDouble(i * 2 + j), sum);
    }
  }
  // axes=1: a (3, 4, 5) . b (5, 2, 3) -> (3, 4, 2, 3); axes=0 is the outer product.
  EXPECT_EQ(tensordot(asarray(a, {2, 3, 2}, spec), asarray(b, {2, 1, 2}, spec), 1).shape(),
            (Shape{3, 4, 2, 3}));
  EXPECT_EQ(tensordot(asarray(a, {2, 3, 2}, spec), asarray(b, {2, 1, 2}, spec), 0).shape(),
            (Shape{3, 4, 5, 5, 2, 3}));
}

TEST(LinalgTest, VecdotSumsOneAxisAndBroadcastsTheOthers) {
  const Spec spec = TestSpec();
  const NDArray x = Values({4, 3, 5}, float64, 12);
  const NDArray y = Values({3, 1}, float64, 13);
  // axis -2: x's axis 1 (3) with y's axis 0 (3); the rest broadcast: (4, 5) with (1,).
  const NDArray d = vecdot(asarray(x, {3, 2, 2}, spec), asarray(y, {2, 1}, spec), -2).compute();
  ASSERT_EQ(d.shape(), (Shape{4, 5}));
  for (Index i = 0; i < 4; ++i) {
    for (Index j = 0; j < 5; ++j) {
      double sum = 0;
      for (Index p = 0; p < 3; ++p) sum += x.GetAsDouble((i * 3 + p) * 5 + j) * y.GetAsDouble(p);
      EXPECT_EQ(d.GetAsDouble(i * 5 + j), sum);
    }
  }
}

TEST(LinalgTest, OuterOfTwoVectors) {
  const Spec spec = TestSpec();
  const NDArray u = Values({5}, int16, 14);
  const NDArray v = Values({3}, float32, 15);
  const Array o = outer(asarray(u, {2}, spec), asarray(v, {2}, spec));
  EXPECT_EQ(o.chunks(), (Shape{2, 2}));
  const NDArray values = o.compute();
  ASSERT_EQ(values.dtype(), float32);
  for (Index i = 0; i < 5; ++i) {
    for (Index j = 0; j < 3; ++j)
      EXPECT_EQ(values.GetAsDouble(i * 3 + j), u.GetAsDouble(i) * v.GetAsDouble(j));
  }
}

TEST(LinalgTest, EmptyDimensions) {
  const Spec spec = TestSpec();
  const NDArray none = matmul(asarray(NDArray({0, 3}, float64), {1, 3}, spec),
                              asarray(Values({3, 4}, float64, 16), {3, 4}, spec))
                           .compute();
  EXPECT_EQ(none.shape(), (Shape{0, 4}));
  const NDArray zeros = matmul(asarray(NDArray({2, 0}, int32), {2, 1}, spec),
                               asarray(NDArray({0, 3}, int32), {1, 3}, spec))
                            .compute();
  ASSERT_EQ(zeros.shape(), (Shape{2, 3}));
  for (const std::int32_t value : zeros.data<std::int32_t>()) EXPECT_EQ(value, 0);
}

template <class Fn>
void ExpectInvalid(Fn&& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "no InvalidArgument (expected one mentioning \"" << needle << "\")";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
  }
}

TEST(LinalgTest, BadArgumentsSayWhatToChange) {
  const Spec spec = TestSpec();
  const Array m23 = zeros({2, 3}, float64, {2, 3}, spec);
  const Array m45 = zeros({4, 5}, float64, {4, 5}, spec);
  const Array scalar = zeros({}, float64, {}, spec);
  ExpectInvalid([&] { matmul(m23, m45); },
                "x1's last dimension (3) must equal x2's second-to-last dimension (4)");
  ExpectInvalid([&] { matmul(scalar, m23); }, "use multiply for scalars");
  ExpectInvalid(
      [&] {
        matmul(zeros({2, 2, 3}, float64, {}, spec), zeros({3, 3, 1}, float64, {}, spec));
      },
      "do not broadcast");
  ExpectInvalid([&] { tensordot(m23, m45, 3); }, "axes=3 must be between 0 and 2");
  ExpectInvalid([&] { tensordot(m23, m45, {1}, {0}); }, "must have one extent");
  ExpectInvalid([&] { tensordot(m23, m45, {1, 0}, {0}); }, "must have one length");
  ExpectInvalid(
      [&] {
        tensordot(m45, zeros({5, 5}, float64, {5, 5}, spec), {1, 1}, {0, 1});
      },
      "is given twice");
  ExpectInvalid([&] { tensordot(m23, m45, {2}, {0}); }, "out of range");
  ExpectInvalid([&] { vecdot(m23, m45); }, "must be the same (it does not broadcast)");
  ExpectInvalid([&] { vecdot(m23, m23, 2); }, "out of range");
  ExpectInvalid([&] { outer(m23, m45); }, "both operands must be 1-d");
}

// Output blocks (1000, 1000) of float64 hold 8e6 bytes; a slab of width w of each input
// 8000 * w. Inputs in memory are read by copying the region (ProjectRead = its bytes).
TEST(LinalgTest, SlabWidthFollowsAllowedMemAndProjectsExactly) {
  const std::int64_t reserved = 1'000'000;
  const auto plan_for = [&](std::int64_t allowed) {
    const Spec spec = TestSpec(allowed, reserved);
    const Array a = asarray(NDArray::Zeros({2000, 3000}, float64), {1000, 1000}, spec);
    const Array b = asarray(NDArray::Zeros({3000, 1000}, float64), {1000, 1000}, spec);
    return matmul(a, b).plan().ops().back();
  };
  // Everything fits: one slab over the whole axis: 1e6 + 8e6 + 2 * 8000 * 3000.
  const OpInfo whole = plan_for(100'000'000);
  EXPECT_EQ(whole.contraction_block, Shape{3000});
  EXPECT_EQ(whole.contraction_steps, 1);
  EXPECT_EQ(whole.projected_mem, 1'000'000 + 8'000'000 + 2 * 8000 * 3000);
  EXPECT_EQ(whole.kind, OpKind::kContract);
  EXPECT_EQ(whole.num_tasks, 2);
  // 40 MB: 2000 (two chunks) needs 41e6, one chunk 25e6.
  const OpInfo chunk = plan_for(40'000'000);
  EXPECT_EQ(chunk.contraction_block, Shape{1000});
  EXPECT_EQ(chunk.contraction_steps, 3);
  EXPECT_EQ(chunk.projected_mem, 25'000'000);
  // 17 MB: below one chunk, 1e6 + 8e6 + 16000 * w <= 17e6 gives w = 500.
  const OpInfo half = plan_for(17'000'000);
  EXPECT_EQ(half.contraction_block, Shape{500});
  EXPECT_EQ(half.contraction_steps, 6);
  EXPECT_EQ(half.projected_mem, 17'000'000);
  // Below the accumulator: the finalize check names the smallest figure that runs.
  try {
    plan_for(9'000'000);
    ADD_FAILURE() << "no MemoryBudgetError";
  } catch (const MemoryBudgetError& error) {
    EXPECT_NE(std::string(error.what()).find("9016000"), std::string::npos) << error.what();
  }
}

// The case: (4000, 3000) x (3000, 2000) float64 under an allowed_mem that forces
// several contraction slabs; values right to 1e-9 against a naive sum on a sample of
// elements; every task measured at or below its projection.
TEST(LinalgTest, LargeMatmulStreamsTheContractionWithinItsBudget) {
  const Spec spec = TestSpec(30'000'000, 1'000'000);
  const Array a = random::random({4000, 3000}, {1000, 1000}, spec, 1);
  const Array b = random::random({3000, 2000}, {1000, 1000}, spec, 2);
  const Array c = matmul(a, b);
  const FinalizedPlan plan = c.plan();
  const OpInfo& info = plan.ops().back();
  EXPECT_EQ(info.kind, OpKind::kContract);
  EXPECT_GT(info.contraction_steps, 1);
  EXPECT_EQ(info.contraction_block, Shape{1000});
  ExecutionReport report;
  ComputeOptions options;
  options.report = &report;
  options.execute.progress = ProgressMode::kNever;
  const NDArray values = c.compute(options);
  testing::ExpectFootprintsWithinProjection(report);
  const NDArray a_values = a.compute();
  const NDArray b_values = b.compute();
  const auto x = a_values.data<double>();
  const auto y = b_values.data<double>();
  std::mt19937 random(3);
  std::uniform_int_distribution<Index> row(0, 3999);
  std::uniform_int_distribution<Index> column(0, 1999);
  for (int sample = 0; sample < 500; ++sample) {
    const Index i = row(random);
    const Index j = column(random);
    double expected = 0;
    for (Index p = 0; p < 3000; ++p)
      expected +=
          x[static_cast<std::size_t>(i * 3000 + p)] * y[static_cast<std::size_t>(p * 2000 + j)];
    EXPECT_NEAR(values.GetAsDouble(i * 2000 + j), expected, 1e-9 * std::abs(expected))
        << i << ", " << j;
  }
}

// Measured <= projected where reads decode stored chunks and operands need repacking.
TEST(LinalgTest, MeasuredNeverExceedsProjectedOnStoredInputs) {
  // 400 kB: each stored read also holds its codec's working memory (zstd or blosc contexts).
  const Spec spec = TestSpec(400'000, 20'000);
  auto store = std::make_shared<MemoryStore>();
  const auto stored = [&](const std::string& path, const Shape& shape, const Shape& chunks,
                          unsigned seed) {
    ZarrMetadata metadata;
    metadata.shape = shape;
    metadata.chunks = chunks;
    metadata.dtype = float32;
    metadata.compressor = ParseCodecSpec("blosc-lz4");
    ZarrArray::Create(store, path, metadata).Write(Values(shape, float32, seed), 1);
    return from_zarr(store, path, spec);
  };
  const Array a = stored("a", {300, 500}, {70, 90}, 20);
  const Array b = stored("b", {200, 500}, {60, 110}, 21);
  ExecutionReport report;
  ComputeOptions options;
  options.report = &report;
  options.execute.progress = ProgressMode::kNever;
  const Array a2 = stored("a2", {300, 500}, {100, 100}, 22);
  // b read transposed; a read across its chunks and repacked (its summed axis first).
  // vecdot is a reduction of the product, computed block by block in its first round.
  for (const Array& c : {tensordot(a, b, {1}, {1}), vecdot(a, a2, -2)}) {
    SCOPED_TRACE(c.name());
    if (c.plan().ops().back().kind == OpKind::kContract) {
      EXPECT_GT(c.plan().ops().back().contraction_steps, 1);
    }
    report = {};
    c.compute(options);
    ASSERT_FALSE(report.tasks.empty());
    testing::ExpectFootprintsWithinProjection(report);
  }
}

}  // namespace
}  // namespace tessera
