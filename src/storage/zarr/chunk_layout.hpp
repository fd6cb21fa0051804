// Chunk layout: the pure byte transforms between a block as Tessera holds it and a
// Zarr v2 chunk's decoded bytes.
//
// A block in memory is C order, native (little-endian) byte order, and clipped at the
// array's edge. A decoded chunk is always the full chunk shape, padded with the fill
// value past the array's edge, laid out in the metadata's order ('C' or 'F') and byte
// order. Typical use (what ZarrArray does around its codecs):
//
//   ChunkLayout layout = ChunkLayout::For(metadata);
//   // 1. writing: block -> full chunk, padding with the fill value (stored byte order)
//   BlockToChunk(layout, block_shape, block.data(), ByteStrides(block_shape, itemsize),
//                layout.StoredFill(fill_native), chunk);
//   // 2. reading: any box of a chunk -> caller memory, e.g. straight into an output array
//   ChunkToBlock(layout, chunk, box, out.data(), ByteStrides(out_shape, itemsize));
//   // 3. fast path: when layout.IsIdentityFor(block_shape) the block IS the chunk; a
//   //    big-endian or bool chunk decoded in place only needs FinishInPlace(layout, out).
//
// Strides are in bytes and may describe a box inside a larger array. Copies move
// whole contiguous runs with memcpy; F<->C transposition goes tile by tile. Bool
// chunks are normalised on the way in: any nonzero byte becomes 1 (a bool holding
// another value is undefined behaviour in C++).
//
// Internal to src/storage/zarr. Pure functions on caller memory: thread-safe as long
// as callers do not share destinations.
#pragma once

#include <bit>
#include <cstddef>
#include <span>
#include <vector>

#include "tessera/core/chunk_grid.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera::zarr_detail {

static_assert(std::endian::native == std::endian::little,
              "Tessera holds array elements in little-endian byte order");

// What happens to each element as it is copied.
enum class ElementTransform : std::uint8_t {
  kNone,
  kByteSwap,        // reverse the bytes of a 2-, 4- or 8-byte item
  kByteSwapHalves,  // reverse the bytes of each half of an 8- or 16-byte complex item
  kNormalizeBool,   // 1-byte items: nonzero -> 1
};

struct ChunkLayout {
  Shape chunk_shape;        // the full (unclipped) chunk shape
  Index itemsize = 1;       // bytes per element: 1, 2, 4, 8 or 16
  // Element order inside a stored chunk: memory_order[k] is the chunk dimension stored
  // k-th, outermost first (v3's transpose order; v2's 'F' is the reversal). Empty: C order.
  std::vector<Index> memory_order;
  bool byteswap = false;    // stored byte order differs from native (itemsize > 1)
  bool is_bool = false;     // bool elements: normalised on read
  bool is_complex = false;  // complex elements: each part has the stored byte order

  // The layout of `metadata`'s chunks (unsharded) or of the inner chunks `chain`
  // encodes (a leaf chain: no sharding) for chunks of `chunk_shape`.
  static ChunkLayout For(const ZarrMetadata& metadata);
  static ChunkLayout For(Shape chunk_shape, DType dtype, const ZarrCodecChain& chain);
  // The reversal of `ndim` dimensions: Fortran order.
  static std::vector<Index> FortranOrder(std::size_t ndim);

  // Bytes of one full chunk.
  Index ChunkBytes() const;
  // Byte strides of the stored chunk for each (logical, C-numbered) dimension.
  Shape ChunkStrides() const;
  // True when the chunk's memory order is C order (no permutation, or one that keeps
  // the dimensions of extent > 1 in their order).
  bool MemoryOrderIsC() const;
  // True when a block of `block_shape` stored as a chunk is byte-for-byte the block:
  // not clipped, C memory order, no byte swap. (Bool normalisation is a read concern.)
  bool IsIdentityFor(std::span<const Index> block_shape) const;

  // The transforms applied by BlockToChunk and ChunkToBlock.
  ElementTransform WriteTransform() const;
  ElementTransform ReadTransform() const;

  // `fill_native` (one element, native order) in the stored byte order.
  // REQUIRES: fill_native.size() == itemsize; out.size() == itemsize.
  void StoredFill(std::span<const std::byte> fill_native, std::span<std::byte> out) const;
};

// C-order byte strides of an array of `shape` with elements of `itemsize` bytes.
Shape ByteStrides(std::span<const Index> shape, Index itemsize);

// Copies a box of `shape` elements between two strided views, applying `transform`
// to every element. Iterates in the destination's memory order; contiguous runs are
// copied with memcpy, transposed pairs of dimensions in cache-sized tiles.
// REQUIRES: itemsize in {1, 2, 4, 8, 16}; views do not overlap.
void CopyBox(std::span<const Index> shape, const std::byte* src, std::span<const Index> src_strides,
             std::byte* dst, std::span<const Index> dst_strides, Index itemsize,
             ElementTransform transform);

// Sets every element of a strided box to `element` (itemsize bytes, copied as is).
void FillBox(std::span<const Index> shape, std::byte* dst, std::span<const Index> dst_strides,
             std::span<const std::byte> element);

// Applies `transform` to every item of `bytes` in place.
void TransformInPlace(std::span<std::byte> bytes, Index itemsize, ElementTransform transform);

// Writes a block (any strides, native order) into a full chunk buffer in the stored
// layout, and sets every element outside the block to `stored_fill` (one element in
// stored byte order). Each chunk byte is written exactly once.
// REQUIRES: block_shape[dim] <= chunk_shape[dim]; chunk.size() == ChunkBytes().
void BlockToChunk(const ChunkLayout& layout, std::span<const Index> block_shape,
                  const std::byte* block, std::span<const Index> block_strides,
                  std::span<const std::byte> stored_fill, std::span<std::byte> chunk);

// Copies the box `box` of a decoded chunk (chunk coordinates) to `dst` (native order,
// any strides), converting order and byte order and normalising bools.
// REQUIRES: the box lies inside the chunk; chunk.size() == ChunkBytes().
void ChunkToBlock(const ChunkLayout& layout, std::span<const std::byte> chunk, const Region& box,
                  std::byte* dst, std::span<const Index> dst_strides);

// After a chunk with C memory order was decoded straight into its destination:
// byte-swaps it to native order and normalises bools, as ChunkToBlock would.
void FinishInPlace(const ChunkLayout& layout, std::span<std::byte> block);

}  // namespace tessera::zarr_detail
