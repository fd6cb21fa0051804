#include "zlib_codec.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <new>
#include <string>

#include "little_endian.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::codecs {
namespace {

// 32 KiB history, the maximum and what Python's zlib uses; +16 asks zlib for a gzip wrapper.
constexpr int kZlibWindowBits = MAX_WBITS;
constexpr int kGzipWindowBits = MAX_WBITS + 16;
// zlib's default memLevel (8), as Python uses.
constexpr int kMemLevel = 8;
// A gzip member's 10-byte header and 8-byte trailer replace zlib's 2 + 4 bytes, which
// compressBound already counts.
constexpr std::int64_t kGzipExtraBytes = 10 + 8 - 6;
// The shortest gzip member: its 10-byte header, an empty deflate block, the 8-byte trailer
// (CRC-32, then ISIZE: the decoded size modulo 2^32, little-endian).
constexpr std::size_t kGzipMinMemberBytes = 10 + 2 + 8;
// What zconf.h's memory formulas call "a few kilobytes for small objects": deflate's state
// is 5,944 bytes and inflate's 7,160 in zlib 1.2.13 (measured; codec_memory_test.cpp).
constexpr std::int64_t kZlibSmallObjectBytes = 8 << 10;
// z_stream counts in uInt; larger spans are fed in pieces of at most this size.
constexpr std::size_t kMaxPiece = std::numeric_limits<uInt>::max();

// Moves up to kMaxPiece bytes of a span into zlib's (pointer, count) pair when zlib has
// consumed the previous piece.
template <typename Byte>
void Refill(Byte*& next, uInt& avail, std::span<Byte>& rest) {
  if (avail != 0 || rest.empty()) return;
  const std::size_t piece = std::min(rest.size(), kMaxPiece);
  next = rest.data();
  avail = static_cast<uInt>(piece);
  rest = rest.subspan(piece);
}

// Owns an initialized deflate or inflate stream and ends it on scope exit.
class DeflateStream {
 public:
  DeflateStream(int level, int window_bits) {
    const int status =
        deflateInit2(&stream_, level, Z_DEFLATED, window_bits, kMemLevel, Z_DEFAULT_STRATEGY);
    if (status == Z_MEM_ERROR) throw std::bad_alloc();
    if (status != Z_OK) throw Error("deflateInit2 failed with code " + std::to_string(status));
  }
  ~DeflateStream() { deflateEnd(&stream_); }
  DeflateStream(const DeflateStream&) = delete;
  DeflateStream& operator=(const DeflateStream&) = delete;
  z_stream* get() { return &stream_; }

 private:
  z_stream stream_{};
};

class InflateStream {
 public:
  explicit InflateStream(int window_bits) {
    const int status = inflateInit2(&stream_, window_bits);
    if (status == Z_MEM_ERROR) throw std::bad_alloc();
    if (status != Z_OK) throw Error("inflateInit2 failed with code " + std::to_string(status));
  }
  ~InflateStream() { inflateEnd(&stream_); }
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;
  z_stream* get() { return &stream_; }

 private:
  z_stream stream_{};
};

}  // namespace

std::int64_t DeflateWorkingBytes() {
  // zconf.h: deflate needs (1 << (windowBits + 2)) + (1 << (memLevel + 9)) bytes "plus a
  // few kilobytes for small objects" (its state, about 5.9 KB in zlib 1.2.13).
  return (std::int64_t{1} << (MAX_WBITS + 2)) + (std::int64_t{1} << (kMemLevel + 9)) +
         kZlibSmallObjectBytes;
}

std::int64_t InflateWorkingBytes() {
  // zconf.h: inflate needs (1 << windowBits) bytes (its window, allocated only when the
  // output cannot serve as one) and about 7 KB of state.
  return (std::int64_t{1} << MAX_WBITS) + kZlibSmallObjectBytes;
}

ZlibCodec::ZlibCodec(const CodecConfig& config) : config_(config), window_bits_(0) {
  if (config.id == "zlib") {
    window_bits_ = kZlibWindowBits;
  } else if (config.id == "gzip") {
    window_bits_ = kGzipWindowBits;
  } else {
    throw InvalidArgument("ZlibCodec handles ids 'zlib' and 'gzip', got '" + config.id + "'");
  }
  if (config.level < Z_DEFAULT_COMPRESSION || config.level > Z_BEST_COMPRESSION) {
    throw InvalidArgument(config.id + " level must be -1..9, got " + std::to_string(config.level));
  }
}

