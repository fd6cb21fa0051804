// Chunk keys: the store key of one block (chunk or shard) of a Zarr array, and
// recognising such keys among a store's listing.
//
//   FormatChunkKey("t2m", {1, 2}, '.', kV2);      // "t2m/1.2"; "0" for a 0-d array
//   FormatChunkKey("t2m", {1, 2}, '/', kDefault); // v3: "t2m/c/1/2"; "c" for a 0-d array
//   IsChunkKey("1.2", '.', kV2, grid);            // a block of `grid`: stored-chunk counting
//   LooksLikeChunkKey("3/4");                     // a chunk of any array (v2 or v3's "c/3/4"):
//                                                 // stale-chunk removal
//
// Keys given to IsChunkKey and LooksLikeChunkKey are relative to the array's path.
// Internal to src/storage/zarr. Pure functions: thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "tessera/core/chunk_grid.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera::zarr_detail {

// The key of `block` in the array at `path` ("" for the store's root): its
// coordinates joined by `separator` ('.' or '/'), "0" for a 0-d array.
std::string FormatChunkKey(std::string_view path, std::span<const Index> block, char separator,
                           ChunkKeyEncoding encoding);

// True when `key` (relative to an array's path) is shaped like a chunk key of some
// array: digits and the separators '.' and '/' only, after v3's leading "c" and its
// separator ("c" alone for a 0-d v3 array). Metadata (".zarray", "zarr.json") and other
// files always contain another character.
bool LooksLikeChunkKey(std::string_view key);

// True when `key` (relative to the array's path) is the key of a block of `grid`.
bool IsChunkKey(std::string_view key, char separator, ChunkKeyEncoding encoding,
                const ChunkGrid& grid);

}  // namespace tessera::zarr_detail
