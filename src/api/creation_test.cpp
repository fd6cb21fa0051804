// ones_like, zeros_like and full_like: the shape, chunks and spec of the array they are
// like, its dtype unless one is given (numpy's dtype=), values as numpy gives them, and
// nothing of the array they are like is read.
#include "tessera/api/creation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>

#include "tessera/api/array.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera {
namespace {

Spec TestSpec() {
  Spec spec;
  spec.allowed_mem = 8 << 20;
  spec.reserved_mem = 0;
  spec.max_workers = 2;
  return spec;
}

// An int16 (6, 7) array in (4, 3) chunks, values 0, 1, ...: edge chunks in both
// dimensions.
Array Like(const Spec& spec) {
  NDArray values({6, 7}, int16);
  auto data = values.mutable_data<std::int16_t>();
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::int16_t>(i);
  return asarray(values, {4, 3}, spec);
}

// Every element of `array`, as double, equals `expected` (NaN equal to NaN).
void ExpectAll(const NDArray& array, double expected) {
  for (Index i = 0; i < array.size(); ++i) {
    const double value = array.GetAsDouble(i);
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(value)) << "element " << i << " is " << value;
    } else {
      ASSERT_EQ(value, expected) << "element " << i;
    }
  }
}

TEST(CreationLikeTest, TakeShapeChunksDtypeAndSpecOfTheArray) {
  Spec spec = TestSpec();
  spec.allowed_mem = 3'000'000;  // a spec of its own, to see it carried over
  const Array like = Like(spec);
  struct Made {
    const char* name;
    Array array;
    double value;
  };
  for (const Made& made :
       {Made{"ones_like", ones_like(like), 1.0}, Made{"zeros_like", zeros_like(like), 0.0},
        Made{"full_like", full_like(like, 7), 7.0},
        Made{"full_like -3", full_like(like, -3), -3.0}}) {
    SCOPED_TRACE(made.name);
    EXPECT_EQ(made.array.shape(), (Shape{6, 7}));
    EXPECT_EQ(made.array.chunks(), (Shape{4, 3}));
    EXPECT_EQ(made.array.dtype(), int16);
    EXPECT_EQ(made.array.spec().allowed_mem, 3'000'000);
    const NDArray values = made.array.compute();
    ASSERT_EQ(values.shape(), (Shape{6, 7}));
    ASSERT_EQ(values.dtype(), int16);
    ExpectAll(values, made.value);
  }
}

// numpy: np.ones_like(a, dtype=np.float32), np.full_like(a, 2.5, dtype=np.float64),
// np.full_like(a, 2.7) on int16 gives 2 (the value is cast to the dtype),
// np.full_like(a, 0.5, dtype=bool) gives True, np.full_like(f, np.nan) all NaN.
TEST(CreationLikeTest, DtypeOverrideAndValuesCastAsNumpy) {
  const Array like = Like(TestSpec());
  const Array as_float = ones_like(like, float32);
  EXPECT_EQ(as_float.dtype(), float32);
  EXPECT_EQ(as_float.chunks(), (Shape{4, 3}));
  const NDArray ones_values = as_float.compute();
  ASSERT_EQ(ones_values.dtype(), float32);
  ExpectAll(ones_values, 1.0);

  const NDArray zeros_values = zeros_like(like, uint8).compute();
  ASSERT_EQ(zeros_values.dtype(), uint8);
  ASSERT_EQ(zeros_values.shape(), (Shape{6, 7}));
  ExpectAll(zeros_values, 0.0);

  const NDArray halves = full_like(like, 2.5, float64).compute();
  ASSERT_EQ(halves.dtype(), float64);
  ExpectAll(halves, 2.5);

  const NDArray truncated = full_like(like, 2.7).compute();
  ASSERT_EQ(truncated.dtype(), int16);
  ExpectAll(truncated, 2.0);

  const NDArray truth = full_like(like, 0.5, bool_).compute();
  ASSERT_EQ(truth.dtype(), bool_);
  ExpectAll(truth, 1.0);

  const Array floats = ones_like(like, float64);
  const NDArray nans = full_like(floats, std::numeric_limits<double>::quiet_NaN()).compute();
  ASSERT_EQ(nans.dtype(), float64);
  ExpectAll(nans, std::nan(""));

  // Large int64 values stay exact (2^53 + 1 is not a double).
  const std::int64_t big = (std::int64_t{1} << 53) + 1;
  const NDArray exact = full_like(like, big, int64).compute();
  ASSERT_EQ(exact.dtype(), int64);
  for (const std::int64_t value : exact.data<std::int64_t>()) ASSERT_EQ(value, big);
}

// Like a lazy expression or a stored array: its shape and chunks, no read of its data.
TEST(CreationLikeTest, LikeALazyOrStoredArrayReadsNothingOfIt) {
  const Spec spec = TestSpec();
  const Array lazy = Like(spec) * 2 + 1;
  const Array made = ones_like(lazy);
  EXPECT_EQ(made.shape(), lazy.shape());
  EXPECT_EQ(made.chunks(), lazy.chunks());
  EXPECT_EQ(made.dtype(), lazy.dtype());

  // A stored (100, 60) float32 array in (30, 25) chunks, none of them written: reading
  // it would give fill values, so a plan that reads nothing is the only way to tell.
  auto store = std::make_shared<MemoryStore>();
  ZarrMetadata metadata;
  metadata.shape = {100, 60};
  metadata.chunks = {30, 25};
  metadata.dtype = float32;
  ZarrArray::Create(store, "", metadata);
  const Array stored = from_zarr(store, "", spec);
  const Array filled = full_like(stored, -1.5);
  EXPECT_EQ(filled.shape(), (Shape{100, 60}));
  EXPECT_EQ(filled.chunks(), (Shape{30, 25}));
  const FinalizedPlan plan = filled.plan();
  ASSERT_EQ(plan.ops().size(), 1u) << plan.summary();
  EXPECT_EQ(plan.ops().front().kind, OpKind::kGenerate) << plan.summary();
  EXPECT_EQ(plan.ops().front().chunk_reads, 0) << plan.summary();
  const NDArray values = filled.compute();
  ASSERT_EQ(values.dtype(), float32);
  ExpectAll(values, -1.5);
}

TEST(CreationLikeTest, EmptyAndZeroDimensionalArrays) {
  const Spec spec = TestSpec();
  const Array empty = asarray(NDArray({0, 5}, float32), {1, 5}, spec);
  const NDArray none = ones_like(empty).compute();
  EXPECT_EQ(none.shape(), (Shape{0, 5}));
  EXPECT_EQ(none.size(), 0);
  NDArray scalar_values({}, int32);
  scalar_values.mutable_data<std::int32_t>()[0] = 42;
  const Array scalar = asarray(scalar_values, {}, spec);
  const NDArray nine = full_like(scalar, 9).compute();
  EXPECT_EQ(nine.shape(), Shape{});
  ASSERT_EQ(nine.size(), 1);
  EXPECT_EQ(nine.data<std::int32_t>()[0], 9);
}

}  // namespace
}  // namespace tessera
