// Zarr groups (v2 and v3): what a group holds, found through the Store interface, and
// its consolidated metadata.
//
//   auto store = tessera::DirectoryStore::Open("dataset.zarr", {.create = false});
//   tessera::ZarrGroupMembers members = tessera::ListZarrGroup(*store);
//   for (const std::string& name : members.arrays) {
//     tessera::ZarrArray array = tessera::ZarrArray::Open(store, name);
//   }
//   tessera::ConsolidateZarrGroup(*store);   // as zarr.consolidate_metadata does
//
// (CreateZarrGroup and IsZarrGroup, which write and test a group's own metadata, are in
// zarr_array.hpp.)
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tessera/storage/store.hpp"

namespace tessera {

// The arrays and groups inside a group, nested ones included, as '/'-joined paths
// relative to the group, sorted ("a", "sub", "sub/b"): JoinKey(group path, name) opens one.
struct ZarrGroupMembers {
  std::vector<std::string> arrays;
  std::vector<std::string> groups;
};

// The members of the group at `path` ("" for the store's root). When the group carries
// consolidated metadata (zarr-python's: inline in a v3 zarr.json, or a v2 .zmetadata),
// the members are read from it and nothing is listed. Otherwise the store is walked with
// Store::ListFolder: a name below the group holding zarr.json (by its node_type) or
// .zarray is an array (never looked into, so chunk keys are not listed), one holding a
// group's metadata is a group, walked in turn; names starting with '.' (metadata,
// temporaries) and anything else are skipped. The walk ends: a store lists no folder
// leading back up its own path (a directory store's link cycles). Does not check that
// `path` itself is a group (IsZarrGroup).
// Throws InvalidArgument for a bad path (ValidateKey), FormatError for unreadable
// metadata (naming the document), and the store's errors.
ZarrGroupMembers ListZarrGroup(const Store& store, std::string_view path = "");

// True when `path` holds a group whose metadata parses (IsZarrGroup); false, not
// FormatError, when a .zgroup or zarr.json there is not Zarr's (a stranger's file in a
// folder an array is written into: no group to update or to name).
bool IsReadableZarrGroup(const Store& store, std::string_view path = "");

// True when the group at `path` carries consolidated metadata.
bool HasConsolidatedMetadata(const Store& store, std::string_view path = "");

// Writes the group's consolidated metadata from its members' documents as they are now,
// as zarr.consolidate_metadata does: inline in the group's zarr.json for a v3 group
// (its attributes kept), or .zmetadata beside .zgroup for a v2 group. Throws StorageError
// when `path` is not a group, FormatError for unreadable member metadata.
void ConsolidateZarrGroup(Store& store, std::string_view path = "");

}  // namespace tessera
