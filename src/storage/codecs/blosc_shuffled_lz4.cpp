#include "blosc_shuffled_lz4.hpp"

#include <immintrin.h>
#include <lz4.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "little_endian.hpp"
#include "tessera/core/buffer.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::codecs {
namespace {

// The blosc 1 header (16 bytes): version, LZ format version, flags, typesize, then
// nbytes, blocksize and cbytes as little-endian 32-bit integers.
constexpr std::size_t kHeaderBytes = 16;
constexpr std::uint8_t kFormatVersion = 2;  // what libblosc 1.x writes
constexpr std::uint8_t kLz4FormatVersion = 1;
constexpr unsigned kByteShuffleFlag = 0x01;
constexpr unsigned kLowFlags = 0x0f;  // shuffle, memcpyed, bit-shuffle, reserved
constexpr unsigned kNoSplitFlag = 0x10;
constexpr unsigned kLz4Compressor = 1;  // bits 5-7

bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2") != 0;
  return has;
}

// Bytes j0..j3 of items i..i+31 from streams `first`..`first`+3 of `in` (n items each),
// interleaved: within each 128-bit lane (items i..i+15, then i+16..i+31), out[0..3] hold
// the four bytes of items 0-3, 4-7, 8-11 and 12-15 of the lane.
__attribute__((target("avx2"))) inline void InterleaveFourStreams(const std::uint8_t* in,
                                                                  std::size_t n, std::size_t i,
                                                                  std::size_t first,
                                                                  __m256i out[4]) {
  const auto load = [&](std::size_t j) __attribute__((target("avx2"))) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + (first + j) * n + i));
  };
  const __m256i a0 = load(0);
  const __m256i a1 = load(1);
  const __m256i a2 = load(2);
  const __m256i a3 = load(3);
  const __m256i low = _mm256_unpacklo_epi8(a0, a1);   // j0 j1 of items 0-7
  const __m256i high = _mm256_unpackhi_epi8(a0, a1);  // j0 j1 of items 8-15
  const __m256i low23 = _mm256_unpacklo_epi8(a2, a3);
  const __m256i high23 = _mm256_unpackhi_epi8(a2, a3);
  out[0] = _mm256_unpacklo_epi16(low, low23);
  out[1] = _mm256_unpackhi_epi16(low, low23);
  out[2] = _mm256_unpacklo_epi16(high, high23);
  out[3] = _mm256_unpackhi_epi16(high, high23);
}

__attribute__((target("avx2"))) std::size_t Unshuffle8Avx2(const std::uint8_t* in, std::size_t n,
                                                           std::uint8_t* out) {
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i c[4];  // bytes j0-j3
    __m256i e[4];  // bytes j4-j7
    InterleaveFourStreams(in, n, i, 0, c);
    InterleaveFourStreams(in, n, i, 4, e);
    // Whole items in pairs: d[2k], d[2k+1] hold items 4k..4k+3 of the first lane and
    // 16+4k..19+4k of the second.
    auto* target = reinterpret_cast<__m256i*>(out + i * 8);
    for (std::size_t k = 0; k < 4; ++k) {
      const __m256i d0 = _mm256_unpacklo_epi32(c[k], e[k]);
      const __m256i d1 = _mm256_unpackhi_epi32(c[k], e[k]);
      _mm256_storeu_si256(target + k, _mm256_permute2x128_si256(d0, d1, 0x20));
      _mm256_storeu_si256(target + 4 + k, _mm256_permute2x128_si256(d0, d1, 0x31));
    }
  }
  return i;
}

__attribute__((target("avx2"))) std::size_t Unshuffle4Avx2(const std::uint8_t* in, std::size_t n,
                                                           std::uint8_t* out) {
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i c[4];  // whole items 0-3, 4-7, 8-11, 12-15 of each lane
    InterleaveFourStreams(in, n, i, 0, c);
    auto* target = reinterpret_cast<__m256i*>(out + i * 4);
    _mm256_storeu_si256(target + 0, _mm256_permute2x128_si256(c[0], c[1], 0x20));
    _mm256_storeu_si256(target + 1, _mm256_permute2x128_si256(c[2], c[3], 0x20));
    _mm256_storeu_si256(target + 2, _mm256_permute2x128_si256(c[0], c[1], 0x31));
    _mm256_storeu_si256(target + 3, _mm256_permute2x128_si256(c[2], c[3], 0x31));
  }
  return i;
}

// Items [first, n) one byte at a time, then the bytes past the last whole item.
void UnshuffleTail(const std::uint8_t* in, std::size_t size, std::size_t itemsize,
                   std::size_t first, std::uint8_t* out) {
  const std::size_t n = size / itemsize;
  for (std::size_t i = first; i < n; ++i) {
    for (std::size_t j = 0; j < itemsize; ++j) out[i * itemsize + j] = in[j * n + i];
  }
  const std::size_t whole = n * itemsize;
  if (size > whole) std::memcpy(out + whole, in + whole, size - whole);
}

}  // namespace

