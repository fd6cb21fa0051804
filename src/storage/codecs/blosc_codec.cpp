#include "blosc_codec.hpp"

#include <blosc.h>
#include <lz4hc.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "blosc_shuffled_lz4.hpp"
#include "little_endian.hpp"
#include "lz4_codec.hpp"
#include "tessera/core/errors.hpp"
#include "zlib_codec.hpp"
#include "zstd_codec.hpp"

namespace tessera::codecs {
namespace {

// The compressors numcodecs offers that Tessera supports (snappy is left out: Debian's
// libblosc may lack it and zarr-python never defaults to it).
constexpr std::array<std::string_view, 5> kCnames = {"lz4", "lz4hc", "zstd", "blosclz", "zlib"};

// Largest input blosc 1.x compresses: its header stores sizes as int32.
constexpr std::int64_t kMaxBloscInput = BLOSC_MAX_BUFFERSIZE;

std::string AcceptedCnames() {
  std::string names;
  for (std::string_view name : kCnames) {
    if (!names.empty()) names += ", ";
    names += name;
  }
  return names;
}

// numcodecs' AUTOSHUFFLE: bit-shuffle single bytes, byte-shuffle wider items.
int ResolveShuffle(int shuffle, std::int64_t itemsize) {
  if (shuffle != kBloscAutoShuffle) return shuffle;
  return itemsize == 1 ? BLOSC_BITSHUFFLE : BLOSC_SHUFFLE;
}

// A compressed blosc frame is the header, one 32-bit start offset per block, then the
// blocks. Every offset must point past the offset table and inside the frame, so that
// libblosc never reads outside `encoded` when it follows them.
void CheckBlockOffsets(std::span<const std::byte> encoded, std::size_t nbytes,
                       std::size_t blocksize) {
  const std::size_t nblocks = nbytes / blocksize + (nbytes % blocksize != 0 ? 1 : 0);
  const std::size_t first_block = BLOSC_MIN_HEADER_LENGTH + kLittleEndian32Bytes * nblocks;
  if (first_block > encoded.size()) {
    throw FormatError("blosc header implies " + std::to_string(nblocks) + " blocks, whose " +
                      std::to_string(first_block) + "-byte offset table exceeds the " +
                      std::to_string(encoded.size()) + "-byte chunk");
  }
  for (std::size_t block = 0; block < nblocks; ++block) {
    const std::size_t offset =
        LoadLittleEndian32(encoded.data() + BLOSC_MIN_HEADER_LENGTH + kLittleEndian32Bytes * block);
    if (offset < first_block || offset >= encoded.size()) {
      throw FormatError("blosc block " + std::to_string(block) + " starts at byte " +
                        std::to_string(offset) + ", outside the data area " +
                        std::to_string(first_block) + ".." + std::to_string(encoded.size()) +
                        " of the chunk");
    }
  }
}

// libblosc 1.21's automatic block size (its compute_blocksize), measured for every cname,
// level 0..9, typesize 1..16 and shuffle on Debian's libblosc 1.21.3 (codec_memory_test.cpp
// checks it against the frames' headers): level 0 copies blocks of 8 KiB (lz4, blosclz) or
// 16 KiB (the others); zstd's grow with the level alone; the others are a per-level base
// times the typesize, kept within 64 KiB..1 MiB. Never more than the chunk. A forced
// blocksize is scaled by the typesize in places, so its bound is that product.
constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMinAutoBlock = 64 * kKiB;
constexpr std::int64_t kMaxAutoBlock = 1024 * kKiB;
constexpr std::array<std::int64_t, 10> kZstdBlock = {16,  32,  64,  128, 256,
                                                     256, 512, 512, 512, 1024};
constexpr std::array<std::int64_t, 10> kFastBase = {8, 16, 32, 64, 128, 128, 256, 256, 256, 256};
constexpr std::array<std::int64_t, 10> kHighRatioBase = {16,  32,  64,  128, 256,
                                                         256, 256, 256, 256, 256};
// Besides two blocks, each context holds a few small buffers (offsets, headers): at most
// 4,032 bytes measured, bounded by this.
constexpr std::int64_t kBloscSmallBytes = 4 * kKiB + 256;
// What a Buffer's allocation may hold beyond its size (malloc's header, alignment).
constexpr std::int64_t kBufferSlack = 64;

std::int64_t BloscTypesize(std::int64_t itemsize) {
  // blosc shuffles items wider than BLOSC_MAX_TYPESIZE as bytes.
  return itemsize < 1 || itemsize > BLOSC_MAX_TYPESIZE ? 1 : itemsize;
}

std::int64_t BloscBlockSize(const CodecConfig& config, std::int64_t typesize, std::int64_t nbytes) {
  std::int64_t block = 0;
  const auto level = static_cast<std::size_t>(config.level);
  if (config.blocksize > 0) {
    block = std::max<std::int64_t>(config.blocksize, kMinAutoBlock) * typesize;
  } else if (config.level == 0) {
    block = (config.cname == "lz4" || config.cname == "blosclz" ? 8 : 16) * kKiB;
  } else if (config.cname == "zstd") {
    block = kZstdBlock[level] * kKiB;
  } else {
    const bool fast = config.cname == "lz4" || config.cname == "blosclz";
    const std::int64_t base = (fast ? kFastBase : kHighRatioBase)[level] * kKiB;
    block = std::clamp(base * typesize, kMinAutoBlock, kMaxAutoBlock);
  }
  return std::min(block, nbytes);
}

// The zstd level blosc 1.21 runs for its clevel (zstd_wrap_compress).
int BloscZstdLevel(int clevel) { return clevel < 9 ? 2 * clevel - 1 : ZSTD_maxCLevel(); }

}  // namespace

std::optional<int> ParseBloscShuffle(std::string_view text) {
  if (text == "noshuffle" || text == "none" || text == "0") return BLOSC_NOSHUFFLE;
  if (text == "shuffle" || text == "byte" || text == "byteshuffle" || text == "1") {
    return BLOSC_SHUFFLE;
  }
  if (text == "bitshuffle" || text == "bit" || text == "2") return BLOSC_BITSHUFFLE;
  if (text == "autoshuffle" || text == "auto" || text == "-1") return kBloscAutoShuffle;
  return std::nullopt;
}

std::string BloscShuffleName(int shuffle) {
  switch (shuffle) {
    case BLOSC_NOSHUFFLE:
      return "noshuffle";
    case BLOSC_SHUFFLE:
      return "shuffle";
    case BLOSC_BITSHUFFLE:
      return "bitshuffle";
    case kBloscAutoShuffle:
      return "autoshuffle";
    default:
      return "shuffle " + std::to_string(shuffle);
  }
}

BloscCodec::BloscCodec(const CodecConfig& config) : config_(config) {
  bool known = false;
  for (std::string_view name : kCnames) known = known || name == config.cname;
  if (!known) {
    throw InvalidArgument("blosc cname '" + config.cname + "' is not supported; use one of " +
                          AcceptedCnames());
  }
  if (blosc_compname_to_compcode(config.cname.c_str()) < 0) {
    throw InvalidArgument("this libblosc was built without the '" + config.cname +
                          "' compressor; use one of " + blosc_list_compressors());
  }
  if (config.level < 0 || config.level > 9) {
    throw InvalidArgument("blosc level must be 0..9, got " + std::to_string(config.level));
  }
  if (config.shuffle < kBloscAutoShuffle || config.shuffle > BLOSC_BITSHUFFLE) {
    throw InvalidArgument(
        "blosc shuffle must be 0 (noshuffle), 1 (shuffle), 2 (bitshuffle) "
        "or -1 (autoshuffle), got " +
        std::to_string(config.shuffle));
  }
  if (config.typesize < 0) {
    throw InvalidArgument("blosc typesize must be 0 (the element size) or positive, got " +
                          std::to_string(config.typesize));
  }
  if (config.blocksize < 0) {
    throw InvalidArgument("blosc blocksize must be 0 (automatic) or positive, got " +
                          std::to_string(config.blocksize));
  }
}

void BloscCodec::EncodeInto(std::span<const std::byte> raw, std::int64_t itemsize,
                            Buffer& encoded) const {
  if (config_.typesize > 0) itemsize = config_.typesize;
  if (itemsize < 1) {
    throw InvalidArgument("blosc Encode needs itemsize >= 1, got " + std::to_string(itemsize));
  }
  const auto raw_size = static_cast<std::int64_t>(raw.size());
  if (raw_size > kMaxBloscInput) {
    throw InvalidArgument("blosc cannot compress a chunk of " + std::to_string(raw_size) +
                          " bytes; its limit is " + std::to_string(kMaxBloscInput) +
                          " bytes: use smaller chunks or the zstd codec");
  }
  encoded.ResizeUninitialized(MaxEncodedSize(raw_size));
  const int written = blosc_compress_ctx(
      config_.level, ResolveShuffle(config_.shuffle, itemsize), static_cast<std::size_t>(itemsize),
      raw.size(), raw.data(), encoded.data(), static_cast<std::size_t>(encoded.size()),
      config_.cname.c_str(), static_cast<std::size_t>(config_.blocksize),
      /*numinternalthreads=*/1);
  if (written <= 0) {
    throw Error("blosc_compress_ctx failed with code " + std::to_string(written) + " on " +
                std::to_string(raw_size) + " bytes (" + config_.cname + ")");
  }
  encoded.Truncate(written);
}

void BloscCodec::Decode(std::span<const std::byte> encoded, std::span<std::byte> out) const {
  if (encoded.size() < BLOSC_MIN_HEADER_LENGTH) {
    throw FormatError("blosc chunk has " + std::to_string(encoded.size()) +
                      " bytes, fewer than the " + std::to_string(BLOSC_MIN_HEADER_LENGTH) +
                      "-byte blosc header: truncated, or not blosc data");
  }
  std::size_t nbytes = 0;
  std::size_t cbytes = 0;
  std::size_t blocksize = 0;
  blosc_cbuffer_sizes(encoded.data(), &nbytes, &cbytes, &blocksize);
  if (nbytes != out.size()) {
    throw FormatError("blosc header claims " + std::to_string(nbytes) +
                      " decoded bytes, expected " + std::to_string(out.size()) +
                      " (the chunk's size)");
  }
  if (cbytes != encoded.size()) {
    throw FormatError("blosc header claims " + std::to_string(cbytes) +
                      " compressed bytes, but the chunk has " + std::to_string(encoded.size()) +
                      ": truncated or padded");
  }
  std::size_t validated_nbytes = 0;
  if (blosc_cbuffer_validate(encoded.data(), encoded.size(), &validated_nbytes) != 0 ||
      validated_nbytes != nbytes) {
    throw FormatError("blosc header of " + std::to_string(encoded.size()) +
                      "-byte chunk failed libblosc's validation");
  }
  std::size_t typesize = 0;
  int flags = 0;
  blosc_cbuffer_metainfo(encoded.data(), &typesize, &flags);
  if (nbytes == 0) return;  // Nothing to decode; blosc would only read the header.
  // libblosc divides by typesize and blocksize and allocates blocksize-sized scratch, so
  // both must be sane before it runs: blosc never writes a block larger than the buffer.
  if (typesize == 0) throw FormatError("blosc header claims typesize 0");
  if (blocksize == 0 || blocksize > nbytes) {
    throw FormatError("blosc header claims blocksize " + std::to_string(blocksize) +
                      ", expected 1.." + std::to_string(nbytes) + " for " + std::to_string(nbytes) +
                      " decoded bytes");
  }
  const auto memcpyed = static_cast<unsigned>(flags) & BLOSC_MEMCPYED;
  if (memcpyed != 0 && cbytes != nbytes + BLOSC_MAX_OVERHEAD) {
    throw FormatError("blosc header marks an uncompressed copy of " + std::to_string(nbytes) +
                      " bytes, but the chunk has " + std::to_string(cbytes) + " bytes, expected " +
                      std::to_string(nbytes + BLOSC_MAX_OVERHEAD));
  }
  if (memcpyed != 0) {
    // Stored as is after the header (libblosc copies it out the same way, through two
    // blocks of scratch).
    std::memcpy(out.data(), encoded.data() + BLOSC_MAX_OVERHEAD, nbytes);
    return;
  }
  CheckBlockOffsets(encoded, nbytes, blocksize);
  if (DecodeShuffledLz4Frame(encoded, out)) return;
  const int decoded =
      blosc_decompress_ctx(encoded.data(), out.data(), out.size(), /*numinternalthreads=*/1);
  if (decoded < 0 || static_cast<std::size_t>(decoded) != nbytes) {
    throw FormatError("blosc failed to decompress a " + std::to_string(encoded.size()) +
                      "-byte chunk into " + std::to_string(nbytes) + " bytes (code " +
                      std::to_string(decoded) + "): corrupt data");
  }
}

std::optional<std::int64_t> BloscCodec::DecodedSize(std::span<const std::byte> encoded) const {
  if (encoded.size() < BLOSC_MIN_HEADER_LENGTH) return std::nullopt;
  std::size_t nbytes = 0;
  if (blosc_cbuffer_validate(encoded.data(), encoded.size(), &nbytes) != 0) return std::nullopt;
  return static_cast<std::int64_t>(nbytes);
}

std::int64_t BloscCodec::MaxEncodedSizeOf(std::int64_t raw_size) const {
  return raw_size + BLOSC_MAX_OVERHEAD;
}

}  // namespace tessera::codecs

