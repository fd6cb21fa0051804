#include "tessera/api/indexing.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <numeric>

#include "int32_arrays.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/api/manipulation.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/plan/internal/node.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera {

using planner::NodeKind;
namespace {

using testing::Computed;
using testing::ErrorOf;
using testing::Iota;

// A memory store that counts the chunk reads (Gets of keys other than metadata).
class CountingStore : public Store {
 public:
  std::optional<Buffer> Get(std::string_view key) const override {
    if (!key.starts_with(".")) ++chunk_gets;
    return store_.Get(key);
  }
  void Set(std::string_view key, std::span<const std::byte> value) override {
    store_.Set(key, value);
  }
  bool Erase(std::string_view key) override { return store_.Erase(key); }
  std::vector<std::string> List(std::string_view prefix) const override {
    return store_.List(prefix);
  }
  std::optional<std::int64_t> SizeOf(std::string_view key) const override {
    return store_.SizeOf(key);
  }
  std::string Describe() const override { return "counting store"; }

  mutable std::atomic<int> chunk_gets{0};

 private:
  MemoryStore store_;
};

// 0, 1, 2, ... (int32, C order) stored uncompressed in `store` with `chunks`, read back
// lazily.
Array StoredIota(const std::shared_ptr<CountingStore>& store, const Shape& shape,
                 const Shape& chunks) {
  ZarrMetadata metadata;
  metadata.shape = shape;
  metadata.chunks = chunks;
  metadata.dtype = int32;
  metadata.compressor = std::nullopt;
  const ZarrArray array = ZarrArray::Create(store, "", metadata);
  NDArray values(shape, int32);
  auto data = values.mutable_data<std::int32_t>();
  std::iota(data.begin(), data.end(), 0);
  array.Write(values, 1);
  return from_zarr(store, "", testing::SmallSpec());
}

TEST(IndexingTest, IntegersSlicesEllipsisNewAxis) {
  const Array x = Iota({3, 4}, {2, 3});  // x[i, j] = 4 i + j
  EXPECT_EQ(Computed(x[1]), (std::vector<std::int32_t>{4, 5, 6, 7}));
  EXPECT_EQ(x[1].shape(), (Shape{4}));
  EXPECT_EQ((Computed(x[{-1, -2}])), (std::vector<std::int32_t>{10}));
  EXPECT_EQ((x[{-1, -2}].shape()), (Shape{}));
  EXPECT_EQ((Computed(x[{Slice(), Slice(1, std::nullopt, 2)}])),
            (std::vector<std::int32_t>{1, 3, 5, 7, 9, 11}));
  // x[::-2, 2:0:-1]
  EXPECT_EQ((Computed(x[{Slice::Every(-2), Slice(2, 0, -1)}])),
            (std::vector<std::int32_t>{10, 9, 2, 1}));
  const Array e = x[{ellipsis, newaxis}];
  EXPECT_EQ(e.shape(), (Shape{3, 4, 1}));
  EXPECT_EQ((x[{newaxis, ellipsis, 2}].shape()), (Shape{1, 3}));
  EXPECT_EQ((Computed(x[{newaxis, ellipsis, 2}])), (std::vector<std::int32_t>{2, 6, 10}));
  EXPECT_EQ(x[Slice(5, 10)].shape(), (Shape{0, 4}));  // empty, as in numpy
  EXPECT_EQ(x[Slice(-100, 100)].shape(), (Shape{3, 4}));
  EXPECT_EQ(x[Slice(1, 3)].chunks(), (Shape{2, 3}));  // a slice keeps the chunk sizes
}

TEST(IndexingTest, ErrorsSayWhatWasWrong) {
  const Array x = Iota({3, 4}, {2, 3});
  EXPECT_EQ(ErrorOf([&] { x[3]; }),
            "index: index 3 is out of bounds for axis 0 with size 3 (use -3 to 2)");
  EXPECT_EQ(ErrorOf([&] {
              x[{0, -5}];
            }),
            "index: index -5 is out of bounds for axis 1 with size 4 (use -4 to 3)");
  EXPECT_NE(ErrorOf([&] { x[{0, 0, 0}]; }).find("too many indices"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { x[{ellipsis, ellipsis}]; }).find("single ellipsis"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { x[Slice::Every(0)]; }).find("step cannot be zero"), std::string::npos);
}

TEST(IndexingTest, ChainedIndexingIsOneGather) {
  const Array x = Iota({6, 5}, {4, 2});
  const Array chained = matrix_transpose(x[Slice::Every(2)])[Slice(1, std::nullopt)];
  // x[::2].T[1:]: rows 0, 2, 4 of x, transposed, without its first row.
  EXPECT_EQ(chained.shape(), (Shape{4, 3}));
  EXPECT_EQ(chained.node()->inputs().front(), x.node());
  EXPECT_EQ(Computed(chained),
            (std::vector<std::int32_t>{1, 11, 21, 2, 12, 22, 3, 13, 23, 4, 14, 24}));
}

TEST(IndexingTest, ReadsOnlyTheChunksItNeeds) {
  auto store = std::make_shared<CountingStore>();
  const Array x = StoredIota(store, {100}, {1});
  const Array every_tenth = x[Slice::Every(10)];
  EXPECT_EQ(every_tenth.plan().ops().front().chunk_reads, 10);
  store->chunk_gets = 0;
  EXPECT_EQ(Computed(every_tenth),
            (std::vector<std::int32_t>{0, 10, 20, 30, 40, 50, 60, 70, 80, 90}));
  EXPECT_EQ(store->chunk_gets.load(), 10);
  // Of a computed array too: the index is taken of its operands, (x * 2)[::10] is
  // x[::10] * 2, which reads the same 10 chunks (and multiplies 10 values).
  const Array doubled = (x * 2)[Slice::Every(10)];
  EXPECT_EQ(doubled.node()->kind(), NodeKind::kBinary);
  store->chunk_gets = 0;
  EXPECT_EQ(Computed(doubled),
            (std::vector<std::int32_t>{0, 20, 40, 60, 80, 100, 120, 140, 160, 180}));
  EXPECT_EQ(store->chunk_gets.load(), 10);
}

TEST(IndexingTest, ReadsOnlyTheChunksUnderA2dSlice) {
  auto store = std::make_shared<CountingStore>();
  const Array x = StoredIota(store, {10, 10}, {1, 1});
  // x[7:4:-1, 2:4]: rows 7, 6, 5 and columns 2, 3: 6 of the 100 chunks.
  store->chunk_gets = 0;
  EXPECT_EQ((Computed(x[{Slice(7, 4, -1), Slice(2, 4)}])),
            (std::vector<std::int32_t>{72, 73, 62, 63, 52, 53}));
  EXPECT_EQ(store->chunk_gets.load(), 6);
}

TEST(IndexingTest, TakePicksIndicesInAnyOrder) {
  const Array x = Iota({3, 4}, {2, 3});  // x[i, j] = 4 i + j
  const std::vector<Index> columns{3, 0, -1, 1, 1};
  const Array picked = take(x, columns, 1);
  EXPECT_EQ(picked.shape(), (Shape{3, 5}));
  EXPECT_EQ(picked.chunks(), (Shape{2, 3}));
  EXPECT_EQ(Computed(picked),
            (std::vector<std::int32_t>{3, 0, 3, 1, 1, 7, 4, 7, 5, 5, 11, 8, 11, 9, 9}));
  const std::vector<Index> rows{2, 0};
  EXPECT_EQ(Computed(take(x, rows, -2)), (std::vector<std::int32_t>{8, 9, 10, 11, 0, 1, 2, 3}));
  const std::vector<Index> none;
  EXPECT_EQ(take(x, none, 0).shape(), (Shape{0, 4}));
}

TEST(IndexingTest, TakeComposesWithOtherGathers) {
  const Array x = Iota({10}, {3});
  const std::vector<Index> at{9, 1, 4, 4};
  // take of a slice, a slice of a take, take of a take: each one gather of x.
  const Array of_slice = take(x[Slice(std::nullopt, std::nullopt, -1)], at, 0);
  EXPECT_EQ(of_slice.node()->inputs().front(), x.node());
  EXPECT_EQ(Computed(of_slice), (std::vector<std::int32_t>{0, 8, 5, 5}));
  const Array sliced = take(x, at, 0)[Slice(1, std::nullopt)];
  EXPECT_EQ(sliced.node()->inputs().front(), x.node());
  EXPECT_EQ(Computed(sliced), (std::vector<std::int32_t>{1, 4, 4}));
  const std::vector<Index> again{3, 0};
  const Array twice = take(take(x, at, 0), again, 0);
  EXPECT_EQ(twice.node()->inputs().front(), x.node());
  EXPECT_EQ(Computed(twice), (std::vector<std::int32_t>{4, 9}));
}

TEST(IndexingTest, TakeReadsOnlyTheChunksOfItsIndices) {
  auto store = std::make_shared<CountingStore>();
  const Array x = StoredIota(store, {100}, {10});
  const std::vector<Index> at{95, 3, 97, 5};  // chunks 9 and 0 only
  const Array picked = take(x, at, 0);
  store->chunk_gets = 0;
  EXPECT_EQ(Computed(picked), (std::vector<std::int32_t>{95, 3, 97, 5}));
  EXPECT_EQ(store->chunk_gets.load(), 2);
}

TEST(IndexingTest, TakeErrorsSayWhatWasWrong) {
  const Array x = Iota({3, 4}, {2, 3});
  const std::vector<Index> at{4};
  EXPECT_EQ(ErrorOf([&] { take(x, at, 1); }),
            "take: index 4 is out of bounds for axis 1 with size 4 (use -4 to 3)");
  EXPECT_EQ(ErrorOf([&] { take(x, at, 2); }),
            "take: axis 2 is out of range for an array of 2 dimensions (use -2 to 1)");
}

}  // namespace

}  // namespace tessera
