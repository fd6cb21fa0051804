// Zarr v3 arrays and groups written by zarr-python (testdata/v3, described by
// fixtures.json): read as zarr-python wrote them, chunk files and shard indexes as it laid
// them out, corrupt ones refused where the manifest says; groups listed (plain and
// consolidated) and consolidated as zarr-python does.
#include "zarr_v3_test_support.hpp"

namespace tessera::zarr_v3_test {
namespace {

// ---- zarr-python's fixtures -----------------------------------------------------------

TEST(ZarrV3Fixtures, ManifestListsTheFixturesTheseTestsExpect) {
  // A manifest that lost its entries would let the loops below pass vacuously.
  EXPECT_GE(Fixtures("array", true).size(), 30u);
  EXPECT_GE(Fixtures("array", false).size(), 10u);
  EXPECT_EQ(Fixtures("group", true).size(), 2u);
}

TEST(ZarrV3Fixtures, ValidArraysOpenWithTheManifestsMetadata) {
  for (const Json& entry : Fixtures("array", true)) {
    const auto name = entry.at("name").get<std::string>();
    SCOPED_TRACE(name);
    const FixtureArray fixture = Locate(entry);
    const ZarrArray array = ZarrArray::Open(fixture.store, fixture.path);
    const ZarrMetadata& metadata = array.metadata();
    EXPECT_EQ(metadata.zarr_format, 3);
    EXPECT_EQ(metadata.shape, ShapeOf(entry.at("shape")));
    EXPECT_EQ(metadata.dtype, DType::FromName(entry.at("read_dtype").get<std::string>()));
    EXPECT_EQ(metadata.float16_storage, entry.at("dtype") == "float16");
    EXPECT_EQ(metadata.read_chunks(), ShapeOf(entry.at("inner_chunks")));
    EXPECT_EQ(array.read_grid().chunks(), ShapeOf(entry.at("inner_chunks")));
    const std::optional<Shape> shards = ShardShape(metadata);
    if (entry.at("shards").is_null()) {
      EXPECT_FALSE(shards.has_value());
      EXPECT_FALSE(metadata.sharded());
      EXPECT_EQ(array.grid().chunks(), ShapeOf(entry.at("inner_chunks")));
    } else {
      ASSERT_TRUE(shards.has_value());
      EXPECT_EQ(*shards, ShapeOf(entry.at("shards")));
      EXPECT_EQ(array.grid().chunks(), *shards);
    }
    if (!entry.at("sharding_levels").is_null()) {
      // Outermost first: the grid's chunks, then each sharding's inner chunks.
      const Json& levels = entry.at("sharding_levels");
      ASSERT_EQ(levels.size(), 3u);
      EXPECT_EQ(metadata.chunks, ShapeOf(levels[0]));
      ASSERT_NE(metadata.codecs.sharding, nullptr);
      EXPECT_EQ(metadata.codecs.sharding->chunk_shape, ShapeOf(levels[1]));
      ASSERT_NE(metadata.codecs.sharding->codecs.sharding, nullptr);
      EXPECT_EQ(metadata.codecs.sharding->codecs.sharding->chunk_shape, ShapeOf(levels[2]));
    }
    // The top-level codecs: [transpose], bytes or sharding_indexed, then bytes-to-bytes.
    std::vector<std::string> names;
    for (const Json& codec : entry.at("codecs")) names.push_back(codec.get<std::string>());
    const bool transposed = std::ranges::find(names, "transpose") != names.end();
    EXPECT_EQ(!metadata.codecs.transpose.empty(), transposed);
    EXPECT_EQ(metadata.sharded(), std::ranges::find(names, "sharding_indexed") != names.end());
    std::vector<std::string> tail(names.begin() + (transposed ? 2 : 1), names.end());
    std::vector<std::string> ids;
    for (const CodecConfig& codec : metadata.codecs.bytes_codecs) ids.push_back(codec.id);
    EXPECT_EQ(ids, tail);
  }
}

TEST(ZarrV3Fixtures, ValidArraysReadTheRawValues) {
  std::mt19937_64 rng(testing::TestSeed());
  for (const Json& entry : Fixtures("array", true)) {
    SCOPED_TRACE(entry.at("name").get<std::string>());
    const FixtureArray fixture = Locate(entry);
    const ZarrArray array = ZarrArray::Open(fixture.store, fixture.path);
    const NDArray expected = RawValues(entry);
    EXPECT_TRUE(SameArray(array.Read(1), expected));
    EXPECT_TRUE(SameArray(array.Read(4), expected));
    for (Index linear = 0; linear < array.grid().num_blocks(); ++linear) {
      const Shape block = array.grid().BlockIndex(linear);
      EXPECT_TRUE(
          SameArray(array.ReadBlock(block), Slice(expected, array.grid().BlockRegion(block))))
          << "block " << ShapeToString(block);
    }
    // Every inner chunk alone, then random regions on 1 and 3 threads.
    const ChunkGrid read_grid = array.read_grid();
    for (Index linear = 0; linear < read_grid.num_blocks(); ++linear) {
      const Region region = read_grid.BlockRegion(read_grid.BlockIndex(linear));
      EXPECT_TRUE(SameArray(array.ReadRegion(region, 1), Slice(expected, region)))
          << RegionText(region);
    }
    for (int trial = 0; trial < 20; ++trial) {
      const Region region = RandomRegion(expected.shape(), rng);
      const ::testing::AssertionResult same =
          SameArray(array.ReadRegion(region, 1 + 2 * (trial % 2)), Slice(expected, region));
      EXPECT_TRUE(same) << RegionText(region);
      if (!same) break;  // one failing region says enough; the other fixtures still run
    }
  }
}

TEST(ZarrV3Fixtures, StoredChunksAreTheOnesZarrPythonWrote) {
  for (const Json& entry : Fixtures("array", true)) {
    SCOPED_TRACE(entry.at("name").get<std::string>());
    const FixtureArray fixture = Locate(entry);
    const ZarrArray array = ZarrArray::Open(fixture.store, fixture.path);
    std::set<std::string> stored;
    for (const Json& key : entry.at("stored_keys")) {
      stored.insert(JoinKey(fixture.path, key.get<std::string>()));
    }
    EXPECT_EQ(array.CountStoredChunks().count, static_cast<Index>(stored.size()));
    for (Index linear = 0; linear < array.grid().num_blocks(); ++linear) {
      const Shape block = array.grid().BlockIndex(linear);
      const std::string key = array.ChunkKey(block);
      const std::optional<std::int64_t> size = array.StoredChunkSize(block);
      EXPECT_EQ(size.has_value(), stored.contains(key)) << key;
      if (size) {
        EXPECT_EQ(*size, static_cast<std::int64_t>(fs::file_size(fixture.root / key)));
        EXPECT_LE(*size, array.MaxStoredChunkBytes()) << key;
      }
    }
  }
}

TEST(ZarrV3Fixtures, ShardIndexesAgreeWithZarrPythonsShards) {
  int shards_checked = 0;
  for (const Json& entry : Fixtures("array", true)) {
    if (entry.at("shards").is_null() || !entry.at("sharding_levels").is_null()) continue;
    SCOPED_TRACE(entry.at("name").get<std::string>());
    const FixtureArray fixture = Locate(entry);
    const ZarrArray array = ZarrArray::Open(fixture.store, fixture.path);
    const ZarrSharding& sharding = *array.metadata().codecs.sharding;
    const ShardIndexLayout layout = LayoutOf(sharding, array.metadata().chunks);
    const std::vector<Index> order =
        zarr_detail::ShardWriteOrder(InnerGridShape(sharding, array.metadata().chunks));
    Index empty_entries = 0;
    for (const Json& key_json : entry.at("stored_keys")) {
      const std::string key = JoinKey(fixture.path, key_json.get<std::string>());
      const std::optional<ShardIndex> index = ShardIndex::Read(*fixture.store, key, layout);
      ASSERT_TRUE(index.has_value()) << key;
      const std::string bytes = ReadFile(fixture.root / key);
      const std::vector<ShardEntry> by_hand =
          HandDecodedIndex(std::as_bytes(std::span(bytes.data(), bytes.size())), layout);
      ASSERT_EQ(index->size(), static_cast<Index>(by_hand.size()));
      // zarr-python lays stored inner chunks out back to back in its Morton order, after
      // the index when the index is at the start.
      std::uint64_t next = layout.at_end ? 0 : static_cast<std::uint64_t>(layout.IndexBytes());
      for (const Index inner : order) {
        const ShardEntry& entry_read = index->entry(inner);
        EXPECT_EQ(entry_read.offset, by_hand[static_cast<std::size_t>(inner)].offset);
        EXPECT_EQ(entry_read.nbytes, by_hand[static_cast<std::size_t>(inner)].nbytes);
        if (entry_read.empty()) {
          ++empty_entries;
          continue;
        }
        EXPECT_EQ(entry_read.offset, next) << key << " inner chunk " << inner;
        next = entry_read.offset + entry_read.nbytes;
      }
      ++shards_checked;
    }
    EXPECT_EQ(empty_entries, entry.at("empty_inner_chunks").get<Index>());
  }
  EXPECT_GE(shards_checked, 10);
}

TEST(ZarrV3Fixtures, RewritingUncompressedFixturesGivesZarrPythonsBytes) {
  // With no compressor the encoding is fully determined: Tessera writing the same values
  // with the same metadata must store the same bytes, shard indexes included.
  int arrays_checked = 0;
  for (const Json& entry : Fixtures("array", true)) {
    const FixtureArray fixture = Locate(entry);
    const ZarrArray source = ZarrArray::Open(fixture.store, fixture.path);
    std::set<std::string> ids;
    CollectCodecIds(source.metadata().codecs, ids);
    if (ids.contains("blosc") || ids.contains("zstd") || ids.contains("gzip")) continue;
    // Hex fill values were edited into zarr.json after zarr-python wrote the chunks with
    // the numerically equal fill, so its edge padding holds the canonical NaN where
    // Tessera pads with the document's bits (padding is never read either way).
    if (Contains(entry.at("fill_value").get<std::string>(), "0x")) continue;
    SCOPED_TRACE(entry.at("name").get<std::string>());
    const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
    const ZarrArray copy = ZarrArray::Create(store, "", source.metadata(), source.attributes());
    copy.Write(RawValues(entry), 2);
    std::set<std::string> written;
    for (const std::string& key : store->List("c")) written.insert(key);
    for (const std::string& key : store->List("0")) written.insert(key);
    for (const Json& key_json : entry.at("stored_keys")) {
      const auto key = key_json.get<std::string>();
      const std::optional<Buffer> mine = store->Get(key);
      ASSERT_TRUE(mine.has_value()) << key;
      EXPECT_EQ(BytesOf(mine->span()), BytesOf(ReadFile(fixture.root / fixture.path / key))) << key;
      written.erase(key);
    }
    // zarr-python leaves out chunks equal to the fill value; Tessera leaves out shards
    // (and inner chunks) equal to it, and writes every unsharded chunk.
    if (source.metadata().sharded()) {
      EXPECT_TRUE(written.empty()) << "extra shard " << *written.begin();
    }
    ++arrays_checked;
  }
  EXPECT_GE(arrays_checked, 8);
}

TEST(ZarrV3Fixtures, InvalidFixturesFailWhereTheManifestSays) {
  for (const Json& entry : Fixtures("array", false)) {
    const auto name = entry.at("name").get<std::string>();
    SCOPED_TRACE(name);
    const FixtureArray fixture = Locate(entry);
    const std::string expected = Lower(entry.at("expect_error").get<std::string>());
    const auto error_on = entry.at("error_on").get<std::string>();
    ASSERT_TRUE(error_on == "open" || error_on == "read") << error_on;
    if (error_on == "open") {
      const std::string message = MessageOf<FormatError>([&] { ZarrArray::Open(fixture.store); });
      EXPECT_TRUE(Contains(Lower(message), expected)) << message;
      EXPECT_TRUE(Contains(message, (fixture.root / "zarr.json").string())) << message;
      continue;
    }
    std::optional<ZarrArray> array;
    ASSERT_NO_THROW(array.emplace(ZarrArray::Open(fixture.store))) << "the metadata is valid";
    for (const int threads : {1, 4}) {
      const std::string message = MessageOf<FormatError>([&] { array->Read(threads); });
      EXPECT_TRUE(Contains(Lower(message), expected)) << message;
      // The message names the chunk (or shard) file.
      bool names_a_file = false;
      for (const Json& key : entry.at("stored_keys")) {
        names_a_file =
            names_a_file || Contains(message, (fixture.root / key.get<std::string>()).string());
      }
      EXPECT_TRUE(names_a_file) << message;
    }
  }
}

TEST(ZarrV3Fixtures, NanPayloadOfAHexFillValueIsKept) {
  // "0x7fc00001" is a NaN whose payload zarr-python keeps: chunks never written read as
  // exactly those bits.
  const FixtureArray fixture = Locate(
      Json{{"name", "float32_hex_fill_nan_payload"}, {"path", "float32_hex_fill_nan_payload"}});
  const NDArray values = ZarrArray::Open(fixture.store).ReadBlock(Shape{0, 0});  // not stored
  const std::uint32_t fill = 0x7FC00001u;
  NDArray expected(values.shape(), float32);
  for (float& value : expected.mutable_data<float>()) value = std::bit_cast<float>(fill);
  EXPECT_TRUE(SameArray(values, expected));
}

// ---- groups -----------------------------------------------------------------------------

void ExpectFixtureGroupMembers(const ZarrGroupMembers& members) {
  EXPECT_EQ(members.arrays, (std::vector<std::string>{"a", "b", "sub/c"}));
  EXPECT_EQ(members.groups, (std::vector<std::string>{"sub"}));
}

TEST(ZarrV3Groups, ListsPlainAndConsolidatedGroups) {
  for (const Json& entry : Fixtures("group", true)) {
    const auto name = entry.at("name").get<std::string>();
    SCOPED_TRACE(name);
    const auto store = DirectoryStore::Open(V3Dir() / name, {.create = false});
    ExpectFixtureGroupMembers(ListZarrGroup(*store));
    // The manifest's members too.
    for (const auto& [member, kind] : entry.at("members").items()) {
      EXPECT_EQ(IsZarrGroup(*store, member), kind == "group") << member;
    }
    EXPECT_TRUE(IsZarrGroup(*store, ""));
    EXPECT_EQ(HasConsolidatedMetadata(*store), entry.at("consolidated").get<bool>());
    EXPECT_FALSE(HasConsolidatedMetadata(*store, "sub"));
    EXPECT_EQ(ListZarrGroup(*store, "sub").arrays, std::vector<std::string>{"c"});
    EXPECT_TRUE(ListZarrGroup(*store, "sub").groups.empty());
  }
}

TEST(ZarrV3Groups, ConsolidatingAPlainGroupWritesWhatZarrPythonWrites) {
  TempDir dir("zarr-v3-group");
  const fs::path copy = dir.path() / "group";
  fs::copy(V3Dir() / "group_plain", copy, fs::copy_options::recursive);
  const std::shared_ptr<DirectoryStore> store = DirectoryStore::Open(copy);
  ASSERT_FALSE(HasConsolidatedMetadata(*store));
  ConsolidateZarrGroup(*store);
  EXPECT_TRUE(HasConsolidatedMetadata(*store));
  EXPECT_FALSE(HasConsolidatedMetadata(*store, "sub"));
  ExpectFixtureGroupMembers(ListZarrGroup(*store));

  // The document: the group's own keys kept, and the members' documents as zarr-python's
  // consolidated fixture holds them (a member group's own consolidated_metadata aside).
  const Json mine = Json::parse(ReadFile(copy / "zarr.json"));
  const Json plain = Json::parse(ReadFile(V3Dir() / "group_plain" / "zarr.json"));
  const Json theirs = Json::parse(ReadFile(V3Dir() / "group_consolidated" / "zarr.json"));
  EXPECT_EQ(mine.at("attributes"), plain.at("attributes"));
  EXPECT_EQ(mine.at("node_type"), "group");
  EXPECT_EQ(mine.at("zarr_format"), 3);
  const Json& consolidated = mine.at("consolidated_metadata");
  EXPECT_EQ(consolidated.at("kind"), "inline");
  EXPECT_EQ(consolidated.at("must_understand"), false);
  const Json& members = consolidated.at("metadata");
  const Json& their_members = theirs.at("consolidated_metadata").at("metadata");
  ASSERT_EQ(members.size(), their_members.size());
  for (const auto& [name, document] : their_members.items()) {
    ASSERT_TRUE(members.contains(name)) << name;
    Json expected = document;
    Json found = members.at(name);
    expected.erase("consolidated_metadata");
    found.erase("consolidated_metadata");
    EXPECT_EQ(found, expected) << name;
  }

  // The arrays read as before.
  for (const Json& entry : Fixtures("array", true)) {
    const auto name = entry.at("name").get<std::string>();
    if (!name.starts_with("group_plain__")) continue;
    const FixtureArray fixture = Locate(entry);
    EXPECT_TRUE(SameArray(ZarrArray::Open(store, fixture.path).Read(), RawValues(entry))) << name;
  }
  // The members now come from the consolidated metadata, not from a walk of the store.
  fs::remove_all(copy / "b");
  ExpectFixtureGroupMembers(ListZarrGroup(*store));
}

TEST(ZarrV3Groups, CreateZarrGroupWritesAV3GroupDocument) {
  const std::shared_ptr<MemoryStore> store = MemoryStore::Create();
  CreateZarrGroup(*store, "", 3);
  CreateZarrGroup(*store, "inner", 3);
  const ZarrArray array =
      ZarrArray::Create(store, "inner/x", MakeV3Metadata({3}, {2}, int8, std::nullopt));
  EXPECT_TRUE(IsZarrGroup(*store, ""));
  EXPECT_TRUE(IsZarrGroup(*store, "inner"));
  EXPECT_FALSE(IsZarrGroup(*store, "inner/x"));
  const Json document = Json::parse(BytesOf(store->Get("zarr.json")->span()));
  EXPECT_EQ(document.at("zarr_format"), 3);
  EXPECT_EQ(document.at("node_type"), "group");
  const ZarrGroupMembers members = ListZarrGroup(*store);
  EXPECT_EQ(members.arrays, std::vector<std::string>{"inner/x"});
  EXPECT_EQ(members.groups, std::vector<std::string>{"inner"});
  EXPECT_THROW(ZarrArray::Open(store, "inner"), FormatError);  // a group, not an array
}

}  // namespace
}  // namespace tessera::zarr_v3_test
