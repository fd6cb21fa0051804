#include "store_argument.hpp"

#include <filesystem>
#include <system_error>
#include <vector>

#include "tessera/core/errors.hpp"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

// The names of the arrays directly inside the group at the root of `store`, sorted.
std::vector<std::string> MemberArrays(const Store& store) {
  std::vector<std::string> names = ListZarrGroup(store).arrays;
  std::erase_if(names, [](const std::string& name) { return name.find('/') != std::string::npos; });
  return names;
}

}  // namespace

void AddStoreArgument(CLI::App& command, std::string& path) {
  command
      .add_option("STORE", path,
                  "Path to a Zarr array or group (a directory, or s3://BUCKET/PREFIX)")
      ->required();
}

std::shared_ptr<Store> OpenStoreArgument(const std::string& path) {
  if (IsObjectStoreLocation(path)) return OpenStore(path, {.create = false});
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error && error != std::errc::no_such_file_or_directory) {
    throw StorageError("cannot access " + path + ": " + error.message());
  }
  if (!fs::exists(status)) {
    throw StorageError("no such file or directory: " + path +
                       " (expected a Zarr store, i.e. a directory holding .zarray or .zgroup)");
  }
  if (!fs::is_directory(status)) {
    throw StorageError(path +
                       " is not a directory (a Zarr store is a directory holding "
                       ".zarray or .zgroup; pass the directory, not a file inside it)");
  }
  return DirectoryStore::Open(path, DirectoryStore::Options{.create = false, .fsync = false});
}

StoredArrayArgument OpenArrayArgument(const std::string& path, const std::string& label) {
  std::shared_ptr<Store> store = OpenStoreArgument(path);
  if (IsZarrGroup(*store, "")) {
    const std::vector<std::string> members = MemberArrays(*store);
    if (members.empty()) {
      throw InvalidArgument(label + " " + path +
                            " is a Zarr group holding no array; pass an array");
    }
    std::string listed;
    for (const std::string& name : members) listed += (listed.empty() ? "" : ", ") + name;
    throw InvalidArgument(label + " " + path + " is a Zarr group, not an array; pass one of its " +
                          "arrays (" + listed + "), e.g. " +
                          (fs::path(path) / members.front()).string());
  }
  ZarrArray array = ZarrArray::Open(store);
  return StoredArrayArgument{fs::path(path), std::move(store), std::move(array)};
}

}  // namespace tessera::cli
