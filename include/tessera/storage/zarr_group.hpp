// Zarr groups: what a group holds, found through the Store interface.
//
//   auto store = tessera::DirectoryStore::Open("dataset.zarr", {.create = false});
//   tessera::ZarrGroupMembers members = tessera::ListZarrGroup(*store);
//   for (const std::string& name : members.arrays) {
//     tessera::ZarrArray array = tessera::ZarrArray::Open(store, name);
//   }
//
// (CreateZarrGroup and IsZarrGroup, which write and test a .zgroup, are in
// zarr_array.hpp.)
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tessera/storage/store.hpp"

namespace tessera {

// The arrays and groups inside a group, nested ones included, as '/'-joined paths
// relative to the group, sorted depth first ("a", "sub", "sub/b"): JoinKey(group path,
// name) opens one.
struct ZarrGroupMembers {
  std::vector<std::string> arrays;
  std::vector<std::string> groups;
};

// The members of the group at `path` ("" for the store's root), walked with
// Store::ListFolder: a name below the group holding .zarray is an array (never looked
// into, so chunk keys are not listed), one holding .zgroup is a group, walked in turn;
// names starting with '.' (metadata, temporaries) and anything else are skipped. The
// walk ends: a store lists no folder leading back up its own path (a directory store's
// link cycles). Does not check that `path` itself is a group (IsZarrGroup).
// Throws InvalidArgument for a bad path (ValidateKey), and the store's errors.
ZarrGroupMembers ListZarrGroup(const Store& store, std::string_view path = "");

}  // namespace tessera
