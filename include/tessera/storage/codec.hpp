// Codecs: compressors of chunk bytes, with numcodecs' exact framing so that
// zarr-python reads what we write and the other way round.
//
//   tessera::CodecConfig config = tessera::ParseCodecSpec("blosc:lz4:5:shuffle");
//   std::unique_ptr<tessera::Codec> codec = tessera::MakeCodec(config);
//   tessera::Buffer compressed = codec->Encode(raw, /*itemsize=*/8);
//   codec->EncodeInto(raw, 8, compressed);   // reuses compressed's allocation
//   codec->Decode(compressed.span(), out);   // out.size() must be the decoded size
//   codec->DecodedSize(compressed.span());   // the size the frame declares, if it does
//   codec->DecodeUpTo(compressed.span(), scratch);  // any size <= scratch.size()
//
// Supported ids: "blosc" (cname lz4, lz4hc, zstd, blosclz, zlib; shuffle none, byte,
// bit), "zstd", "lz4" (numcodecs LZ4: 4-byte little-endian size header), "zlib",
// "gzip", "crc32c" (Zarr v3's checksum: the bytes, then their CRC-32C as 4 little-endian
// bytes; decoding checks and strips it, a mismatch is a FormatError). Decode never trusts a header: when the frame claims a decoded size other
// than out.size(), or is truncated or corrupt, it throws FormatError and never
// allocates more than out.size(); DecodeUpTo likewise never exceeds its capacity.
// Codec objects are immutable and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tessera/core/buffer.hpp"

namespace tessera {

struct CodecConfig {
  std::string id;             // "blosc", "zstd", "lz4", "zlib", "gzip", "crc32c"
  std::string cname = "lz4";  // blosc only: lz4, lz4hc, zstd, blosclz, zlib
  int level = 5;              // blosc clevel, zstd/zlib/gzip level
  int shuffle = 1;            // blosc only: 0 none, 1 byte, 2 bit (numcodecs' values)
  int blocksize = 0;          // blosc only: 0 = automatic
  int acceleration = 1;       // lz4 only
  // blosc only: the element size shuffling assumes, as Zarr v3's "typesize" records it;
  // 0 = the itemsize each EncodeInto call passes (Zarr v2, where numcodecs takes it from
  // the array's dtype).
  int typesize = 0;
  bool checksum = false;  // zstd only: each frame ends in its content checksum (XXH64)

  friend bool operator==(const CodecConfig&, const CodecConfig&) = default;
};

class Codec {
 public:
  virtual ~Codec() = default;
  // Compresses `raw` into `out`, whose allocation is reused when large enough (so a
  // thread encoding many chunks touches fresh memory once); itemsize is the element
  // size (for shuffling). On return out.size() is the encoded size.
  virtual void EncodeInto(std::span<const std::byte> raw, std::int64_t itemsize,
                          Buffer& out) const = 0;
  // Compresses `raw` into a new Buffer.
  Buffer Encode(std::span<const std::byte> raw, std::int64_t itemsize) const {
    Buffer out;
    EncodeInto(raw, itemsize, out);
    return out;
  }
  // Decompresses `encoded` into exactly `out`; throws FormatError on any mismatch.
  virtual void Decode(std::span<const std::byte> encoded, std::span<std::byte> out) const = 0;
  // For a codec whose decoded bytes are a part of its input (crc32c: all but the
  // checksum): checks `encoded` as Decode does and returns that part, copying nothing.
  // nullopt for every other codec (decode with Decode or DecodeUpTo).
  virtual std::optional<std::span<const std::byte>> DecodedView(
      std::span<const std::byte> /*encoded*/) const {
    return std::nullopt;
  }
  // The decoded size `encoded`'s frame declares, read from its header without decoding;
  // nullopt when the format does not record it (zlib) or the frame is too short to hold
  // it. A claim only, never trusted: Decode checks it. For gzip it is the size modulo
  // 2^32 (the ISIZE trailer), so only a hint.
  virtual std::optional<std::int64_t> DecodedSize(std::span<const std::byte> encoded) const = 0;
  // Decompresses `encoded`, whose decoded size is known only to be at most
  // capacity.size(), into the front of `capacity`; returns the decoded size. Throws
  // FormatError, before writing past `capacity` or allocating, when the frame decodes or
  // claims to decode to more, or is truncated or corrupt. The default decodes exactly
  // DecodedSize(encoded) bytes (FormatError when the frame declares none); formats that
  // record no size (zlib, gzip) override it.
  virtual std::int64_t DecodeUpTo(std::span<const std::byte> encoded,
                                  std::span<std::byte> capacity) const;
  // Largest encoded size for raw_size input bytes (for memory projections).
  // Throws InvalidArgument for raw_size < 0.
  std::int64_t MaxEncodedSize(std::int64_t raw_size) const;
  // Bytes the codec allocates for itself while one EncodeInto (resp. Decode or
  // DecodeUpTo) of raw_size decoded bytes of itemsize-byte elements runs, besides the
  // caller's input and output buffers: compression contexts and their tables and windows,
  // decompression contexts, blosc's block buffers. Every such allocation is freed before
  // the call returns (no codec keeps a context between calls), so one thread holds at
  // most one of these figures at a time. Upper bounds for this build's libraries at the
  // configured level, exact where the library states them (zstd's estimate functions,
  // zlib's documented formula) and measured otherwise (docs/memory-model.md lists them).
  // Decoding assumes frames laid out as this codec's encoder would lay them out (blosc's
  // block size for the configured level). Throws InvalidArgument for raw_size < 0.
  std::int64_t EncodeWorkingBytes(std::int64_t raw_size, std::int64_t itemsize) const;
  std::int64_t DecodeWorkingBytes(std::int64_t raw_size, std::int64_t itemsize) const;
  virtual const CodecConfig& config() const = 0;

 protected:
  // MaxEncodedSize for raw_size >= 0.
  virtual std::int64_t MaxEncodedSizeOf(std::int64_t raw_size) const = 0;
  // EncodeWorkingBytes and DecodeWorkingBytes for raw_size >= 0 (itemsize as given).
  virtual std::int64_t EncodeWorkingBytesOf(std::int64_t raw_size, std::int64_t itemsize) const = 0;
  virtual std::int64_t DecodeWorkingBytesOf(std::int64_t raw_size, std::int64_t itemsize) const = 0;
};

// Throws InvalidArgument for an unknown id, cname, shuffle or out-of-range level.
std::unique_ptr<Codec> MakeCodec(const CodecConfig& config);

// The CRC-32C (Castagnoli) of `bytes`, as Zarr v3's crc32c codec and shard indexes store it.
std::uint32_t Crc32cOf(std::span<const std::byte> bytes);

// Parses a command-line codec: "none" is not a codec (callers handle it);
// "blosc" / "blosc:lz4" / "blosc:zstd:3:bitshuffle", "zstd" / "zstd:3", "lz4",
// "zlib:6", "gzip". Throws InvalidArgument with the accepted forms.
CodecConfig ParseCodecSpec(std::string_view text);

// "blosc(lz4, level 5, shuffle)" — for `tessera info` and messages.
std::string DescribeCodec(const CodecConfig& config);

}  // namespace tessera