namespace tessera::codecs {

std::int64_t BloscCodec::EncodeWorkingBytesOf(std::int64_t raw_size, std::int64_t itemsize) const {
  if (raw_size == 0) return 0;
  const std::int64_t typesize = BloscTypesize(config_.typesize > 0 ? config_.typesize : itemsize);
  const std::int64_t block = BloscBlockSize(config_, typesize, raw_size);
  // One internal thread: blosc_compress_ctx allocates a context with two block-sized
  // buffers, then compresses block by block with one compressor state at a time.
  std::int64_t inner = 0;
  if (config_.level > 0) {
    if (config_.cname == "zstd") {
      // libblosc 1.21 creates and frees a zstd context per block. glibc's malloc maps the
      // first, then (its mmap threshold raised by that free) serves the next from the
      // thread's heap, which keeps it: a thread touches two contexts' pages, and they stay
      // resident (measured: a task's fresh pages exceed one context by about one more).
      inner = 2 * ZstdWorkingBytes(BloscZstdLevel(config_.level), block);
    } else if (config_.cname == "zlib") {
      inner = DeflateWorkingBytes();
    } else if (config_.cname == "lz4hc") {
      inner = LZ4_sizeofStateHC();
    } else if (config_.cname == "lz4") {
      inner = Lz4EncodeWorkingBytes();
    }
  }
  return 2 * block + 4 * typesize + kBloscSmallBytes + inner;
}

std::int64_t BloscCodec::DecodeWorkingBytesOf(std::int64_t raw_size, std::int64_t itemsize) const {
  if (raw_size == 0) return 0;
  const std::int64_t typesize = BloscTypesize(config_.typesize > 0 ? config_.typesize : itemsize);
  const std::int64_t block = BloscBlockSize(config_, typesize, raw_size);
  // LZ4 and LZ4HC frames are both LZ4 streams; a frame stored as is (level 0, or data
  // that does not compress) is copied out with no scratch at all.
  if (DecodesWithoutLibblosc(config_.cname == "lz4" || config_.cname == "lz4hc",
                             ResolveShuffle(config_.shuffle, typesize) == BLOSC_SHUFFLE,
                             static_cast<std::size_t>(typesize))) {
    return block + kBufferSlack;  // blosc_shuffled_lz4.hpp: one block of scratch
  }
  std::int64_t inner = 0;
  if (config_.cname == "zstd") inner = ZstdDecodeWorkingBytes();
  if (config_.cname == "zlib") inner = InflateWorkingBytes();
  return 2 * block + 4 * typesize + kBloscSmallBytes + inner;
}

}  // namespace tessera::codecs