void ZlibCodec::EncodeInto(std::span<const std::byte> raw, std::int64_t /*itemsize*/,
                           Buffer& encoded) const {
  DeflateStream deflater(config_.level, window_bits_);
  z_stream* stream = deflater.get();
  // deflateBound is exact for these settings; MaxEncodedSize is the same bound computed
  // without a stream. Take the larger so that one Z_FINISH pass always fits.
  const auto bound = static_cast<std::int64_t>(deflateBound(stream, raw.size()));
  encoded.ResizeUninitialized(
      std::max(bound, MaxEncodedSize(static_cast<std::int64_t>(raw.size()))));

  // zlib never writes through next_in; its API lacks const.
  auto* raw_bytes = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(raw.data()));
  std::span<Bytef> input(raw_bytes, raw.size());
  std::span<Bytef> output(reinterpret_cast<Bytef*>(encoded.data()),
                          static_cast<std::size_t>(encoded.size()));
  while (true) {
    Refill(stream->next_in, stream->avail_in, input);
    Refill(stream->next_out, stream->avail_out, output);
    const int flush = input.empty() ? Z_FINISH : Z_NO_FLUSH;
    const int status = deflate(stream, flush);
    if (status == Z_STREAM_END) break;
    if (status != Z_OK && !(status == Z_BUF_ERROR && stream->avail_out != 0)) {
      throw Error(config_.id + " compression of " + std::to_string(raw.size()) +
                  " bytes failed with code " + std::to_string(status));
    }
  }
  encoded.Truncate(static_cast<std::int64_t>(stream->total_out));
}

std::int64_t ZlibCodec::Inflate(std::span<const std::byte> encoded,
                                std::span<std::byte> out) const {
  if (encoded.empty()) throw FormatError(config_.id + " chunk is empty; expected a stream");
  InflateStream inflater(window_bits_);
  z_stream* stream = inflater.get();

  auto* encoded_bytes = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(encoded.data()));
  std::span<Bytef> input(encoded_bytes, encoded.size());
  std::span<Bytef> output(reinterpret_cast<Bytef*>(out.data()), out.size());
  // Once `out` is full, inflate continues into this byte: if it lands there the stream
  // is longer than the chunk.
  Bytef overflow = 0;
  bool into_overflow = false;
  while (true) {
    Refill(stream->next_in, stream->avail_in, input);
    Refill(stream->next_out, stream->avail_out, output);
    if (stream->avail_out == 0 && !into_overflow) {
      stream->next_out = &overflow;
      stream->avail_out = 1;
      into_overflow = true;
    }
    const int status = inflate(stream, Z_NO_FLUSH);
    if (into_overflow && stream->avail_out == 0) {
      throw FormatError(config_.id + " stream decodes to more than " + std::to_string(out.size()) +
                        " bytes");
    }
    if (status == Z_STREAM_END) break;
    if (status == Z_OK) continue;
    if (status == Z_MEM_ERROR) throw std::bad_alloc();
    if (status == Z_BUF_ERROR) {
      // No progress possible: all input is consumed (output space was offered above).
      throw FormatError(config_.id + " stream of " + std::to_string(encoded.size()) +
                        " bytes is truncated after " + std::to_string(stream->total_out) +
                        " decoded bytes");
    }
    throw FormatError(
        config_.id + " stream of " + std::to_string(encoded.size()) + " bytes is corrupt: " +
        (stream->msg != nullptr ? stream->msg : "inflate code " + std::to_string(status)));
  }
  if (stream->avail_in != 0 || !input.empty()) {
    throw FormatError(config_.id + " stream ends after " + std::to_string(stream->total_in) +
                      " of " + std::to_string(encoded.size()) + " bytes; trailing bytes follow");
  }
  return static_cast<std::int64_t>(stream->total_out);
}

void ZlibCodec::Decode(std::span<const std::byte> encoded, std::span<std::byte> out) const {
  const std::int64_t decoded = Inflate(encoded, out);
  if (static_cast<std::uint64_t>(decoded) != out.size()) {
    throw FormatError(config_.id + " stream decodes to " + std::to_string(decoded) +
                      " bytes, expected " + std::to_string(out.size()) + " (the chunk's size)");
  }
}

std::int64_t ZlibCodec::DecodeUpTo(std::span<const std::byte> encoded,
                                   std::span<std::byte> capacity) const {
  return Inflate(encoded, capacity);
}

std::optional<std::int64_t> ZlibCodec::DecodedSize(std::span<const std::byte> encoded) const {
  if (window_bits_ != kGzipWindowBits) return std::nullopt;  // zlib records no size
  if (encoded.size() < kGzipMinMemberBytes || encoded[0] != std::byte{0x1f} ||
      encoded[1] != std::byte{0x8b}) {
    return std::nullopt;
  }
  return LoadLittleEndian32(encoded.data() + encoded.size() - kLittleEndian32Bytes);
}

std::int64_t ZlibCodec::MaxEncodedSizeOf(std::int64_t raw_size) const {
  const auto bound = static_cast<std::int64_t>(compressBound(static_cast<uLong>(raw_size)));
  return window_bits_ == kGzipWindowBits ? bound + kGzipExtraBytes : bound;
}

}  // namespace tessera::codecs

namespace tessera::codecs {

std::int64_t ZlibCodec::EncodeWorkingBytesOf(std::int64_t /*raw_size*/,
                                             std::int64_t /*itemsize*/) const {
  return DeflateWorkingBytes();
}

std::int64_t ZlibCodec::DecodeWorkingBytesOf(std::int64_t /*raw_size*/,
                                             std::int64_t /*itemsize*/) const {
  return InflateWorkingBytes();
}

}  // namespace tessera::codecs
