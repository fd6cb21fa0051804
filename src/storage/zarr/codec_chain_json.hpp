// Codecs in v3 zarr.json documents: the "codecs" list ({"name": "bytes", "configuration":
// {"endian": "little"}}, {"name": "blosc", ...}, {"name": "sharding_indexed", ...}) <->
// ZarrCodecChain, validated against the array's dtype and chunk shape.
//
//   ZarrCodecChain chain = ParseCodecChain(document["codecs"], "codecs", where, dtype, chunks);
//   document["codecs"] = CodecChainToJson(chain, dtype);
//
// A codec is an object with "name" and an optional "configuration" (or just its name
// as a string). Order rules (array-to-array, then one array-to-bytes, then
// bytes-to-bytes) and each codec's parameters are checked here; the parameter ranges are
// the codec layer's (MakeCodec), whose refusal becomes a FormatError of the document.
// A shard's inner chunk shape must divide its shard shape; index codecs are bytes and
// optionally crc32c. A transpose before sharding_indexed is refused (Tessera shards
// arrays in their own dimension order).
//
// Internal to src/storage/zarr. Pure functions: thread-safe.
#pragma once

#include <string_view>

#include "json_fields.hpp"
#include "metadata_sizes.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera::zarr_detail {

// The type codecs see for `metadata`'s elements: its dtype, or uint16 for float16
// storage (2-byte elements: bytes' endianness, blosc's typesize).
DType StoredElementType(const ZarrMetadata& metadata);

ZarrCodecChain ParseCodecChain(const Json& codecs, std::string_view key, std::string_view where,
                               DType dtype, std::span<const Index> chunk_shape, int depth = 0);

// The chain as zarr-python writes it; InvalidArgument for a chain Tessera cannot write.
Json CodecChainToJson(const ZarrCodecChain& chain, DType dtype);

// Checks `chain` for an array of `dtype` in chunks of `chunk_shape`, as ParseCodecChain
// does, for chains built in code; throws InvalidArgument naming `key` otherwise.
void ValidateCodecChain(const ZarrCodecChain& chain, DType dtype,
                        std::span<const Index> chunk_shape, std::string_view key, int depth = 0);

// "transpose [1, 0] -> bytes (big) -> blosc(lz4, level 5, shuffle)" and, for a
// sharded chain, "sharding_indexed (inner chunks [10, 10], index at end: bytes ->
// crc32c) of [bytes -> zstd(level 0)]": one line for `tessera info` and messages.
std::string DescribeCodecChain(const ZarrCodecChain& chain);

}  // namespace tessera::zarr_detail