void UnshuffleBlockScalar(const std::byte* shuffled, std::size_t size, std::size_t itemsize,
                          std::byte* out) {
  UnshuffleTail(reinterpret_cast<const std::uint8_t*>(shuffled), size, itemsize, 0,
                reinterpret_cast<std::uint8_t*>(out));
}

void UnshuffleBlock(const std::byte* shuffled, std::size_t size, std::size_t itemsize,
                    std::byte* out) {
  const auto* in = reinterpret_cast<const std::uint8_t*>(shuffled);
  auto* target = reinterpret_cast<std::uint8_t*>(out);
  std::size_t done = 0;
  if (HasAvx2() && itemsize == 8) done = Unshuffle8Avx2(in, size / 8, target);
  if (HasAvx2() && itemsize == 4) done = Unshuffle4Avx2(in, size / 4, target);
  UnshuffleTail(in, size, itemsize, done, target);
}

bool DecodesWithoutLibblosc(bool lz4, bool byte_shuffle, std::size_t typesize) {
  return lz4 && byte_shuffle && (typesize == 4 || typesize == 8) && HasAvx2();
}

bool DecodeShuffledLz4Frame(std::span<const std::byte> encoded, std::span<std::byte> out) {
  if (encoded.size() < kHeaderBytes || out.empty()) return false;
  const auto* frame = reinterpret_cast<const std::uint8_t*>(encoded.data());
  const unsigned flags = frame[2];
  const std::size_t typesize = frame[3];
  if (frame[0] != kFormatVersion || frame[1] != kLz4FormatVersion ||
      !DecodesWithoutLibblosc((flags >> 5) == kLz4Compressor,
                              (flags & kLowFlags) == kByteShuffleFlag, typesize)) {
    return false;
  }
  const std::size_t nbytes = out.size();
  const std::size_t blocksize = LoadLittleEndian32(encoded.data() + 8);
  const bool split = (flags & kNoSplitFlag) == 0;
  // libblosc splits whole blocks into `typesize` streams; a block size that is not a
  // multiple of it is not one libblosc 1.x writes: leave it to libblosc.
  if (blocksize == 0 || (split && blocksize % typesize != 0)) return false;
  const std::size_t nblocks = nbytes / blocksize + (nbytes % blocksize != 0 ? 1 : 0);
  const std::byte* const end = encoded.data() + encoded.size();
  const std::size_t first_block = kHeaderBytes + 4 * nblocks;
  if (first_block > encoded.size()) {
    throw FormatError("blosc header implies " + std::to_string(nblocks) +
                      " blocks, more than the chunk's offset table holds");
  }
  Buffer scratch(static_cast<std::int64_t>(blocksize));
  for (std::size_t block = 0; block < nblocks; ++block) {
    const std::size_t offset = LoadLittleEndian32(encoded.data() + kHeaderBytes + 4 * block);
    if (offset < first_block || offset >= encoded.size()) {
      throw FormatError("blosc block " + std::to_string(block) + " starts outside the chunk");
    }
    const std::byte* source = encoded.data() + offset;
    const bool leftover = block + 1 == nblocks && nbytes % blocksize != 0;
    const std::size_t size = leftover ? nbytes % blocksize : blocksize;
    const std::size_t streams = split && !leftover ? typesize : 1;
    const std::size_t stream_bytes = size / streams;
    std::byte* into = scratch.data();
    for (std::size_t stream = 0; stream < streams; ++stream) {
      if (end - source < 4) {
        throw FormatError("blosc block " + std::to_string(block) + " is truncated");
      }
      const std::uint32_t compressed = LoadLittleEndian32(source);
      source += 4;
      if (compressed > static_cast<std::size_t>(end - source) || compressed > INT32_MAX) {
        throw FormatError("blosc block " + std::to_string(block) + " claims " +
                          std::to_string(compressed) + " compressed bytes, past the chunk's end");
      }
      if (compressed == stream_bytes) {  // stored as is
        std::memcpy(into, source, stream_bytes);
      } else {
        const int decoded = LZ4_decompress_safe(
            reinterpret_cast<const char*>(source), reinterpret_cast<char*>(into),
            static_cast<int>(compressed), static_cast<int>(stream_bytes));
        if (decoded < 0 || static_cast<std::size_t>(decoded) != stream_bytes) {
          throw FormatError("blosc block " + std::to_string(block) +
                            " failed LZ4 decoding: corrupt data");
        }
      }
      source += compressed;
      into += stream_bytes;
    }
    UnshuffleBlock(scratch.data(), size, typesize, out.data() + block * blocksize);
  }
  return true;
}

}  // namespace tessera::codecs
