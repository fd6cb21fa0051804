// DirectoryStore: a Store on a local directory, one file per key (Zarr's layout).
//
//   auto store = tessera::DirectoryStore::Open("out.zarr");        // created if missing
//   auto store = tessera::DirectoryStore::Open("in.zarr", {.create = false});
//
// Writes are atomic: a value is written to a hidden temporary file in the target's
// directory, then renamed over the key, so a crash never leaves a torn value.
// Temporary files (".<name>.tessera-tmp-*") are never listed and are removed by
// RemoveStaleTemporaries(). Thread-safe.
//
// Paths and links: a key's text cannot name a path outside the root (ValidateKey
// rejects absolute keys and "." / ".." segments, and the path is checked again).
// Symbolic links inside the root can lead out of it: a linked directory is followed like any
// path component by Get, Set, Erase and SizeOf, so keys below it live wherever it
// points, outside the root too; a link at a key's own path is read through by Get and
// SizeOf, while Set replaces the link itself and Erase removes it. Whoever can create
// links in the root decides where those keys live. List lists links to regular files
// but never descends into linked directories (a link cycle would never end); ListFolder
// lists linked directories except those leading back up (a cycle).
//
// What stands at a key's path: a regular file is the value; nothing (or a directory)
// means the key is absent; anything else (a FIFO, socket or device) makes Get and
// SizeOf throw StorageError naming the path, and Get never blocks on it.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "tessera/storage/file_ops.hpp"
#include "tessera/storage/store.hpp"

namespace tessera {

class DirectoryStore final : public Store {
 public:
  struct Options {
    bool create = true;  // create the root directory when missing
    bool fsync = false;  // fsync each value before the rename (survives power loss)
    // The calls that change files (null: DefaultFileOps()); tests inject faults here.
    std::shared_ptr<FileOps> file_ops = nullptr;
  };

  // Throws StorageError when the root is missing (and !create) or not a directory.
  static std::shared_ptr<DirectoryStore> Open(const std::filesystem::path& root, Options options);
  static std::shared_ptr<DirectoryStore> Open(const std::filesystem::path& root) {
    return Open(root, Options{});
  }

  std::optional<Buffer> Get(std::string_view key) const override;
  std::optional<std::int64_t> ReadBounded(std::string_view key, std::int64_t max_size,
                                          const Destination& destination) const override;
  // pread of the range alone.
  std::optional<std::int64_t> ReadRange(std::string_view key, std::int64_t offset,
                                        std::span<std::byte> out) const override;
  using Store::Set;
  void Set(std::string_view key, std::span<const std::byte> value) override;
  bool Erase(std::string_view key) override;
  std::vector<std::string> List(std::string_view prefix) const override;
  // The walk of List, each file's size read as it is met (links to files: their target's).
  std::vector<ListedKey> ListWithSizes(std::string_view prefix) const override;
  // The entries of one directory: its files and subdirectories (an empty one too),
  // temporaries left out. A linked directory is listed unless it leads back to `folder`
  // or a directory above it up to the root, so a walk down the listing always ends.
  std::vector<std::string> ListFolder(std::string_view folder) const override;
  std::optional<std::int64_t> SizeOf(std::string_view key) const override;
  // The value's file, held open: its reads are preads, and see the file opened even
  // when a writer renames a new one over it.
  std::unique_ptr<OpenedValue> OpenForReads(std::string_view key) const override;
  std::string Describe() const override { return root_.string(); }
  // The root, absolute: DirectoryStore::Open of it (with create = false) in another
  // process of this machine, or of one sharing the filesystem, opens the same store.
  std::optional<std::string> Location() const override;

  const std::filesystem::path& root() const { return root_; }
  // Deletes temporaries left by interrupted writers; returns how many. Those named with
  // this process's pid are kept unless `including_this_process` (no Set of this process
  // runs meanwhile; a killed run may have had the same pid).
  int RemoveStaleTemporaries(bool including_this_process = false);

  DirectoryStore(std::filesystem::path root, Options options);

 private:
  std::filesystem::path PathOf(std::string_view key) const;

  std::filesystem::path root_;
  Options options_;
};

}  // namespace tessera
