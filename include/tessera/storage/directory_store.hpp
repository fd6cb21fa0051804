// DirectoryStore: a Store on a local directory, one file per key (Zarr's layout).
//
//   auto store = tessera::DirectoryStore::Open("out.zarr");        // created if missing
//   auto store = tessera::DirectoryStore::Open("in.zarr", {.create = false});
//
// Writes are atomic: a value is written to a hidden temporary file in the target's
// directory, then renamed over the key, so a crash never leaves a torn value.
// Temporary files (".<name>.tessera-tmp-*") are never listed and are removed by
// RemoveStaleTemporaries(). Keys cannot escape the root (see ValidateKey); a key's
// path components are never followed out of the root. Thread-safe.
#pragma once

#include <filesystem>
#include <memory>

#include "tessera/storage/store.hpp"

namespace tessera {

class DirectoryStore final : public Store {
 public:
  struct Options {
    bool create = true;  // create the root directory when missing
    bool fsync = false;  // fsync each value before the rename (survives power loss)
  };

  // Throws StorageError when the root is missing (and !create) or not a directory.
  static std::shared_ptr<DirectoryStore> Open(const std::filesystem::path& root, Options options);
  static std::shared_ptr<DirectoryStore> Open(const std::filesystem::path& root) {
    return Open(root, Options{});
  }

  std::optional<Buffer> Get(std::string_view key) const override;
  using Store::Set;
  void Set(std::string_view key, std::span<const std::byte> value) override;
  bool Erase(std::string_view key) override;
  std::vector<std::string> List(std::string_view prefix) const override;
  std::optional<std::int64_t> SizeOf(std::string_view key) const override;
  std::string Describe() const override { return root_.string(); }

  const std::filesystem::path& root() const { return root_; }
  // Deletes temporaries left by interrupted writers; returns how many.
  int RemoveStaleTemporaries();

  DirectoryStore(std::filesystem::path root, Options options);

 private:
  std::filesystem::path PathOf(std::string_view key) const;

  std::filesystem::path root_;
  Options options_;
};

}  // namespace tessera
