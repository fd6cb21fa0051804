#include "target_ownership.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "tessera/core/errors.hpp"
#include "tessera/plan/target_files.hpp"
#include "tessera/storage/directory_store.hpp"
#include "tessera/storage/open_store.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera::planner {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMarkerHeader = "tessera-owner 1";
constexpr std::string_view kResumeRefused = "cannot resume into ";
constexpr std::string_view kPartialNoteStart = "; the chunks written so far are kept in ";

[[noreturn]] void ThrowIo(const std::string& what, const fs::path& path, int error) {
  throw StorageError("cannot " + what + " \"" + path.string() + "\": " + std::strerror(error));
}

class Hasher {
 public:
  void Add(std::string_view text) {
    for (const char c : text) {
      state_ ^= static_cast<unsigned char>(c);
      state_ *= 0x100000001b3ULL;
    }
    state_ ^= 0xff;  // separates fields
    state_ *= 0x100000001b3ULL;
  }
  void Add(std::int64_t value) { Add(std::to_string(value)); }
  std::string Hex() const {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string hex(16, '0');
    for (int i = 0; i < 16; ++i)
      hex[static_cast<std::size_t>(15 - i)] = kDigits[(state_ >> (4 * i)) & 0xf];
    return hex;
  }

 private:
  std::uint64_t state_ = 0xcbf29ce484222325ULL;
};

}  // namespace

std::string HashText(const std::string& text) {
  Hasher hasher;
  hasher.Add(text);
  return hasher.Hex();
}

std::string NewRunId() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::to_string(::getpid()) + "-" +
         std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
}

SourceFingerprint FingerprintSources(const std::vector<std::shared_ptr<const ZarrArray>>& sources) {
  Hasher hasher;
  SourceFingerprint fingerprint;
  for (const std::shared_ptr<const ZarrArray>& source : sources) {
    hasher.Add(ZarrMetadataToJson(source->metadata()));
    const Store& store = *source->store();
    const auto* directory = dynamic_cast<const DirectoryStore*>(&store);
    const std::string prefix = source->path().empty() ? "" : source->path() + "/";
    // One listing with sizes (an object store's answers them; no request per key).
    const std::vector<ListedKey> keys = store.ListWithSizes(prefix);
    // Arrays or groups nested below this one ("sub/" holding its own document): their
    // keys are not its chunks. Its own chunk keys may hold '/' ("c/0/1", v2's "0/1").
    std::vector<std::string> nested;
    for (const ListedKey& listed : keys) {
      for (const std::string_view document : {"/zarr.json", "/.zarray", "/.zgroup"}) {
        if (listed.key.size() > prefix.size() + document.size() && listed.key.ends_with(document)) {
          nested.push_back(listed.key.substr(0, listed.key.size() - document.size() + 1));
        }
      }
    }
    for (const ListedKey& listed : keys) {
      const std::string& key = listed.key;
      if (std::ranges::any_of(nested,
                              [&](const std::string& inner) { return key.starts_with(inner); })) {
        continue;
      }
      hasher.Add(key);
      hasher.Add(listed.size);
      if (directory != nullptr) {
        struct stat info {};
        const fs::path path = directory->root() / key;
        if (::stat(path.c_str(), &info) == 0) {
          hasher.Add(static_cast<std::int64_t>(info.st_mtim.tv_sec));
          hasher.Add(static_cast<std::int64_t>(info.st_mtim.tv_nsec));
        }
      }
      ++fingerprint.keys;
      fingerprint.bytes += listed.size;
    }
  }
  fingerprint.hash = hasher.Hex();
  return fingerprint;
}

bool Occupied(const fs::path& path) {
  std::error_code error;
  return fs::exists(fs::symlink_status(path, error));
}

bool IsRealDirectory(const fs::path& path) {
  std::error_code error;
  return fs::is_directory(fs::symlink_status(path, error));
}

std::string OwnerMarkerText(const OwnerMarker& marker) {
  std::ostringstream text;
  text << kMarkerHeader << "\nkind " << marker.kind << "\nrun " << marker.run << "\nsource "
       << marker.source.hash << ' ' << marker.source.keys << ' ' << marker.source.bytes
       << "\ntarget " << marker.target << "\nlayout " << marker.layout << '\n';
  return text.str();
}

