// Chunk keys: the store key of one block of a Zarr v2 array, and recognising such keys
// among a store's listing.
//
//   FormatChunkKey("t2m", {1, 2}, '.');       // "t2m/1.2"; "0" (or "t2m/0") for a 0-d array
//   IsChunkKey("1.2", '.', grid);             // a block of `grid`: stored-chunk counting
//   LooksLikeChunkKey("3/4");                 // a chunk of any array: stale-chunk removal
//
// Keys given to IsChunkKey and LooksLikeChunkKey are relative to the array's path.
// Internal to src/storage/zarr. Pure functions: thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "tessera/core/chunk_grid.hpp"

namespace tessera::zarr_detail {

// The key of `block` in the array at `path` ("" for the store's root): its
// coordinates joined by `separator` ('.' or '/'), "0" for a 0-d array.
std::string FormatChunkKey(std::string_view path, std::span<const Index> block, char separator);

// True when `key` (relative to an array's path) is shaped like a chunk key of some
// array: digits and the separators '.' and '/' only. Metadata (".zarray", ".zgroup")
// and other files always contain another character.
bool LooksLikeChunkKey(std::string_view key);

// True when `key` (relative to the array's path) is the key of a block of `grid`.
bool IsChunkKey(std::string_view key, char separator, const ChunkGrid& grid);

}  // namespace tessera::zarr_detail
