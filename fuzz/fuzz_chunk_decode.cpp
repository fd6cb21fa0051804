// Fuzzes chunk decoding: the codecs on their own (decoding arbitrary frames, and
// encode -> decode round trips), sharded Zarr v3 arrays read through ZarrArray, and the
// shard index container (ShardIndex::Decode, ShardBuilder).
//
// Byte 0's top two bits pick the mode; the layouts of the rest follow.
//
// Codec modes (0x00 decode, 0x80 round trip):
//   byte 0      codec: (byte & 0x3f) % 5 = blosc, zstd, lz4, zlib, gzip
//   byte 1      blosc cname index / zstd, zlib, gzip level / lz4 acceleration
//   byte 2      blosc clevel
//   byte 3      blosc shuffle (low 2 bits, -1..2) and the itemsize 1, 2, 4 or 8 (bits 2-3)
//   bytes 4..6  decoded size, little-endian, capped at kMaxDecodedSize
//   bytes 7..   decode mode: the encoded frame; round-trip mode: the raw data
//   Decode mode: Decode either fills exactly the declared size or throws tessera::Error;
//   a blosc frame it decodes gives the same bytes as libblosc's blosc_decompress_ctx
//   wherever libblosc accepts the frame.
//   Round-trip mode: Decode(Encode(raw)) must give back raw.
//
// Sharded array mode (0x40): a small sharded v3 array is written with valid data into a
// MemoryStore (one of the layouts below), then one shard is replaced by the input:
//   byte 1  bit 0 index at the end (else the start), bit 1 index crc32c, bit 2 index
//           big-endian (both sharding levels alike), bits 3-4 inner codecs none / zstd /
//           blosc / crc32c, bit 5 a crc32c after zstd or blosc, bit 6 nested sharding
//           (one level more), bit 7 splice mode: the payload replaces one inner chunk
//           (for nested sharding: one nested shard) of the valid shard, else it is the
//           whole shard
//   byte 2  bits 0-2 dtype (uint8, bool, int16, int32, float32, float64, float16,
//           complex64), bits 3-4 geometry (kGeometries), bit 5 big-endian elements,
//           bit 6 fix checksums up (a whole shard: its index's crc32c; splice mode: the
//           payload's trailing crc32c, or its index's when it is a nested shard), bit 7
//           read the region with 2 threads (a region within one shard is then read by
//           inner chunks)
//   byte 3  bits 0-3 the shard replaced (mod the shard count), bit 4 inner transpose
//           (reversed dimensions), bit 5 fill value 3 instead of 0
//   byte 4  the inner chunk replaced in splice mode (mod the inner chunk count)
//   byte 5  seed of the region read
//   bytes 6.. the payload
//   Contract: ZarrArray::Open succeeds (the metadata is valid); Read(), ReadRegion() and
//   ReadBlock() (of the replaced shard) either succeed or throw FormatError or
//   StorageError; when Read() succeeds, the others succeed too and equal those parts
//   of Read()'s result.
//
// Shard index mode (0xC0):
//   byte 1      bit 0 index at the end, bit 1 crc32c, bit 2 big-endian, bit 3 fix the
//               crc32c up, bit 4 builder round trip instead of decoding, bits 5-6 how
//               shard_size is formed (below)
//   byte 2      entries (mod 64)
//   bytes 3, 4  a little-endian 16-bit number n: shard_size is n, IndexBytes + n,
//               2^63 - 1 - n or -n (bits 5-6 = 0..3)
//   bytes 5..   decode: the index bytes (cut or padded with 0xff to IndexBytes);
//               builder: entry sizes and order (see BuilderRoundTrip)
//   Decode either throws FormatError or returns entries that each lie in the shard's
//   data bytes without overlapping, equal to the integers of the input. A shard that
//   ShardBuilder assembles decodes to what was added, at the offsets it says.
#include <blosc.h>

#include <algorithm>
#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "little_endian.hpp"
#include "region_reference.hpp"
#include "tessera/core/buffer.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/ndarray.hpp"
#include "tessera/storage/codec.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/shard_index.hpp"
#include "tessera/storage/zarr_array.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace {

using tessera::Index;
using tessera::Shape;

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_chunk_decode: %s\n%s\n", what, detail.c_str());
  std::abort();
}

