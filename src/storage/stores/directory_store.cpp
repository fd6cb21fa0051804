#include "tessera/storage/directory_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;

// Temporary files are ".<name><kTempMarker><pid>-<counter>" beside their target.
constexpr std::string_view kTempMarker = ".tessera-tmp-";

bool IsTemporaryName(std::string_view name) {
  return name.size() > 1 && name.front() == '.' && name.find(kTempMarker) != std::string_view::npos;
}

[[noreturn]] void ThrowIo(std::string_view what, const fs::path& path, int error) {
  throw StorageError("DirectoryStore: cannot " + std::string(what) + " \"" + path.string() +
                     "\": " + std::strerror(error));
}

// What a non-regular file at a key path is, for messages.
std::string_view FileTypeName(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

// A key's value is a regular file's contents; a directory is no key (nullopt). Anything
// else standing at a key path (a FIFO, socket or device, perhaps behind a symbolic link)
// is neither a value nor absent: StorageError naming the path.
[[noreturn]] void ThrowNotAValue(const fs::path& path, mode_t mode) {
  throw StorageError("DirectoryStore: \"" + path.string() + "\" is " +
                     std::string(FileTypeName(mode)) +
                     ", not a regular file; a key's value must be a regular file, so remove "
                     "or rename it");
}

// Closes a file descriptor when it goes out of scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  // Gives up ownership: the caller closes the descriptor.
  int Release() { return std::exchange(fd_, -1); }
  // Closes now, returning close()'s errno (0 on success).
  int Close() {
    int result = ::close(std::exchange(fd_, -1));
    return result == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

// Opens with O_CLOEXEC, retrying on EINTR; returns -1 with errno set on failure.
int OpenFile(const fs::path& path, int flags, mode_t mode = 0) {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

void WriteAll(FileOps& ops, int fd, std::span<const std::byte> bytes, const fs::path& path) {
  while (!bytes.empty()) {
    std::size_t written = 0;
    if (int error = ops.Write(fd, bytes.data(), bytes.size(), &written); error != 0) {
      ThrowIo("write", path, error);
    }
    bytes = bytes.subspan(written);
  }
}

void SyncFile(FileOps& ops, int fd, const fs::path& path) {
  if (int error = ops.Sync(fd); error != 0) ThrowIo("fsync", path, error);
}

void SyncDirectory(FileOps& ops, const fs::path& directory) {
  FileDescriptor fd(OpenFile(directory, O_RDONLY | O_DIRECTORY));
  if (fd.get() < 0) ThrowIo("open directory", directory, errno);
  SyncFile(ops, fd.get(), directory);
}

std::string TemporaryName(const fs::path& target) {
  // Unique within this process by the counter and across processes by the pid.
  static std::atomic<std::uint64_t> counter{0};
  // Appended into one string: GCC 12 at -O3 misreads `"." + std::string&&` (an insert at
  // the front of a temporary) as an overlapping memcpy and warns -Wrestrict.
  std::string name = ".";
  name.append(target.filename().string());
  name.append(kTempMarker);
  name.append(std::to_string(::getpid()));
  name.push_back('-');
  name.append(std::to_string(counter.fetch_add(1)));
  return name;
}

// Walks `directory` (whose key prefix is `key_prefix`, "" or ending in '/'), calling
// visit(key, entry, is_temporary) for every regular file under it whose key could
// start with `prefix`. Symbolic links to files count as files; symbolic links to
// directories are not followed (a link cycle would never end).
template <class Visit>
void Walk(const fs::path& directory, const std::string& key_prefix, std::string_view prefix,
          Visit& visit) {
  std::error_code error;
  fs::directory_iterator it(directory, error);
  if (error) {
    // A directory removed by a concurrent Erase or rename simply has no keys.
    if (error == std::errc::no_such_file_or_directory || error == std::errc::not_a_directory) {
      return;
    }
    ThrowIo("list", directory, error.value());
  }
  for (; it != fs::directory_iterator(); it.increment(error)) {
    if (error) ThrowIo("list", directory, error.value());
    const fs::directory_entry& entry = *it;
    std::string key = key_prefix + entry.path().filename().string();
    std::error_code status_error;
    fs::file_status status = entry.symlink_status(status_error);
    if (status_error) continue;  // vanished while listing
    if (fs::is_directory(status)) {
      std::string sub_prefix = key + "/";
      // Descend only where keys can start with `prefix`.
      if (sub_prefix.starts_with(prefix) || prefix.starts_with(sub_prefix)) {
        Walk(entry.path(), sub_prefix, prefix, visit);
      }
      continue;
    }
    if (fs::is_symlink(status)) {
      status = entry.status(status_error);
      if (status_error) continue;  // dangling link
    }
    if (fs::is_regular_file(status) && key.starts_with(prefix)) {
      visit(key, entry, IsTemporaryName(entry.path().filename().native()));
    }
  }
}

}  // namespace

DirectoryStore::DirectoryStore(fs::path root, Options options)
    : root_(std::move(root)), options_(std::move(options)) {
  if (options_.file_ops == nullptr) options_.file_ops = DefaultFileOps();
}

std::optional<std::string> DirectoryStore::Location() const {
  std::error_code error;
  const fs::path absolute = fs::absolute(root_, error);
  return (error ? root_ : absolute.lexically_normal()).string();
}

std::shared_ptr<DirectoryStore> DirectoryStore::Open(const fs::path& root, Options options) {
  std::error_code error;
  fs::path absolute = fs::absolute(root, error);
  if (error) ThrowIo("resolve", root, error.value());
  absolute = absolute.lexically_normal();
  if (absolute.has_relative_path() && absolute.filename().empty()) {
    absolute = absolute.parent_path();  // drop a trailing '/'
  }
  fs::file_status status = fs::status(absolute, error);
  if (error && error != std::errc::no_such_file_or_directory)
    ThrowIo("open", absolute, error.value());
  if (!fs::exists(status)) {
    if (!options.create) {
      throw StorageError("DirectoryStore: root \"" + absolute.string() +
                         "\" does not exist; create it first or open with create = true");
    }
    fs::create_directories(absolute, error);
    if (error) ThrowIo("create directory", absolute, error.value());
  } else if (!fs::is_directory(status)) {
    throw StorageError("DirectoryStore: root \"" + absolute.string() +
                       "\" exists but is not a directory; pass a directory path");
  }
  return std::make_shared<DirectoryStore>(std::move(absolute), std::move(options));
}

fs::path DirectoryStore::PathOf(std::string_view key) const {
  ValidateKey(key);
  // Defence in depth: ValidateKey already rejects absolute keys and "..", but the
  // path a key becomes is checked again so that no later change to ValidateKey can
  // let a key's text lead outside the root.
  fs::path relative(key);
  for (const fs::path& part : relative) {
    if (part == ".." || part == "." || part.has_root_directory() || part.has_root_name()) {
      throw InvalidArgument("invalid store key \"" + std::string(key) +
                            "\": it would resolve outside the store's root");
    }
  }
  if (relative.is_absolute() || relative.has_root_directory()) {
    throw InvalidArgument("invalid store key \"" + std::string(key) +
                          "\": it would resolve outside the store's root");
  }
  std::string_view name = key.substr(key.rfind('/') + 1);
  if (IsTemporaryName(name)) {
    throw InvalidArgument("invalid store key \"" + std::string(key) +
                          "\": names of the form \".<name>" + std::string(kTempMarker) +
                          "*\" are reserved for DirectoryStore's temporary files; rename it");
  }
  return root_ / relative;
}

std::optional<Buffer> DirectoryStore::Get(std::string_view key) const {
  Buffer buffer;
  if (!GetInto(key, buffer, std::numeric_limits<std::int64_t>::max())) return std::nullopt;
  return buffer;
}

namespace {

// Opens the value file at `path` for reading and sets *size to its size; -1 when there
// is no value there (absent, or a directory). Values are replaced by rename(), so the
// open file never changes under its reader.
int OpenValue(const fs::path& path, std::int64_t* size) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  // It changes nothing for regular files, and fstat rejects anything else below.
  FileDescriptor fd(OpenFile(path, O_RDONLY | O_NONBLOCK));
  if (fd.get() < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return -1;
    ThrowIo("open", path, errno);
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) ThrowIo("stat", path, errno);
  if (S_ISDIR(info.st_mode)) return -1;  // a directory is not a key
  if (!S_ISREG(info.st_mode)) ThrowNotAValue(path, info.st_mode);
  *size = static_cast<std::int64_t>(info.st_size);
  return fd.Release();
}

// A value file held open (DirectoryStore::OpenForReads): reads are preads of that file.
class OpenedFile final : public OpenedValue {
 public:
  OpenedFile(fs::path path, int fd, std::int64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}

  std::int64_t size() const override { return size_; }
  void ReadAt(std::int64_t start, std::span<std::byte> out) const override {
    std::size_t total = 0;
    while (total < out.size()) {
      const ssize_t got = ::pread(fd_.get(), out.data() + total, out.size() - total,
                                  static_cast<off_t>(start) + static_cast<off_t>(total));
      if (got < 0) {
        if (errno == EINTR) continue;
        ThrowIo("read", path_, errno);
      }
      if (got == 0) {
        throw StorageError("cannot read " + path_.string() + ": the file shrank below " +
                           std::to_string(start + static_cast<std::int64_t>(out.size())) +
                           " bytes while being read; another program is writing into the store");
      }
      total += static_cast<std::size_t>(got);
    }
  }

 private:
  fs::path path_;
  FileDescriptor fd_;
  std::int64_t size_;
};

}  // namespace

std::unique_ptr<OpenedValue> DirectoryStore::OpenForReads(std::string_view key) const {
  fs::path path = PathOf(key);
  std::int64_t size = 0;
  const int fd = OpenValue(path, &size);
  if (fd < 0) return nullptr;
  return std::make_unique<OpenedFile>(std::move(path), fd, size);
}

std::optional<std::int64_t> DirectoryStore::ReadRange(std::string_view key, std::int64_t offset,
                                                      std::span<std::byte> out) const {
  const std::unique_ptr<OpenedValue> value = OpenForReads(key);
  if (value == nullptr) return std::nullopt;
  return value->ReadRange(offset, out, DescribeKey(key));
}

std::optional<std::int64_t> DirectoryStore::ReadBounded(std::string_view key, std::int64_t max_size,
                                                        const Destination& destination) const {
  fs::path path = PathOf(key);
  std::int64_t size = 0;
  FileDescriptor fd(OpenValue(path, &size));
  if (fd.get() < 0) return std::nullopt;
  if (size > max_size) return size;
  const std::span<std::byte> out = destination(size);
  std::size_t total = 0;
  while (total < out.size()) {
    ssize_t got = ::read(fd.get(), out.data() + total, out.size() - total);
    if (got < 0) {
      if (errno == EINTR) continue;
      ThrowIo("read", path, errno);
    }
    if (got == 0) {  // truncated by someone writing around the store
      throw StorageError("cannot read " + path.string() + ": the file shrank from " +
                         std::to_string(size) + " to " + std::to_string(total) +
                         " bytes while being read; another program is writing into the store");
    }
    total += static_cast<std::size_t>(got);
  }
  return size;
}

void DirectoryStore::Set(std::string_view key, std::span<const std::byte> value) {
  fs::path path = PathOf(key);
  fs::path directory = path.parent_path();
  fs::path temporary = directory / TemporaryName(path);
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL;
  constexpr mode_t kMode = 0666;  // narrowed by the process umask, as zarr-python's files are
  int raw_fd = OpenFile(temporary, kFlags, kMode);
  if (raw_fd < 0 && errno == ENOENT) {
    std::error_code error;
    fs::create_directories(directory, error);
    if (error) ThrowIo("create directory", directory, error.value());
    raw_fd = OpenFile(temporary, kFlags, kMode);
  }
  if (raw_fd < 0) ThrowIo("create", temporary, errno);
  FileDescriptor fd(raw_fd);
  FileOps& ops = *options_.file_ops;
  try {
    WriteAll(ops, fd.get(), value, temporary);
    if (options_.fsync) SyncFile(ops, fd.get(), temporary);
    if (int error = fd.Close(); error != 0) ThrowIo("close", temporary, error);
    if (int error = ops.Rename(temporary, path); error != 0) ThrowIo("rename onto", path, error);
  } catch (...) {
    // Best effort: a temporary left behind (this unlink failing too) is never listed, and
    // RemoveStaleTemporaries or the next Set of the key's writer clears it.
    (void)ops.Unlink(temporary);
    throw;
  }
  if (options_.fsync) SyncDirectory(ops, directory);
}

bool DirectoryStore::Erase(std::string_view key) {
  fs::path path = PathOf(key);
  const int error = options_.file_ops->Unlink(path);
  if (error == 0) return true;
  if (error == ENOENT || error == ENOTDIR || error == EISDIR) return false;
  ThrowIo("remove", path, error);
}

std::vector<std::string> DirectoryStore::List(std::string_view prefix) const {
  std::vector<std::string> keys;
  auto visit = [&keys](const std::string& key, const fs::directory_entry&, bool is_temporary) {
    if (!is_temporary) keys.push_back(key);
  };
  Walk(root_, "", prefix, visit);
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<ListedKey> DirectoryStore::ListWithSizes(std::string_view prefix) const {
  std::vector<ListedKey> listed;
  auto visit = [&listed](const std::string& key, const fs::directory_entry& entry,
                         bool is_temporary) {
    if (is_temporary) return;
    std::error_code error;
    const std::uintmax_t size = entry.file_size(error);  // a stat, through a link
    if (error) return;                                   // vanished since the walk met it
    listed.push_back({key, static_cast<std::int64_t>(size)});
  };
  Walk(root_, "", prefix, visit);
  std::sort(listed.begin(), listed.end(),
            [](const ListedKey& a, const ListedKey& b) { return a.key < b.key; });
  return listed;
}

std::vector<std::string> DirectoryStore::ListFolder(std::string_view folder) const {
  const fs::path directory = folder.empty() ? root_ : PathOf(folder);
  std::error_code error;
  fs::directory_iterator it(directory, error);
  if (error) {
    // A missing folder (or a file) has nothing below it, as in List.
    if (error == std::errc::no_such_file_or_directory || error == std::errc::not_a_directory) {
      return {};
    }
    ThrowIo("list", directory, error.value());
  }
  // The directories from the root down to `folder`, resolved: a linked directory leading
  // to one of them is a cycle.
  std::vector<fs::path> above;
  fs::path step = root_;
  auto add_above = [&above](const fs::path& path) {
    std::error_code canonical_error;
    fs::path canonical = fs::canonical(path, canonical_error);
    if (!canonical_error) above.push_back(std::move(canonical));
  };
  add_above(step);
  for (const fs::path& part : fs::path(folder)) {
    step /= part;
    add_above(step);
  }
  std::vector<std::string> names;
  for (; it != fs::directory_iterator(); it.increment(error)) {
    if (error) ThrowIo("list", directory, error.value());
    const fs::directory_entry& entry = *it;
    std::string name = entry.path().filename().string();
    if (IsTemporaryName(name)) continue;
    std::error_code status_error;
    fs::file_status status = entry.symlink_status(status_error);
    if (status_error) continue;  // vanished while listing
    if (fs::is_symlink(status)) {
      status = entry.status(status_error);
      if (status_error) continue;  // dangling link
      if (fs::is_directory(status)) {
        const fs::path target = fs::canonical(entry.path(), status_error);
        if (status_error || std::find(above.begin(), above.end(), target) != above.end()) {
          continue;
        }
      }
    }
    if (fs::is_regular_file(status) || fs::is_directory(status)) names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::int64_t> DirectoryStore::SizeOf(std::string_view key) const {
  fs::path path = PathOf(key);
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    ThrowIo("stat", path, errno);
  }
  if (S_ISDIR(info.st_mode)) return std::nullopt;  // a directory is not a key
  if (!S_ISREG(info.st_mode)) ThrowNotAValue(path, info.st_mode);
  return static_cast<std::int64_t>(info.st_size);
}

int DirectoryStore::RemoveStaleTemporaries(bool including_this_process) {
  // Unless told otherwise, temporaries named with this process's pid may belong to a Set
  // running right now on another thread, so they are left alone: only other (crashed)
  // processes leave stale ones behind. Other processes must not be writing to the store
  // meanwhile.
  const std::string own_marker = std::string(kTempMarker) + std::to_string(::getpid()) + "-";
  FileOps& ops = *options_.file_ops;
  int removed = 0;
  auto visit = [&](const std::string&, const fs::directory_entry& entry, bool is_temporary) {
    if (!is_temporary) return;
    const fs::path& path = entry.path();
    if (!including_this_process && path.filename().native().find(own_marker) != std::string::npos)
      return;
    const int error = ops.Unlink(path);
    if (error == 0) {
      ++removed;
    } else if (error != ENOENT) {
      ThrowIo("remove", path, error);
    }
  };
  Walk(root_, "", "", visit);
  return removed;
}

}  // namespace tessera
