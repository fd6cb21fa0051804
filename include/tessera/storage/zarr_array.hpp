// ZarrArray: chunked reads and writes of one Zarr v2 array in a Store.
//
//   auto store = DirectoryStore::Open("t2m.zarr");
//   ZarrMetadata meta{.shape = {10000, 10000}, .chunks = {1000, 1000}, .dtype = float64,
//                     .compressor = ParseCodecSpec("blosc:lz4")};
//   ZarrArray array = ZarrArray::Create(store, "", meta);   // writes .zarray
//   array.Write(ndarray);                    // every chunk, in parallel
//   NDArray back = ZarrArray::Open(store).Read();
//   NDArray block = array.ReadBlock({2, 3}); // one block, edge-clipped shape
//
// Chunk layout follows zarr-python exactly: edge chunks are stored full size, padded
// with the fill value; missing chunks read as the fill value; order 'F' chunks and
// big-endian dtypes are converted on the way in and out; chunk keys use the
// metadata's dimension separator ("1.2" or "1/2"; "0" for a 0-d array).
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

class ZarrArray {
 public:
  // Opens the array whose .zarray is at JoinKey(path, ".zarray").
  static ZarrArray Open(std::shared_ptr<Store> store, std::string path = "");
  // Creates the array at `path`, replacing any there: validates everything first
  // (InvalidArgument: shapes, sizes, the fill value against the dtype, codecs, attributes;
  // nothing is written or removed when it throws), then removes the chunks of a previous
  // array at `path`, as zarr-python's mode="w" does, then writes .zarray and .zattrs
  // (or removes a stale .zattrs when no attributes are given). A previous array's chunks
  // are the keys below `path`/ made only of digits, '.' and '/' ("0.1", "2/3"); keys
  // with any other character (metadata of nested groups and arrays, other files) and
  // everything outside `path`/ are left alone.
  static ZarrArray Create(std::shared_ptr<Store> store, std::string path, ZarrMetadata metadata,
                          ZarrAttributes attributes = {});

  const ZarrMetadata& metadata() const { return metadata_; }
  const ChunkGrid& grid() const { return grid_; }
  const ZarrAttributes& attributes() const { return attributes_; }
  const std::shared_ptr<Store>& store() const { return store_; }
  const std::string& path() const { return path_; }

  // The store key of a block (path prefix included).
  std::string ChunkKey(std::span<const Index> block) const;

  // One block, shaped grid().BlockShape(block), C order.
  NDArray ReadBlock(std::span<const Index> block) const;
  // Same, into caller memory of exactly BlockShape(block) elements of dtype().
  void ReadBlockInto(std::span<const Index> block, std::span<std::byte> out) const;
  // Writes one block; `data` must have shape BlockShape(block) and the array's dtype.
  void WriteBlock(std::span<const Index> block, const NDArray& data) const;
  void WriteBlockFrom(std::span<const Index> block, std::span<const std::byte> data) const;

  // The whole array / a region, reading chunks on up to max_threads threads
  // (0 = hardware concurrency).
  NDArray Read(int max_threads = 0) const;
  NDArray ReadRegion(const Region& region, int max_threads = 0) const;
  // Writes every block of `data` (shape and dtype must match) in parallel.
  void Write(const NDArray& data, int max_threads = 0) const;

  // Memory the calls above hold besides their result, for memory projections (each
  // figure is exact for this implementation: every buffer is a tessera::Buffer).
  // ReadRegion(region, 1) when no chunk it reads is stored in more than
  // `max_stored_chunk` bytes (see MaxStoredChunkBytes; 0 for "none is stored"):
  std::int64_t ReadRegionScratchBytes(const Region& region, std::int64_t max_stored_chunk) const;
  // WriteBlock(block) / WriteBlockFrom(block):
  std::int64_t WriteBlockScratchBytes(std::span<const Index> block) const;
  // The largest stored size any valid chunk of this array may have (reads refuse more).
  std::int64_t MaxStoredChunkBytes() const;

  // Stored (encoded) size of a block's chunk; nullopt when not written.
  std::optional<std::int64_t> StoredChunkSize(std::span<const Index> block) const;
  // Number of chunks present in the store, their total and largest stored bytes.
  struct StoredChunks {
    Index count = 0;
    std::int64_t bytes = 0;
    std::int64_t largest = 0;
  };
  StoredChunks CountStoredChunks() const;

 private:
  ZarrArray(std::shared_ptr<Store> store, std::string path, ZarrMetadata metadata,
            ZarrAttributes attributes);

  std::shared_ptr<Store> store_;
  std::string path_;
  ZarrMetadata metadata_;
  ChunkGrid grid_;
  ZarrAttributes attributes_;
  std::shared_ptr<const Codec> compressor_;            // null = uncompressed
  std::vector<std::shared_ptr<const Codec>> filters_;  // in write order
};

// Writes a group's .zgroup ({"zarr_format": 2}) at `path`.
void CreateZarrGroup(Store& store, std::string_view path);
// True when `path` holds a .zgroup.
bool IsZarrGroup(const Store& store, std::string_view path);

}  // namespace tessera