std::optional<OwnerMarker> ParseOwnerMarker(const std::string& text, const std::string& kind) {
  std::istringstream in(text);
  std::string header;
  if (!std::getline(in, header) || header != kMarkerHeader) return std::nullopt;
  OwnerMarker marker;
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t space = line.find(' ');
    const std::string field = line.substr(0, space);
    const std::string value = space == std::string::npos ? "" : line.substr(space + 1);
    if (field == "kind") {
      marker.kind = value;
    } else if (field == "run") {
      marker.run = value;
    } else if (field == "source") {
      std::istringstream parts(value);
      parts >> marker.source.hash >> marker.source.keys >> marker.source.bytes;
    } else if (field == "target") {
      marker.target = value;
    } else if (field == "layout") {
      marker.layout = value;
    }
  }
  if (marker.kind != kind) return std::nullopt;
  return marker;
}

std::optional<OwnerMarker> ReadOwnerMarker(const fs::path& directory, const std::string& kind) {
  if (!IsRealDirectory(directory)) return std::nullopt;
  const fs::path path = directory / kOwnerMarkerName;
  std::error_code error;
  if (!fs::is_regular_file(fs::symlink_status(path, error))) return std::nullopt;
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return ParseOwnerMarker(text.str(), kind);
}

void WriteOwnerMarker(FileOps& ops, const fs::path& directory, const OwnerMarker& marker) {
  const std::string bytes = OwnerMarkerText(marker);
  const fs::path path = directory / kOwnerMarkerName;
  const fs::path temporary = directory / (std::string(kOwnerMarkerName) + ".new");
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) ThrowIo("create", temporary, errno);
  int error = 0;
  std::size_t done = 0;
  while (error == 0 && done < bytes.size()) {
    std::size_t written = 0;
    error = ops.Write(fd, reinterpret_cast<const std::byte*>(bytes.data()) + done,
                      bytes.size() - done, &written);
    done += written;
  }
  if (error == 0) error = ops.Sync(fd);
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0) error = ops.RenameNoReplace(temporary, path);
  if (error != 0) {
    (void)ops.Unlink(temporary);
    ThrowIo("write Tessera's marker", path, error);
  }
  const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) ThrowIo("open directory", directory, errno);
  error = ops.Sync(dir_fd);
  ::close(dir_fd);
  if (error != 0) ThrowIo("fsync", directory, error);
}

void RemoveOwnedDirectory(FileOps& ops, const fs::path& directory) {
  if (!IsRealDirectory(directory)) return;
  std::error_code error;
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(directory, error), end; !error && it != end; it.increment(error)) {
    if (it->path().filename() != kOwnerMarkerName) entries.push_back(it->path());
  }
  if (error) ThrowIo("list", directory, error.value());
  for (const fs::path& entry : entries) RemoveTree(ops, entry);
  RemoveTree(ops, directory);  // the marker, then the directory
}

bool IsEmptyRealDirectory(const fs::path& path) {
  if (!IsRealDirectory(path)) return false;
  // A run killed while creating the folder leaves it empty or holding only the
  // marker's temporary file.
  const std::string unfinished_marker = std::string(kOwnerMarkerName) + ".new";
  std::error_code error;
  for (fs::directory_iterator it(path, error), end; !error && it != end; it.increment(error)) {
    if (it->path().filename() != unfinished_marker) return false;
  }
  return !error;
}

void RemoveTree(FileOps& ops, const fs::path& path) {
  std::error_code error;
  const fs::file_status status = fs::symlink_status(path, error);
  if (!fs::exists(status)) return;
  if (fs::is_directory(status)) {
    std::vector<fs::path> entries;
    for (fs::directory_iterator it(path, error), end; !error && it != end; it.increment(error)) {
      entries.push_back(it->path());
    }
    if (error) ThrowIo("list", path, error.value());
    for (const fs::path& entry : entries) RemoveTree(ops, entry);
    if (const int failed = ops.RemoveDirectory(path); failed != 0 && failed != ENOENT) {
      ThrowIo("remove", path, failed);
    }
    return;
  }
  if (const int failed = ops.Unlink(path); failed != 0 && failed != ENOENT) {
    ThrowIo("remove", path, failed);
  }
}

}  // namespace tessera::planner

