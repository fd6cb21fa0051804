// Sharded reads read what they need: one inner chunk costs its shard's index and its own
// bytes (counted through a store), and the scratch figures bound what reads and writes
// of shards measure.
#include "zarr_v3_test_support.hpp"

namespace tessera::zarr_v3_test {
namespace {

// ---- partial reads ----------------------------------------------------------------------

TEST(ZarrV3PartialReads, AnInnerChunkReadsTheIndexAndItsOwnBytesOnly) {
  TempDir dir("zarr-v3-partial");
  std::mt19937_64 rng(testing::TestSeed() + 2);
  for (const bool on_disk : {false, true}) {
    SCOPED_TRACE(on_disk ? "directory store" : "memory store");
    const std::shared_ptr<Store> inner =
        on_disk ? std::shared_ptr<Store>(DirectoryStore::Open(dir.path() / "a.zarr"))
                : std::shared_ptr<Store>(MemoryStore::Create());
    // One shard of 16 x 16 inner chunks of 4 x 4, compressed so that their sizes differ.
    const ZarrMetadata metadata =
        MakeV3Metadata({64, 64}, {4, 4}, int32, ParseCodecSpec("zstd:3"), Shape{64, 64});
    NDArray data({64, 64}, int32);
    for (Index element = 0; element < data.size(); ++element) {
      const Index inner_chunk = (element / 64 / 4) * 16 + (element % 64) / 4;
      data.mutable_data<std::int32_t>()[static_cast<std::size_t>(element)] =
          static_cast<std::int32_t>(1 + rng() % static_cast<std::uint64_t>(1 + inner_chunk * 97));
    }
    // Inner chunk (3, 3) is all fill (0): not stored.
    FillRegion(data, Region{{12, 12}, {4, 4}}, std::vector<std::byte>(4));
    ZarrArray::Create(inner, "", metadata).Write(data, 2);

    const auto store = std::make_shared<CountingStore>(inner);
    const ZarrArray array = ZarrArray::Open(store);
    const ShardIndexLayout layout{.entries = 256, .checksum = true, .at_end = true};
    const Buffer shard = *inner->Get("c/0/0");
    const std::vector<ShardEntry> entries = HandDecodedIndex(shard.span(), layout);
    const std::int64_t index_bytes = layout.IndexBytes();
    ASSERT_EQ(index_bytes, 4100);
    auto stored_bytes = [&](Index row, Index column) {
      const ShardEntry& entry = entries[static_cast<std::size_t>(row * 16 + column)];
      return entry.empty() ? std::int64_t{0} : static_cast<std::int64_t>(entry.nbytes);
    };
    ASSERT_EQ(stored_bytes(3, 3), 0);

    struct Case {
      Region region;
      std::vector<std::pair<Index, Index>> inner_chunks;
    };
    const std::vector<Case> cases = {
        {{{0, 0}, {4, 4}}, {{0, 0}}},
        {{{20, 36}, {4, 4}}, {{5, 9}}},
        {{{21, 37}, {2, 1}}, {{5, 9}}},  // part of one inner chunk
        {{{60, 60}, {4, 4}}, {{15, 15}}},
        {{{12, 12}, {4, 4}}, {{3, 3}}},  // not stored: the index alone
        {{{20, 36}, {4, 8}}, {{5, 9}, {5, 10}}},
        {{{22, 1}, {4, 3}}, {{5, 0}, {6, 0}}},
    };
    for (const Case& test : cases) {
      for (const int threads : {1, 4}) {
        SCOPED_TRACE(RegionText(test.region) + " threads " + std::to_string(threads));
        store->Reset();
        EXPECT_TRUE(SameArray(array.ReadRegion(test.region, threads), Slice(data, test.region)));
        EXPECT_EQ(store->gets(), 0);
        EXPECT_EQ(store->bounded_reads(), 0);
        // Each touched inner chunk is read once, by its range; the rest are index reads.
        std::int64_t chunk_bytes = 0;
        std::multiset<std::int64_t> expected_offsets;
        for (const auto& [row, column] : test.inner_chunks) {
          chunk_bytes += stored_bytes(row, column);
          if (stored_bytes(row, column) > 0) {
            expected_offsets.insert(static_cast<std::int64_t>(
                entries[static_cast<std::size_t>(row * 16 + column)].offset));
          }
        }
        std::multiset<std::int64_t> chunk_offsets;
        std::int64_t index_reads = 0;
        for (const CountingStore::Range& range : store->ranges()) {
          EXPECT_EQ(range.key, "c/0/0");
          if (range.size == index_bytes && range.offset == -index_bytes) {
            ++index_reads;
          } else {
            chunk_offsets.insert(range.offset);
          }
        }
        EXPECT_EQ(chunk_offsets, expected_offsets);
        if (threads == 1 || test.inner_chunks.size() == 1) {
          // One index read per shard touched: exactly the index plus the chunks' bytes.
          EXPECT_EQ(index_reads, 1);
          EXPECT_EQ(store->bytes(), index_bytes + chunk_bytes);
        } else {
          EXPECT_GE(index_reads, 1);
        }
      }
    }
    // A whole shard: its index, then every stored inner chunk: the file's size exactly.
    store->Reset();
    EXPECT_TRUE(SameArray(array.ReadBlock(Shape{0, 0}), data));
    EXPECT_EQ(store->bytes(), shard.size());
    const auto stored_count =
        std::ranges::count_if(entries, [](const ShardEntry& entry) { return !entry.empty(); });
    EXPECT_EQ(stored_count, 255);
    EXPECT_EQ(static_cast<std::int64_t>(store->ranges().size()), 1 + stored_count);
  }
}

// ---- memory figures ---------------------------------------------------------------------

// The peak bytes of Buffers allocated while `work` runs on this thread.
template <typename Work>
std::int64_t PeakBufferBytes(Work&& work) {
  const auto account = std::make_shared<MemoryAccount>();
  {
    ScopedMemoryAccount scope(account);
    work();
  }
  EXPECT_EQ(account->live_bytes(), 0) << "buffers outlived the call";
  return account->peak_bytes();
}

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

TEST(ZarrV3Memory, ShardedScratchFiguresBoundWhatReadsAndWritesHold) {
  TempDir dir("zarr-v3-memory");
  std::mt19937_64 rng(testing::TestSeed() + 3);
  struct Case {
    std::string name;
    std::optional<CodecConfig> compressor;
    bool nested;  // shards of 256 x 256 inner shards of the 64 x 64 inner chunks
    bool tight;   // uncompressed: the figures must also be close to what is measured
  };
  const std::vector<Case> cases = {
      {"uncompressed", std::nullopt, false, true},
      {"uncompressed_nested", std::nullopt, true, true},
      {"zstd", ParseCodecSpec("zstd"), false, false},
      {"blosc_nested", ParseCodecSpec("blosc:lz4"), true, false},
  };
  for (const Case& test : cases) {
    SCOPED_TRACE(test.name);
    // 1024 x 1024 float64 (8 MiB) in shards of 512 x 512 (2 MiB) of 64 x 64 inner chunks.
    const std::shared_ptr<DirectoryStore> store = DirectoryStore::Open(dir.path() / test.name);
    ZarrMetadata metadata =
        MakeV3Metadata({1024, 1024}, {64, 64}, float64, test.compressor, Shape{512, 512});
    if (test.nested) {
      auto middle = std::make_shared<ZarrSharding>(*metadata.codecs.sharding);
      middle->chunk_shape = {256, 256};
      middle->codecs = ZarrCodecChain{};
      middle->codecs.sharding = metadata.codecs.sharding;  // the 64 x 64 inner chunks
      metadata.codecs.sharding = middle;
    }
    const ZarrArray array = ZarrArray::Create(store, "", metadata);
    NDArray data({1024, 1024}, float64);
    for (double& value : data.mutable_data<double>()) {
      value = std::round(std::normal_distribution<double>(280.0, 5.0)(rng) * 100) / 100;
    }
    for (Index linear = 0; linear < array.grid().num_blocks(); ++linear) {
      const Shape block = array.grid().BlockIndex(linear);
      const NDArray part = Slice(data, array.grid().BlockRegion(block));  // not charged
      const std::int64_t measured = PeakBufferBytes([&] { array.WriteBlock(block, part); });
      const std::int64_t projected = array.WriteBlockScratchBytes(block);
      EXPECT_LE(measured, projected + part.nbytes()) << "write of block " << ShapeToString(block);
      if (test.tight) {
        EXPECT_LE(projected, 2 * measured + kMiB) << "write of block " << ShapeToString(block);
      }
    }
    // The largest stored inner chunk, from the shards' indexes (one level).
    std::int64_t largest_inner = array.MaxStoredChunkBytes();
    if (!test.nested) {
      largest_inner = 0;
      const ShardIndexLayout layout{.entries = 64, .checksum = true, .at_end = true};
      for (Index linear = 0; linear < array.grid().num_blocks(); ++linear) {
        const Buffer shard = *store->Get(array.ChunkKey(array.grid().BlockIndex(linear)));
        for (const ShardEntry& entry : HandDecodedIndex(shard.span(), layout)) {
          if (!entry.empty()) {
            largest_inner = std::max(largest_inner, static_cast<std::int64_t>(entry.nbytes));
          }
        }
      }
    }
    for (const Region& region : std::vector<Region>{{{0, 0}, {1024, 1024}},
                                                    {{512, 0}, {512, 512}},
                                                    {{64, 128}, {64, 64}},
                                                    {{100, 200}, {700, 50}},
                                                    {{3, 5}, {1, 1}}}) {
      const std::int64_t result_bytes = ShapeSize(region.shape) * 8;
      std::optional<NDArray> out;
      const std::int64_t measured = PeakBufferBytes([&] {
        out.emplace(array.ReadRegion(region, 1));
        out.reset();
      });
      const std::int64_t projected = array.ReadRegionScratchBytes(region, largest_inner);
      EXPECT_LE(measured, projected + result_bytes) << RegionText(region);
      if (test.tight) {
        EXPECT_LE(projected + result_bytes, 2 * measured + kMiB) << RegionText(region);
      }
      EXPECT_TRUE(SameArray(array.ReadRegion(region, 1), Slice(data, region)))
          << RegionText(region);
    }
  }
}

// The array ReadRegionInto and WriteBlockStrided are tested on: its shape, its values
// and its layouts (raw, compressed and sharded chunks).
const Shape kPlacedShape = {37, 53};

std::vector<std::pair<std::string, ZarrMetadata>> PlacedLayouts() {
  ZarrMetadata v2;
  v2.shape = kPlacedShape;
  v2.chunks = {8, 11};
  v2.dtype = float64;
  ZarrMetadata v2_blosc = v2;
  v2_blosc.compressor = ParseCodecSpec("blosc:lz4");
  return {
      {"v2 raw", v2},
      {"v2 blosc", v2_blosc},
      {"v3 sharded zstd",
       MakeV3Metadata(kPlacedShape, {4, 5}, float64, ParseCodecSpec("zstd:3"), Shape{16, 20})},
  };
}

NDArray PlacedValues() {
  NDArray data(kPlacedShape, float64);
  for (Index i = 0; i < data.size(); ++i) {
    data.mutable_data<double>()[static_cast<std::size_t>(i)] = static_cast<double>(i % 1009) + 0.5;
  }
  return data;
}

// ReadRegionInto: into the region's place in a larger array (strides not the region's)
// and into a region-shaped buffer, the values ReadRegion reads, and nothing outside the
// region's place written; for raw, compressed and sharded chunks.
TEST(ZarrReadRegionInto, WritesTheRegionsValuesAtTheirPlaceAndNothingElse) {
  std::mt19937_64 rng(testing::TestSeed() + 5);
  const Shape shape = kPlacedShape;
  const std::vector<std::pair<std::string, ZarrMetadata>> layouts = PlacedLayouts();
  const NDArray data = PlacedValues();
  for (const auto& [name, metadata] : layouts) {
    const std::shared_ptr<Store> store = MemoryStore::Create();
    const ZarrArray array = ZarrArray::Create(store, "", metadata);
    array.Write(data, 1);
    for (int trial = 0; trial < 40; ++trial) {
      const Region region = trial == 0 ? Region{{8, 11}, {8, 11}} : RandomRegion(shape, rng);
      SCOPED_TRACE(name + " " + RegionText(region));
      const NDArray expected = array.ReadRegion(region, 1);
      // Into the whole array's layout, pre-filled with a sentinel.
      NDArray whole = NDArray::Full(shape, float64, -1.0);
      const Shape strides = {shape[1] * 8, 8};
      array.ReadRegionInto(
          region, whole.mutable_bytes().data() + (region.start[0] * shape[1] + region.start[1]) * 8,
          strides);
      for (Index row = 0; row < shape[0]; ++row) {
        for (Index column = 0; column < shape[1]; ++column) {
          const bool inside = row >= region.start[0] && row < region.start[0] + region.shape[0] &&
                              column >= region.start[1] &&
                              column < region.start[1] + region.shape[1];
          const double got = whole.GetAsDouble(row * shape[1] + column);
          const double want = inside
                                  ? expected.GetAsDouble((row - region.start[0]) * region.shape[1] +
                                                         (column - region.start[1]))
                                  : -1.0;
          ASSERT_EQ(got, want) << "at " << row << ", " << column;
        }
      }
      // Into a buffer of the region's own shape.
      NDArray dense(region.shape, float64);
      array.ReadRegionInto(region, dense.mutable_bytes().data(), Shape{region.shape[1] * 8, 8});
      EXPECT_EQ(dense, expected);
    }
    NDArray target(shape, float64);
    EXPECT_THROW(
        array.ReadRegionInto(Region{{0, 0}, {2, 2}}, target.mutable_bytes().data(), Shape{8}),
        InvalidArgument);
    EXPECT_THROW(
        array.ReadRegionInto(Region{{30, 0}, {8, 2}}, target.mutable_bytes().data(), Shape{16, 8}),
        InvalidArgument);  // outside the array
  }
}

// WriteBlockStrided: every block encoded straight from its place in the whole array
// (strides not the block's) stores what WriteBlock of a copy of it stores, for raw,
// compressed and sharded chunks, edge blocks included.
TEST(ZarrWriteBlockStrided, StoresWhatWriteBlockOfACopyStores) {
  const Shape shape = kPlacedShape;
  std::vector<std::pair<std::string, ZarrMetadata>> layouts = PlacedLayouts();
  ZarrMetadata rows = layouts.front().second;
  rows.chunks = {8, 53};  // whole rows: the block's own strides are the array's
  layouts.emplace_back("v2 rows", rows);
  const NDArray data = PlacedValues();
  const Shape strides = {shape[1] * 8, 8};
  for (const auto& [name, metadata] : layouts) {
    SCOPED_TRACE(name);
    const std::shared_ptr<Store> strided_store = MemoryStore::Create();
    const std::shared_ptr<Store> copied_store = MemoryStore::Create();
    const ZarrArray strided = ZarrArray::Create(strided_store, "", metadata);
    const ZarrArray copied = ZarrArray::Create(copied_store, "", metadata);
    for (Index linear = 0; linear < strided.grid().num_blocks(); ++linear) {
      const Shape block = strided.grid().BlockIndex(linear);
      const Region region = strided.grid().BlockRegion(block);
      strided.WriteBlockStrided(
          block, data.bytes().data() + (region.start[0] * shape[1] + region.start[1]) * 8, strides);
      copied.WriteBlock(block, Slice(data, region));
    }
    EXPECT_EQ(strided.Read(1), data);
    EXPECT_EQ(strided_store->List(""), copied_store->List(""));
    for (const std::string& key : copied_store->List("")) {
      const std::optional<Buffer> got = strided_store->Get(key);
      ASSERT_TRUE(got.has_value()) << key;
      EXPECT_TRUE(std::ranges::equal(got->span(), copied_store->Get(key)->span())) << key;
    }
    EXPECT_THROW(strided.WriteBlockStrided(Shape{0, 0}, data.bytes().data(), Shape{8}),
                 InvalidArgument);
  }
}

}  // namespace
}  // namespace tessera::zarr_v3_test