std::span<const std::byte> AsBytes(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

// ---------------------------------------------------------------------------------------
// Codec modes.

// Decoded chunks up to 1 MiB exercise every code path of the codecs (blosc splits into
// blocks well below that) while keeping each run fast and far from the RSS limit.
constexpr std::size_t kMaxDecodedSize = std::size_t{1} << 20;
constexpr std::size_t kCodecHeaderSize = 7;

tessera::CodecConfig ConfigFrom(const std::uint8_t* header) {
  static const char* const kCnames[] = {"lz4", "lz4hc", "zstd", "blosclz", "zlib"};
  tessera::CodecConfig config;
  switch ((header[0] & 0x3f) % 5) {
    case 0:
      config.id = "blosc";
      config.cname = kCnames[header[1] % 5];
      config.level = header[2] % 10;
      config.shuffle = (header[3] & 3) - 1;
      break;
    case 1:
      config.id = "zstd";
      config.level = header[1] % 26 - 3;  // -3..22: negative "fast" levels included
      break;
    case 2:
      config.id = "lz4";
      config.acceleration = header[1] + 1;
      break;
    case 3:
      config.id = "zlib";
      config.level = header[1] % 11 - 1;  // -1 = zlib's default
      break;
    default:
      config.id = "gzip";
      config.level = header[1] % 11 - 1;
      break;
  }
  return config;
}

void FuzzCodec(const std::uint8_t* data, std::size_t size, bool round_trip) {
  if (size < kCodecHeaderSize) return;
  const tessera::CodecConfig config = ConfigFrom(data);
  const std::int64_t itemsize = std::int64_t{1} << ((data[3] >> 2) & 3);
  std::size_t decoded_size = data[4] | (std::size_t{data[5]} << 8) | (std::size_t{data[6]} << 16);
  if (decoded_size > kMaxDecodedSize) decoded_size = kMaxDecodedSize;
  const std::span<const std::byte> payload = AsBytes(data, size).subspan(kCodecHeaderSize);

  std::unique_ptr<tessera::Codec> codec;
  try {
    codec = tessera::MakeCodec(config);
  } catch (const tessera::Error&) {
    return;  // e.g. a blosc compressor this libblosc was built without
  }

  if (!round_trip) {
    tessera::Buffer out(static_cast<std::int64_t>(decoded_size));
    try {
      codec->Decode(payload, out.span());
    } catch (const tessera::Error&) {
      return;
    }
    // Differential: a blosc frame Tessera decoded (its own LZ4 + unshuffle path or
    // libblosc's) decodes to the same bytes through libblosc, when libblosc accepts it.
    if (config.id == "blosc" && decoded_size > 0) {
      tessera::Buffer reference(static_cast<std::int64_t>(decoded_size));
      const int written = blosc_decompress_ctx(payload.data(), reference.data(), decoded_size, 1);
      if (written == static_cast<int>(decoded_size) &&
          std::memcmp(reference.data(), out.data(), decoded_size) != 0) {
        std::fprintf(stderr, "blosc: Tessera's decode differs from libblosc's\n");
        std::abort();
      }
    }
    return;
  }

  // Round trip: Encode must accept any raw bytes, and Decode must restore them.
  const tessera::Buffer encoded = codec->Encode(payload, itemsize);
  if (encoded.size() > codec->MaxEncodedSize(static_cast<std::int64_t>(payload.size()))) {
    std::fprintf(
        stderr, "%s: encoded %zu bytes into %lld, above MaxEncodedSize %lld\n", config.id.c_str(),
        payload.size(), static_cast<long long>(encoded.size()),
        static_cast<long long>(codec->MaxEncodedSize(static_cast<std::int64_t>(payload.size()))));
    std::abort();
  }
  tessera::Buffer decoded(static_cast<std::int64_t>(payload.size()));
  codec->Decode(encoded.span(), decoded.span());
  if (!payload.empty() && std::memcmp(decoded.data(), payload.data(), payload.size()) != 0) {
    std::fprintf(stderr, "%s: decode(encode(x)) != x for %zu bytes\n", config.id.c_str(),
                 payload.size());
    std::abort();
  }
}

// ---------------------------------------------------------------------------------------
// Shared by the shard modes.

// What `read` returns, or nothing when it refuses the data (FormatError, StorageError);
// a refusal when `must_succeed` (a whole read of the same data succeeded) is a defect.
template <class Read>
std::optional<tessera::NDArray> ReadUnlessBad(bool must_succeed, const char* what, Read&& read) {
  try {
    return read();
  } catch (const tessera::FormatError& error) {
    if (must_succeed) Fail(what, error.what());
  } catch (const tessera::StorageError& error) {
    if (must_succeed) Fail(what, error.what());
  }
  return std::nullopt;
}

std::uint64_t LoadU64(const std::byte* in, bool big_endian) {
  std::uint64_t value = 0;
  for (int byte = 0; byte < 8; ++byte) {
    const int shift = big_endian ? 8 * (7 - byte) : 8 * byte;
    value |= std::to_integer<std::uint64_t>(in[byte]) << shift;
  }
  return value;
}

// Rewrites the crc32c of an index of `layout` lying at the start or end of `shard`
// (nothing when the shard is shorter than the index or the layout has no checksum).
void FixIndexChecksum(const tessera::ShardIndexLayout& layout, std::vector<std::byte>& shard) {
  const auto index_bytes = static_cast<std::size_t>(layout.IndexBytes());
  if (!layout.checksum || shard.size() < index_bytes) return;
  std::byte* const index = shard.data() + (layout.at_end ? shard.size() - index_bytes : 0);
  const std::span<const std::byte> pairs(index, index_bytes - 4);
  tessera::codecs::StoreLittleEndian32(tessera::Crc32cOf(pairs), index + index_bytes - 4);
}

// Rewrites a value's trailing crc32c (the crc32c codec's framing).
void FixTrailingChecksum(std::vector<std::byte>& value) {
  if (value.size() < 4) return;
  const std::span<const std::byte> data(value.data(), value.size() - 4);
  tessera::codecs::StoreLittleEndian32(tessera::Crc32cOf(data), value.data() + data.size());
}

// ---------------------------------------------------------------------------------------
// Sharded array mode.

constexpr std::size_t kArrayHeaderSize = 6;
// The largest item size of a Tessera dtype (complex128).
constexpr std::size_t kMaxItemSize = 16;

// A small array: its shape, its shards, the nested shards of nested sharding (middle)
// and the innermost chunks. Each divides the one before; edges are partial.
struct Geometry {
  Shape shape;
  Shape shard;
  Shape middle;
  Shape leaf;
};

const Geometry kGeometries[] = {
    {{13}, {8}, {4}, {2}},
    {{7, 9}, {4, 6}, {2, 6}, {2, 3}},
    {{3, 5, 4}, {2, 4, 4}, {2, 2, 4}, {1, 2, 2}},
    {{}, {}, {}, {}},  // 0-d: one shard of one inner chunk
};

constexpr tessera::DType kDTypes[] = {tessera::uint8,   tessera::bool_,    tessera::int16,
                                      tessera::int32,   tessera::float32,  tessera::float64,
                                      tessera::float32, tessera::complex64};
constexpr std::uint8_t kFloat16DType = 6;  // kDTypes[6] stored as float16

// What the layout bytes say, decoded.
struct ArrayLayout {
  bool index_at_end = false;
  bool index_checksum = false;
  bool index_big_endian = false;
  int inner_codec = 0;  // none, zstd, blosc, crc32c
  bool crc_after = false;
  bool nested = false;
  std::uint8_t dtype = 0;
  std::uint8_t geometry = 0;
  bool big_endian = false;
  bool transpose = false;
  bool fill_three = false;

  // The bits that change the written array (the cache key).
  std::uint32_t Key() const {
    return static_cast<std::uint32_t>(index_at_end) |
           (static_cast<std::uint32_t>(index_checksum) << 1) |
           (static_cast<std::uint32_t>(index_big_endian) << 2) |
           (static_cast<std::uint32_t>(inner_codec) << 3) |
           (static_cast<std::uint32_t>(crc_after) << 5) |
           (static_cast<std::uint32_t>(nested) << 6) | (static_cast<std::uint32_t>(dtype) << 7) |
           (static_cast<std::uint32_t>(geometry) << 10) |
           (static_cast<std::uint32_t>(big_endian) << 12) |
           (static_cast<std::uint32_t>(transpose) << 13) |
           (static_cast<std::uint32_t>(fill_three) << 14);
  }
};

ArrayLayout LayoutFrom(const std::uint8_t* header) {
  ArrayLayout layout;
  layout.index_at_end = (header[1] & 0x01) != 0;
  layout.index_checksum = (header[1] & 0x02) != 0;
  layout.index_big_endian = (header[1] & 0x04) != 0;
  layout.inner_codec = (header[1] >> 3) & 3;
  layout.crc_after =
      (header[1] & 0x20) != 0 && (layout.inner_codec == 1 || layout.inner_codec == 2);
  layout.nested = (header[1] & 0x40) != 0;
  layout.dtype = header[2] & 7;
  layout.geometry = (header[2] >> 3) & 3;
  layout.big_endian = (header[2] & 0x20) != 0;
  layout.transpose = (header[3] & 0x10) != 0 && kGeometries[layout.geometry].shape.size() > 1;
  layout.fill_three = (header[3] & 0x20) != 0;
  return layout;
}

tessera::FillValue FillOf(tessera::DType dtype, bool three) {
  switch (dtype.kind()) {
    case tessera::DTypeKind::kBool:
      return three;
    case tessera::DTypeKind::kFloat:
      return three ? 3.0 : 0.0;
    case tessera::DTypeKind::kComplex:
      return std::complex<double>(three ? 3.0 : 0.0, 0.0);
    default:
      return std::int64_t{three ? 3 : 0};
  }
}

tessera::ZarrMetadata MetadataOf(const ArrayLayout& layout) {
  const Geometry& geometry = kGeometries[layout.geometry];
  const tessera::DType dtype = kDTypes[layout.dtype];
  const bool float16 = layout.dtype == kFloat16DType;
  const Index stored_itemsize = float16 ? 2 : dtype.itemsize();

  tessera::ZarrCodecChain leaf;
  leaf.endian = layout.big_endian ? tessera::ByteOrder::kBig : tessera::ByteOrder::kLittle;
  if (layout.transpose) {
    for (std::size_t dim = geometry.shape.size(); dim-- > 0;) {
      leaf.transpose.push_back(static_cast<Index>(dim));
    }
  }
  if (layout.inner_codec == 1) {
    leaf.bytes_codecs.push_back(tessera::CodecConfig{.id = "zstd", .level = 3});
  } else if (layout.inner_codec == 2) {
    leaf.bytes_codecs.push_back(
        tessera::CodecConfig{.id = "blosc",
                             .cname = "lz4",
                             .level = 5,
                             .shuffle = 1,
                             .typesize = static_cast<int>(stored_itemsize)});
  }
  if (layout.inner_codec == 3 || layout.crc_after) {
    leaf.bytes_codecs.push_back(tessera::CodecConfig{.id = "crc32c"});
  }
  auto sharding_of = [&](Shape chunk_shape, tessera::ZarrCodecChain codecs) {
    auto sharding = std::make_shared<tessera::ZarrSharding>();
    sharding->chunk_shape = std::move(chunk_shape);
    sharding->codecs = std::move(codecs);
    sharding->index_codecs.endian =
        layout.index_big_endian ? tessera::ByteOrder::kBig : tessera::ByteOrder::kLittle;
    if (layout.index_checksum) {
      sharding->index_codecs.bytes_codecs.push_back(tessera::CodecConfig{.id = "crc32c"});
    }
    sharding->index_at_end = layout.index_at_end;
    return sharding;
  };
  tessera::ZarrCodecChain top;
  if (layout.nested) {
    tessera::ZarrCodecChain middle;
    middle.sharding = sharding_of(geometry.leaf, leaf);
    top.sharding = sharding_of(geometry.middle, middle);
  } else {
    top.sharding = sharding_of(geometry.leaf, leaf);
  }

  tessera::ZarrMetadata metadata;
  metadata.zarr_format = 3;
  metadata.shape = geometry.shape;
  metadata.chunks = geometry.shard;
  metadata.dtype = dtype;
  metadata.float16_storage = float16;
  metadata.fill_value = FillOf(dtype, layout.fill_three);
  metadata.key_encoding = tessera::ChunkKeyEncoding::kDefault;
  metadata.dimension_separator = '/';
  metadata.codecs = std::move(top);
  return metadata;
}

// A valid array of one layout as stored: its keys and values (zarr.json included).
struct Written {
  std::vector<std::pair<std::string, std::vector<std::byte>>> values;
  std::vector<std::string> shard_keys;     // of the shards written
  tessera::ShardIndexLayout index_layout;  // of the outer shards
};

// Data that is the fill value in the first leaf chunk (so the first shard has an empty
// entry), and a pattern elsewhere that differs from the fill value at its first element
// (so a 0-d array has a shard too).
tessera::NDArray PatternData(const tessera::ZarrMetadata& metadata, const Shape& leaf) {
  tessera::NDArray data(metadata.shape, metadata.dtype);
  const std::span<std::byte> bytes = data.mutable_bytes();
  const auto itemsize = static_cast<std::size_t>(metadata.dtype.itemsize());
  std::array<std::byte, kMaxItemSize> fill{};
  tessera::EncodeFillElement(metadata.fill_value, metadata.dtype, std::span(fill).first(itemsize));
  const std::size_t ndim = metadata.shape.size();
  Shape position(ndim, 0);
  for (std::size_t element = 0; element * itemsize < bytes.size(); ++element) {
    Index rest = static_cast<Index>(element);
    bool in_first_leaf = true;
    for (std::size_t dim = ndim; dim-- > 0;) {
      position[dim] = rest % metadata.shape[dim];
      rest /= metadata.shape[dim];
      in_first_leaf = in_first_leaf && position[dim] < leaf[dim];
    }
    std::byte* const out = bytes.data() + element * itemsize;
    if (in_first_leaf && ndim > 0) {
      std::memcpy(out, fill.data(), itemsize);
      continue;
    }
    for (std::size_t byte = 0; byte < itemsize; ++byte) {
      const std::size_t counter = element * itemsize + byte;
      out[byte] = metadata.dtype == tessera::bool_
                      ? static_cast<std::byte>((element % 3 == 0) != (fill[0] != std::byte{0}))
                      : static_cast<std::byte>((counter * 131 + 7) & 0xff);
    }
  }
  return data;
}

Written WriteArray(const ArrayLayout& layout) {
  const tessera::ZarrMetadata metadata = MetadataOf(layout);
  const Geometry& geometry = kGeometries[layout.geometry];
  const auto store = tessera::MemoryStore::Create();
  const tessera::ZarrArray array = tessera::ZarrArray::Create(store, "", metadata);
  const tessera::NDArray data = PatternData(metadata, geometry.leaf);
  array.Write(data, /*max_threads=*/1);
  // The valid array must read back (exactly, but for float16's narrowing).
  const tessera::NDArray back = tessera::ZarrArray::Open(store).Read(/*max_threads=*/1);
  if (layout.dtype != kFloat16DType && !(back == data)) {
    Fail("a valid sharded array does not read back what was written",
         tessera::ZarrJsonText(metadata, {}));
  }
  Written written;
  for (const std::string& key : store->List("")) {
    const std::optional<tessera::Buffer> value = store->Get(key);
    const std::span<const std::byte> bytes = value->span();
    written.values.emplace_back(key, std::vector<std::byte>(bytes.begin(), bytes.end()));
    if (key != "zarr.json") written.shard_keys.push_back(key);
  }
  const tessera::ZarrSharding& sharding = *metadata.codecs.sharding;
  Index entries = 1;
  for (std::size_t dim = 0; dim < geometry.shard.size(); ++dim) {
    entries *= geometry.shard[dim] / sharding.chunk_shape[dim];
  }
  written.index_layout = tessera::ShardIndexLayout{.entries = entries,
                                                   .big_endian = layout.index_big_endian,
                                                   .checksum = layout.index_checksum,
                                                   .at_end = layout.index_at_end};
  return written;
}

const Written& WrittenArray(const ArrayLayout& layout) {
  // Layouts are few (2^15 at most, each a few KB): each is written once per process.
  static std::map<std::uint32_t, Written> cache;
  const auto found = cache.find(layout.Key());
  if (found != cache.end()) return found->second;
  return cache.emplace(layout.Key(), WriteArray(layout)).first->second;
}

// The valid shard with inner chunk `entry` replaced by `payload`.
std::vector<std::byte> Splice(const tessera::ShardIndexLayout& layout,
                              const std::vector<std::byte>& shard, Index entry,
                              std::span<const std::byte> payload) {
  const auto index_bytes = static_cast<std::size_t>(layout.IndexBytes());
  const std::span<const std::byte> whole(shard);
  const std::span<const std::byte> index =
      layout.at_end ? whole.last(index_bytes) : whole.first(index_bytes);
  const tessera::ShardIndex decoded = tessera::ShardIndex::Decode(
      index, layout, static_cast<std::int64_t>(shard.size()), "valid shard");
  tessera::ShardBuilder builder;
  builder.Start(layout, static_cast<std::int64_t>(shard.size() + payload.size()));
  for (Index position = 0; position < decoded.size(); ++position) {
    if (position == entry) {
      builder.Add(position, payload);
      continue;
    }
    const tessera::ShardEntry& slot = decoded.entry(position);
    if (slot.empty()) continue;
    builder.Add(position, whole.subspan(static_cast<std::size_t>(slot.offset),
                                        static_cast<std::size_t>(slot.nbytes)));
  }
  const std::span<const std::byte> spliced = builder.Finish();
  return {spliced.begin(), spliced.end()};
}

// A region of `shape` picked by `seed`: every extent at least 1 (shapes here have none 0).
tessera::Region RegionFrom(const Shape& shape, std::uint8_t seed) {
  tessera::Region region{Shape(shape.size()), Shape(shape.size())};
  std::uint32_t state = seed * 2654435761u + 1;
  for (std::size_t dim = 0; dim < shape.size(); ++dim) {
    state = state * 1103515245u + 12345u;
    region.start[dim] = static_cast<Index>((state >> 16) % static_cast<std::uint32_t>(shape[dim]));
    state = state * 1103515245u + 12345u;
    region.shape[dim] = 1 + static_cast<Index>((state >> 16) % static_cast<std::uint32_t>(
                                                                   shape[dim] - region.start[dim]));
  }
  return region;
}

// The block of a chunk key of the default encoding ("c/1/0"; "c" for a 0-d array).
Shape BlockOfKey(const std::string& key) {
  Shape block;
  for (std::size_t slash = key.find('/'); slash != std::string::npos;) {
    const std::size_t next = key.find('/', slash + 1);
    block.push_back(static_cast<Index>(std::stoll(key.substr(slash + 1, next - slash - 1))));
    slash = next;
  }
  return block;
}

void FuzzShardedArray(const std::uint8_t* data, std::size_t size) {
  if (size < kArrayHeaderSize) return;
  const ArrayLayout layout = LayoutFrom(data);
  const bool splice = (data[1] & 0x80) != 0;
  const bool fix_checksums = (data[2] & 0x40) != 0;
  const int region_threads = (data[2] & 0x80) != 0 ? 2 : 1;
  const std::span<const std::byte> payload = AsBytes(data, size).subspan(kArrayHeaderSize);

  const Written& written = WrittenArray(layout);
  if (written.shard_keys.empty()) Fail("the valid array has no shard", "");
  const auto store = tessera::MemoryStore::Create();
  for (const auto& [key, bytes] : written.values) {
    store->Set(key, std::span<const std::byte>(bytes));
  }
  const std::string& target = written.shard_keys[data[3] % 16 % written.shard_keys.size()];

  std::vector<std::byte> value;
  if (!splice) {
    value.assign(payload.begin(), payload.end());
    if (fix_checksums) FixIndexChecksum(written.index_layout, value);
  } else {
    std::vector<std::byte> inner(payload.begin(), payload.end());
    if (fix_checksums) {
      if (layout.nested) {
        // The nested shard's index has the outer one's layout over fewer entries.
        const Geometry& geometry = kGeometries[layout.geometry];
        tessera::ShardIndexLayout nested = written.index_layout;
        nested.entries = 1;
        for (std::size_t dim = 0; dim < geometry.middle.size(); ++dim) {
          nested.entries *= geometry.middle[dim] / geometry.leaf[dim];
        }
        FixIndexChecksum(nested, inner);
      } else if (layout.inner_codec == 3 || layout.crc_after) {
        FixTrailingChecksum(inner);
      }
    }
    const auto original = std::ranges::find_if(
        written.values, [&](const auto& entry) { return entry.first == target; });
    value = Splice(written.index_layout, original->second, data[4] % written.index_layout.entries,
                   inner);
  }
  store->Set(target, std::span<const std::byte>(value));

  // The metadata is valid: opening must work whatever the shards hold.
  const tessera::ZarrArray array = tessera::ZarrArray::Open(store);
  const std::optional<tessera::NDArray> full =
      ReadUnlessBad(false, "", [&] { return array.Read(/*max_threads=*/1); });
  const tessera::Region region = RegionFrom(array.metadata().shape, data[5]);
  const std::optional<tessera::NDArray> part =
      ReadUnlessBad(full.has_value(), "Read() succeeds but ReadRegion() of part of it fails",
                    [&] { return array.ReadRegion(region, region_threads); });
  if (full && part && tessera::testing::Slice(*full, region) != *part) {
    Fail("ReadRegion() differs from that part of Read()",
         "start " + tessera::ShapeToString(region.start) + " shape " +
             tessera::ShapeToString(region.shape) + " threads " + std::to_string(region_threads));
  }
  // The replaced shard on its own (ReadBlock: the whole block, read in place).
  const Shape block = BlockOfKey(target);
  const std::optional<tessera::NDArray> shard =
      ReadUnlessBad(full.has_value(), "Read() succeeds but ReadBlock() fails",
                    [&] { return array.ReadBlock(block); });
  if (full && shard && tessera::testing::Slice(*full, array.grid().BlockRegion(block)) != *shard) {
    Fail("ReadBlock() differs from that part of Read()", target);
  }
}

// ---------------------------------------------------------------------------------------
// Shard index mode.

constexpr std::size_t kIndexHeaderSize = 5;

// Checks what a decoded index promises: entries as the input's integers, each lying in
// the shard's data bytes, the non-empty ones not overlapping.
void CheckDecoded(const tessera::ShardIndex& index, const tessera::ShardIndexLayout& layout,
                  std::span<const std::byte> bytes, std::int64_t shard_size) {
  if (index.size() != layout.entries || index.shard_size() != shard_size) {
    Fail("decoded index has the wrong size", "");
  }
  const std::int64_t index_bytes = layout.IndexBytes();
  if (shard_size < index_bytes) Fail("an index larger than its shard decodes", "");
  const auto begin = static_cast<std::uint64_t>(layout.at_end ? 0 : index_bytes);
  const auto end =
      static_cast<std::uint64_t>(layout.at_end ? shard_size - index_bytes : shard_size);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> used;
  for (Index entry = 0; entry < layout.entries; ++entry) {
    const tessera::ShardEntry& slot = index.entry(entry);
    const auto at = static_cast<std::size_t>(16 * entry);
    if (slot.offset != LoadU64(bytes.data() + at, layout.big_endian) ||
        slot.nbytes != LoadU64(bytes.data() + at + 8, layout.big_endian)) {
      Fail("decoded entry differs from the index's integers", std::to_string(entry));
    }
    if (slot.empty()) continue;
    if (slot.offset < begin || slot.offset > end || slot.nbytes > end - slot.offset) {
      Fail("decoded entry lies outside the shard's data", std::to_string(entry));
    }
    if (slot.nbytes > 0) used.emplace_back(slot.offset, slot.offset + slot.nbytes);
  }
  std::ranges::sort(used);
  for (std::size_t position = 1; position < used.size(); ++position) {
    if (used[position - 1].second > used[position].first) Fail("decoded entries overlap", "");
  }
}

// Builds shards with one ShardBuilder (twice, the second reusing its buffers with the
// opposite index location) and checks that each decodes to what was added. Per entry,
// one input byte: bit 7 added or not, the rest its size (0..127), its bytes taken from
// the input in turn; entries are added in the order of a rotation by the first byte.
void BuilderRoundTrip(tessera::ShardIndexLayout layout, std::span<const std::byte> input) {
  tessera::ShardBuilder builder;
  for (int round = 0; round < 2; ++round) {
    const std::int64_t hint =
        input.empty() ? 0 : std::to_integer<std::int64_t>(input[0]) * (round + 1);
    builder.Start(layout, hint);
    std::vector<std::vector<std::byte>> added(static_cast<std::size_t>(layout.entries));
    std::vector<bool> present(static_cast<std::size_t>(layout.entries), false);
    std::size_t cursor = 0;
    const std::size_t rotation = input.empty() ? 0 : std::to_integer<std::size_t>(input[0]);
    std::int64_t data_bytes = 0;
    for (Index step = 0; step < layout.entries; ++step) {
      const auto entry = static_cast<std::size_t>((static_cast<std::size_t>(step) + rotation) %
                                                  static_cast<std::size_t>(layout.entries));
      const std::uint8_t spec =
          input.empty() ? 0 : std::to_integer<std::uint8_t>(input[(entry + 1) % input.size()]);
      if ((spec & 0x80) == 0) continue;
      const std::size_t nbytes = spec & 0x7f;
      for (std::size_t byte = 0; byte < nbytes; ++byte) {
        added[entry].push_back(input.empty() ? std::byte{0} : input[cursor++ % input.size()]);
      }
      present[entry] = true;
      builder.Add(static_cast<Index>(entry), added[entry]);
      data_bytes += static_cast<std::int64_t>(nbytes);
    }
    if (builder.empty() != std::ranges::none_of(present, [](bool is) { return is; })) {
      Fail("ShardBuilder::empty() is wrong", "");
    }
    const std::span<const std::byte> shard = builder.Finish();
    const auto index_bytes = static_cast<std::size_t>(layout.IndexBytes());
    if (static_cast<std::int64_t>(shard.size()) != data_bytes + layout.IndexBytes()) {
      Fail("ShardBuilder's shard has the wrong size", "");
    }
    const std::span<const std::byte> index =
        layout.at_end ? shard.last(index_bytes) : shard.first(index_bytes);
    const tessera::ShardIndex decoded = tessera::ShardIndex::Decode(
        index, layout, static_cast<std::int64_t>(shard.size()), "built shard");
    CheckDecoded(decoded, layout, index, static_cast<std::int64_t>(shard.size()));
    for (std::size_t entry = 0; entry < added.size(); ++entry) {
      const tessera::ShardEntry& slot = decoded.entry(static_cast<Index>(entry));
      if (!present[entry]) {
        if (!slot.empty()) Fail("an entry never added is not empty", std::to_string(entry));
        continue;
      }
      if (slot.empty() || slot.nbytes != added[entry].size() ||
          (!added[entry].empty() && std::memcmp(shard.data() + slot.offset, added[entry].data(),
                                                added[entry].size()) != 0)) {
        Fail("an added entry does not read back", std::to_string(entry));
      }
    }
    layout.at_end = !layout.at_end;
  }
}

void FuzzShardIndex(const std::uint8_t* data, std::size_t size) {
  if (size < kIndexHeaderSize) return;
  tessera::ShardIndexLayout layout;
  layout.at_end = (data[1] & 0x01) != 0;
  layout.checksum = (data[1] & 0x02) != 0;
  layout.big_endian = (data[1] & 0x04) != 0;
  const bool fix_checksum = (data[1] & 0x08) != 0;
  const bool builder = (data[1] & 0x10) != 0;
  layout.entries = data[2] % 64;
  const std::span<const std::byte> input = AsBytes(data, size).subspan(kIndexHeaderSize);
  if (builder) {
    BuilderRoundTrip(layout, input);
    return;
  }
  const std::int64_t number = data[3] | (std::int64_t{data[4]} << 8);
  std::int64_t shard_size = 0;
  switch ((data[1] >> 5) & 3) {
    case 0:
      shard_size = number;
      break;
    case 1:
      shard_size = layout.IndexBytes() + number;
      break;
    case 2:
      shard_size = std::numeric_limits<std::int64_t>::max() - number;
      break;
    default:
      shard_size = -number;
      break;
  }
  std::vector<std::byte> index(input.begin(), input.end());
  index.resize(static_cast<std::size_t>(layout.IndexBytes()), std::byte{0xff});
  if (fix_checksum) FixIndexChecksum(layout, index);
  try {
    const tessera::ShardIndex decoded =
        tessera::ShardIndex::Decode(index, layout, shard_size, "fuzz");
    CheckDecoded(decoded, layout, index, shard_size);
  } catch (const tessera::FormatError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  switch (data[0] >> 6) {
    case 0:
      FuzzCodec(data, size, /*round_trip=*/false);
      break;
    case 1:
      FuzzShardedArray(data, size);
      break;
    case 2:
      FuzzCodec(data, size, /*round_trip=*/true);
      break;
    default:
      FuzzShardIndex(data, size);
      break;
  }
  return 0;
}
