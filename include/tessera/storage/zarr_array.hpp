// ZarrArray: chunked reads and writes of one Zarr array (v2 or v3) in a Store.
//
//   auto store = DirectoryStore::Open("t2m.zarr");
//   ZarrMetadata meta{.shape = {10000, 10000}, .chunks = {1000, 1000}, .dtype = float64,
//                     .compressor = ParseCodecSpec("blosc:lz4")};
//   ZarrArray array = ZarrArray::Create(store, "", meta);   // writes .zarray
//   array.Write(ndarray);                    // every chunk, in parallel
//   NDArray back = ZarrArray::Open(store).Read();   // v2 or v3, whichever is there
//   NDArray block = array.ReadBlock({2, 3}); // one block, edge-clipped shape
//   // A sharded v3 array (zarr_metadata.hpp: MakeV3Metadata): blocks are shards.
//   NDArray part = array.ReadRegion(region); // reads only the inner chunks it touches
//
// Chunk layout follows zarr-python exactly: edge chunks are stored full size, padded
// with the fill value; missing chunks read as the fill value; order 'F' chunks (v3:
// transpose), big-endian dtypes and float16 storage are converted on the way in and
// out; chunk keys follow the metadata ("1.2" or "1/2", "0" for a 0-d array; v3's default
// "c/1/2", "c"). A sharded array's blocks (grid()) are its shards, the unit of writing:
// WriteBlock writes one whole shard (inner chunks equal to the fill value left out, as
// zarr-python leaves them out, and no shard at all when every one is); its inner chunks
// (read_grid()) are the unit of reading: a read of a region reads each touched shard's
// index, then only the inner chunks it touches, each by byte range.
//
// Errors: StorageError when the array or store is missing/unreadable; FormatError
// (naming the chunk's key) when a chunk is truncated or corrupt; InvalidArgument for
// a block index outside the grid or data of the wrong shape or dtype.
// Bounded reads: a value's stored size is checked (Store::SizeOf) before it is read,
// so no read allocates more than one valid chunk encoding: an uncompressed chunk of
// another size, or a compressed one larger than its codec's MaxEncodedSize of the chunk
// (plus a little slack for other writers' framing), is a FormatError naming the key,
// the size found and the largest valid size; so is a .zarray or .zattrs over 16 MiB.
// With filters (codecs applied before the compressor) the bounds chain through every
// stage, and each intermediate is decoded within its bound.
// Thread safety: const methods may run concurrently; different blocks may be written
// concurrently. Lifetime: a ZarrArray shares ownership of its store (shared_ptr), so
// the store lives at least as long as any ZarrArray (or copy of one) that uses it.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/core/ndarray.hpp"
#include "tessera/storage/store.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera {

namespace zarr_detail {
class ChunkCodec;  // src/storage/zarr/chunk_codec.hpp
class ShardChunkCodec;
struct ChunkScratch;
struct TouchedRange;
}  // namespace zarr_detail

class ZarrArray {
 public:
  // Opens the array at `path`: its zarr.json (Zarr v3) or, when there is none, its
  // .zarray (Zarr v2).
  static ZarrArray Open(std::shared_ptr<Store> store, std::string path = "");
  // Creates the array at `path`, replacing any there: validates everything first
  // (InvalidArgument: shapes, sizes, the fill value against the dtype, codecs, attributes;
  // nothing is written or removed when it throws), then removes the chunks of a previous
  // array at `path`, as zarr-python's mode="w" does, then writes the metadata of
  // metadata.zarr_format: zarr.json (v3, attributes inside), or .zarray and .zattrs (v2;
  // a stale .zattrs is removed when no attributes are given); the other format's
  // documents at `path` are removed. A previous array's chunks are the keys below
  // `path`/ made only of digits, '.' and '/' ("0.1", "2/3"), after v3's "c" ("c/0/1");
  // keys with any other character (metadata of nested groups and arrays, other files)
  // and everything outside `path`/ are left alone.
  static ZarrArray Create(std::shared_ptr<Store> store, std::string path, ZarrMetadata metadata,
                          ZarrAttributes attributes = {});
  // The array `metadata` describes at `path`, validated as Create validates it, with
  // nothing read or written: how an output is made where a finished array cannot be
  // renamed into place (an object store). Clear() removes what an earlier array left at
  // `path` — its documents first, so that it stops reading as complete, then its chunks;
  // the chunks are then written, and Publish() writes the documents last, so the array
  // never looks complete before it is.
  static ZarrArray Define(std::shared_ptr<Store> store, std::string path, ZarrMetadata metadata,
                          ZarrAttributes attributes = {});
  void Clear() const;
  // Writes the metadata documents, removing the other format's first: zarr.json, or
  // .zattrs then .zarray (the document that makes the array readable comes last).
  void Publish() const;

  const ZarrMetadata& metadata() const { return metadata_; }
  // The grid of stored values: chunks, or the shards of a sharded array.
  const ChunkGrid& grid() const { return grid_; }
  // The grid of the smallest independently readable chunks: grid(), or the (innermost)
  // inner chunks of a sharded array.
  ChunkGrid read_grid() const { return ChunkGrid(metadata_.shape, metadata_.read_chunks()); }
  const ZarrAttributes& attributes() const { return attributes_; }
  const std::shared_ptr<Store>& store() const { return store_; }
  const std::string& path() const { return path_; }

