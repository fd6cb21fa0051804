#include "tessera/storage/file_ops.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace tessera {

int FileOps::Write(int fd, const std::byte* data, std::size_t size, std::size_t* written) {
  *written = 0;
  while (true) {
    const ssize_t result = ::write(fd, data, size);
    if (result >= 0) {
      *written = static_cast<std::size_t>(result);
      return 0;
    }
    if (errno != EINTR) return errno;
  }
}

int FileOps::Sync(int fd) { return ::fsync(fd) == 0 ? 0 : errno; }

int FileOps::Rename(const std::filesystem::path& from, const std::filesystem::path& to) {
  return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
}

int FileOps::RenameNoReplace(const std::filesystem::path& from, const std::filesystem::path& to) {
  return ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0 ? 0
                                                                                          : errno;
}

int FileOps::Unlink(const std::filesystem::path& path) {
  return ::unlink(path.c_str()) == 0 ? 0 : errno;
}

int FileOps::MakeDirectory(const std::filesystem::path& path) {
  return ::mkdir(path.c_str(), 0777) == 0 ? 0 : errno;
}

int FileOps::RemoveDirectory(const std::filesystem::path& path) {
  return ::rmdir(path.c_str()) == 0 ? 0 : errno;
}

const std::shared_ptr<FileOps>& DefaultFileOps() {
  static const std::shared_ptr<FileOps> ops = std::make_shared<FileOps>();
  return ops;
}

}  // namespace tessera
