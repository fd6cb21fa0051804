// The STORE argument shared by `tessera` commands: a path to an existing directory
// store (a Zarr array or group on local disk), or an object store's "s3://bucket/prefix"
// (tessera/storage/s3_store.hpp: settings from the AWS environment).
//
//   std::string path;
//   AddStoreArgument(*subcommand, path);            // positional, required
//   auto store = OpenStoreArgument(path);           // after parsing
//   StoredArrayArgument in = OpenArrayArgument(path, "IN");   // a Zarr array, not a group
//
// Opening never creates anything: a missing path or a path that is not a directory is
// the user's mistake and throws StorageError naming the path.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "tessera/api/storage.hpp"

namespace tessera::cli {

// Registers the positional STORE argument on `command`, stored into `path`.
// `path` must outlive the parse.
void AddStoreArgument(CLI::App& command, std::string& path);

// Opens `path` read-only (nothing is created). Throws StorageError when it does not
// exist or is not a directory (or the bucket cannot be reached).
std::shared_ptr<Store> OpenStoreArgument(const std::string& path);

// A Zarr array named on the command line, opened read-only.
struct StoredArrayArgument {
  std::filesystem::path directory;
  std::shared_ptr<Store> store;
  ZarrArray array;
};

// Opens the Zarr array at `path`; `label` names the argument in errors ("IN", "--input
// t2"). Throws as OpenStoreArgument, InvalidArgument for a group (naming its arrays),
// and StorageError/FormatError for a directory that holds no valid array.
StoredArrayArgument OpenArrayArgument(const std::string& path, const std::string& label);

}  // namespace tessera::cli
