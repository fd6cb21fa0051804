// ZstdCodec: numcodecs' "zstd" codec: each chunk is one plain zstd frame.
//
//   1. ZstdCodec codec(config);                // config.level in ZSTD_minCLevel()..22
//   2. Buffer frame = codec.Encode(raw, 8);    // one frame, content size recorded
//   3. codec.Decode(frame.span(), out);        // out.size() = the chunk's byte size
//
// Encode writes the decoded size into the frame header, as numcodecs does (its decoder
// requires it). Decode accepts frames with or without that size: a recorded size must equal
// out.size(); either way the frame is decoded in one pass straight into `out`, never
// allocating from a size found in the frame, and anything that would not fill `out`
// exactly (longer, shorter, truncated, trailing garbage) is a FormatError.
//
// Working memory: each call creates its own zstd context and frees it before returning, so
// what a task holds is what EncodeWorkingBytes / DecodeWorkingBytes state (zstd's own
// ZSTD_estimateCCtxSize_usingCParams for the level and chunk size, ZSTD_estimateDCtxSize),
// never a context a thread kept from another task (a level 19 context of a 4 MB chunk is
// about 50 MB).
// Thread safety: immutable after construction; Encode and Decode may run concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "tessera/storage/codec.hpp"

namespace tessera::codecs {

// zstd's context for compressing raw_size bytes at `level` with ZSTD_compressCCtx, and
// its decompression context (also what blosc's zstd compressor allocates per block).
std::int64_t ZstdWorkingBytes(int level, std::int64_t raw_size);
std::int64_t ZstdDecodeWorkingBytes();

class ZstdCodec final : public Codec {
 public:
  // Throws InvalidArgument unless ZSTD_minCLevel() <= level <= ZSTD_maxCLevel() (0 means
  // zstd's default level 3, as in numcodecs).
  explicit ZstdCodec(const CodecConfig& config);

  // itemsize is unused (zstd does not shuffle).
  void EncodeInto(std::span<const std::byte> raw, std::int64_t itemsize,
                  Buffer& out) const override;
  void Decode(std::span<const std::byte> encoded, std::span<std::byte> out) const override;
  // The frame header's content size; nullopt when the frame does not record one or does
  // not start with a valid frame header.
  std::optional<std::int64_t> DecodedSize(std::span<const std::byte> encoded) const override;
  const CodecConfig& config() const override { return config_; }

 private:
  // ZSTD_compressBound(raw_size).
  std::int64_t MaxEncodedSizeOf(std::int64_t raw_size) const override;
  // The codec's own allocations during one call (Codec::EncodeWorkingBytes).
  std::int64_t EncodeWorkingBytesOf(std::int64_t raw_size, std::int64_t itemsize) const override;
  std::int64_t DecodeWorkingBytesOf(std::int64_t raw_size, std::int64_t itemsize) const override;

  CodecConfig config_;
};

}  // namespace tessera::codecs
