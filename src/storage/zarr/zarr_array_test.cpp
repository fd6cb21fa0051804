#include "tessera/storage/zarr_array.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "region_reference.hpp"
#include "temp_dir.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/codec.hpp"
#include "tessera/storage/directory_store.hpp"
#include "tessera/storage/memory_store.hpp"
#include "test_seed.hpp"

namespace tessera {
namespace {

using testing::RandomRegion;
using testing::Slice;

namespace fs = std::filesystem;

// ---- helpers -------------------------------------------------------------------------

// A fresh directory under the system's temp dir, removed with everything in it.
using testing::TempDir;

enum class StoreKind { kMemory, kDirectory };

// A store of `kind`; a directory store lives in `dir`.
std::shared_ptr<Store> MakeStore(StoreKind kind, const TempDir& dir, const std::string& name) {
  if (kind == StoreKind::kMemory) return MemoryStore::Create();
  return DirectoryStore::Open(dir.path() / name);
}

const std::vector<DType>& AllDTypes() {
  static const std::vector<DType> dtypes = {bool_,  int8,   int16,  int32,   int64,  uint8,
                                            uint16, uint32, uint64, float32, float64};
  return dtypes;
}

NDArray RandomArray(const Shape& shape, DType dtype, std::mt19937_64& rng) {
  NDArray array(shape, dtype);
  for (std::byte& byte : array.mutable_bytes()) {
    byte = static_cast<std::byte>(dtype == bool_ ? rng() % 2 : rng() & 0xff);
  }
  return array;
}

FillValue DefaultFill(DType dtype) {
  switch (dtype.kind()) {
    case DTypeKind::kBool:
      return true;
    case DTypeKind::kFloat:
      return std::nan("");
    default:
      return std::int64_t{3};
  }
}

ZarrMetadata MakeMetadata(Shape shape, Shape chunks, DType dtype,
                          std::optional<CodecConfig> compressor = std::nullopt, char order = 'C',
                          ByteOrder byte_order = ByteOrder::kLittle, char separator = '.') {
  ZarrMetadata metadata;
  metadata.shape = std::move(shape);
  metadata.chunks = std::move(chunks);
  metadata.dtype = dtype;
  metadata.byte_order = byte_order;
  metadata.order = order;
  metadata.fill_value = DefaultFill(dtype);
  metadata.compressor = std::move(compressor);
  metadata.dimension_separator = separator;
  return metadata;
}

std::string Describe(const ZarrMetadata& metadata) {
  return "shape " + ShapeToString(metadata.shape) + " chunks " + ShapeToString(metadata.chunks) +
         " " + ZarrTypestr(metadata.dtype, metadata.byte_order) + " order " + metadata.order +
         " separator " + metadata.dimension_separator + " compressor " +
         (metadata.compressor ? DescribeCodec(*metadata.compressor) : "none");
}

// Every way of reading the array back gives `data`.
void ExpectReadsEqual(const ZarrArray& array, const NDArray& data, std::mt19937_64& rng) {
  ASSERT_EQ(array.Read(1), data);
  ASSERT_EQ(array.Read(4), data);
  const ChunkGrid& grid = array.grid();
  for (Index linear = 0; linear < grid.num_blocks(); ++linear) {
    const Shape block = grid.BlockIndex(linear);
    ASSERT_EQ(array.ReadBlock(block), Slice(data, grid.BlockRegion(block)))
        << "block " << ShapeToString(block);
  }
  for (int trial = 0; trial < 3; ++trial) {
    const Region region = RandomRegion(data.shape(), rng);
    ASSERT_EQ(array.ReadRegion(region, 1 + trial), Slice(data, region))
        << "region start " << ShapeToString(region.start) << " shape "
        << ShapeToString(region.shape);
  }
}

// Creates, writes, reopens and reads back one array; every read must match.
void CheckRoundTrip(const std::shared_ptr<Store>& store, const std::string& path,
                    const ZarrMetadata& metadata, std::mt19937_64& rng) {
  SCOPED_TRACE(Describe(metadata));
  const ZarrArray array = ZarrArray::Create(store, path, metadata);
  const NDArray data = RandomArray(metadata.shape, metadata.dtype, rng);
  array.Write(data, 4);
  const ZarrArray reopened = ZarrArray::Open(store, path);
  EXPECT_EQ(reopened.metadata().shape, metadata.shape);
  EXPECT_EQ(reopened.metadata().chunks, metadata.chunks);
  EXPECT_EQ(reopened.metadata().dtype, metadata.dtype);
  EXPECT_EQ(reopened.metadata().order, metadata.order);
  EXPECT_EQ(reopened.metadata().dimension_separator, metadata.dimension_separator);
  EXPECT_EQ(reopened.metadata().compressor, metadata.compressor);
  ExpectReadsEqual(reopened, data, rng);
  EXPECT_EQ(reopened.CountStoredChunks().count, reopened.grid().num_blocks());
}

template <class Exception, class Fn>
std::string MessageOf(Fn&& fn) {
  try {
    fn();
  } catch (const Exception& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

// ---- round trips over dtypes x codecs x layouts x stores ----------------------------

struct CodecCase {
  const char* name;
  const char* spec;  // nullptr = uncompressed
};

constexpr CodecCase kCodecCases[] = {
    {"none", nullptr}, {"blosc_lz4", "blosc:lz4"}, {"zstd", "zstd"},
    {"lz4", "lz4"},    {"zlib", "zlib"},           {"gzip", "gzip"},
};

std::optional<CodecConfig> CompressorOf(const CodecCase& codec) {
  if (codec.spec == nullptr) return std::nullopt;
  return ParseCodecSpec(codec.spec);
}

class ZarrRoundTripTest : public ::testing::TestWithParam<std::tuple<StoreKind, CodecCase>> {};

TEST_P(ZarrRoundTripTest, EveryDTypeOrderByteOrderAndSeparator) {
  const auto [kind, codec] = GetParam();
  std::mt19937_64 rng(testing::TestSeed());
  TempDir dir;
  // Shapes not divisible by the chunks, so edge chunks are partial in every dimension.
  const std::vector<std::pair<Shape, Shape>> layouts = {
      {{7, 5}, {3, 2}}, {{5, 4, 3}, {2, 3, 2}}, {{10}, {4}}};
  // Files are slow to create: the directory store runs a subset of the dtypes (the
  // memory store runs them all; the layout code does not depend on the store).
  const std::vector<DType> dtypes =
      kind == StoreKind::kMemory ? AllDTypes() : std::vector<DType>{bool_, int16, float64};
  int case_number = 0;
  for (DType dtype : dtypes) {
    for (char order : {'C', 'F'}) {
      for (ByteOrder byte_order : {ByteOrder::kLittle, ByteOrder::kBig}) {
        for (char separator : {'.', '/'}) {
          for (const auto& [shape, chunks] : layouts) {
            const std::shared_ptr<Store> store =
                MakeStore(kind, dir, "case" + std::to_string(case_number++));
            CheckRoundTrip(store, "",
                           MakeMetadata(shape, chunks, dtype, CompressorOf(codec), order,
                                        byte_order, separator),
                           rng);
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

TEST_P(ZarrRoundTripTest, UnusualShapes) {
  const auto [kind, codec] = GetParam();
  std::mt19937_64 rng(testing::TestSeed() + 1);
  TempDir dir;
  const std::vector<std::pair<Shape, Shape>> layouts = {
      {{}, {}},                      // 0-d: one chunk, key "0"
      {{1}, {1}},                    // size 1
      {{13}, {5}},                   // 1-d with a partial edge
      {{6, 1, 5}, {4, 1, 2}},        // a size-1 dimension
      {{3, 4, 5, 6}, {2, 3, 2, 4}},  // 4-d
      {{2, 9, 1, 3}, {1, 4, 1, 3}},  // 4-d, full chunks in the last dimension
      {{5, 4}, {8, 8}},              // chunks larger than the array
      {{6, 8}, {6, 8}},              // one interior chunk
      {{12, 8}, {3, 8}},             // chunks span whole rows: decoded in place
      {{0}, {4}},                    // zero extent
      {{3, 0, 2}, {2, 2, 2}},        // zero extent in the middle
      {{40, 33}, {16, 16}},          // big enough for tiled transposition
  };
  const std::vector<DType> dtypes = kind == StoreKind::kMemory
                                        ? std::vector<DType>{float64, int16, bool_}
                                        : std::vector<DType>{float64};
  int case_number = 0;
  for (DType dtype : dtypes) {
    for (char order : {'C', 'F'}) {
      for (ByteOrder byte_order : {ByteOrder::kLittle, ByteOrder::kBig}) {
        for (const auto& [shape, chunks] : layouts) {
          const std::shared_ptr<Store> store =
              MakeStore(kind, dir, "case" + std::to_string(case_number++));
          CheckRoundTrip(store, "group/array",
                         MakeMetadata(shape, chunks, dtype, CompressorOf(codec), order, byte_order,
                                      case_number % 2 == 0 ? '.' : '/'),
                         rng);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST_P(ZarrRoundTripTest, BlockWritesEqualWholeWrites) {
  const auto [kind, codec] = GetParam();
  std::mt19937_64 rng(testing::TestSeed() + 2);
  TempDir dir;
  for (char order : {'C', 'F'}) {
    const ZarrMetadata metadata =
        MakeMetadata({9, 7, 4}, {4, 3, 4}, int32, CompressorOf(codec), order, ByteOrder::kBig);
    SCOPED_TRACE(Describe(metadata));
    const NDArray data = RandomArray(metadata.shape, metadata.dtype, rng);
    const std::shared_ptr<Store> store = MakeStore(kind, dir, std::string("blocks") + order);
    const ZarrArray array = ZarrArray::Create(store, "", metadata);
    for (Index linear = 0; linear < array.grid().num_blocks(); ++linear) {
      const Shape block = array.grid().BlockIndex(linear);
      const NDArray part = Slice(data, array.grid().BlockRegion(block));
      if (linear % 2 == 0) {
        array.WriteBlock(block, part);
      } else {
        array.WriteBlockFrom(block, part.bytes());
      }
    }
    ExpectReadsEqual(array, data, rng);
    NDArray into(array.grid().BlockShape(Shape{2, 2, 0}), int32);
    array.ReadBlockInto(Shape{2, 2, 0}, into.mutable_bytes());
    EXPECT_EQ(into, Slice(data, array.grid().BlockRegion(Shape{2, 2, 0})));
  }
}

std::string ParamName(const ::testing::TestParamInfo<std::tuple<StoreKind, CodecCase>>& info) {
  return std::string(std::get<0>(info.param) == StoreKind::kMemory ? "Memory_" : "Directory_") +
         std::get<1>(info.param).name;
}

// Every codec on the memory store; the directory store (slow to create files, and the
// codecs do not depend on the store) with no compressor and with blosc.
INSTANTIATE_TEST_SUITE_P(MemoryStore, ZarrRoundTripTest,
                         ::testing::Combine(::testing::Values(StoreKind::kMemory),
                                            ::testing::ValuesIn(kCodecCases)),
                         ParamName);
INSTANTIATE_TEST_SUITE_P(DirectoryStore, ZarrRoundTripTest,
                         ::testing::Combine(::testing::Values(StoreKind::kDirectory),
                                            ::testing::Values(kCodecCases[0], kCodecCases[1])),
                         ParamName);

// ---- fill values, regions, threads --------------------------------------------------

TEST(ZarrArrayTest, MissingChunksReadAsFillValue) {
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  std::mt19937_64 rng(testing::TestSeed() + 3);
  for (DType dtype : {float64, float32}) {
    for (char order : {'C', 'F'}) {
      const ZarrMetadata metadata =
          MakeMetadata({7, 6}, {3, 4}, dtype, ParseCodecSpec("blosc:lz4"), order, ByteOrder::kBig);
      const ZarrArray array = ZarrArray::Create(store, "nan", metadata);
      const NDArray block = RandomArray(array.grid().BlockShape(Shape{1, 1}), dtype, rng);
      array.WriteBlock(Shape{1, 1}, block);  // only one block exists
      EXPECT_EQ(array.CountStoredChunks().count, 1);
      const NDArray all = array.Read();
      const Region written = array.grid().BlockRegion(Shape{1, 1});
      for (Index linear = 0; linear < all.size(); ++linear) {
        const Shape position = UnravelIndex(linear, all.shape());
        const bool inside = position[0] >= written.start[0] &&
                            position[0] < written.start[0] + written.shape[0] &&
                            position[1] >= written.start[1];
        if (!inside) {
          EXPECT_TRUE(std::isnan(all.GetAsDouble(linear))) << linear;
        }
      }
      EXPECT_EQ(Slice(all, written), block);
      const NDArray missing = array.ReadBlock(Shape{2, 0});
      for (Index linear = 0; linear < missing.size(); ++linear) {
        EXPECT_TRUE(std::isnan(missing.GetAsDouble(linear)));
      }
      const NDArray region = array.ReadRegion(Region{{2, 2}, {4, 3}});
      EXPECT_EQ(region, Slice(all, Region{{2, 2}, {4, 3}}));
    }
  }
  // Integer, bool and null fills.
  struct FillCase {
    DType dtype;
    FillValue fill;
    double expected;
  };
  for (const FillCase& fill_case :
       {FillCase{int16, std::int64_t{-7}, -7.0}, FillCase{uint64, std::uint64_t{42}, 42.0},
        FillCase{bool_, true, 1.0}, FillCase{int32, {}, 0.0}}) {
    ZarrMetadata metadata =
        MakeMetadata({5}, {2}, fill_case.dtype, std::nullopt, 'C', ByteOrder::kBig);
    metadata.fill_value = fill_case.fill;
    const ZarrArray array = ZarrArray::Create(store, "fills", metadata);
    const NDArray all = array.Read();
    for (Index linear = 0; linear < all.size(); ++linear) {
      EXPECT_EQ(all.GetAsDouble(linear), fill_case.expected);
    }
  }
}

TEST(ZarrArrayTest, EdgeChunksArePaddedWithTheFillValueInStoredLayout) {
  // Uncompressed, so the stored bytes can be inspected: a 3 x 5 array of int16 in
  // chunks of 2 x 4, order F, big-endian, fill 0x0102.
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  ZarrMetadata metadata = MakeMetadata({3, 5}, {2, 4}, int16, std::nullopt, 'F', ByteOrder::kBig);
  metadata.fill_value = std::int64_t{0x0102};
  const ZarrArray array = ZarrArray::Create(store, "", metadata);
  std::vector<std::int16_t> values(15);
  for (std::size_t index = 0; index < values.size(); ++index) {
    values[index] = static_cast<std::int16_t>(index + 0x1000);
  }
  array.Write(NDArray::FromValues<std::int16_t>({3, 5}, values));
  // Block (1, 1) holds element (2, 4) only; the chunk is 2 x 4 in F order.
  const std::optional<Buffer> chunk = store->Get("1.1");
  ASSERT_TRUE(chunk.has_value());
  ASSERT_EQ(chunk->size(), 16);
  const auto element = [&](Index row, Index column) {
    const std::size_t offset = static_cast<std::size_t>((column * 2 + row) * 2);
    return (std::to_integer<int>(chunk->data()[offset]) << 8) |
           std::to_integer<int>(chunk->data()[offset + 1]);
  };
  EXPECT_EQ(element(0, 0), values[14]);
  for (Index row = 0; row < 2; ++row) {
    for (Index column = 0; column < 4; ++column) {
      if (row != 0 || column != 0) {
        EXPECT_EQ(element(row, column), 0x0102);
      }
    }
  }
  // Block (0, 0) is interior: F order means element (1, 0) comes second.
  const std::optional<Buffer> interior = store->Get("0.0");
  ASSERT_TRUE(interior.has_value());
  EXPECT_EQ(
      (std::to_integer<int>(interior->data()[2]) << 8) | std::to_integer<int>(interior->data()[3]),
      values[5]);
}

TEST(ZarrArrayTest, RandomRegionsEqualSlicesOfRead) {
  std::mt19937_64 rng(testing::TestSeed() + 4);
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t ndim = 1 + rng() % 4;
    Shape shape(ndim);
    Shape chunks(ndim);
    for (std::size_t dim = 0; dim < ndim; ++dim) {
      shape[dim] = static_cast<Index>(rng() % 12);
      chunks[dim] = 1 + static_cast<Index>(rng() % 5);
    }
    const DType dtype = AllDTypes()[rng() % AllDTypes().size()];
    const ZarrMetadata metadata = MakeMetadata(
        shape, chunks, dtype, rng() % 2 ? std::optional(ParseCodecSpec("zstd")) : std::nullopt,
        rng() % 2 ? 'C' : 'F', rng() % 2 ? ByteOrder::kBig : ByteOrder::kLittle);
    SCOPED_TRACE(Describe(metadata));
    const ZarrArray array = ZarrArray::Create(store, "t" + std::to_string(trial), metadata);
    const NDArray data = RandomArray(shape, dtype, rng);
    array.Write(data, 1 + static_cast<int>(rng() % 4));
    // Leave some chunks missing so regions cross fill and data.
    for (Index linear = 0; linear < array.grid().num_blocks(); linear += 3) {
      store->Erase(array.ChunkKey(array.grid().BlockIndex(linear)));
    }
    const NDArray all = array.Read(1);
    ASSERT_EQ(array.Read(4), all);
    for (int region_trial = 0; region_trial < 10; ++region_trial) {
      const Region region = RandomRegion(shape, rng);
      const NDArray one_thread = array.ReadRegion(region, 1);
      ASSERT_EQ(one_thread, Slice(all, region));
      ASSERT_EQ(array.ReadRegion(region, 4), one_thread);
    }
  }
}

TEST(ZarrArrayTest, ReadRegionRejectsRegionsOutsideTheArray) {
  const ZarrArray array =
      ZarrArray::Create(MemoryStore::Create(), "", MakeMetadata({4, 4}, {2, 2}, float64));
  EXPECT_THROW(array.ReadRegion(Region{{3, 0}, {2, 1}}), InvalidArgument);
  EXPECT_THROW(array.ReadRegion(Region{{-1, 0}, {1, 1}}), InvalidArgument);
  EXPECT_THROW(array.ReadRegion(Region{{0}, {1}}), InvalidArgument);
  EXPECT_EQ(array.ReadRegion(Region{{4, 1}, {0, 2}}).shape(), (Shape{0, 2}));
  EXPECT_THROW(array.Read(-1), InvalidArgument);
}

TEST(ZarrArrayTest, ReadBoolNormalisesStoredBytes) {
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  const ZarrArray array = ZarrArray::Create(store, "", MakeMetadata({4}, {4}, bool_));
  const std::byte raw[] = {std::byte{0}, std::byte{2}, std::byte{255}, std::byte{1}};
  store->Set("0", std::span<const std::byte>(raw));
  const NDArray values = array.Read();
  const std::vector<std::uint8_t> bytes(
      reinterpret_cast<const std::uint8_t*>(values.bytes().data()),
      reinterpret_cast<const std::uint8_t*>(values.bytes().data()) + 4);
  EXPECT_EQ(bytes, (std::vector<std::uint8_t>{0, 1, 1, 1}));
}

// ---- keys and stored chunks ---------------------------------------------------------

TEST(ZarrArrayTest, ChunkKeysFollowSeparatorAndPath) {
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  const ZarrArray dotted =
      ZarrArray::Create(store, "", MakeMetadata({30, 40, 50}, {10, 10, 10}, float32));
  EXPECT_EQ(dotted.ChunkKey(Shape{1, 2, 3}), "1.2.3");
  const ZarrArray slashed =
      ZarrArray::Create(store, "a/b",
                        MakeMetadata({30, 40, 50}, {10, 10, 10}, float32, std::nullopt, 'C',
                                     ByteOrder::kLittle, '/'));
  EXPECT_EQ(slashed.ChunkKey(Shape{1, 2, 3}), "a/b/1/2/3");
  const ZarrArray prefixed = ZarrArray::Create(store, "x", MakeMetadata({30}, {10}, float32));
  EXPECT_EQ(prefixed.ChunkKey(Shape{2}), "x/2");
  const ZarrArray scalar = ZarrArray::Create(store, "s", MakeMetadata({}, {}, float32));
  EXPECT_EQ(scalar.ChunkKey(Shape{}), "s/0");
  EXPECT_THROW(dotted.ChunkKey(Shape{3, 0, 0}), InvalidArgument);
  EXPECT_THROW(dotted.ChunkKey(Shape{0, 0}), InvalidArgument);
}

TEST(ZarrArrayTest, CountStoredChunksIgnoresForeignKeys) {
  for (char separator : {'.', '/'}) {
    for (const std::string path : {"", "grp/arr"}) {
      SCOPED_TRACE(std::string("separator ") + separator + " path " + path);
      const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
      const ZarrArray array =
          ZarrArray::Create(store, path,
                            MakeMetadata({10, 10}, {4, 4}, uint8, ParseCodecSpec("zlib"), 'C',
                                         ByteOrder::kLittle, separator),
                            ZarrAttributes{.dimension_names = {"y", "x"}});
      EXPECT_EQ(array.CountStoredChunks().count, 0);
      std::mt19937_64 rng(testing::TestSeed() + 5);
      array.WriteBlock(Shape{0, 0}, RandomArray({4, 4}, uint8, rng));
      array.WriteBlock(Shape{2, 1}, RandomArray({2, 4}, uint8, rng));
      const std::string prefix = path.empty() ? "" : path + "/";
      const std::string sep(1, separator);
      const std::vector<std::string> foreign_keys = {
          "notes.txt",      "3" + sep + "0",  "0" + sep + "0" + sep + "0",
          "00" + sep + "1", "-1" + sep + "0", "1",
          "sub/0.0",        "1" + sep + "x"};
      for (const std::string& foreign : foreign_keys) {
        store->Set(prefix + foreign, std::string_view("junk"));
      }
      const ZarrArray::StoredChunks stored = array.CountStoredChunks();
      EXPECT_EQ(stored.count, 2);
      EXPECT_EQ(stored.bytes,
                *array.StoredChunkSize(Shape{0, 0}) + *array.StoredChunkSize(Shape{2, 1}));
      EXPECT_FALSE(array.StoredChunkSize(Shape{1, 1}).has_value());
      EXPECT_THROW(array.StoredChunkSize(Shape{3, 0}), InvalidArgument);
    }
  }
}

// A memory store recording what the array asks of it: sizes, removals, writes in order.
class RecordingStore final : public Store {
 public:
  std::optional<Buffer> Get(std::string_view key) const override { return values_->Get(key); }
  std::optional<std::int64_t> ReadBounded(std::string_view key, std::int64_t max_size,
                                          const Destination& destination) const override {
    return values_->ReadBounded(key, max_size, destination);
  }
  using Store::Set;
  void Set(std::string_view key, std::span<const std::byte> value) override {
    values_->Set(key, value);
    sets.emplace_back(key);
  }
  bool Erase(std::string_view key) override {
    erased.emplace_back(key);
    return values_->Erase(key);
  }
  std::int64_t EraseKeys(std::span<const std::string> keys) override {
    erase_batches.emplace_back(keys.begin(), keys.end());
    return values_->EraseKeys(keys);
  }
  std::vector<std::string> List(std::string_view prefix) const override {
    return values_->List(prefix);
  }
  std::vector<ListedKey> ListWithSizes(std::string_view prefix) const override {
    ++listings_with_sizes;
    return values_->ListWithSizes(prefix);
  }
  std::optional<std::int64_t> SizeOf(std::string_view key) const override {
    ++sizes_asked;
    return values_->SizeOf(key);
  }
  std::string Describe() const override { return "recording store"; }

  void Forget() {
    sets.clear();
    erased.clear();
    erase_batches.clear();
    listings_with_sizes = 0;
    sizes_asked = 0;
  }

  std::vector<std::string> sets;                        // keys written, in order
  std::vector<std::string> erased;                      // keys given to Erase
  std::vector<std::vector<std::string>> erase_batches;  // what each EraseKeys got
  mutable int listings_with_sizes = 0;
  mutable int sizes_asked = 0;

 private:
  std::shared_ptr<MemoryStore> values_ = MemoryStore::Create();
};

// An object store would answer one HEAD per chunk: the sizes come from one listing.
TEST(ZarrArrayTest, CountStoredChunksTakesTheSizesFromTheListing) {
  const auto store = std::make_shared<RecordingStore>();
  const ZarrArray array = ZarrArray::Create(store, "a", MakeMetadata({10, 10}, {4, 4}, uint8));
  std::mt19937_64 rng(testing::TestSeed() + 7);
  array.WriteBlock(Shape{0, 0}, RandomArray({4, 4}, uint8, rng));
  array.WriteBlock(Shape{2, 2}, RandomArray({2, 2}, uint8, rng));
  store->Forget();
  const ZarrArray::StoredChunks stored = array.CountStoredChunks();
  EXPECT_EQ(stored.count, 2);
  EXPECT_EQ(stored.bytes,
            *array.StoredChunkSize(Shape{0, 0}) + *array.StoredChunkSize(Shape{2, 2}));
  EXPECT_EQ(store->listings_with_sizes, 1);
  EXPECT_EQ(store->sizes_asked, 2) << "only the two StoredChunkSize calls above";
}

// An earlier array's chunks go in one EraseKeys (parallel DELETEs on S3, no HEAD each).
TEST(ZarrArrayTest, CreateRemovesAnEarlierArraysChunksInOneBatch) {
  const auto store = std::make_shared<RecordingStore>();
  const ZarrArray old = ZarrArray::Create(store, "a", MakeMetadata({8}, {2}, uint8));
  std::mt19937_64 rng(testing::TestSeed() + 8);
  for (Index block = 0; block < 4; ++block)
    old.WriteBlock(Shape{block}, RandomArray({2}, uint8, rng));
  store->Set("a/notes.txt", std::string_view("kept"));
  store->Forget();
  ZarrArray::Create(store, "a", MakeMetadata({8}, {4}, uint8));
  ASSERT_EQ(store->erase_batches.size(), 1u);
  EXPECT_EQ(store->erase_batches[0], (std::vector<std::string>{"a/0", "a/1", "a/2", "a/3"}));
  for (const std::string& key : store->erased) EXPECT_FALSE(key.starts_with("a/0")) << key;
  EXPECT_TRUE(store->Contains("a/notes.txt"));
  EXPECT_EQ(store->List("a/"), (std::vector<std::string>{"a/.zarray", "a/notes.txt"}));
}

TEST(ZarrArrayTest, ClearRemovesTheDocumentsBeforeTheChunks) {
  const auto store = std::make_shared<RecordingStore>();
  const ZarrArray array = ZarrArray::Create(store, "a", MakeMetadata({4}, {2}, uint8),
                                            ZarrAttributes{.dimension_names = {"x"}});
  std::mt19937_64 rng(testing::TestSeed() + 9);
  array.WriteBlock(Shape{1}, RandomArray({2}, uint8, rng));
  store->Forget();
  array.Clear();
  ASSERT_EQ(store->erase_batches.size(), 2u);
  EXPECT_EQ(store->erase_batches[0],
            (std::vector<std::string>{"a/zarr.json", "a/.zarray", "a/.zattrs"}));
  EXPECT_EQ(store->erase_batches[1], std::vector<std::string>{"a/1"});
  EXPECT_TRUE(store->List("").empty());
}

// The document that makes an array readable is written last: .zarray after .zattrs, so
// no reader sees the new array with the old (or no) attributes.
TEST(ZarrArrayTest, PublishWritesTheArrayDocumentLast) {
  const auto store = std::make_shared<RecordingStore>();
  ZarrArray::Create(store, "v2", MakeMetadata({4}, {2}, uint8),
                    ZarrAttributes{.dimension_names = {"x"}});
  EXPECT_EQ(store->sets, (std::vector<std::string>{"v2/.zattrs", "v2/.zarray"}));
  store->Forget();
  ZarrArray::Create(store, "v2", MakeMetadata({4}, {2}, uint8));  // no attributes now
  EXPECT_EQ(store->sets, std::vector<std::string>{"v2/.zarray"});
  EXPECT_FALSE(store->Contains("v2/.zattrs")) << "a stale .zattrs is removed";
}

// ---- metadata, attributes and groups ------------------------------------------------

TEST(ZarrArrayTest, CreateWritesAttributesOnlyWhenGiven) {
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  const ZarrAttributes attributes{.dimension_names = {"time", "lat"},
                                  .other_json = R"({"units": "K"})"};
  ZarrArray::Create(store, "t2m", MakeMetadata({4, 3}, {2, 3}, float32), attributes);
  EXPECT_TRUE(store->Contains("t2m/.zarray"));
  EXPECT_TRUE(store->Contains("t2m/.zattrs"));
  const ZarrArray opened = ZarrArray::Open(store, "t2m");
  EXPECT_EQ(opened.attributes().dimension_names, attributes.dimension_names);
  EXPECT_EQ(opened.path(), "t2m");
  // Recreating without attributes drops the stale .zattrs.
  ZarrArray::Create(store, "t2m", MakeMetadata({4}, {2}, float32));
  EXPECT_FALSE(store->Contains("t2m/.zattrs"));
  EXPECT_EQ(ZarrArray::Open(store, "t2m").attributes(), ZarrAttributes{});
}

TEST(ZarrArrayTest, CreateValidatesMetadata) {
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  EXPECT_THROW(ZarrArray::Create(store, "", MakeMetadata({4, 4}, {2}, float64)), InvalidArgument);
  EXPECT_THROW(ZarrArray::Create(store, "", MakeMetadata({4}, {0}, float64)), InvalidArgument);
  ZarrMetadata bad_order = MakeMetadata({4}, {2}, float64);
  bad_order.order = 'X';
  EXPECT_THROW(ZarrArray::Create(store, "", bad_order), InvalidArgument);
  EXPECT_THROW(ZarrArray::Create(store, "", MakeMetadata({4}, {2}, float64),
                                 ZarrAttributes{.dimension_names = {"a", "b"}}),
               InvalidArgument);
  CodecConfig unknown;
  unknown.id = "snappy";
  EXPECT_THROW(ZarrArray::Create(store, "", MakeMetadata({4}, {2}, float64, unknown)),
               InvalidArgument);
  ZarrMetadata bad_filter = MakeMetadata({4}, {2}, float64);
  bad_filter.filters = {unknown};
  const std::string message =
      MessageOf<InvalidArgument>([&] { ZarrArray::Create(store, "", bad_filter); });
  EXPECT_NE(message.find("snappy"), std::string::npos) << message;
  EXPECT_THROW(ZarrArray::Create(store, "/abs", MakeMetadata({4}, {2}, float64)), InvalidArgument);
  EXPECT_FALSE(store->Contains(".zarray"));  // nothing was written
}

TEST(ZarrArrayTest, FilterWithoutCompressorRoundTrips) {
  std::mt19937_64 rng(testing::TestSeed() + 6);
  ZarrMetadata metadata = MakeMetadata({9, 5}, {4, 4}, int32, std::nullopt, 'F');
  metadata.filters = {ParseCodecSpec("zlib")};
  CheckRoundTrip(MemoryStore::Create(), "", metadata, rng);
  // A filter followed by a compressor: a stored chunk that is not the pipeline's
  // encoding is a FormatError naming the chunk and the stage; missing chunks read as the
  // fill value.
  metadata.compressor = ParseCodecSpec("gzip");
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  store->Set("p/.zarray", ZarrMetadataToJson(metadata));
  const ZarrArray opened = ZarrArray::Open(store, "p");
  EXPECT_EQ(opened.metadata().filters.size(), 1u);
  store->Set("p/0.0", std::string_view("stored bytes"));
  EXPECT_EQ(opened.CountStoredChunks().count, 1);
  const std::string message = MessageOf<FormatError>([&] { opened.ReadBlock(Shape{0, 0}); });
  EXPECT_TRUE(StartsWith(message, store->DescribeKey("p/0.0"))) << message;
  EXPECT_NE(message.find("compressor gzip"), std::string::npos) << message;
  EXPECT_EQ(opened.ReadBlock(Shape{1, 1}), NDArray::Full({4, 1}, int32, 3));  // missing: fill
}

// Filters then a compressor, or several filters: each stage but the last decodes into
// scratch bounded by the chained MaxEncodedSize; both ways, with edge and missing chunks.
TEST(ZarrArrayTest, MultiStagePipelinesRoundTrip) {
  std::mt19937_64 rng(testing::TestSeed() + 12);
  struct Pipeline {
    std::vector<std::string> filters;
    std::optional<std::string> compressor;
  };
  const std::vector<Pipeline> pipelines = {
      {{"zlib:1"}, "blosc:lz4"},
      {{"lz4"}, "zstd"},
      {{"gzip", "lz4"}, std::nullopt},
      {{"zstd"}, "gzip"},
      {{"zlib"}, "zlib"},
      {{"blosc:zstd:3:bitshuffle", "zlib", "lz4"}, "blosc:lz4"},
  };
  for (const Pipeline& pipeline : pipelines) {
    for (const DType dtype : {float64, int16}) {
      ZarrMetadata metadata = MakeMetadata(
          {9, 7}, {4, 3}, dtype,
          pipeline.compressor ? std::optional(ParseCodecSpec(*pipeline.compressor)) : std::nullopt,
          dtype == float64 ? 'F' : 'C');
      std::string trace = "compressor " + pipeline.compressor.value_or("none") + ", filters";
      for (const std::string& filter : pipeline.filters) {
        metadata.filters.push_back(ParseCodecSpec(filter));
        trace += " " + filter;
      }
      SCOPED_TRACE(trace);
      const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
      CheckRoundTrip(store, "a", metadata, rng);  // 3 x 3 blocks, the last row and column partial
      if (HasFatalFailure()) return;
      const ZarrArray array = ZarrArray::Open(store, "a");
      EXPECT_EQ(array.metadata().filters, metadata.filters);
      const NDArray data = array.Read(1);
      const std::vector<Shape> missing = {Shape{1, 1}, Shape{2, 2}};
      for (const Shape& block : missing) store->Erase(array.ChunkKey(block));
      const NDArray all = array.Read(4);
      const double fill = dtype == float64 ? std::nan("") : 3.0;
      const ChunkGrid& grid = array.grid();
      for (Index linear = 0; linear < grid.num_blocks(); ++linear) {
        const Shape block = grid.BlockIndex(linear);
        const Region region = grid.BlockRegion(block);
        const bool is_missing = std::find(missing.begin(), missing.end(), block) != missing.end();
        const NDArray expected =
            is_missing ? NDArray::Full(region.shape, dtype, fill) : Slice(data, region);
        EXPECT_EQ(array.ReadBlock(block), expected) << "block " << ShapeToString(block);
        EXPECT_EQ(Slice(all, region), expected) << "block " << ShapeToString(block);
      }
    }
  }
}

TEST(ZarrArrayTest, OpenErrors) {
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  std::string message = MessageOf<StorageError>([&] { ZarrArray::Open(store, "nothing"); });
  EXPECT_NE(message.find("no Zarr array at"), std::string::npos) << message;
  EXPECT_NE(message.find(".zarray not found"), std::string::npos) << message;

  CreateZarrGroup(*store, "group");
  EXPECT_TRUE(IsZarrGroup(*store, "group"));
  EXPECT_FALSE(IsZarrGroup(*store, "nothing"));
  message = MessageOf<StorageError>([&] { ZarrArray::Open(store, "group"); });
  EXPECT_NE(message.find("group"), std::string::npos) << message;
  EXPECT_NE(message.find(".zgroup"), std::string::npos) << message;
  CreateZarrGroup(*store, "");
  EXPECT_TRUE(IsZarrGroup(*store, ""));
  EXPECT_TRUE(store->Contains(".zgroup"));

  ZarrArray::Create(store, "dims", MakeMetadata({4, 3}, {2, 3}, float32));
  store->Set("dims/.zattrs", std::string_view(R"({"_ARRAY_DIMENSIONS": ["x"]})"));
  message = MessageOf<FormatError>([&] { ZarrArray::Open(store, "dims"); });
  EXPECT_NE(message.find("_ARRAY_DIMENSIONS"), std::string::npos) << message;

  store->Set("bad/.zarray", std::string_view(R"({"zarr_format": 2, "shape": [4})"));
  EXPECT_THROW(ZarrArray::Open(store, "bad"), FormatError);

  // A filter id the codec layer does not know.
  const std::string unknown_filter = R"({
    "chunks": [2], "compressor": null, "dtype": "<f8", "fill_value": 0.0,
    "filters": [{"id": "delta", "dtype": "<f8"}], "order": "C", "shape": [4],
    "zarr_format": 2})";
  store->Set("delta/.zarray", std::string_view(unknown_filter));
  message = MessageOf<FormatError>([&] { ZarrArray::Open(store, "delta"); });
  EXPECT_NE(message.find("delta"), std::string::npos) << message;
}

// ---- corrupt chunks and bad arguments -----------------------------------------------

TEST(ZarrArrayTest, CorruptChunksAreFormatErrorsNamingTheKey) {
  std::mt19937_64 rng(testing::TestSeed() + 7);
  TempDir dir;
  for (StoreKind kind : {StoreKind::kMemory, StoreKind::kDirectory}) {
    for (const CodecCase& codec : kCodecCases) {
      SCOPED_TRACE(codec.name);
      const std::shared_ptr<Store> store =
          MakeStore(kind, dir, std::string("corrupt_") + codec.name);
      const ZarrArray array = ZarrArray::Create(
          store, "arr", MakeMetadata({64, 64}, {32, 32}, float64, CompressorOf(codec)));
      array.Write(RandomArray({64, 64}, float64, rng));
      const std::string key = array.ChunkKey(Shape{1, 0});
      const std::string where = store->DescribeKey(key);
      const Buffer good = *store->Get(key);

      // Truncated.
      store->Set(key, good.span().first(static_cast<std::size_t>(good.size() / 2)));
      std::string message = MessageOf<FormatError>([&] { array.ReadBlock(Shape{1, 0}); });
      EXPECT_TRUE(StartsWith(message, where)) << message;
      message = MessageOf<FormatError>([&] { array.Read(2); });
      EXPECT_TRUE(StartsWith(message, where)) << message;

      // Garbage of the original length (and a little longer).
      for (Index size : {good.size(), good.size() + 13}) {
        Buffer garbage(size);
        for (std::byte& byte : garbage.span()) byte = static_cast<std::byte>(rng() & 0xff);
        store->Set(key, garbage.span());
        if (codec.spec == nullptr && size == good.size()) {
          // Uncompressed garbage of the right size is indistinguishable from data.
          EXPECT_NO_THROW(array.ReadBlock(Shape{1, 0}));
          continue;
        }
        message = MessageOf<FormatError>([&] { array.ReadRegion(Region{{30, 0}, {4, 4}}); });
        EXPECT_TRUE(StartsWith(message, where)) << message;
      }
    }
  }
}

// Peak resident memory of this process so far, in bytes.
std::int64_t PeakRssBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

// A sparse file of `size` bytes at `path` (no disk blocks, reads as zeros); false when
// the file system cannot hold one that large.
bool MakeSparseFile(const fs::path& path, std::uintmax_t size) {
  std::ofstream(path, std::ios::binary).close();
  std::error_code error;
  fs::resize_file(path, size, error);
  return !error;
}

// A value far larger than any chunk: reading it whole would take minutes and 100 GB.
constexpr std::uintmax_t kHugeFileBytes = std::uintmax_t{100} << 30;

TEST(ZarrArrayTest, OversizedChunkIsRefusedBeforeItIsRead) {
  TempDir dir;
  for (const CodecCase& codec : kCodecCases) {
    SCOPED_TRACE(codec.name);
    const std::shared_ptr<DirectoryStore> store =
        DirectoryStore::Open(dir.path() / (std::string("huge_") + codec.name));
    const ZarrArray array = ZarrArray::Create(
        store, "arr", MakeMetadata({64, 64}, {32, 32}, float64, CompressorOf(codec)));
    const std::string key = array.ChunkKey(Shape{1, 0});
    if (!MakeSparseFile(store->root() / key, kHugeFileBytes)) {
      GTEST_SKIP() << "the temporary file system cannot hold a 100 GB sparse file";
    }
    const std::int64_t peak_before = PeakRssBytes();
    for (const auto& read :
         std::vector<std::function<void()>>{[&] {
                                              array.ReadBlock(Shape{1, 0});
                                            },
                                            [&] { array.Read(2); },
                                            [&] {
                                              array.ReadRegion(Region{{30, 0}, {4, 4}});
                                            }}) {
      const std::string message = MessageOf<FormatError>(read);
      EXPECT_TRUE(StartsWith(message, store->DescribeKey(key))) << message;
      EXPECT_NE(message.find(std::to_string(kHugeFileBytes) + " bytes"), std::string::npos)
          << message;
      // The largest valid size: the chunk's 8192 bytes, or its codec's bound plus slack.
      const std::string largest = codec.spec == nullptr
                                      ? std::string("8192 bytes")
                                      : std::to_string([&] {
                                          const Index bound =
                                              MakeCodec(*CompressorOf(codec))->MaxEncodedSize(8192);
                                          return bound + bound / 64 + (Index{64} << 10);
                                        }()) +
                                            " bytes";
      EXPECT_NE(message.find(largest), std::string::npos) << message;
    }
    EXPECT_LT(PeakRssBytes() - peak_before, std::int64_t{1} << 30);
    // Its size is still reported without reading it, and other blocks read normally.
    EXPECT_EQ(array.StoredChunkSize(Shape{1, 0}), static_cast<std::int64_t>(kHugeFileBytes));
    EXPECT_EQ(array.ReadBlock(Shape{0, 0}), NDArray::Full({32, 32}, float64, std::nan("")))
        << "missing chunks read as the fill value";
  }
}

TEST(ZarrArrayTest, ChunkJustOverTheCodecBoundIsAFormatError) {
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  for (const CodecCase& codec : kCodecCases) {
    if (codec.spec == nullptr) continue;
    SCOPED_TRACE(codec.name);
    const std::string path = std::string("bound_") + codec.name;
    const ZarrArray array =
        ZarrArray::Create(store, path, MakeMetadata({8}, {8}, int32, CompressorOf(codec)));
    const Index bound = MakeCodec(*CompressorOf(codec))->MaxEncodedSize(32);
    const Index largest = bound + bound / 64 + (Index{64} << 10);
    store->Set(array.ChunkKey(Shape{0}), Buffer(largest + 1).span());
    const std::string message = MessageOf<FormatError>([&] { array.ReadBlock(Shape{0}); });
    EXPECT_TRUE(StartsWith(message, store->DescribeKey(array.ChunkKey(Shape{0})))) << message;
    EXPECT_NE(message.find(std::to_string(largest + 1) + " bytes"), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(largest) + " bytes"), std::string::npos) << message;
    // At the limit the chunk is read and handed to the codec, which finds it corrupt.
    store->Set(array.ChunkKey(Shape{0}), Buffer(largest).span());
    EXPECT_THROW(array.ReadBlock(Shape{0}), FormatError);
  }
}

// A middle stage's frame claiming far more than the bound of its decoded size (the
// chained MaxEncodedSize of the stages within) is refused before anything that size is
// allocated, naming the chunk and the stage.
TEST(ZarrArrayTest, CorruptMiddleStageIsAFormatErrorWithoutAllocatingItsClaim) {
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  const auto make = [&](const std::string& path, const char* filter, const char* compressor) {
    ZarrMetadata metadata = MakeMetadata({8, 8}, {4, 4}, float64, ParseCodecSpec(compressor));
    metadata.filters = {ParseCodecSpec(filter)};
    const ZarrArray array = ZarrArray::Create(store, path, metadata);
    array.Write(NDArray::Full({8, 8}, float64, 1.5));
    return array;
  };
  const auto bytes = [](std::initializer_list<unsigned> values) {
    std::vector<std::byte> out;
    for (unsigned value : values) out.push_back(static_cast<std::byte>(value));
    return out;
  };
  // A zstd frame header claiming 1 TiB: magic, single-segment descriptor with an 8-byte
  // content size, the size, then an empty last raw block.
  std::vector<std::byte> zstd_claim = bytes({0x28, 0xB5, 0x2F, 0xFD, 0xE0});
  for (int shift = 0; shift < 64; shift += 8) {
    zstd_claim.push_back(static_cast<std::byte>(((std::uint64_t{1} << 40) >> shift) & 0xFFu));
  }
  for (std::byte value : bytes({0x01, 0x00, 0x00})) zstd_claim.push_back(value);
  // numcodecs LZ4's size header claiming 4 GiB - 16, then a little garbage.
  const std::vector<std::byte> lz4_claim = bytes({0xF0, 0xFF, 0xFF, 0xFF, 0x10, 0x00});
  // 4 MiB of zeros deflated: zlib records no size, so inflating stops at the bound.
  const Buffer zlib_bomb =
      MakeCodec(ParseCodecSpec("zlib:9"))->Encode(std::vector<std::byte>(std::size_t{4} << 20), 8);
  struct Case {
    const char* filter;
    const char* compressor;
    std::span<const std::byte> stored;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {"lz4", "zstd", zstd_claim, "claims 1099511627776 decoded bytes, more than"},
      {"zlib", "lz4", lz4_claim, "claims 4294967280 decoded bytes, more than"},
      {"lz4", "zlib", zlib_bomb.span(), "decodes to more than"},
  };
  const std::int64_t peak_before = PeakRssBytes();
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.filter) + " then " + c.compressor);
    const std::string path = std::string(c.filter) + "_" + c.compressor;
    const ZarrArray array = make(path, c.filter, c.compressor);
    const std::string key = array.ChunkKey(Shape{1, 0});
    store->Set(key, c.stored);
    for (const auto& read :
         std::vector<std::function<void()>>{[&] {
                                              array.ReadBlock(Shape{1, 0});
                                            },
                                            [&] { array.Read(2); },
                                            [&] {
                                              array.ReadRegion(Region{{3, 0}, {2, 2}});
                                            }}) {
      const std::string message = MessageOf<FormatError>(read);
      EXPECT_TRUE(StartsWith(message, store->DescribeKey(key))) << message;
      EXPECT_NE(message.find("decoding compressor " + std::string(c.compressor)), std::string::npos)
          << message;
      EXPECT_NE(message.find(c.needle), std::string::npos) << message;
    }
    EXPECT_EQ(array.ReadBlock(Shape{0, 0}), NDArray::Full({4, 4}, float64, 1.5));
  }
  EXPECT_LT(PeakRssBytes() - peak_before, std::int64_t{1} << 30);
}

// The stored-size limit of a multi-stage pipeline is the outermost stage's bound,
// chained from the chunk's size through every stage (each with the slack for other
// writers).
TEST(ZarrArrayTest, MultiStageStoredSizeLimitChainsTheBounds) {
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  ZarrMetadata metadata = MakeMetadata({8}, {8}, int32, ParseCodecSpec("blosc:lz4"));
  metadata.filters = {ParseCodecSpec("zlib"), ParseCodecSpec("lz4")};
  const ZarrArray array = ZarrArray::Create(store, "p", metadata);
  const auto limit = [](const CodecConfig& config, Index raw) {
    const Index bound = MakeCodec(config)->MaxEncodedSize(raw);
    return bound + bound / 64 + (Index{64} << 10);
  };
  const Index largest =
      limit(*metadata.compressor, limit(metadata.filters[1], limit(metadata.filters[0], 32)));
  const std::string key = array.ChunkKey(Shape{0});
  store->Set(key, Buffer(largest + 1).span());
  std::string message = MessageOf<FormatError>([&] { array.ReadBlock(Shape{0}); });
  EXPECT_TRUE(StartsWith(message, store->DescribeKey(key))) << message;
  EXPECT_NE(message.find(std::to_string(largest) + " bytes"), std::string::npos) << message;
  const std::string pipeline = "filters [" + DescribeCodec(metadata.filters[0]) + ", " +
                               DescribeCodec(metadata.filters[1]) + "] then compressor " +
                               DescribeCodec(*metadata.compressor);
  EXPECT_NE(message.find(pipeline), std::string::npos) << message;
  // One byte less passes the size check and fails in the outermost stage instead.
  store->Set(key, Buffer(largest).span());
  message = MessageOf<FormatError>([&] { array.ReadBlock(Shape{0}); });
  EXPECT_NE(message.find("decoding compressor blosc"), std::string::npos) << message;
}

TEST(ZarrArrayTest, OversizedMetadataIsRefusedBeforeItIsRead) {
  TempDir dir;
  const std::shared_ptr<DirectoryStore> store = DirectoryStore::Open(dir.path() / "meta.zarr");
  ZarrArray::Create(store, "a", MakeMetadata({4}, {2}, float64));
  if (!MakeSparseFile(store->root() / "a" / ".zarray", kHugeFileBytes)) {
    GTEST_SKIP() << "the temporary file system cannot hold a 100 GB sparse file";
  }
  const std::int64_t peak_before = PeakRssBytes();
  std::string message = MessageOf<FormatError>([&] { ZarrArray::Open(store, "a"); });
  EXPECT_TRUE(StartsWith(message, store->DescribeKey("a/.zarray"))) << message;
  EXPECT_NE(message.find(std::to_string(kHugeFileBytes) + " bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("16 MiB"), std::string::npos) << message;
  EXPECT_LT(PeakRssBytes() - peak_before, std::int64_t{1} << 30);

  // .zattrs has the same cap: 16 MiB + 1 byte is refused.
  ZarrArray::Create(store, "b", MakeMetadata({4}, {2}, float64));
  ASSERT_TRUE(MakeSparseFile(store->root() / "b" / ".zattrs", (std::uintmax_t{16} << 20) + 1));
  message = MessageOf<FormatError>([&] { ZarrArray::Open(store, "b"); });
  EXPECT_TRUE(StartsWith(message, store->DescribeKey("b/.zattrs"))) << message;
  EXPECT_NE(message.find(std::to_string((16 << 20) + 1) + " bytes"), std::string::npos) << message;
}

TEST(ZarrArrayTest, CreateRejectsFillValuesTheDTypeCannotHold) {
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  const std::vector<std::pair<DType, FillValue>> bad = {
      {int8, std::int64_t{300}}, {int8, 0.5},   {int8, std::int64_t{-129}},
      {uint8, std::int64_t{-1}}, {int32, 1e10}, {uint64, std::numeric_limits<double>::quiet_NaN()},
      {float32, 1e300}};
  for (const auto& [dtype, fill] : bad) {
    SCOPED_TRACE(std::string(dtype.name()));
    ZarrMetadata metadata = MakeMetadata({4}, {2}, dtype);
    metadata.fill_value = fill;
    const std::string message =
        MessageOf<InvalidArgument>([&] { ZarrArray::Create(store, "", metadata); });
    EXPECT_NE(message.find("fill value"), std::string::npos) << message;
    EXPECT_NE(message.find(std::string(dtype.name())), std::string::npos) << message;
  }
  EXPECT_TRUE(store->List("").empty());  // nothing was written

  // Every fill value Create accepts reads back as the same element.
  for (const FillValue& fill : {FillValue(1.0), FillValue(0.0), FillValue(std::int64_t{1}),
                                FillValue(true), FillValue(std::monostate{})}) {
    ZarrMetadata metadata = MakeMetadata({3}, {2}, bool_);
    metadata.fill_value = fill;
    ZarrArray::Create(store, "flags", metadata);
    const bool expected = !std::holds_alternative<std::monostate>(fill) && fill != FillValue(0.0);
    EXPECT_EQ(ZarrArray::Open(store, "flags").Read(), NDArray::Full({3}, bool_, expected));
  }
}

TEST(ZarrArrayTest, CreateRejectsChunksOverTheSizeCap) {
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  // 2^21 x 2^21 bytes = 4 TiB per chunk: over the 1 TiB cap that parsing applies.
  const Index extent = Index{1} << 21;
  const std::string message = MessageOf<InvalidArgument>([&] {
    ZarrArray::Create(store, "", MakeMetadata({extent, extent}, {extent, extent}, uint8));
  });
  EXPECT_NE(message.find("\"chunks\""), std::string::npos) << message;
  EXPECT_NE(message.find("2^40"), std::string::npos) << message;
  EXPECT_TRUE(store->List("").empty());  // nothing was written
  // Exactly at the cap is accepted, and what Create writes parses back.
  const Index at_cap = Index{1} << 20;
  ZarrArray::Create(store, "", MakeMetadata({at_cap, at_cap}, {at_cap, at_cap}, uint8));
  EXPECT_EQ(ZarrArray::Open(store).metadata().chunk_nbytes(), Index{1} << 40);
}

TEST(ZarrArrayTest, CreateRemovesOnlyTheStaleChunksOfAPreviousArray) {
  TempDir dir;
  for (StoreKind kind : {StoreKind::kMemory, StoreKind::kDirectory}) {
    for (const std::string path : {"", "grp/arr"}) {
      SCOPED_TRACE(std::string(kind == StoreKind::kMemory ? "memory" : "directory") + " path '" +
                   path + "'");
      const std::shared_ptr<Store> store =
          MakeStore(kind, dir, path.empty() ? "stale_root" : "stale_nested");
      const std::string prefix = path.empty() ? "" : path + "/";
      // A previous array with '/' chunks of another rank, and the same chunk keys.
      const ZarrArray old = ZarrArray::Create(
          store, path,
          MakeMetadata({4, 4, 4}, {2, 2, 2}, int16, std::nullopt, 'C', ByteOrder::kLittle, '/'));
      std::mt19937_64 rng(testing::TestSeed() + 11);
      old.Write(RandomArray({4, 4, 4}, int16, rng));
      store->Set(prefix + "0.0", std::string_view("stale dot chunk"));
      store->Set(prefix + "7", std::string_view("stale 1-d chunk"));
      // Keys that are not chunks, and keys outside the array's prefix.
      const std::vector<std::string> kept = {prefix + "notes.txt",   prefix + "sub/.zarray",
                                             prefix + "sub/.zgroup", prefix + "sub/x0.0",
                                             "elsewhere/0.0",        "grp2/0.0",
                                             "grp/arrow/0.0"};
      for (const std::string& key : kept) store->Set(key, std::string_view("keep me"));

      ZarrMetadata metadata = MakeMetadata({4, 4}, {2, 2}, int16);
      metadata.fill_value = std::int64_t{-7};
      // A refused Create removes nothing.
      ZarrMetadata bad = metadata;
      bad.fill_value = std::int64_t{1} << 20;
      EXPECT_THROW(ZarrArray::Create(store, path, bad), InvalidArgument);
      EXPECT_TRUE(store->Contains(prefix + "0.0"));
      EXPECT_TRUE(store->Contains(prefix + "1/1/1"));

      const ZarrArray array = ZarrArray::Create(store, path, metadata);
      EXPECT_EQ(array.CountStoredChunks().count, 0);
      EXPECT_EQ(array.Read(), NDArray::Full({4, 4}, int16, -7));
      std::vector<std::string> expected = kept;
      expected.push_back(prefix + ".zarray");
      std::vector<std::string> remaining = store->List("");
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(remaining, expected);
    }
  }
}

TEST(ZarrArrayTest, WrongShapesAndDTypesAreInvalidArguments) {
  const ZarrArray array =
      ZarrArray::Create(MemoryStore::Create(), "", MakeMetadata({5, 5}, {2, 2}, float32));
  EXPECT_THROW(array.WriteBlock(Shape{0, 0}, NDArray({2, 3}, float32)), InvalidArgument);
  EXPECT_THROW(array.WriteBlock(Shape{0, 0}, NDArray({2, 2}, float64)), InvalidArgument);
  EXPECT_THROW(array.WriteBlock(Shape{2, 2}, NDArray({2, 2}, float32)), InvalidArgument);
  EXPECT_THROW(array.WriteBlock(Shape{3, 0}, NDArray({2, 2}, float32)), InvalidArgument);
  std::vector<std::byte> bytes(12);
  EXPECT_THROW(array.WriteBlockFrom(Shape{0, 0}, bytes), InvalidArgument);
  EXPECT_THROW(array.ReadBlockInto(Shape{0, 0}, bytes), InvalidArgument);
  EXPECT_THROW(array.ReadBlock(Shape{0, 3}), InvalidArgument);
  EXPECT_THROW(array.Write(NDArray({5, 4}, float32)), InvalidArgument);
  EXPECT_THROW(array.Write(NDArray({5, 5}, int32)), InvalidArgument);
  array.WriteBlock(Shape{2, 2}, NDArray::Full({1, 1}, float32, 1.5));
  EXPECT_EQ(array.ReadBlock(Shape{2, 2}).data<float>()[0], 1.5f);
}

// ---- independent truth: zarr-python -------------------------------------------------

constexpr const char* kPython = "/usr/bin/python3";

// Runs a Python script; returns its exit code (77 = zarr missing) and output.
int RunPython(const fs::path& dir, const std::string& script, std::string& output) {
  const fs::path script_path = dir / "script.py";
  const fs::path log_path = dir / "script.log";
  std::ofstream(script_path) << script;
  const std::string command = std::string(kPython) + " " + script_path.string() + " " +
                              dir.string() + " > " + log_path.string() + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream log(log_path);
  output.assign(std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<std::byte> ReadFileBytes(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

// Element-wise equality where two NaNs are equal.
void ExpectSameElements(const NDArray& actual, std::span<const std::byte> expected_bytes) {
  ASSERT_EQ(static_cast<Index>(expected_bytes.size()), actual.nbytes());
  NDArray expected(actual.shape(), actual.dtype());
  if (!expected_bytes.empty()) {
    std::memcpy(expected.mutable_bytes().data(), expected_bytes.data(), expected_bytes.size());
  }
  for (Index linear = 0; linear < actual.size(); ++linear) {
    const double a = actual.GetAsDouble(linear);
    const double b = expected.GetAsDouble(linear);
    if (std::isnan(a) && std::isnan(b)) continue;
    ASSERT_EQ(a, b) << "element " << linear;
  }
  if (actual.dtype().kind() != DTypeKind::kFloat) {
    EXPECT_EQ(actual, expected);
  }
}

constexpr const char* kZarrWriterScript = R"PY(
import os, sys
try:
    import numpy as np, zarr, numcodecs
except ImportError as error:
    print(error)
    sys.exit(77)
root = sys.argv[1]
rng = np.random.default_rng(1234)

def make(name, data, chunks, dtype, order, fill, compressor, separator, missing, filters=None):
    z = zarr.open_array(os.path.join(root, name + '.zarr'), mode='w', shape=data.shape,
                        chunks=chunks, dtype=dtype, order=order, fill_value=fill,
                        compressor=compressor, filters=filters,
                        dimension_separator=separator)
    z[...] = data
    for key in missing:
        del z.store[key]
    back = zarr.open_array(os.path.join(root, name + '.zarr'), mode='r')
    np.ascontiguousarray(back[...]).astype(back.dtype.newbyteorder('<')).tofile(
        os.path.join(root, name + '.bin'))

make('a', rng.standard_normal((7, 10)), (3, 4), '>f8', 'F', np.nan,
     numcodecs.Blosc('lz4', 5, numcodecs.Blosc.SHUFFLE), '/', ['1/2'])
make('b', rng.integers(-30000, 30000, (5, 6, 7)), (2, 4, 3), '>i2', 'F', -7,
     numcodecs.Zlib(1), '.', ['0.1.2', '2.0.0'])
make('c', rng.integers(0, 2, 11).astype(bool), (4,), '|b1', 'C', True, None, '.', ['1'])
make('d', rng.integers(0, 2**32, (9, 4), dtype=np.uint64), (4, 3), '<u4', 'C', 5, None, '.',
     ['2.1'], filters=[numcodecs.Zlib(1)])
make('e', np.array(3.5), (), '<f4', 'C', 0.0, numcodecs.Zstd(3), '.', [])
make('f', rng.standard_normal((6, 5)), (4, 2), '>f4', 'C', -np.inf, numcodecs.LZ4(), '/',
     ['0/1'])
make('g', rng.integers(-2**62, 2**62, (8, 8)), (4, 4), '>i8', 'C', 0, numcodecs.Zstd(1), '.',
     ['1.0'])
make('h', rng.integers(0, 255, (3, 4, 5, 6)), (2, 3, 5, 4), '|u1', 'F', 9, numcodecs.GZip(1),
     '/', ['0/0/0/1'])
print('ok')
)PY";

constexpr const char* kZarrReaderScript = R"PY(
import os, sys
try:
    import numpy as np, zarr
except ImportError as error:
    print(error)
    sys.exit(77)
import json
root = sys.argv[1]
failed = False
for name in sorted(os.listdir(root)):
    if not name.endswith('.zarr'):
        continue
    z = zarr.open_array(os.path.join(root, name), mode='r')
    # NAME.bin: the values written (C order, little-endian); NAME.json: the chunks asked
    # for and the block erased after, which must read as the fill value.
    with open(os.path.join(root, name[:-5] + '.json')) as f:
        asked = json.load(f)
    expected = np.fromfile(os.path.join(root, name[:-5] + '.bin'),
                           dtype=z.dtype.newbyteorder('<')).reshape(z.shape)
    if list(z.chunks) != asked['chunks']:
        print(name, 'chunks', z.chunks, 'asked', asked['chunks'])
        failed = True
    fill = True if z.dtype.kind == 'b' else (np.nan if z.dtype.kind == 'f' else 3)
    if not (z.fill_value == fill or (np.isnan(fill) and np.isnan(z.fill_value))):
        print(name, 'fill_value', z.fill_value, 'expected', fill)
        failed = True
    if asked['erased'] is not None:
        grid = [-(-s // c) for s, c in zip(z.shape, asked['chunks'])]
        block = np.unravel_index(asked['erased'], grid)
        expected[tuple(slice(b * c, (b + 1) * c) for b, c in zip(block, asked['chunks']))] = fill
    actual = z[...]
    equal_nan = z.dtype.kind == 'f'
    if not np.array_equal(actual, expected, equal_nan=equal_nan):
        print(name, 'differs:', actual, expected)
        failed = True
    if name == 'dims.zarr' and z.attrs['_ARRAY_DIMENSIONS'] != ['y', 'x']:
        print(name, 'attributes', dict(z.attrs))
        failed = True
print('failed' if failed else 'ok')
sys.exit(1 if failed else 0)
)PY";

TEST(ZarrPythonInteropTest, ReadsWhatZarrPythonWrote) {
  if (!fs::exists(kPython)) GTEST_SKIP() << kPython << " not found";
  TempDir dir;
  std::string output;
  const int code = RunPython(dir.path(), kZarrWriterScript, output);
  if (code == 77) GTEST_SKIP() << "zarr-python is not installed for " << kPython << ": " << output;
  ASSERT_EQ(code, 0) << output;
  struct Expected {
    const char* name;
    Shape shape;
    DType dtype;
  };
  for (const Expected& expected :
       {Expected{"a", {7, 10}, float64}, Expected{"b", {5, 6, 7}, int16},
        Expected{"c", {11}, bool_}, Expected{"d", {9, 4}, uint32}, Expected{"e", {}, float32},
        Expected{"f", {6, 5}, float32}, Expected{"g", {8, 8}, int64},
        Expected{"h", {3, 4, 5, 6}, uint8}}) {
    SCOPED_TRACE(expected.name);
    const auto store = DirectoryStore::Open(dir.path() / (std::string(expected.name) + ".zarr"),
                                            DirectoryStore::Options{.create = false});
    const ZarrArray array = ZarrArray::Open(store);
    ASSERT_EQ(array.metadata().shape, expected.shape);
    ASSERT_EQ(array.metadata().dtype, expected.dtype);
    const std::vector<std::byte> truth =
        ReadFileBytes(dir.path() / (std::string(expected.name) + ".bin"));
    for (int threads : {1, 4}) {
      ExpectSameElements(array.Read(threads), truth);
      if (HasFatalFailure()) return;
    }
    std::mt19937_64 rng(testing::TestSeed() + 8);
    const NDArray all = array.Read();
    for (int trial = 0; trial < 5; ++trial) {
      const Region region = RandomRegion(all.shape(), rng);
      ASSERT_EQ(array.ReadRegion(region), Slice(all, region));
    }
  }
  // The missing chunk of "a" (block (1, 2): rows 3..5, columns 8..9) reads as NaN.
  const ZarrArray a = ZarrArray::Open(DirectoryStore::Open(dir.path() / "a.zarr"));
  EXPECT_EQ(a.metadata().order, 'F');
  EXPECT_EQ(a.metadata().byte_order, ByteOrder::kBig);
  EXPECT_EQ(a.metadata().dimension_separator, '/');
  const NDArray missing = a.ReadBlock(Shape{1, 2});
  ASSERT_EQ(missing.shape(), (Shape{3, 2}));
  for (Index linear = 0; linear < missing.size(); ++linear) {
    EXPECT_TRUE(std::isnan(missing.GetAsDouble(linear)));
  }
  EXPECT_EQ(a.CountStoredChunks().count, a.grid().num_blocks() - 1);
}

TEST(ZarrPythonInteropTest, ZarrPythonReadsWhatWeWrote) {
  if (!fs::exists(kPython)) GTEST_SKIP() << kPython << " not found";
  TempDir dir;
  std::mt19937_64 rng(testing::TestSeed() + 9);
  struct Case {
    const char* name;
    ZarrMetadata metadata;
  };
  std::vector<Case> cases = {
      {"f8_f_big", MakeMetadata({7, 10}, {3, 4}, float64, ParseCodecSpec("blosc:lz4"), 'F',
                                ByteOrder::kBig, '/')},
      {"i2_c_big",
       MakeMetadata({5, 6, 7}, {2, 4, 3}, int16, ParseCodecSpec("zlib"), 'C', ByteOrder::kBig)},
      {"b1", MakeMetadata({11}, {4}, bool_, std::nullopt)},
      {"u4_f", MakeMetadata({9, 4}, {4, 3}, uint32, ParseCodecSpec("lz4"), 'F')},
      {"f4_0d", MakeMetadata({}, {}, float32, ParseCodecSpec("zstd"))},
      {"i8_gzip",
       MakeMetadata({8, 9}, {4, 4}, int64, ParseCodecSpec("gzip"), 'F', ByteOrder::kBig, '/')},
      {"dims", MakeMetadata({4, 6}, {3, 4}, uint16, ParseCodecSpec("blosc:zstd:3:bitshuffle"))},
  };
  for (const Case& test_case : cases) {
    SCOPED_TRACE(test_case.name);
    const auto store = DirectoryStore::Open(dir.path() / (std::string(test_case.name) + ".zarr"));
    ZarrAttributes attributes;
    if (std::string(test_case.name) == "dims") attributes.dimension_names = {"y", "x"};
    const ZarrArray array = ZarrArray::Create(store, "", test_case.metadata, attributes);
    const NDArray written = RandomArray(test_case.metadata.shape, test_case.metadata.dtype, rng);
    array.Write(written, 2);
    // Block 1 in C order is erased; zarr-python computes its region and fill itself.
    const bool erase = array.grid().num_blocks() > 1;
    if (erase) store->Erase(array.ChunkKey(array.grid().BlockIndex(1)));
    // The expected values are what we wrote, not what Tessera reads back.
    std::ofstream(dir.path() / (std::string(test_case.name) + ".bin"), std::ios::binary)
        .write(reinterpret_cast<const char*>(written.bytes().data()),
               static_cast<std::streamsize>(written.nbytes()));
    std::string chunks;
    for (const Index c : test_case.metadata.chunks)
      chunks += (chunks.empty() ? "" : ", ") + std::to_string(c);
    std::ofstream(dir.path() / (std::string(test_case.name) + ".json"))
        << "{\"chunks\": [" << chunks << "], \"erased\": " << (erase ? "1" : "null") << "}";
  }
  std::string output;
  const int code = RunPython(dir.path(), kZarrReaderScript, output);
  if (code == 77) GTEST_SKIP() << "zarr-python is not installed for " << kPython << ": " << output;
  EXPECT_EQ(code, 0) << output;
}

}  // namespace
}  // namespace tessera
