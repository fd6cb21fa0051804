// BloscCodec: numcodecs' "blosc" codec, over libblosc 1.x.
//
//   1. BloscCodec codec(config);                  // throws InvalidArgument for bad config
//   2. Buffer frame = codec.Encode(raw, itemsize); // itemsize = typesize for shuffling
//   3. codec.Decode(frame.span(), out);            // out.size() = the chunk's byte size
//
// The frame is blosc's own (16-byte header: version, flags, typesize, nbytes, blocksize,
// cbytes), exactly what numcodecs.Blosc writes and reads. Only the thread-safe context API
// is used (blosc_compress_ctx / blosc_decompress_ctx) with one internal thread: Tessera
// runs chunks in parallel itself, and blosc's global state is never touched.
//
// Shuffle uses numcodecs' values: 0 none, 1 byte, 2 bit, and -1 (AUTOSHUFFLE, only found
// in metadata written by numcodecs) which Encode resolves per call to bit-shuffle for
// itemsize 1 and byte-shuffle otherwise.
//
// Working memory (EncodeWorkingBytes): blosc_compress_ctx allocates two buffers of its block
// size (which libblosc picks from cname, level and typesize: up to 1 MiB) and, per block,
// one state of the inner compressor (zstd at level 2 * clevel - 1, or 22 at clevel 9: about
// 18 MB for 1 MiB blocks; zlib's deflate stream; lz4hc's 256 KB state). Decoding holds two
// blocks and a decompression context. Frames written with larger blocks than this build's
// libblosc picks for the metadata's settings (another writer's forced blocksize) hold more.
// Thread safety: immutable after construction; Encode and Decode may run concurrently.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tessera/storage/codec.hpp"

namespace tessera::codecs {

// numcodecs.Blosc.AUTOSHUFFLE.
inline constexpr int kBloscAutoShuffle = -1;

// "noshuffle"/"none"/"0", "shuffle"/"byte"/"1", "bitshuffle"/"bit"/"2",
// "autoshuffle"/"auto"/"-1"; nullopt for anything else.
std::optional<int> ParseBloscShuffle(std::string_view text);

// "noshuffle", "shuffle", "bitshuffle", "autoshuffle"; "shuffle <n>" for unknown values.
std::string BloscShuffleName(int shuffle);

class BloscCodec final : public Codec {
 public:
  // Throws InvalidArgument unless cname is lz4, lz4hc, zstd, blosclz or zlib (and built
  // into libblosc), level is 0..9, shuffle is -1..2 and blocksize is 0 or positive.
  explicit BloscCodec(const CodecConfig& config);

  // REQUIRES: itemsize >= 1 and raw.size() <= 2 GiB - 16 (blosc 1.x's limit); otherwise
  // throws InvalidArgument. Itemsizes above 255 are shuffled as bytes, as blosc does.
  void EncodeInto(std::span<const std::byte> raw, std::int64_t itemsize,
                  Buffer& out) const override;

  // Checks the header (nbytes == out.size(), cbytes == encoded.size(), sane typesize and
  // blocksize, block offsets inside the chunk) before decompressing; throws FormatError on
  // any mismatch or corruption.
  void Decode(std::span<const std::byte> encoded, std::span<std::byte> out) const override;

  // The header's nbytes; nullopt when the frame is shorter than the header or libblosc's
  // header validation fails (cbytes beyond the frame, nbytes beyond blosc's limit).
  std::optional<std::int64_t> DecodedSize(std::span<const std::byte> encoded) const override;

  const CodecConfig& config() const override { return config_; }

 private:
  // raw_size + BLOSC_MAX_OVERHEAD (blosc stores incompressible data verbatim).
  std::int64_t MaxEncodedSizeOf(std::int64_t raw_size) const override;
  // The codec's own allocations during one call (Codec::EncodeWorkingBytes).
  std::int64_t EncodeWorkingBytesOf(std::int64_t raw_size, std::int64_t itemsize) const override;
  std::int64_t DecodeWorkingBytesOf(std::int64_t raw_size, std::int64_t itemsize) const override;

  CodecConfig config_;
};

}  // namespace tessera::codecs