namespace tessera {
namespace fs = std::filesystem;

using planner::kPartialNoteStart;
using planner::kResumeRefused;
using planner::ReadOwnerMarker;

fs::path PartialOutputPath(const fs::path& target) {
  fs::path path = target;
  path += ".tessera-partial";
  return path;
}

fs::path PreviousOutputPath(const fs::path& target) {
  fs::path path = target;
  path += ".tessera-old";
  return path;
}

bool HasPartialOutput(const fs::path& target) {
  return ReadOwnerMarker(PartialOutputPath(target), "partial-output").has_value();
}

StoreTargetLocation OpenStoreTarget(const std::string& url) {
  std::string trimmed = url;
  while (!trimmed.empty() && trimmed.back() == '/') trimmed.pop_back();
  const std::size_t scheme = trimmed.find("://");
  const std::size_t bucket_end =
      scheme == std::string::npos ? std::string::npos : trimmed.find('/', scheme + 3);
  if (bucket_end == std::string::npos) {
    throw InvalidArgument("to_zarr: " + url +
                          " names a whole bucket; name the array's prefix in it (e.g. " + trimmed +
                          "/out.zarr)");
  }
  const std::size_t slash = trimmed.rfind('/');
  return {OpenStore(trimmed.substr(0, slash), {.create = false}), trimmed.substr(slash + 1)};
}

std::string StorePartialOutputNote(const Store& store, const std::string& path,
                                   const std::string& how_to_resume) {
  try {
    if (!store.Contains(JoinKey(path, kStorePartialMarkerName))) return "";
  } catch (const Error&) {
    return "";  // out of reach now: nothing more to say about it
  }
  return std::string(kPartialNoteStart) + store.DescribeKey(path) + " (marked " +
         kStorePartialMarkerName +
         " as Tessera's unfinished output, which no reader takes "
         "for an array); " +
         how_to_resume +
         " continues from them (same source and options), or a run without it starts over";
}

std::string PartialOutputNote(const fs::path& target, const std::string& how_to_resume) {
  if (IsObjectStoreLocation(target.string())) {
    try {
      const StoreTargetLocation store_target = OpenStoreTarget(target.string());
      return StorePartialOutputNote(*store_target.store, store_target.path, how_to_resume);
    } catch (const Error&) {
      return "";  // out of reach now: nothing more to say about it
    }
  }
  if (!HasPartialOutput(target)) return "";
  const fs::path partial = PartialOutputPath(target);
  return std::string(kPartialNoteStart) + partial.string() + "; " + how_to_resume +
         " continues from them (same source and options), or delete " + partial.string() +
         " to start over";
}

namespace {

// Throws an error of `error`'s type: its message, any partial output note it had replaced
// by the note `make_note` gives (none after a refused resume, which says what to do).
template <class MakeNote>
[[noreturn]] void ThrowWithNote(const Error& error, MakeNote&& make_note) {
  std::string message = error.what();
  if (const std::size_t at = message.find(kPartialNoteStart); at != std::string::npos) {
    message.erase(at);
  }
  if (message.find(kResumeRefused) == std::string::npos) message += make_note();
  if (dynamic_cast<const InvalidArgument*>(&error) != nullptr) throw InvalidArgument(message);
  if (const auto* budget = dynamic_cast<const MemoryBudgetError*>(&error)) {
    throw MemoryBudgetError(message, budget->required_allowed_mem());
  }
  if (dynamic_cast<const StorageError*>(&error) != nullptr) throw StorageError(message);
  if (dynamic_cast<const FormatError*>(&error) != nullptr) throw FormatError(message);
  throw Error(message);
}

}  // namespace

void ThrowWithPartialOutputNote(const Error& error, const fs::path& target,
                                const std::string& how_to_resume) {
  ThrowWithNote(error, [&] { return PartialOutputNote(target, how_to_resume); });
}

void ThrowWithStorePartialOutputNote(const Error& error, const Store& store,
                                     const std::string& path, const std::string& how_to_resume) {
  ThrowWithNote(error, [&] { return StorePartialOutputNote(store, path, how_to_resume); });
}

}  // namespace tessera