  // The store key of a block of grid() (path prefix included).
  std::string ChunkKey(std::span<const Index> block) const;

  // One block, shaped grid().BlockShape(block), C order.
  NDArray ReadBlock(std::span<const Index> block) const;
  // Same, into caller memory of exactly BlockShape(block) elements of dtype().
  void ReadBlockInto(std::span<const Index> block, std::span<std::byte> out) const;
  // Writes one block; `data` must have shape BlockShape(block) and the array's dtype.
  void WriteBlock(std::span<const Index> block, const NDArray& data) const;
  void WriteBlockFrom(std::span<const Index> block, std::span<const std::byte> data) const;
  // WriteBlockFrom of the block whose element (i, j, ...) is at src + i * src_strides[0]
  // + j * src_strides[1] + ... (byte strides, one per dimension): encoded straight from
  // there (a block of a larger array in memory), never copied out whole first.
  void WriteBlockStrided(std::span<const Index> block, const std::byte* src,
                         std::span<const Index> src_strides) const;

  // The whole array / a region, reading chunks on up to max_threads threads
  // (0 = hardware concurrency).
  NDArray Read(int max_threads = 0) const;
  NDArray ReadRegion(const Region& region, int max_threads = 0) const;
  // ReadRegion(region, 1) into caller memory: the region's element (i, j, ...) goes to
  // out + i * out_strides[0] + j * out_strides[1] + ... (byte strides, one per dimension;
  // elements of dtype()). A chunk the region covers as one contiguous run of `out` is
  // decoded straight into it. Holds ReadRegionScratchBytes(region, ..., out_dense) besides
  // `out`, out_dense telling whether out_strides are the region's own C-order strides.
  void ReadRegionInto(const Region& region, std::byte* out,
                      std::span<const Index> out_strides) const;
  // Writes every block of `data` (shape and dtype must match) in parallel.
  void Write(const NDArray& data, int max_threads = 0) const;

  // Memory the calls above hold besides their result, for memory projections (each
  // figure is exact for this implementation: every buffer is a tessera::Buffer).
  // ReadRegion(region, 1) when no chunk it reads (for a sharded array: no inner chunk)
  // is stored in more than `max_stored_chunk` bytes (see MaxStoredChunkBytes; 0 for
  // "none is stored"):
  // ReadRegionInto holds the same with `out_dense` false where `out` is not the region's
  // own C-order layout (then no chunk is decoded straight into it).
  std::int64_t ReadRegionScratchBytes(const Region& region, std::int64_t max_stored_chunk,
                                      bool out_dense = true) const;
  // WriteBlock(block) / WriteBlockFrom(block) (a sharded array's includes the shard
  // being assembled):
  // (WriteBlockStrided: `src_contiguous` false unless the strides are the block's own.)
  std::int64_t WriteBlockScratchBytes(std::span<const Index> block,
                                      bool src_contiguous = true) const;
  // The largest stored size any valid chunk (shard) of this array may have (reads
  // refuse more), and the largest Tessera's own encoder writes.
  std::int64_t MaxStoredChunkBytes() const;
  std::int64_t MaxEncodedChunkBytes() const;

  // Stored (encoded) size of a block's chunk (shard); nullopt when not written.
  std::optional<std::int64_t> StoredChunkSize(std::span<const Index> block) const;
  // Number of chunks (shards) present in the store, their total and largest stored bytes.
  struct StoredChunks {
    Index count = 0;
    std::int64_t bytes = 0;
    std::int64_t largest = 0;
  };
  StoredChunks CountStoredChunks() const;

 private:
  ZarrArray(std::shared_ptr<Store> store, std::string path, ZarrMetadata metadata,
            ZarrAttributes attributes);
  // Removes the chunks of an earlier array at path_ (keys LooksLikeChunkKey accepts).
  void RemoveChunks() const;
  // Reads `box` of block `block`'s chunk into `dst` (byte strides `dst_strides`), and
  // writes a block's chunk from `src`, with one thread's scratch.
  void ReadPart(std::span<const Index> block, const Region& box, std::byte* dst,
                std::span<const Index> dst_strides, bool dst_contiguous,
                zarr_detail::ChunkScratch& scratch) const;
  void WritePart(std::span<const Index> block, const std::byte* src,
                 std::span<const Index> src_strides, bool src_contiguous,
                 zarr_detail::ChunkScratch& scratch) const;
  // ReadRegion of a sharded array on more threads than it touches shards: each touched
  // shard's index once, then its inner chunks in parallel.
  void ReadShardsByInnerChunks(const zarr_detail::ShardChunkCodec& codec, const Region& region,
                               const zarr_detail::TouchedRange& shards, std::byte* out,
                               std::span<const Index> out_strides, int threads) const;

  std::shared_ptr<Store> store_;
  std::string path_;
  ZarrMetadata metadata_;
  ChunkGrid grid_;
  ZarrAttributes attributes_;
  std::shared_ptr<const zarr_detail::ChunkCodec> codec_;  // of grid()'s chunks
};

// Writes a group's metadata at `path`: .zgroup ({"zarr_format": 2}), or zarr.json
// ({"zarr_format": 3, "node_type": "group"}) for zarr_format 3.
void CreateZarrGroup(Store& store, std::string_view path, int zarr_format = 2);
// True when `path` holds a group: a .zgroup, or a zarr.json whose node_type is "group".
bool IsZarrGroup(const Store& store, std::string_view path);

}  // namespace tessera
