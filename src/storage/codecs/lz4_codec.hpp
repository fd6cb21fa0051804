// Lz4Codec: numcodecs' "lz4" codec: a 4-byte little-endian decoded size, then one raw
// LZ4 block (not the LZ4 frame format).
//
//   1. Lz4Codec codec(config);                 // config.acceleration >= 1
//   2. Buffer frame = codec.Encode(raw, 8);    // [u32 size][LZ4 block]
//   3. codec.Decode(frame.span(), out);        // out.size() = the chunk's byte size
//
// Decode checks the size header against out.size() before touching the block, then
// decodes with LZ4_decompress_safe, which never writes past `out`; a block that does not
// fill `out` exactly is a FormatError.
//
// Limits: LZ4 blocks hold at most LZ4_MAX_INPUT_SIZE (about 1.97 GiB); Encode throws
// InvalidArgument for larger chunks.
// Thread safety: immutable after construction; Encode and Decode may run concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "tessera/storage/codec.hpp"

namespace tessera::codecs {

// The state LZ4_compress_fast uses (on the stack; counted all the same).
std::int64_t Lz4EncodeWorkingBytes();

class Lz4Codec final : public Codec {
 public:
  // Throws InvalidArgument unless 1 <= acceleration <= 65537 (LZ4_ACCELERATION_MAX).
  explicit Lz4Codec(const CodecConfig& config);

  // itemsize is unused (LZ4 does not shuffle).
  void EncodeInto(std::span<const std::byte> raw, std::int64_t itemsize,
                  Buffer& out) const override;
  void Decode(std::span<const std::byte> encoded, std::span<std::byte> out) const override;
  // The size header's value; nullopt when the frame is shorter than the header.
  std::optional<std::int64_t> DecodedSize(std::span<const std::byte> encoded) const override;
  const CodecConfig& config() const override { return config_; }

 private:
  // 4 + LZ4_compressBound(raw_size).
  std::int64_t MaxEncodedSizeOf(std::int64_t raw_size) const override;
  // The codec's own allocations during one call (Codec::EncodeWorkingBytes).
  std::int64_t EncodeWorkingBytesOf(std::int64_t raw_size, std::int64_t itemsize) const override;
  std::int64_t DecodeWorkingBytesOf(std::int64_t raw_size, std::int64_t itemsize) const override;

  CodecConfig config_;
};

}  // namespace tessera::codecs
