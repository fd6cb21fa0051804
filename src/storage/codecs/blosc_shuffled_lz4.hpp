// The common blosc 1 frame decoded without libblosc: LZ4-compressed, byte-shuffled items
// of 4 or 8 bytes (zarr-python's and numcodecs' default for float32/float64 data). Each
// block is LZ4-decoded into one block of scratch, then unshuffled into place by an AVX2
// kernel. Debian's libblosc unshuffles with SSE2 code that costs about three times its
// LZ4 on such chunks; this halves the decode (docs/performance.md).
//
// Every other frame (another compressor, bit-shuffle, other item sizes, a CPU without
// AVX2, an older or newer format version) is left to libblosc. Internal to
// src/storage/codecs.
#pragma once

#include <cstddef>
#include <span>

namespace tessera::codecs {

// Whether this decoder takes the frames of LZ4 (`lz4`) with byte shuffle
// (`byte_shuffle`) of `typesize`-byte items, on this CPU. It holds one block of scratch
// (a Buffer, charged to the current account), where libblosc holds two.
bool DecodesWithoutLibblosc(bool lz4, bool byte_shuffle, std::size_t typesize);

// Decodes `encoded` into `out` and returns true when the frame is one this decoder
// handles; returns false, writing nothing, otherwise. A handled frame that is corrupt
// throws FormatError. The caller has checked the header (its nbytes is out.size(), its
// cbytes encoded.size(), its blocksize 1..nbytes) and the block offsets (each inside
// `encoded`, past the offset table), as BloscCodec::Decode does.
bool DecodeShuffledLz4Frame(std::span<const std::byte> encoded, std::span<std::byte> out);

// The byte unshuffle of one block of `size` bytes of `itemsize`-byte items: `shuffled`
// holds byte j of every item as stream j; the bytes past the last whole item are kept as
// they are. Vectorised for itemsize 4 and 8 on AVX2 CPUs. (Exposed for its test.)
void UnshuffleBlock(const std::byte* shuffled, std::size_t size, std::size_t itemsize,
                    std::byte* out);
// The same, one byte at a time: the reference the vectorised kernels are tested against.
void UnshuffleBlockScalar(const std::byte* shuffled, std::size_t size, std::size_t itemsize,
                          std::byte* out);

}  // namespace tessera::codecs
