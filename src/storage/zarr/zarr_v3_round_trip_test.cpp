// Zarr v3 round trips through ZarrArray: random shapes, dtypes (float16 storage too),
// codec chains, shardings (nested) and key encodings; what shards hold (fill left out,
// zarr-python's order); v2 beside v3; metadata built in code; float16 fill values.
#include "zarr_v3_test_support.hpp"

namespace tessera::zarr_v3_test {
namespace {

TEST(ZarrV3RoundTrip, RandomShapesDTypesCodecsShardingsAndKeyEncodings) {
  std::mt19937_64 rng(testing::TestSeed());
  TempDir dir("zarr-v3-roundtrip");
  int sharded = 0;
  int nested = 0;
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const ZarrMetadata metadata = RandomV3Metadata(rng);
    sharded += metadata.sharded() ? 1 : 0;
    nested += metadata.sharded() && metadata.codecs.sharding->codecs.sharding != nullptr ? 1 : 0;
    const std::shared_ptr<Store> store =
        trial % 10 == 0
            ? std::shared_ptr<Store>(DirectoryStore::Open(dir.path() / std::to_string(trial)))
            : std::shared_ptr<Store>(MemoryStore::Create());
    CheckV3RoundTrip(store, trial % 3 == 0 ? "group/array" : "", metadata,
                     RandomAttributes(metadata.shape.size(), rng), rng);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(sharded, 100);
  EXPECT_GT(nested, 50);
}

TEST(ZarrV3RoundTrip, MakeV3MetadataArraysRoundTrip) {
  std::mt19937_64 rng(testing::TestSeed() + 1);
  const std::vector<std::optional<CodecConfig>> compressors = {
      std::nullopt, ParseCodecSpec("blosc:lz4"), ParseCodecSpec("zstd"), ParseCodecSpec("gzip")};
  for (const DType dtype : AllDTypes()) {
    for (const std::optional<CodecConfig>& compressor : compressors) {
      for (const bool checksum : {false, true}) {
        for (const bool sharded : {false, true}) {
          const ZarrMetadata metadata =
              MakeV3Metadata({11, 9}, {3, 2}, dtype, compressor,
                             sharded ? std::optional<Shape>(Shape{6, 4}) : std::nullopt, checksum);
          CheckV3RoundTrip(MemoryStore::Create(), "", metadata, ZarrAttributes{}, rng);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// ---- shard contents ---------------------------------------------------------------------

TEST(ZarrV3Shards, FillInnerChunksAndFillShardsAreNotStored) {
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  ZarrMetadata metadata = MakeV3Metadata({8, 8}, {2, 2}, int32, std::nullopt, Shape{4, 4});
  metadata.fill_value = std::int64_t{5};
  const ZarrArray array = ZarrArray::Create(store, "", metadata);
  NDArray data = NDArray::Full({8, 8}, int32, 5);
  data.mutable_data<std::int32_t>()[0 * 8 + 2] = 7;  // shard (0, 0), inner chunk (0, 1)
  data.mutable_data<std::int32_t>()[7 * 8 + 7] = 9;  // shard (1, 1), inner chunk (1, 1)
  array.Write(data, 2);
  EXPECT_TRUE(SameArray(array.Read(), data));
  EXPECT_FALSE(array.StoredChunkSize(Shape{0, 1}).has_value());
  EXPECT_FALSE(array.StoredChunkSize(Shape{1, 0}).has_value());
  EXPECT_EQ(store->List("c"), (std::vector<std::string>{"c/0/0", "c/1/1"}));
  // Each stored shard: one 16-byte inner chunk, then the 4-entry index and its crc32c.
  const ShardIndexLayout layout{
      .entries = 4, .big_endian = false, .checksum = true, .at_end = true};
  for (const auto& [key, stored_entry, value] :
       {std::tuple{"c/0/0", 1, 7}, std::tuple{"c/1/1", 3, 9}}) {
    SCOPED_TRACE(key);
    ASSERT_EQ(array.StoredChunkSize(key == std::string("c/0/0") ? Shape{0, 0} : Shape{1, 1}),
              16 + 4 * 16 + 4);
    const Buffer shard = *store->Get(key);
    const std::vector<ShardEntry> entries = HandDecodedIndex(shard.span(), layout);
    for (std::size_t entry = 0; entry < entries.size(); ++entry) {
      if (static_cast<int>(entry) == stored_entry) {
        EXPECT_EQ(entries[entry].offset, 0u);
        EXPECT_EQ(entries[entry].nbytes, 16u);
      } else {
        EXPECT_EQ(entries[entry].offset, kEmptyEntry) << entry;
        EXPECT_EQ(entries[entry].nbytes, kEmptyEntry) << entry;
      }
    }
    // The inner chunk, C order little-endian: the value at its corner, fill elsewhere.
    std::vector<std::int32_t> inner(4);
    std::memcpy(inner.data(), shard.data(), 16);
    EXPECT_EQ(inner, (key == std::string("c/0/0") ? std::vector<std::int32_t>{7, 5, 5, 5}
                                                  : std::vector<std::int32_t>{5, 5, 5, 9}));
  }
  // A shard of fill values only, written over a stored one, removes it.
  array.WriteBlock(Shape{0, 0}, NDArray::Full({4, 4}, int32, 5));
  EXPECT_FALSE(array.StoredChunkSize(Shape{0, 0}).has_value());
  EXPECT_EQ(store->List("c"), std::vector<std::string>{"c/1/1"});
  data.mutable_data<std::int32_t>()[2] = 5;
  EXPECT_TRUE(SameArray(array.Read(), data));
  EXPECT_EQ(array.CountStoredChunks().count, 1);
}

TEST(ZarrV3Shards, InnerChunksPastTheEdgeAreNotStored) {
  // 5 x 6 in shards of 4 x 4 and inner chunks of 2 x 2, fill 0, no element 0: the edge
  // shards hold inner chunks wholly past the array's edge, which are left out.
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  const ZarrMetadata metadata = MakeV3Metadata({5, 6}, {2, 2}, uint16, std::nullopt, Shape{4, 4});
  const ZarrArray array = ZarrArray::Create(store, "", metadata);
  NDArray data({5, 6}, uint16);
  for (Index element = 0; element < data.size(); ++element) {
    data.mutable_data<std::uint16_t>()[static_cast<std::size_t>(element)] =
        static_cast<std::uint16_t>(100 + element);
  }
  array.Write(data, 1);
  EXPECT_TRUE(SameArray(array.Read(), data));
  const ShardIndexLayout layout{.entries = 4, .checksum = true, .at_end = true};
  // Inner chunks (C order in the shard's 2 x 2 grid) that hold array elements.
  const std::map<std::string, std::vector<bool>> stored = {
      {"c/0/0", {true, true, true, true}},
      {"c/0/1", {true, false, true, false}},
      {"c/1/0", {true, true, false, false}},
      {"c/1/1", {true, false, false, false}},
  };
  for (const auto& [key, inside] : stored) {
    SCOPED_TRACE(key);
    const Buffer shard = *store->Get(key);
    const std::vector<ShardEntry> entries = HandDecodedIndex(shard.span(), layout);
    std::uint64_t data_bytes = 0;
    for (std::size_t entry = 0; entry < 4; ++entry) {
      EXPECT_EQ(!entries[entry].empty(), inside[entry]) << "inner chunk " << entry;
      if (!entries[entry].empty()) {
        EXPECT_EQ(entries[entry].nbytes, 8u);  // a full 2 x 2 inner chunk, padded
        data_bytes += entries[entry].nbytes;
      }
    }
    EXPECT_EQ(static_cast<std::uint64_t>(shard.size()), data_bytes + 68u);
  }
  // The corner shard's one inner chunk: row 4, columns 4 and 5, padded with the fill.
  const Buffer corner = *store->Get("c/1/1");
  std::vector<std::uint16_t> values(4);
  std::memcpy(values.data(), corner.data(), 8);
  EXPECT_EQ(values, (std::vector<std::uint16_t>{100 + 28, 100 + 29, 0, 0}));
}

TEST(ZarrV3Shards, ShardWriteOrderIsZarrPythonsMortonOrder) {
  for (const Shape& grid : std::vector<Shape>{{},
                                              {1},
                                              {7},
                                              {1, 1},
                                              {2, 2},
                                              {3, 5},
                                              {5, 6},
                                              {4, 4},
                                              {1, 9},
                                              {9, 1},
                                              {6, 1, 3},
                                              {2, 3, 4},
                                              {5, 5, 5},
                                              {2, 1, 3, 2}}) {
    EXPECT_EQ(zarr_detail::ShardWriteOrder(grid), ZarrPythonMortonOrder(grid))
        << "grid " << ShapeToString(grid);
  }
  // A hand-checked case: a 2 x 3 grid takes (0,0) (1,0) (0,1) (1,1) (0,2) (1,2).
  EXPECT_EQ(zarr_detail::ShardWriteOrder(Shape{2, 3}), (std::vector<Index>{0, 3, 1, 4, 2, 5}));
}

TEST(ZarrV3Shards, ShardsHoldTheirInnerChunksInShardWriteOrder) {
  for (const Shape& grid : std::vector<Shape>{{3}, {5, 6}, {2, 3, 5}}) {
    SCOPED_TRACE("inner grid " + ShapeToString(grid));
    Shape inner(grid.size(), 2);
    Shape shape(grid.size());
    for (std::size_t dim = 0; dim < grid.size(); ++dim) shape[dim] = grid[dim] * inner[dim];
    const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
    const ZarrArray array =
        ZarrArray::Create(store, "", MakeV3Metadata(shape, inner, int16, std::nullopt, shape));
    NDArray data(shape, int16);
    for (Index element = 0; element < data.size(); ++element) {
      data.mutable_data<std::int16_t>()[static_cast<std::size_t>(element)] =
          static_cast<std::int16_t>(1 + element);
    }
    array.Write(data, 1);
    const Index count = ShapeSize(grid);
    const Index inner_bytes = ShapeSize(inner) * 2;
    const ShardIndexLayout layout{.entries = count, .checksum = true, .at_end = true};
    const Buffer shard = *store->Get(array.ChunkKey(Shape(grid.size(), 0)));
    ASSERT_EQ(shard.size(), count * inner_bytes + layout.IndexBytes());
    const std::vector<ShardEntry> entries = HandDecodedIndex(shard.span(), layout);
    const std::vector<Index> order = ZarrPythonMortonOrder(grid);
    const ChunkGrid inner_grid(shape, inner);
    for (std::size_t position = 0; position < order.size(); ++position) {
      const ShardEntry& entry = entries[static_cast<std::size_t>(order[position])];
      EXPECT_EQ(entry.offset, position * static_cast<std::uint64_t>(inner_bytes))
          << "inner chunk " << order[position];
      EXPECT_EQ(entry.nbytes, static_cast<std::uint64_t>(inner_bytes));
      // Its bytes are that inner chunk's values, C order, little-endian.
      const NDArray expected =
          Slice(data, inner_grid.BlockRegion(inner_grid.BlockIndex(order[position])));
      EXPECT_EQ(std::memcmp(shard.data() + entry.offset, expected.bytes().data(),
                            static_cast<std::size_t>(inner_bytes)),
                0)
          << "inner chunk " << order[position];
    }
  }
}

// ---- v2 beside v3 -----------------------------------------------------------------------

TEST(ZarrV3Formats, V2ArraysStillRoundTrip) {
  TempDir dir("zarr-v2-smoke");
  std::mt19937_64 rng(testing::TestSeed() + 4);
  const std::shared_ptr<DirectoryStore> store = DirectoryStore::Open(dir.path() / "a.zarr");
  ZarrMetadata metadata;
  metadata.shape = {9, 7};
  metadata.chunks = {4, 3};
  metadata.dtype = int32;
  metadata.byte_order = ByteOrder::kBig;
  metadata.order = 'F';
  metadata.fill_value = std::int64_t{-1};
  metadata.compressor = ParseCodecSpec("zstd");
  const ZarrAttributes attributes{.dimension_names = {"y", "x"}, .other_json = R"({"a":1})"};
  NDArray data({9, 7}, int32);
  for (std::int32_t& value : data.mutable_data<std::int32_t>())
    value = static_cast<std::int32_t>(rng());
  ZarrArray::Create(store, "v", metadata, attributes).Write(data, 2);
  EXPECT_TRUE(fs::exists(dir.path() / "a.zarr" / "v" / ".zarray"));
  EXPECT_TRUE(fs::exists(dir.path() / "a.zarr" / "v" / ".zattrs"));
  EXPECT_TRUE(fs::exists(dir.path() / "a.zarr" / "v" / "2.2"));
  EXPECT_FALSE(fs::exists(dir.path() / "a.zarr" / "v" / "zarr.json"));
  const ZarrArray array = ZarrArray::Open(store, "v");
  EXPECT_EQ(array.metadata().zarr_format, 2);
  EXPECT_TRUE(array.metadata() == metadata);
  EXPECT_EQ(array.attributes(), attributes);
  EXPECT_TRUE(SameArray(array.Read(), data));
  EXPECT_EQ(array.read_grid().chunks(), metadata.chunks);
  EXPECT_FALSE(ShardShape(array.metadata()).has_value());
  EXPECT_EQ(DescribeCodecs(array.metadata()), "zstd(level 1)") << DescribeCodecs(array.metadata());
}

TEST(ZarrV3Formats, CreatingOneFormatOverTheOtherRemovesTheOthersDocuments) {
  TempDir dir("zarr-v3-over-v2");
  const fs::path root = dir.path() / "a.zarr";
  const std::shared_ptr<DirectoryStore> store = DirectoryStore::Open(root);
  CreateZarrGroup(*store, "", 3);
  CreateZarrGroup(*store, "other", 3);
  const NDArray data = NDArray::Full({9, 7}, int32, 4);
  ZarrMetadata v2;
  v2.shape = {9, 7};
  v2.chunks = {4, 3};
  v2.dtype = int32;
  ZarrArray::Create(store, "arr", v2, ZarrAttributes{.dimension_names = {"y", "x"}}).Write(data);
  ASSERT_TRUE(fs::exists(root / "arr" / ".zarray"));
  ASSERT_TRUE(fs::exists(root / "arr" / ".zattrs"));
  ASSERT_TRUE(fs::exists(root / "arr" / "0.0"));

  const ZarrMetadata v3 = MakeV3Metadata({9, 7}, {4, 3}, int32, std::nullopt, Shape{8, 6});
  const ZarrArray created = ZarrArray::Create(store, "arr", v3);
  EXPECT_FALSE(fs::exists(root / "arr" / ".zarray"));
  EXPECT_FALSE(fs::exists(root / "arr" / ".zattrs"));
  EXPECT_FALSE(fs::exists(root / "arr" / "0.0"));
  EXPECT_TRUE(fs::exists(root / "arr" / "zarr.json"));
  EXPECT_TRUE(fs::exists(root / "zarr.json"));  // the groups around it stay
  EXPECT_TRUE(fs::exists(root / "other" / "zarr.json"));
  EXPECT_EQ(ZarrArray::Open(store, "arr").metadata().zarr_format, 3);
  EXPECT_TRUE(SameArray(ZarrArray::Open(store, "arr").Read(), NDArray::Zeros({9, 7}, int32)));
  created.Write(data);
  ASSERT_TRUE(fs::exists(root / "arr" / "c" / "1" / "1"));

  ZarrArray::Create(store, "arr", v2);
  EXPECT_FALSE(fs::exists(root / "arr" / "zarr.json"));
  EXPECT_FALSE(fs::exists(root / "arr" / "c" / "1" / "1"));
  EXPECT_FALSE(fs::exists(root / "arr" / ".zattrs"));
  EXPECT_TRUE(fs::exists(root / "arr" / ".zarray"));
  EXPECT_TRUE(fs::exists(root / "other" / "zarr.json"));
  EXPECT_EQ(ZarrArray::Open(store, "arr").metadata().zarr_format, 2);
  EXPECT_TRUE(SameArray(ZarrArray::Open(store, "arr").Read(), NDArray::Zeros({9, 7}, int32)));
  EXPECT_TRUE(IsZarrGroup(*store, ""));
}

// ---- metadata built in code -------------------------------------------------------------

TEST(ZarrV3Metadata, MakeV3MetadataRefusesWhatV3CannotHold) {
  EXPECT_THROW(MakeV3Metadata({8, 8}, {2, 2}, float32, std::nullopt, Shape{5, 4}), InvalidArgument);
  EXPECT_THROW(MakeV3Metadata({8, 8}, {2, 3}, float32, std::nullopt, Shape{4, 4}), InvalidArgument);
  EXPECT_THROW(MakeV3Metadata({8, 8}, {2, 2}, float32, std::nullopt, Shape{4}), InvalidArgument);
  EXPECT_THROW(MakeV3Metadata({8, 8}, {0, 2}, float32, std::nullopt, Shape{4, 4}), InvalidArgument);
  const std::string lz4 =
      MessageOf<InvalidArgument>([] { MakeV3Metadata({8}, {2}, float32, ParseCodecSpec("lz4")); });
  EXPECT_TRUE(Contains(lz4, "lz4")) << lz4;
  EXPECT_THROW(MakeV3Metadata({8}, {2}, float32, ParseCodecSpec("zlib")), InvalidArgument);

  // What it makes: zarr-python's layout.
  const ZarrMetadata made =
      MakeV3Metadata({8, 8}, {2, 2}, int16, ParseCodecSpec("blosc:zstd"), Shape{4, 8}, true);
  EXPECT_EQ(made.zarr_format, 3);
  EXPECT_EQ(made.key_encoding, ChunkKeyEncoding::kDefault);
  EXPECT_EQ(made.dimension_separator, '/');
  EXPECT_EQ(made.chunks, (Shape{4, 8}));
  EXPECT_EQ(ShardShape(made), (Shape{4, 8}));
  EXPECT_EQ(made.read_chunks(), (Shape{2, 2}));
  ASSERT_NE(made.codecs.sharding, nullptr);
  const ZarrSharding& sharding = *made.codecs.sharding;
  EXPECT_TRUE(sharding.index_at_end);
  EXPECT_EQ(sharding.index_codecs.endian, ByteOrder::kLittle);
  ASSERT_EQ(sharding.index_codecs.bytes_codecs.size(), 1u);
  EXPECT_EQ(sharding.index_codecs.bytes_codecs[0].id, "crc32c");
  ASSERT_EQ(sharding.codecs.bytes_codecs.size(), 2u);
  EXPECT_EQ(sharding.codecs.bytes_codecs[0].id, "blosc");
  EXPECT_EQ(sharding.codecs.bytes_codecs[0].typesize, 2);
  EXPECT_EQ(sharding.codecs.bytes_codecs[1].id, "crc32c");
  EXPECT_EQ(sharding.codecs.endian, ByteOrder::kLittle);
  EXPECT_NO_THROW(ZarrArray::Create(MemoryStore::Create(), "", made));
}

TEST(ZarrV3Metadata, CreateRefusesChainsV3CannotWriteAndWritesNothing) {
  const ZarrMetadata base = MakeV3Metadata({8, 8}, {2, 2}, float32, std::nullopt, Shape{4, 4});
  auto with_sharding = [&](const std::function<void(ZarrSharding&)>& edit) {
    ZarrMetadata metadata = base;
    auto sharding = std::make_shared<ZarrSharding>(*base.codecs.sharding);
    edit(*sharding);
    metadata.codecs.sharding = sharding;
    return metadata;
  };
  std::vector<std::pair<std::string, ZarrMetadata>> cases;
  cases.emplace_back("inner chunks not dividing the shard", with_sharding([](ZarrSharding& s) {
                       s.chunk_shape = {3, 3};
                     }));
  cases.emplace_back("lz4 in the inner chain", with_sharding([](ZarrSharding& s) {
                       s.codecs.bytes_codecs.push_back(CodecConfig{.id = "lz4"});
                     }));
  cases.emplace_back("gzip in the index codecs", with_sharding([](ZarrSharding& s) {
                       s.index_codecs.bytes_codecs.insert(s.index_codecs.bytes_codecs.begin(),
                                                          CodecConfig{.id = "gzip", .level = 1});
                     }));
  {
    ZarrMetadata metadata = base;
    metadata.codecs.bytes_codecs.push_back(CodecConfig{.id = "gzip", .level = 1});
    cases.emplace_back("a bytes-to-bytes codec after sharding_indexed", metadata);
  }
  {
    ZarrMetadata metadata = base;
    metadata.codecs.transpose = {1, 0};
    cases.emplace_back("a transpose before sharding_indexed", metadata);
  }
  {
    // Nested five deep: beyond the depth Tessera reads.
    ZarrMetadata metadata = base;
    metadata.chunks = {32, 32};
    ZarrCodecChain chain;  // the leaf: bytes; then each level around the one before
    for (const Index extent : {1, 2, 4, 8, 16}) {
      auto level = std::make_shared<ZarrSharding>();
      level->chunk_shape = {extent, extent};
      level->codecs = chain;
      level->index_codecs.bytes_codecs.push_back(CodecConfig{.id = "crc32c"});
      chain = ZarrCodecChain{};
      chain.sharding = level;
    }
    metadata.codecs = chain;
    cases.emplace_back("sharding nested five deep", metadata);
  }
  {
    ZarrMetadata metadata = base;
    metadata.dtype = float64;
    metadata.float16_storage = true;
    cases.emplace_back("float16 storage of float64", metadata);
  }
  for (const auto& [what, metadata] : cases) {
    SCOPED_TRACE(what);
    const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
    EXPECT_THROW(ZarrArray::Create(store, "x", metadata), InvalidArgument);
    EXPECT_TRUE(store->List("").empty());
  }
}

// ---- float16 fill values ----------------------------------------------------------------

TEST(ZarrV3Float16, AFillValueFloat16CannotHoldReadsAsItsFloat16Value) {
  // zarr-python holds a float16 array's fill value as float16: 0.1 is 0.0999755859375,
  // and chunks never written read as that.
  constexpr float kTenthAsHalf = 0.0999755859375f;
  {
    ZarrMetadata metadata = MakeV3Metadata({4}, {2}, float32, std::nullopt);
    metadata.float16_storage = true;
    metadata.fill_value = 0.1;
    const ZarrArray array = ZarrArray::Create(MemoryStore::Create(), "", metadata);
    const NDArray values = array.Read();
    for (const float value : values.data<float>()) EXPECT_EQ(value, kTenthAsHalf);
  }
  {
    // A sharded one: an inner chunk of values equal to the (float16) fill is left out,
    // and must read back as written.
    ZarrMetadata metadata = MakeV3Metadata({4, 4}, {2, 2}, float32, std::nullopt, Shape{4, 4});
    metadata.float16_storage = true;
    metadata.fill_value = 0.1;
    const ZarrArray array = ZarrArray::Create(MemoryStore::Create(), "", metadata);
    NDArray data = NDArray::Full({4, 4}, float32, 2.0);
    FillRegion(data, Region{{0, 0}, {2, 2}}, std::as_bytes(std::span(&kTenthAsHalf, 1)));
    array.Write(data);
    EXPECT_TRUE(SameArray(array.Read(), data));
  }
}

}  // namespace
}  // namespace tessera::zarr_v3_test
