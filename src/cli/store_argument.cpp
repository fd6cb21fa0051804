#include "store_argument.hpp"

#include <filesystem>
#include <system_error>

#include "tessera/core/errors.hpp"

namespace tessera::cli {

void AddStoreArgument(CLI::App& command, std::string& path) {
  command.add_option("STORE", path, "Path to a Zarr v2 array or group (a directory)")->required();
}

std::shared_ptr<DirectoryStore> OpenStoreArgument(const std::string& path) {
  namespace fs = std::filesystem;
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

}  // namespace tessera::cli
