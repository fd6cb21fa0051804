// The storage API users call, as the api layer hands it out: stores (a key -> bytes
// map: in memory, a directory on local disk, or an S3 bucket's prefix; OpenStore picks
// by the location), codecs, Zarr v2 and v3 arrays and groups.
// Front ends (cli/) reach storage through this header, never storage/ itself.
//
//   auto store = tessera::DirectoryStore::Open("dataset.zarr", {.create = false});
//   tessera::ZarrGroupMembers members = tessera::ListZarrGroup(*store);
//   tessera::ZarrArray t2m = tessera::ZarrArray::Open(store, "t2m");
//   tessera::Array lazy = tessera::from_zarr(store, "t2m", spec);   // api/creation.hpp
#pragma once

#include "tessera/storage/codec.hpp"
#include "tessera/storage/directory_store.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/open_store.hpp"
#include "tessera/storage/s3_store.hpp"
#include "tessera/storage/store.hpp"
#include "tessera/storage/zarr_array.hpp"
#include "tessera/storage/zarr_group.hpp"
#include "tessera/storage/zarr_metadata.hpp"
