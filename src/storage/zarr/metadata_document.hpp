// Reading Zarr metadata documents (.zarray, .zattrs, .zgroup, .zmetadata, zarr.json)
// from a store, bounded in size, and the names of those documents.
//
//   std::optional<std::string> text = ReadMetadataDocument(store, "t2m/zarr.json");
//
// Internal to src/storage/zarr. Thread-safe (the store's own rules apply).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tessera/storage/store.hpp"

namespace tessera::zarr_detail {

inline constexpr std::string_view kArrayDocument = ".zarray";     // v2
inline constexpr std::string_view kAttributesDocument = ".zattrs";  // v2
inline constexpr std::string_view kGroupDocument = ".zgroup";     // v2
inline constexpr std::string_view kConsolidatedDocument = ".zmetadata";  // v2, zarr-python's
inline constexpr std::string_view kNodeDocument = "zarr.json";    // v3: arrays and groups

// Metadata documents are a few KB; even long CF attribute lists stay far below one MiB.
// Reading at most 16 MiB bounds what a corrupt, hostile or misplaced file (a chunk
// renamed .zarray, a sparse file) can make a reader allocate, while leaving room for any
// real document (consolidated metadata of thousands of arrays included).
inline constexpr std::int64_t kMaxMetadataBytes = std::int64_t{16} << 20;

// The document at `key`, or nullopt when absent. FormatError naming the key for a
// larger one, which is never read.
std::optional<std::string> ReadMetadataDocument(const Store& store, const std::string& key);

}  // namespace tessera::zarr_detail
