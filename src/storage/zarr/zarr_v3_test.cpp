// Zarr v3 and sharding through ZarrArray: zarr-python's fixtures (testdata/v3, described by
// fixtures.json) read as zarr-python wrote them, corrupt ones refused where the manifest
// says, groups listed and consolidated, random round trips over dtypes, codec chains,
// shardings and key encodings, shard contents (fill left out, zarr-python's order), reads
// of one inner chunk counted byte by byte, and the scratch figures against measured
// memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "shard_chunk_codec.hpp"
#include "temp_dir.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/memory_account.hpp"
#include "tessera/storage/codec.hpp"
#include "tessera/storage/directory_store.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/shard_index.hpp"
#include "tessera/storage/zarr_array.hpp"
#include "tessera/storage/zarr_group.hpp"
#include "tessera/storage/zarr_metadata.hpp"
#include "test_seed.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using testing::TempDir;

constexpr std::uint64_t kEmptyEntry = ~std::uint64_t{0};

// ---- helpers --------------------------------------------------------------------------

const fs::path& V3Dir() {
  static const fs::path dir = fs::path(TESSERA_ZARR_TESTDATA) / "v3";
  return dir;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

const Json& Manifest() {
  static const Json manifest = Json::parse(ReadFile(V3Dir() / "fixtures.json"));
  return manifest;
}

// The manifest's entries of `kind` ("array" or "group"), valid (no expect_error) or not.
std::vector<Json> Fixtures(const std::string& kind, bool valid) {
  std::vector<Json> out;
  for (const Json& entry : Manifest().at("fixtures")) {
    if (entry.at("kind") == kind && entry.at("expect_error").is_null() == valid) {
      out.push_back(entry);
    }
  }
  return out;
}

Shape ShapeOf(const Json& value) {
  Shape shape;
  for (const Json& extent : value) shape.push_back(extent.get<Index>());
  return shape;
}

std::string Lower(std::string text) {
  std::ranges::transform(text, text.begin(), [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  return text;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::vector<std::byte> BytesOf(const std::string& text) {
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

std::vector<std::byte> BytesOf(std::span<const std::byte> bytes) {
  return std::vector<std::byte>(bytes.begin(), bytes.end());
}

// A fixture array's store and path: a group member's store is its group's folder.
struct FixtureArray {
  fs::path root;
  std::string path;
  std::shared_ptr<DirectoryStore> store;
};

FixtureArray Locate(const Json& entry, const fs::path& base = V3Dir()) {
  const auto relative = entry.at("path").get<std::string>();
  FixtureArray fixture;
  if (Contains(entry.at("name").get<std::string>(), "__")) {
    const std::size_t slash = relative.find('/');
    fixture.root = base / relative.substr(0, slash);
    fixture.path = relative.substr(slash + 1);
  } else {
    fixture.root = base / relative;
  }
  fixture.store = DirectoryStore::Open(fixture.root, {.create = false});
  return fixture;
}

// The .raw values of a fixture: little-endian C order of its read dtype.
NDArray RawValues(const Json& entry) {
  const std::string raw = ReadFile(V3Dir() / entry.at("raw").get<std::string>());
  NDArray values(ShapeOf(entry.at("shape")),
                 DType::FromName(entry.at("read_dtype").get<std::string>()));
  if (static_cast<Index>(raw.size()) != values.nbytes()) {
    throw std::runtime_error("raw file of " + entry.at("name").get<std::string>() + " is " +
                             std::to_string(raw.size()) + " bytes, expected " +
                             std::to_string(values.nbytes()));
  }
  std::memcpy(values.mutable_bytes().data(), raw.data(), raw.size());
  return values;
}

// array[region], element by element: the reference for every region read.
NDArray Slice(const NDArray& array, const Region& region) {
  NDArray out(region.shape, array.dtype());
  const auto itemsize = static_cast<std::size_t>(array.dtype().itemsize());
  const Shape strides = CStrides(array.shape());
  for (Index linear = 0; linear < out.size(); ++linear) {
    const Shape position = UnravelIndex(linear, region.shape);
    Index source = 0;
    for (std::size_t dim = 0; dim < position.size(); ++dim) {
      source += (position[dim] + region.start[dim]) * strides[dim];
    }
    std::memcpy(out.mutable_bytes().data() + static_cast<std::size_t>(linear) * itemsize,
                array.bytes().data() + static_cast<std::size_t>(source) * itemsize, itemsize);
  }
  return out;
}

// Equal shape, dtype and bytes; otherwise the first differing element, in hex.
::testing::AssertionResult SameArray(const NDArray& actual, const NDArray& expected) {
  if (actual.shape() != expected.shape() || actual.dtype() != expected.dtype()) {
    return ::testing::AssertionFailure()
           << "shape " << ShapeToString(actual.shape()) << " " << actual.dtype().name()
           << ", expected " << ShapeToString(expected.shape()) << " " << expected.dtype().name();
  }
  const auto itemsize = static_cast<std::size_t>(actual.dtype().itemsize());
  Index differing = 0;
  Index first = -1;
  for (Index element = 0; element < actual.size(); ++element) {
    const std::size_t at = static_cast<std::size_t>(element) * itemsize;
    if (std::memcmp(actual.bytes().data() + at, expected.bytes().data() + at, itemsize) != 0) {
      if (first < 0) first = element;
      ++differing;
    }
  }
  if (differing == 0) return ::testing::AssertionSuccess();
  auto hex = [&](const NDArray& array) {
    std::string text;
    const std::size_t at = static_cast<std::size_t>(first) * itemsize;
    for (std::size_t byte = itemsize; byte-- > 0;) {  // little-endian: most significant first
      char digits[4];
      std::snprintf(digits, sizeof(digits), "%02x",
                    std::to_integer<unsigned>(array.bytes()[at + byte]));
      text += digits;
    }
    return text;
  };
  return ::testing::AssertionFailure()
         << differing << " of " << actual.size() << " elements differ; the first, at "
         << ShapeToString(UnravelIndex(first, actual.shape())) << ", is 0x" << hex(actual)
         << ", expected 0x" << hex(expected);
}

Region RandomRegion(const Shape& shape, std::mt19937_64& rng) {
  Region region{Shape(shape.size()), Shape(shape.size())};
  for (std::size_t dim = 0; dim < shape.size(); ++dim) {
    const auto extent = static_cast<std::uint64_t>(shape[dim]);
    region.start[dim] = static_cast<Index>(rng() % (extent + 1));
    region.shape[dim] =
        static_cast<Index>(rng() % (extent - static_cast<std::uint64_t>(region.start[dim]) + 1));
  }
  return region;
}

std::string RegionText(const Region& region) {
  return "region start " + ShapeToString(region.start) + " shape " + ShapeToString(region.shape);
}

// The message of the `Exception` that `call` throws; a failure when it throws none.
template <class Exception, class Call>
std::string MessageOf(Call&& call) {
  try {
    call();
  } catch (const Exception& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

// The layout of a sharding codec's index for shards of `shard_shape`.
ShardIndexLayout LayoutOf(const ZarrSharding& sharding, const Shape& shard_shape) {
  ShardIndexLayout layout;
  layout.entries = 1;
  for (std::size_t dim = 0; dim < shard_shape.size(); ++dim) {
    layout.entries *= shard_shape[dim] / sharding.chunk_shape[dim];
  }
  layout.big_endian = sharding.index_codecs.endian == ByteOrder::kBig;
  layout.checksum =
      std::ranges::any_of(sharding.index_codecs.bytes_codecs,
                          [](const CodecConfig& codec) { return codec.id == "crc32c"; });
  layout.at_end = sharding.index_at_end;
  return layout;
}

Shape InnerGridShape(const ZarrSharding& sharding, const Shape& shard_shape) {
  Shape grid(shard_shape.size());
  for (std::size_t dim = 0; dim < grid.size(); ++dim) {
    grid[dim] = shard_shape[dim] / sharding.chunk_shape[dim];
  }
  return grid;
}

// A shard's index decoded by hand from the stored bytes (the spec's layout: uint64 pairs,
// then the CRC-32C of the pairs when `layout.checksum`), checksum verified.
std::vector<ShardEntry> HandDecodedIndex(std::span<const std::byte> shard,
                                         const ShardIndexLayout& layout) {
  const auto index_bytes = static_cast<std::size_t>(layout.IndexBytes());
  EXPECT_GE(shard.size(), index_bytes);
  if (shard.size() < index_bytes) return {};
  const std::span<const std::byte> index =
      layout.at_end ? shard.last(index_bytes) : shard.first(index_bytes);
  auto load = [&](std::size_t at) {
    std::uint64_t value = 0;
    for (std::size_t byte = 0; byte < 8; ++byte) {
      const std::size_t shift = layout.big_endian ? 8 * (7 - byte) : 8 * byte;
      value |= std::to_integer<std::uint64_t>(index[at + byte]) << shift;
    }
    return value;
  };
  std::vector<ShardEntry> entries(static_cast<std::size_t>(layout.entries));
  for (std::size_t entry = 0; entry < entries.size(); ++entry) {
    entries[entry].offset = load(16 * entry);
    entries[entry].nbytes = load(16 * entry + 8);
  }
  if (layout.checksum) {
    std::uint32_t stored = 0;
    for (std::size_t byte = 0; byte < 4; ++byte) {
      stored |= std::to_integer<std::uint32_t>(index[16 * entries.size() + byte]) << (8 * byte);
    }
    EXPECT_EQ(stored, Crc32cOf(index.first(16 * entries.size())));
  }
  return entries;
}

// zarr-python's shard order, transliterated from its morton_order_iter: decode the
// compressed Morton codes z = 0, 1, 2, ... (each dimension gets ceil(log2(extent)) bits,
// interleaved lowest first, dimension 0 first) and keep those inside the grid.
std::vector<Index> ZarrPythonMortonOrder(const Shape& grid) {
  const std::size_t ndim = grid.size();
  std::vector<int> bits(ndim, 0);
  int max_bits = 0;
  for (std::size_t dim = 0; dim < ndim; ++dim) {
    while ((Index{1} << bits[dim]) < grid[dim]) ++bits[dim];
    max_bits = std::max(max_bits, bits[dim]);
  }
  const Index count = ShapeSize(grid);
  std::vector<Index> order;
  std::set<Index> seen;
  for (std::uint64_t z = 0; static_cast<Index>(order.size()) < count; ++z) {
    Shape coords(ndim, 0);
    int input_bit = 0;
    for (int coord_bit = 0; coord_bit < max_bits; ++coord_bit) {
      for (std::size_t dim = 0; dim < ndim; ++dim) {
        if (coord_bit < bits[dim]) {
          coords[dim] |= static_cast<Index>((z >> input_bit) & 1u) << coord_bit;
          ++input_bit;
        }
      }
    }
    bool inside = true;
    Index linear = 0;
    for (std::size_t dim = 0; dim < ndim; ++dim) {
      inside = inside && coords[dim] < grid[dim];
      linear = linear * grid[dim] + coords[dim];
    }
    if (inside && seen.insert(linear).second) order.push_back(linear);
  }
  return order;
}

// The ids of the bytes-to-bytes codecs anywhere in a chain (inner chains included).
void CollectCodecIds(const ZarrCodecChain& chain, std::set<std::string>& ids) {
  for (const CodecConfig& codec : chain.bytes_codecs) ids.insert(codec.id);
  if (chain.sharding != nullptr) CollectCodecIds(chain.sharding->codecs, ids);
}

// ---- a store that counts what is read ---------------------------------------------------

// Forwards to another store, counting calls and the bytes each read hands back.
class CountingStore final : public Store {
 public:
  struct Range {
    std::string key;
    std::int64_t offset;
    std::int64_t size;
  };

  explicit CountingStore(std::shared_ptr<Store> inner) : inner_(std::move(inner)) {}

  std::optional<Buffer> Get(std::string_view key) const override {
    ++gets_;
    std::optional<Buffer> value = inner_->Get(key);
    if (value) bytes_ += value->size();
    return value;
  }
  std::optional<std::int64_t> ReadBounded(std::string_view key, std::int64_t max_size,
                                          const Destination& destination) const override {
    ++bounded_reads_;
    return inner_->ReadBounded(key, max_size, [&](std::int64_t size) {
      bytes_ += size;
      return destination(size);
    });
  }
  std::optional<std::int64_t> ReadRange(std::string_view key, std::int64_t offset,
                                        std::span<std::byte> out) const override {
    const std::optional<std::int64_t> size = inner_->ReadRange(key, offset, out);
    if (size) {
      bytes_ += static_cast<std::int64_t>(out.size());
      std::lock_guard<std::mutex> lock(mutex_);
      ranges_.push_back({std::string(key), offset, static_cast<std::int64_t>(out.size())});
    }
    return size;
  }
  using Store::Set;
  void Set(std::string_view key, std::span<const std::byte> value) override {
    inner_->Set(key, value);
  }
  bool Erase(std::string_view key) override { return inner_->Erase(key); }
  std::vector<std::string> List(std::string_view prefix) const override {
    return inner_->List(prefix);
  }
  std::vector<std::string> ListFolder(std::string_view folder) const override {
    return inner_->ListFolder(folder);
  }
  std::optional<std::int64_t> SizeOf(std::string_view key) const override {
    return inner_->SizeOf(key);
  }
  std::string Describe() const override { return inner_->Describe(); }

  void Reset() {
    gets_ = 0;
    bounded_reads_ = 0;
    bytes_ = 0;
    ranges_.clear();
  }
  std::int64_t bytes() const { return bytes_; }
  std::int64_t gets() const { return gets_; }
  std::int64_t bounded_reads() const { return bounded_reads_; }
  std::vector<Range> ranges() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return ranges_;
  }

 private:
  std::shared_ptr<Store> inner_;
  mutable std::atomic<std::int64_t> gets_{0};
  mutable std::atomic<std::int64_t> bounded_reads_{0};
  mutable std::atomic<std::int64_t> bytes_{0};
  mutable std::mutex mutex_;
  mutable std::vector<Range> ranges_;  // GUARDED_BY(mutex_)
};

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

// ---- round trips ------------------------------------------------------------------------

const std::vector<DType>& AllDTypes() {
  static const std::vector<DType> dtypes = {bool_,   int8,      int16,     int32,  int64,
                                            uint8,   uint16,    uint32,    uint64, float32,
                                            float64, complex64, complex128};
  return dtypes;
}

// The float32 value of a half's bit pattern, by the binary16 formula (a NaN made quiet,
// so that it narrows back to the same bits).
float HalfAsFloat(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  const std::uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0x1F) {
    const std::uint32_t payload = mantissa == 0 ? 0 : mantissa | 0x200u;
    return std::bit_cast<float>(sign | 0x7F800000u | (payload << 13));
  }
  const double magnitude = exponent == 0 ? std::ldexp(static_cast<double>(mantissa), -24)
                                         : std::ldexp(static_cast<double>(1024 + mantissa),
                                                      static_cast<int>(exponent) - 25);
  const auto value = static_cast<float>(magnitude);
  return sign != 0 ? -value : value;
}

// A random float fill value for elements of `component` (float32 or float64), or of
// float16 when `half`.
double RandomFloatFill(DType component, bool half, std::mt19937_64& rng) {
  switch (rng() % 8) {
    case 0:
      return std::numeric_limits<double>::quiet_NaN();
    case 1:
      return std::numeric_limits<double>::infinity();
    case 2:
      return -std::numeric_limits<double>::infinity();
    case 3:
      return -0.0;
    case 4:
      return 3.0;
    default:
      break;
  }
  if (half) {
    std::uint16_t bits = 0;
    do {
      bits = static_cast<std::uint16_t>(rng());
    } while ((bits & 0x7C00u) == 0x7C00u);  // a finite half
    return static_cast<double>(HalfAsFloat(bits));
  }
  const double value = std::normal_distribution<double>(0.0, 1e3)(rng);
  return component == float32 ? static_cast<double>(static_cast<float>(value)) : value;
}

FillValue RandomFill(DType dtype, bool half, std::mt19937_64& rng) {
  switch (dtype.kind()) {
    case DTypeKind::kBool:
      return rng() % 2 == 0;
    case DTypeKind::kFloat:
      return RandomFloatFill(dtype, half, rng);
    case DTypeKind::kComplex:
      return std::complex<double>(RandomFloatFill(RealDType(dtype), false, rng),
                                  RandomFloatFill(RealDType(dtype), false, rng));
    default:
      break;
  }
  return VisitDType(dtype, [&](auto tag) -> FillValue {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if constexpr (std::is_signed_v<T>) {
        return static_cast<std::int64_t>(std::uniform_int_distribution<std::int64_t>(
            std::numeric_limits<T>::min(), std::numeric_limits<T>::max())(rng));
      } else {
        const auto value =
            std::uniform_int_distribution<std::uint64_t>(0, std::numeric_limits<T>::max())(rng);
        // The parser's canonical form: int64 when it fits.
        if (value <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
          return static_cast<std::int64_t>(value);
        }
        return value;
      }
    } else {
      return std::int64_t{0};
    }
  });
}

ZarrCodecChain RandomLeafChain(std::size_t ndim, DType stored, std::mt19937_64& rng) {
  ZarrCodecChain chain;
  if (ndim >= 2 && rng() % 3 == 0) {
    chain.transpose.resize(ndim);
    do {
      std::iota(chain.transpose.begin(), chain.transpose.end(), Index{0});
      std::shuffle(chain.transpose.begin(), chain.transpose.end(), rng);
    } while (std::ranges::is_sorted(chain.transpose));  // an identity is written as none
  }
  // One-byte elements have no byte order to write.
  if (stored.itemsize() > 1 && rng() % 2 == 0) chain.endian = ByteOrder::kBig;
  switch (rng() % 4) {
    case 1:
      chain.bytes_codecs.push_back(CodecConfig{.id = "blosc",
                                               .cname = rng() % 2 == 0 ? "lz4" : "zstd",
                                               .level = static_cast<int>(1 + rng() % 5),
                                               .shuffle = static_cast<int>(rng() % 3),
                                               .typesize = static_cast<int>(stored.itemsize())});
      break;
    case 2:
      chain.bytes_codecs.push_back(CodecConfig{
          .id = "zstd", .level = static_cast<int>(1 + rng() % 3), .checksum = rng() % 2 == 0});
      break;
    case 3:
      chain.bytes_codecs.push_back(
          CodecConfig{.id = "gzip", .level = static_cast<int>(1 + rng() % 9)});
      break;
    default:
      break;
  }
  if (rng() % 3 == 0) chain.bytes_codecs.push_back(CodecConfig{.id = "crc32c"});
  return chain;
}

std::shared_ptr<const ZarrSharding> RandomSharding(Shape inner_chunks, ZarrCodecChain codecs,
                                                   std::mt19937_64& rng) {
  auto sharding = std::make_shared<ZarrSharding>();
  sharding->chunk_shape = std::move(inner_chunks);
  sharding->codecs = std::move(codecs);
  sharding->index_codecs.endian = rng() % 2 == 0 ? ByteOrder::kLittle : ByteOrder::kBig;
  if (rng() % 3 != 0) sharding->index_codecs.bytes_codecs.push_back(CodecConfig{.id = "crc32c"});
  sharding->index_at_end = rng() % 2 == 0;
  return sharding;
}

// Random v3 metadata: 0..3 dimensions, any dtype (float16 storage too), a leaf chain, no
// sharding, one level or two nested, each key encoding.
ZarrMetadata RandomV3Metadata(std::mt19937_64& rng) {
  ZarrMetadata metadata;
  metadata.zarr_format = 3;
  const std::size_t ndim = rng() % 4;
  const std::size_t dtype_index = rng() % (AllDTypes().size() + 1);
  metadata.float16_storage = dtype_index == AllDTypes().size();
  metadata.dtype = metadata.float16_storage ? float32 : AllDTypes()[dtype_index];
  const int levels = static_cast<int>(rng() % 3);
  const Index max_inner = ndim == 3 ? 3 : 4;
  const Index max_factor = ndim == 3 ? 2 : 3;
  Shape inner(ndim);
  Shape middle(ndim);
  Shape outer(ndim);
  metadata.shape.resize(ndim);
  for (std::size_t dim = 0; dim < ndim; ++dim) {
    inner[dim] = 1 + static_cast<Index>(rng() % static_cast<std::uint64_t>(max_inner));
    middle[dim] =
        inner[dim] * (1 + static_cast<Index>(rng() % static_cast<std::uint64_t>(max_factor)));
    outer[dim] = (levels == 2 ? middle[dim] : inner[dim]) *
                 (1 + static_cast<Index>(rng() % static_cast<std::uint64_t>(max_factor)));
    const Index chunk = levels == 0 ? inner[dim] : outer[dim];
    metadata.shape[dim] = static_cast<Index>(rng() % static_cast<std::uint64_t>(2 * chunk + 2));
  }
  switch (rng() % 4) {
    case 0:
      metadata.key_encoding = ChunkKeyEncoding::kDefault;
      metadata.dimension_separator = '/';
      break;
    case 1:
      metadata.key_encoding = ChunkKeyEncoding::kDefault;
      metadata.dimension_separator = '.';
      break;
    case 2:
      metadata.key_encoding = ChunkKeyEncoding::kV2;
      metadata.dimension_separator = '.';
      break;
    default:
      metadata.key_encoding = ChunkKeyEncoding::kV2;
      metadata.dimension_separator = '/';
      break;
  }
  metadata.fill_value = RandomFill(metadata.dtype, metadata.float16_storage, rng);
  const DType stored = metadata.float16_storage ? uint16 : metadata.dtype;
  ZarrCodecChain leaf = RandomLeafChain(ndim, stored, rng);
  if (levels == 0) {
    metadata.chunks = inner;
    metadata.codecs = std::move(leaf);
  } else if (levels == 1) {
    metadata.chunks = outer;
    metadata.codecs.sharding = RandomSharding(inner, std::move(leaf), rng);
  } else {
    metadata.chunks = outer;
    ZarrCodecChain middle_chain;
    middle_chain.sharding = RandomSharding(inner, std::move(leaf), rng);
    metadata.codecs.sharding = RandomSharding(middle, std::move(middle_chain), rng);
  }
  return metadata;
}

std::string Describe(const ZarrMetadata& metadata) {
  return ZarrJsonText(metadata, ZarrAttributes{});
}

// The fill value as one stored element of the array's dtype, native byte order.
std::vector<std::byte> FillElement(const ZarrMetadata& metadata) {
  std::vector<std::byte> element(static_cast<std::size_t>(metadata.dtype.itemsize()));
  EncodeFillElement(metadata.fill_value, metadata.dtype, element);
  return element;
}

void FillRegion(NDArray& data, const Region& region, std::span<const std::byte> element) {
  const Shape strides = CStrides(data.shape());
  for (Index linear = 0; linear < ShapeSize(region.shape); ++linear) {
    const Shape position = UnravelIndex(linear, region.shape);
    Index target = 0;
    for (std::size_t dim = 0; dim < position.size(); ++dim) {
      target += (position[dim] + region.start[dim]) * strides[dim];
    }
    std::memcpy(data.mutable_bytes().data() + static_cast<std::size_t>(target) * element.size(),
                element.data(), element.size());
  }
}

bool AllEqual(const NDArray& data, std::span<const std::byte> element) {
  const std::span<const std::byte> bytes = data.bytes();
  for (std::size_t at = 0; at < bytes.size(); at += element.size()) {
    if (std::memcmp(bytes.data() + at, element.data(), element.size()) != 0) return false;
  }
  return true;
}

// Random values of the array's dtype (float16 storage: values a half holds exactly), with
// random boxes and some whole blocks set to the fill value.
NDArray RandomData(const ZarrMetadata& metadata, std::mt19937_64& rng) {
  NDArray data(metadata.shape, metadata.dtype);
  const std::span<std::byte> bytes = data.mutable_bytes();
  if (metadata.float16_storage) {
    for (Index element = 0; element < data.size(); ++element) {
      const float value = HalfAsFloat(static_cast<std::uint16_t>(rng()));
      std::memcpy(bytes.data() + 4 * element, &value, 4);
    }
  } else {
    for (std::byte& byte : bytes) {
      byte = static_cast<std::byte>(metadata.dtype == bool_ ? rng() % 2 : rng() & 0xFF);
    }
  }
  const std::vector<std::byte> fill = FillElement(metadata);
  if (rng() % 10 == 0) {
    FillRegion(data, Region{Shape(metadata.shape.size(), 0), metadata.shape}, fill);
    return data;
  }
  for (std::uint64_t box = rng() % 4; box > 0; --box) {
    FillRegion(data, RandomRegion(metadata.shape, rng), fill);
  }
  const ChunkGrid grid = metadata.grid();
  for (std::uint64_t block = rng() % 3; block > 0 && grid.num_blocks() > 0; --block) {
    const Index linear = static_cast<Index>(rng() % static_cast<std::uint64_t>(grid.num_blocks()));
    FillRegion(data, grid.BlockRegion(grid.BlockIndex(linear)), fill);
  }
  return data;
}

ZarrAttributes RandomAttributes(std::size_t ndim, std::mt19937_64& rng) {
  ZarrAttributes attributes;
  if (ndim > 0 && rng() % 2 == 0) {
    for (std::size_t dim = 0; dim < ndim; ++dim) {
      // An unnamed dimension (null) beside named ones.
      attributes.dimension_names.push_back(dim == 1 && rng() % 2 == 0 ? ""
                                                                      : "d" + std::to_string(dim));
    }
  }
  // In the form a parsed document is dumped in (other_json is compared as text).
  if (rng() % 2 == 0) attributes.other_json = R"({"scale":[1,2.5],"units":"K"})";
  return attributes;
}

void CheckV3RoundTrip(const std::shared_ptr<Store>& store, const std::string& path,
                      const ZarrMetadata& metadata, const ZarrAttributes& attributes,
                      std::mt19937_64& rng) {
  SCOPED_TRACE(Describe(metadata));
  const auto [parsed, parsed_attributes] =
      ParseZarrJson(ZarrJsonText(metadata, attributes), "zarr.json");
  EXPECT_TRUE(parsed == metadata) << Describe(parsed);
  EXPECT_EQ(parsed_attributes, attributes) << ZarrJsonText(metadata, parsed_attributes);

  const ZarrArray created = ZarrArray::Create(store, path, metadata, attributes);
  const NDArray data = RandomData(metadata, rng);
  created.Write(data, static_cast<int>(1 + rng() % 4));
  const ZarrArray array = ZarrArray::Open(store, path);
  EXPECT_TRUE(array.metadata() == metadata) << Describe(array.metadata());
  EXPECT_EQ(array.attributes(), attributes) << ZarrJsonText(metadata, array.attributes());
  ASSERT_TRUE(SameArray(array.Read(1), data));
  ASSERT_TRUE(SameArray(array.Read(3), data));
  for (int trial = 0; trial < 4; ++trial) {
    const Region region = RandomRegion(metadata.shape, rng);
    ASSERT_TRUE(SameArray(array.ReadRegion(region, 1 + trial), Slice(data, region)))
        << RegionText(region);
  }

  // Blocks: each reads back; a shard is stored unless it is all fill value (an unsharded
  // chunk always is); block writes store what the whole write stored.
  const std::vector<std::byte> fill = FillElement(metadata);
  const std::shared_ptr<MemoryStore> by_blocks = MemoryStore::Create();
  const ZarrArray block_array = ZarrArray::Create(by_blocks, path, metadata, attributes);
  for (Index linear = 0; linear < array.grid().num_blocks(); ++linear) {
    const Shape block = array.grid().BlockIndex(linear);
    const NDArray expected = Slice(data, array.grid().BlockRegion(block));
    ASSERT_TRUE(SameArray(array.ReadBlock(block), expected)) << "block " << ShapeToString(block);
    const std::optional<std::int64_t> size = array.StoredChunkSize(block);
    EXPECT_EQ(size.has_value(), !metadata.sharded() || !AllEqual(expected, fill))
        << "block " << ShapeToString(block);
    if (size) {
      EXPECT_LE(*size, array.MaxEncodedChunkBytes());
    }
    block_array.WriteBlock(block, expected);
    const std::string key = array.ChunkKey(block);
    const std::optional<Buffer> whole = store->Get(key);
    const std::optional<Buffer> part = by_blocks->Get(key);
    ASSERT_EQ(whole.has_value(), part.has_value()) << key;
    if (whole) {
      EXPECT_EQ(BytesOf(whole->span()), BytesOf(part->span())) << key;
    }
  }
}

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
}  // namespace tessera
