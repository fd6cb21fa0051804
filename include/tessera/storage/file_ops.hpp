// FileOps: the file-system calls that change files, behind one small interface so that a
// test can make any of them fail (as LevelDB's Env lets its tests inject faults).
//
// DirectoryStore writes values through it (write, fsync, rename, unlink) and the Zarr
// target of to_zarr creates, renames and removes its partial output through it. The
// default, DefaultFileOps(), calls POSIX directly. A test derives from FileOps,
// overrides the calls it wants to fail (returning an errno value) and calls the base
// class for the others.
//
// Every call returns 0 on success or an errno value; none throws. Paths are used as
// given: no call follows a symbolic link at the last component except Write/Sync, which
// act on an open descriptor.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>

namespace tessera {

class FileOps {
 public:
  virtual ~FileOps() = default;
  // write(2) of up to `size` bytes; `*written` is what was written.
  virtual int Write(int fd, const std::byte* data, std::size_t size, std::size_t* written);
  // fsync(2).
  virtual int Sync(int fd);
  // rename(2): replaces `to` when it is a file (or an empty directory).
  virtual int Rename(const std::filesystem::path& from, const std::filesystem::path& to);
  // renameat2(RENAME_NOREPLACE): EEXIST when `to` exists, whatever it is.
  virtual int RenameNoReplace(const std::filesystem::path& from, const std::filesystem::path& to);
  // unlink(2): removes a file or a symbolic link (never what a link points to).
  virtual int Unlink(const std::filesystem::path& path);
  // mkdir(2) with mode 0777 (narrowed by the umask): EEXIST when anything is there.
  virtual int MakeDirectory(const std::filesystem::path& path);
  // rmdir(2): removes an empty directory.
  virtual int RemoveDirectory(const std::filesystem::path& path);
};

// The process-wide POSIX implementation.
const std::shared_ptr<FileOps>& DefaultFileOps();

}  // namespace tessera
