// ZlibCodec: numcodecs' "zlib" and "gzip" codecs, one deflate implementation that differs
// only in its container (zlib's window bits select it).
//
//   1. ZlibCodec codec(config);                // config.id "zlib" or "gzip", level -1..9
//   2. Buffer stream = codec.Encode(raw, 8);   // one zlib stream / one gzip member
//   3. codec.Decode(stream.span(), out);       // out.size() = the chunk's byte size
//
// "zlib" is an RFC 1950 stream, as Python's zlib.compress (numcodecs.Zlib) writes;
// "gzip" is one RFC 1952 member, as numcodecs.GZip writes (header fields are not compared,
// so any mtime or OS byte is accepted). Decode inflates straight into `out` and throws
// FormatError when the stream is truncated or corrupt, decodes to more or fewer than
// out.size() bytes, or is followed by trailing bytes (concatenated gzip members included).
//
// Thread safety: immutable after construction; Encode and Decode may run concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "tessera/storage/codec.hpp"

namespace tessera::codecs {

// zlib's documented memory of one deflate stream (windowBits 15, memLevel 8: what this
// codec and blosc's zlib compressor use) and of one inflate stream.
std::int64_t DeflateWorkingBytes();
std::int64_t InflateWorkingBytes();

class ZlibCodec final : public Codec {
 public:
  // Throws InvalidArgument unless config.id is "zlib" or "gzip" and -1 <= level <= 9
  // (-1 is zlib's default, level 6).
  explicit ZlibCodec(const CodecConfig& config);

  // itemsize is unused (deflate does not shuffle).
  void EncodeInto(std::span<const std::byte> raw, std::int64_t itemsize,
                  Buffer& out) const override;
  void Decode(std::span<const std::byte> encoded, std::span<std::byte> out) const override;
  // zlib: always nullopt (the format does not record the size). gzip: the ISIZE trailer,
  // the size modulo 2^32, only a hint; nullopt for a frame too short to be a gzip member.
  std::optional<std::int64_t> DecodedSize(std::span<const std::byte> encoded) const override;
  // Inflates into `capacity` and returns the decoded size; a stream that would decode to
  // more than capacity.size() is a FormatError, found without writing past it.
  std::int64_t DecodeUpTo(std::span<const std::byte> encoded,
                          std::span<std::byte> capacity) const override;
  const CodecConfig& config() const override { return config_; }

 private:
  // compressBound(raw_size), plus the gzip container's extra header and trailer bytes.
  std::int64_t MaxEncodedSizeOf(std::int64_t raw_size) const override;
  // The codec's own allocations during one call (Codec::EncodeWorkingBytes).
  std::int64_t EncodeWorkingBytesOf(std::int64_t raw_size, std::int64_t itemsize) const override;
  std::int64_t DecodeWorkingBytesOf(std::int64_t raw_size, std::int64_t itemsize) const override;

  // Inflates `encoded` into the front of `out` and returns the decoded size.
  std::int64_t Inflate(std::span<const std::byte> encoded, std::span<std::byte> out) const;

  CodecConfig config_;
  int window_bits_;  // zlib's windowBits: 15 for a zlib stream, 15 + 16 for gzip.
};

}  // namespace tessera::codecs
