#include "lz4_codec.hpp"

#include <lz4.h>

#include <cstdint>
#include <string>

#include "little_endian.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::codecs {
namespace {

// numcodecs' header: the decoded size as a little-endian uint32.
constexpr std::size_t kHeaderSize = kLittleEndian32Bytes;

// lz4.c clamps larger accelerations to this value (LZ4_ACCELERATION_MAX there).
constexpr int kMaxAcceleration = 65537;

}  // namespace

Lz4Codec::Lz4Codec(const CodecConfig& config) : config_(config) {
  if (config.acceleration < 1 || config.acceleration > kMaxAcceleration) {
    throw InvalidArgument("lz4 acceleration must be 1.." + std::to_string(kMaxAcceleration) +
                          ", got " + std::to_string(config.acceleration));
  }
}

void Lz4Codec::EncodeInto(std::span<const std::byte> raw, std::int64_t /*itemsize*/,
                          Buffer& encoded) const {
  if (raw.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE)) {
    throw InvalidArgument("lz4 cannot compress a chunk of " + std::to_string(raw.size()) +
                          " bytes; its limit is " + std::to_string(LZ4_MAX_INPUT_SIZE) +
                          " bytes: use smaller chunks or the zstd codec");
  }
  const int raw_size = static_cast<int>(raw.size());
  encoded.ResizeUninitialized(MaxEncodedSize(raw_size));
  StoreLittleEndian32(static_cast<std::uint32_t>(raw_size), encoded.data());
  const int capacity = static_cast<int>(encoded.size() - static_cast<std::int64_t>(kHeaderSize));
  const int written = LZ4_compress_fast(reinterpret_cast<const char*>(raw.data()),
                                        reinterpret_cast<char*>(encoded.data() + kHeaderSize),
                                        raw_size, capacity, config_.acceleration);
  if (written <= 0) {
    throw Error("LZ4_compress_fast failed on " + std::to_string(raw_size) + " bytes");
  }
  encoded.Truncate(static_cast<std::int64_t>(kHeaderSize) + written);
}

void Lz4Codec::Decode(std::span<const std::byte> encoded, std::span<std::byte> out) const {
  if (encoded.size() < kHeaderSize) {
    throw FormatError("lz4 chunk has " + std::to_string(encoded.size()) +
                      " bytes, fewer than its 4-byte size header: truncated, or not lz4 data");
  }
  const std::uint32_t claimed = LoadLittleEndian32(encoded.data());
  if (claimed != out.size()) {
    throw FormatError("lz4 size header claims " + std::to_string(claimed) +
                      " decoded bytes, expected " + std::to_string(out.size()) +
                      " (the chunk's size)");
  }
  const std::span<const std::byte> block = encoded.subspan(kHeaderSize);
  // claimed fits in uint32 and equals out.size(); LZ4 blocks themselves are int-sized.
  if (block.size() > static_cast<std::size_t>(LZ4_compressBound(LZ4_MAX_INPUT_SIZE)) ||
      out.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE)) {
    throw FormatError("lz4 chunk of " + std::to_string(encoded.size()) +
                      " bytes is larger than any LZ4 block");
  }
  const int decoded = LZ4_decompress_safe(
      reinterpret_cast<const char*>(block.data()), reinterpret_cast<char*>(out.data()),
      static_cast<int>(block.size()), static_cast<int>(out.size()));
  if (decoded < 0) {
    throw FormatError("lz4 block of " + std::to_string(block.size()) +
                      " bytes is truncated or corrupt, or decodes to more than " +
                      std::to_string(out.size()) + " bytes");
  }
  if (static_cast<std::size_t>(decoded) != out.size()) {
    throw FormatError("lz4 block decodes to " + std::to_string(decoded) + " bytes, expected " +
                      std::to_string(out.size()) + " (the size header's value)");
  }
}

std::optional<std::int64_t> Lz4Codec::DecodedSize(std::span<const std::byte> encoded) const {
  if (encoded.size() < kHeaderSize) return std::nullopt;
  return LoadLittleEndian32(encoded.data());
}

std::int64_t Lz4Codec::MaxEncodedSizeOf(std::int64_t raw_size) const {
  const auto header = static_cast<std::int64_t>(kHeaderSize);
  if (raw_size <= LZ4_MAX_INPUT_SIZE) {
    return header + LZ4_compressBound(static_cast<int>(raw_size));
  }
  // LZ4_compressBound returns 0 past LZ4_MAX_INPUT_SIZE (Encode refuses such chunks), but
  // memory projections still want a bound: the same formula, in 64 bits.
  return header + raw_size + raw_size / 255 + 16;
}

}  // namespace tessera::codecs

namespace tessera::codecs {

std::int64_t Lz4EncodeWorkingBytes() {
  // LZ4_compress_fast keeps its hash table (LZ4_sizeofState(), 16 KB) on the stack.
  return LZ4_sizeofState();
}

std::int64_t Lz4Codec::EncodeWorkingBytesOf(std::int64_t /*raw_size*/,
                                            std::int64_t /*itemsize*/) const {
  return Lz4EncodeWorkingBytes();
}

std::int64_t Lz4Codec::DecodeWorkingBytesOf(std::int64_t /*raw_size*/,
                                            std::int64_t /*itemsize*/) const {
  return 0;  // LZ4_decompress_safe works in the caller's buffers only.
}

}  // namespace tessera::codecs
