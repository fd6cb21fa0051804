// The size rules of a Zarr array that Tessera reads or writes: every element count and
// byte size a reader derives from shape, chunks and dtype fits in 64 bits, and one
// decoded chunk is at most kMaxChunkBytes. ParseZarrMetadata reports a violation as a
// FormatError of the document, ZarrArray::Create as InvalidArgument:
//
//   if (std::optional<SizeProblem> problem = CheckSizes(metadata)) { ...problem->key... }
//
// Internal to src/storage/zarr. Pure functions: thread-safe.
#pragma once

#include <optional>
#include <string>

#include "tessera/storage/zarr_metadata.hpp"

namespace tessera::zarr_detail {

// A decoded chunk must fit in one Buffer in memory. No machine holds a 1 TiB chunk,
// and zarr-python's own guidance is chunks of a few MB to a few hundred MB, so a
// larger chunk can only come from a corrupt or hostile .zarray. Rejecting it keeps a
// reader from attempting absurd allocations and keeps every later sum of a few
// chunk-sized buffers (read copies, encode bounds) far from Index overflow.
inline constexpr Index kMaxChunkBytes = Index{1} << 40;

// A shard holds at most this many inner chunks (4,194,304: an index of 64 MiB, read whole
// before any inner chunk). Real shards hold hundreds to tens of thousands; more can only
// come from a corrupt or hostile document, which would make a reader allocate an index
// of terabytes.
inline constexpr Index kMaxInnerChunksPerShard = Index{1} << 22;

// Nested shardings deeper than this are refused (a hostile document could nest
// thousands); real data nests once at most.
inline constexpr int kMaxShardingDepth = 4;

// A violated rule: the key it concerns ("shape", "chunks" or "codecs"), what the rule
// expects, and the value found.
struct SizeProblem {
  std::string key;
  std::string expected;
  std::string found;
};

// The first size rule `metadata` violates, or nullopt.
// REQUIRES: shape and chunks of equal length, shape >= 0 and chunks >= 1 (what
// ChunkGrid and the parser check first).
std::optional<SizeProblem> CheckSizes(const ZarrMetadata& metadata);

}  // namespace tessera::zarr_detail
