// Helpers of the Zarr v3 tests (zarr_v3_*_test.cpp): zarr-python's fixtures and their
// manifest, reference slices and comparisons, a store that counts what is read, and
// generators of random v3 metadata and data for round trips. Test-only, header-only.
#pragma once

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

#include "region_reference.hpp"
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

namespace tessera::zarr_v3_test {

using testing::RandomRegion;
using testing::Slice;

namespace fs = std::filesystem;
using Json = nlohmann::json;
using testing::TempDir;

inline constexpr std::uint64_t kEmptyEntry = ~std::uint64_t{0};

// ---- helpers --------------------------------------------------------------------------

inline const fs::path& V3Dir() {
  static const fs::path dir = fs::path(TESSERA_ZARR_TESTDATA) / "v3";
  return dir;
}

inline std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline const Json& Manifest() {
  static const Json manifest = Json::parse(ReadFile(V3Dir() / "fixtures.json"));
  return manifest;
}

// The manifest's entries of `kind` ("array" or "group"), valid (no expect_error) or not.
inline std::vector<Json> Fixtures(const std::string& kind, bool valid) {
  std::vector<Json> out;
  for (const Json& entry : Manifest().at("fixtures")) {
    if (entry.at("kind") == kind && entry.at("expect_error").is_null() == valid) {
      out.push_back(entry);
    }
  }
  return out;
}

inline Shape ShapeOf(const Json& value) {
  Shape shape;
  for (const Json& extent : value) shape.push_back(extent.get<Index>());
  return shape;
}

inline std::string Lower(std::string text) {
  std::ranges::transform(text, text.begin(), [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  return text;
}

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline std::vector<std::byte> BytesOf(const std::string& text) {
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

inline std::vector<std::byte> BytesOf(std::span<const std::byte> bytes) {
  return std::vector<std::byte>(bytes.begin(), bytes.end());
}

// A fixture array's store and path: a group member's store is its group's folder.
struct FixtureArray {
  fs::path root;
  std::string path;
  std::shared_ptr<DirectoryStore> store;
};

inline FixtureArray Locate(const Json& entry, const fs::path& base = V3Dir()) {
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
inline NDArray RawValues(const Json& entry) {
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

// Equal shape, dtype and bytes; otherwise the first differing element, in hex.
inline ::testing::AssertionResult SameArray(const NDArray& actual, const NDArray& expected) {
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

inline std::string RegionText(const Region& region) {
  return "region start " + ShapeToString(region.start) + " shape " + ShapeToString(region.shape);
}

// The message of the `Exception` that `call` throws; a failure when it throws none.
template <class Exception, class Call>
inline std::string MessageOf(Call&& call) {
  try {
    call();
  } catch (const Exception& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

// The layout of a sharding codec's index for shards of `shard_shape`.
inline ShardIndexLayout LayoutOf(const ZarrSharding& sharding, const Shape& shard_shape) {
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

inline Shape InnerGridShape(const ZarrSharding& sharding, const Shape& shard_shape) {
  Shape grid(shard_shape.size());
  for (std::size_t dim = 0; dim < grid.size(); ++dim) {
    grid[dim] = shard_shape[dim] / sharding.chunk_shape[dim];
  }
  return grid;
}

// A shard's index decoded by hand from the stored bytes (the spec's layout: uint64 pairs,
// then the CRC-32C of the pairs when `layout.checksum`), checksum verified.
inline std::vector<ShardEntry> HandDecodedIndex(std::span<const std::byte> shard,
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
inline std::vector<Index> ZarrPythonMortonOrder(const Shape& grid) {
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
inline void CollectCodecIds(const ZarrCodecChain& chain, std::set<std::string>& ids) {
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

// ---- round trips ------------------------------------------------------------------------

inline const std::vector<DType>& AllDTypes() {
  static const std::vector<DType> dtypes = {bool_,   int8,      int16,     int32,  int64,
                                            uint8,   uint16,    uint32,    uint64, float32,
                                            float64, complex64, complex128};
  return dtypes;
}

// The float32 value of a half's bit pattern, by the binary16 formula (a NaN made quiet,
// so that it narrows back to the same bits).
inline float HalfAsFloat(std::uint16_t bits) {
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
inline double RandomFloatFill(DType component, bool half, std::mt19937_64& rng) {
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

inline FillValue RandomFill(DType dtype, bool half, std::mt19937_64& rng) {
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

inline ZarrCodecChain RandomLeafChain(std::size_t ndim, DType stored, std::mt19937_64& rng) {
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

inline std::shared_ptr<const ZarrSharding> RandomSharding(Shape inner_chunks, ZarrCodecChain codecs,
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
inline ZarrMetadata RandomV3Metadata(std::mt19937_64& rng) {
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

inline std::string Describe(const ZarrMetadata& metadata) {
  return ZarrJsonText(metadata, ZarrAttributes{});
}

// The fill value as one stored element of the array's dtype, native byte order.
inline std::vector<std::byte> FillElement(const ZarrMetadata& metadata) {
  std::vector<std::byte> element(static_cast<std::size_t>(metadata.dtype.itemsize()));
  EncodeFillElement(metadata.fill_value, metadata.dtype, element);
  return element;
}

inline void FillRegion(NDArray& data, const Region& region, std::span<const std::byte> element) {
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

inline bool AllEqual(const NDArray& data, std::span<const std::byte> element) {
  const std::span<const std::byte> bytes = data.bytes();
  for (std::size_t at = 0; at < bytes.size(); at += element.size()) {
    if (std::memcmp(bytes.data() + at, element.data(), element.size()) != 0) return false;
  }
  return true;
}

// Random values of the array's dtype (float16 storage: values a half holds exactly), with
// random boxes and some whole blocks set to the fill value.
inline NDArray RandomData(const ZarrMetadata& metadata, std::mt19937_64& rng) {
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

inline ZarrAttributes RandomAttributes(std::size_t ndim, std::mt19937_64& rng) {
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

inline void CheckV3RoundTrip(const std::shared_ptr<Store>& store, const std::string& path,
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

}  // namespace tessera::zarr_v3_test
