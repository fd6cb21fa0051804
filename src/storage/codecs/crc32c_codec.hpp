// Crc32cCodec: Zarr v3's "crc32c" codec: the bytes as they are, then their CRC-32C
// (Castagnoli) as 4 little-endian bytes.
//
//   1. Crc32cCodec codec(config);               // no parameters
//   2. Buffer framed = codec.Encode(raw, 1);    // raw + 4 checksum bytes
//   3. codec.Decode(framed.span(), out);        // out.size() == framed.size() - 4
//
// Decode recomputes the checksum and throws FormatError when it differs from the stored
// one (saying both) or when the input is shorter than 4 bytes or not out.size() + 4.
// Crc32c(bytes) is the checksum itself: SSE 4.2's crc32 instruction where the CPU has it
// (chosen at run time), else a table-driven loop with the same result.
// Thread safety: immutable after construction; Encode and Decode may run concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "tessera/storage/codec.hpp"

namespace tessera::codecs {

// The CRC-32C of `bytes`, continuing from `crc` (0 for a fresh checksum).
std::uint32_t Crc32c(std::span<const std::byte> bytes, std::uint32_t crc = 0);

inline constexpr std::int64_t kCrc32cBytes = 4;

class Crc32cCodec final : public Codec {
 public:
  explicit Crc32cCodec(const CodecConfig& config) : config_(config) {}

  void EncodeInto(std::span<const std::byte> raw, std::int64_t itemsize,
                  Buffer& out) const override;
  void Decode(std::span<const std::byte> encoded, std::span<std::byte> out) const override;
  // The bytes before the checksum, checked.
  std::optional<std::span<const std::byte>> DecodedView(
      std::span<const std::byte> encoded) const override;
  // encoded.size() - 4; nullopt when shorter than the checksum.
  std::optional<std::int64_t> DecodedSize(std::span<const std::byte> encoded) const override;
  const CodecConfig& config() const override { return config_; }

 private:
  std::int64_t MaxEncodedSizeOf(std::int64_t raw_size) const override {
    return raw_size + kCrc32cBytes;
  }
  // Copies only: no buffer of its own.
  std::int64_t EncodeWorkingBytesOf(std::int64_t, std::int64_t) const override { return 0; }
  std::int64_t DecodeWorkingBytesOf(std::int64_t, std::int64_t) const override { return 0; }

  CodecConfig config_;
};

}  // namespace tessera::codecs
