// OpenStore: the store a location names, local or in object storage.
//
//   auto in = tessera::OpenStore("s3://era5/t2m.zarr", {.create = false});   // an S3Store
//   auto out = tessera::OpenStore("/data/out.zarr", {});                      // a DirectoryStore
//
// "s3://bucket/prefix" opens an S3Store (settings from the AWS environment, s3_store.hpp);
// anything else is a local directory. `create` makes a missing directory (an object
// store's prefix needs no making). Throws what the store's Open throws.
#pragma once

#include <memory>
#include <string_view>

#include "tessera/storage/store.hpp"

namespace tessera {

struct OpenStoreOptions {
  bool create = true;
};

std::shared_ptr<Store> OpenStore(std::string_view location, OpenStoreOptions options);

// True when `location` names an object store ("s3://...") rather than a local path.
bool IsObjectStoreLocation(std::string_view location);

// Throws InvalidArgument, naming `location` and what is wrong, when it is an object store
// URL that no store could open (no bucket, a bucket name S3 refuses, a bad prefix).
// Sends nothing: the bucket itself is checked when the store is opened.
void CheckObjectStoreLocation(std::string_view location);

}  // namespace tessera
