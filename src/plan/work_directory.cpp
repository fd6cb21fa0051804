#include "work_directory.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>

#include "tessera/core/cluster.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/open_store.hpp"

namespace tessera::planner {
namespace {

constexpr std::string_view kPrefix = "tessera-";

std::optional<long long> ParseNumber(std::string_view text) {
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

struct Owner {
  long long pid = 0;
  long long start = 0;
};

// The owner a work directory's name records: "tessera-<pid>-<start>-<n>" (or "-mpi<n>").
std::optional<Owner> ParseName(std::string_view name) {
  if (!name.starts_with(kPrefix)) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  std::optional<long long> parts[3];
  for (int i = 0; i < 3; ++i) {
    const std::size_t dash = i < 2 ? name.find('-') : name.size();
    if (dash == std::string_view::npos) return std::nullopt;
    if (i == 2 && name.starts_with("mpi")) name.remove_prefix(3);  // an MPI run's: -mpi<n>
    parts[i] = ParseNumber(name.substr(0, i < 2 ? dash : name.size()));
    if (!parts[i]) return std::nullopt;
    name.remove_prefix(i < 2 ? dash + 1 : name.size());
  }
  return Owner{*parts[0], *parts[1]};
}

namespace fs = std::filesystem;

// This process, as work directory names record it (read again after a fork).
Owner Self() {
  static std::mutex mutex;
  static Owner self;
  const std::lock_guard lock(mutex);
  if (self.pid != getpid()) self = Owner{getpid(), ProcessStartTicks(getpid()).value_or(0)};
  return self;
}

// This machine's name, as markers record it: a work_dir shared by several machines
// (NFS, a cluster's scratch) holds directories whose processes this one cannot see.
std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

// What the marker of work directory `name`, owned by `owner` on this machine, says, word
// for word. A directory made on another machine has another text: this one never takes
// it for its own nor for a stale one.
std::string MarkerText(const std::string& name, const Owner& owner) {
  static const std::string host = HostName();
  return "Tessera work directory " + name + " of process " + std::to_string(owner.pid) +
         " started at " + std::to_string(owner.start) + " (clock ticks after boot) on host " +
         host +
         ". Tessera removes this folder when its plan is done, or when that process "
         "is gone.\n";
}

// Whether `directory` is a real folder (not a symlink) named like a work directory of
// `owner` and carrying the marker that name calls for (a regular file, not a link).
bool HasMarker(const fs::path& directory, const Owner& owner) {
  std::error_code error;
  if (fs::symlink_status(directory, error).type() != fs::file_type::directory) return false;
  const fs::path marker = directory / kWorkDirectoryMarker;
  if (fs::symlink_status(marker, error).type() != fs::file_type::regular) return false;
  const std::string expected = MarkerText(directory.filename().string(), owner);
  std::ifstream file(marker, std::ios::binary);
  std::string text;
  // One byte more than expected: a longer file is not the marker either.
  text.resize(expected.size() + 1);
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(file.gcount()));
  return text == expected;
}

// Whether `directory` is a work directory this process created.
bool IsOwnWorkDirectory(const fs::path& directory) {
  const std::optional<Owner> owner = ParseName(directory.filename().string());
  return owner && owner->pid == Self().pid && owner->start == Self().start &&
         HasMarker(directory, *owner);
}

std::string Describe(fs::file_type type) {
  switch (type) {
    case fs::file_type::directory:
      return "a folder without Tessera's marker";
    case fs::file_type::symlink:
      return "a symbolic link";
    case fs::file_type::regular:
      return "a file";
    default:
      return "something that is not a folder";
  }
}

// Creating a work directory and writing its marker is one step for the threads of a
// process (two ops preparing at once must not see each other's directory unmarked).
std::mutex& CreationMutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

void CheckWorkDirectoryBase(const Spec& spec) {
  if (spec.work_dir.empty()) return;
  // An object store's prefix needs no making: its URL is checked here, its bucket when an
  // intermediate first goes there.
  if (IsObjectStoreLocation(spec.work_dir)) {
    try {
      CheckObjectStoreLocation(spec.work_dir);
    } catch (const InvalidArgument& error) {
      throw InvalidArgument(std::string("Spec work_dir: ") + error.what());
    }
    // The client's local disk is no place its workers reach.
    if (!spec.keeps_intermediates_in_memory() && spec.local_disk > 0) {
      throw InvalidArgument("Spec local_disk: executor \"" + spec.executor +
                            "\" runs tasks in worker processes that share no local disk: "
                            "leave local_disk at auto (none) or 0, so that intermediates "
                            "beyond the RAM go to the object store work_dir");
    }
    return;
  }
  const std::string& base = spec.work_dir;
  std::error_code error;
  const fs::file_status status = fs::status(base, error);  // a link to a folder is a folder
  if (status.type() == fs::file_type::not_found) {
    throw InvalidArgument("work_dir " + base + " does not exist: create it (mkdir -p " + base +
                          ") or name an existing folder (--work-dir, Spec::work_dir); Tessera "
                          "does not create it, so that nothing it made is left behind");
  }
  if (error) {
    throw StorageError("work_dir " + base + " cannot be inspected (" + error.message() +
                       "): make it reachable by this user, or name another folder with "
                       "--work-dir (Spec::work_dir)");
  }
  if (status.type() != fs::file_type::directory) {
    throw InvalidArgument("work_dir " + base + " is " +
                          (status.type() == fs::file_type::regular ? std::string("a file")
                                                                   : Describe(status.type())) +
                          ", not a folder: name a folder for disk intermediates with --work-dir "
                          "(Spec::work_dir), or move the file away and create a folder there");
  }
  if (access(base.c_str(), W_OK | X_OK) != 0) {
    throw StorageError("work_dir " + base + " cannot be written by this user (" +
                       std::strerror(errno) +
                       "): make it writable (chmod u+wx), or name another folder with "
                       "--work-dir (Spec::work_dir)");
  }
}

void CreateWorkDirectory(const fs::path& directory) {
  const std::lock_guard lock(CreationMutex());
  if (::mkdir(directory.c_str(), 0700) != 0) {
    const int cause = errno;
    if (cause == EEXIST) {
      if (IsOwnWorkDirectory(directory)) return;
      std::error_code error;
      throw StorageError("the work directory name " + directory.string() + " is taken by " +
                         Describe(fs::symlink_status(directory, error).type()) +
                         ", which Tessera did not make and will not touch: move or delete "
                         "it, or name another work_dir (--work-dir, Spec::work_dir)");
    }
    throw StorageError("cannot create the work directory " + directory.string() + " (" +
                       std::strerror(cause) +
                       "): make its folder writable, or name another work_dir (--work-dir, "
                       "Spec::work_dir)");
  }
  const std::optional<Owner> owner = ParseName(directory.filename().string());
  // The text first: the file is written at once when made (a kill in between leaves a
  // folder whose marker is short, which is never taken for Tessera's).
  const std::string text = MarkerText(directory.filename().string(), owner.value_or(Self()));
  std::ofstream marker(directory / kWorkDirectoryMarker, std::ios::binary);
  marker << text;
  marker.close();
  if (!marker || !IsOwnWorkDirectory(directory)) {
    std::error_code ignored;
    fs::remove_all(directory, ignored);  // made just now by this process
    throw StorageError("cannot write the marker file of the work directory " + directory.string() +
                       ": make its folder writable (and the disk not full), or name another "
                       "work_dir (--work-dir, Spec::work_dir)");
  }
}

void PrepareInsideWorkDirectory(const fs::path& path) {
  CreateWorkDirectory(path.parent_path());
  std::error_code error;
  fs::remove_all(path, error);  // an earlier run of this plan; a link goes as a link
  if (!error) fs::create_directory(path, error);
  if (error) {
    throw StorageError("cannot prepare " + path.string() + " for an intermediate (" +
                       error.message() + "): make work_dir writable, or name another");
  }
}

void RemoveInsideWorkDirectory(const fs::path& path) noexcept {
  try {
    if (!IsOwnWorkDirectory(path.parent_path())) return;
    std::error_code ignored;
    fs::remove_all(path, ignored);
  } catch (...) {
    // Best effort: a directory that cannot be removed stays until its plan's cleanup.
  }
}

void RemoveWorkDirectory(const fs::path& directory) noexcept {
  try {
    if (!IsOwnWorkDirectory(directory)) return;
    std::error_code ignored;
    fs::remove_all(directory, ignored);
  } catch (...) {
    // Best effort: a directory left behind is removed as stale by a later plan.
  }
}

std::filesystem::path WorkDirectoryBase(const Spec& spec) {
  return spec.work_dir.empty() || IsObjectStoreLocation(spec.work_dir)
             ? std::filesystem::temp_directory_path()
             : std::filesystem::path(spec.work_dir);
}

std::int64_t LocalDiskAllowed(const Spec& spec) {
  if (spec.local_disk != Spec::kAutoLocalDisk) return spec.local_disk;
  // Processes on other machines (MPI ranks, Dask and Ray workers) share no local disk, and
  // plan alike only if none counts its own free space.
  if (!spec.runs_in_one_process()) return 0;
  std::error_code error;
  const std::filesystem::space_info space =
      std::filesystem::space(std::filesystem::temp_directory_path(), error);
  if (error) return 0;
  return static_cast<std::int64_t>(space.available / 10 * 9);
}

std::string NewObjectWorkPrefix(const Spec& spec, const std::filesystem::path& work_directory) {
  std::string base = spec.work_dir;
  while (!base.empty() && base.back() == '/') base.pop_back();
  std::string prefix = base + "/" + work_directory.filename().string();
  if (spec.executor == "mpi") return prefix;
  static constexpr char kDigits[] = "0123456789abcdef";
  std::random_device random;
  prefix += '-';
  for (int digit = 0; digit < 8; ++digit) prefix += kDigits[random() % 16];
  return prefix;
}

std::string ObjectPrefixOwnerText() {
  const Owner owner = Self();
  return "Tessera intermediate written by process " + std::to_string(owner.pid) + " started at " +
         std::to_string(owner.start) + " (clock ticks after boot) on host " + HostName() + "\n";
}

std::filesystem::path NewWorkDirectory(const Spec& spec) {
  static std::atomic<int> counter{0};
  // MPI plans are made by every rank alike, in the same order (other plans perhaps not):
  // counted apart, each rank names the leader's directory.
  static std::atomic<int> mpi_counter{0};
  Owner owner = Self();
  std::string number;
  if (spec.executor == "mpi") {
    const ClusterFacts& cluster = JoinCluster();
    owner = Owner{cluster.leader_pid, cluster.leader_start};
    number = "mpi" + std::to_string(++mpi_counter);
  } else {
    number = std::to_string(++counter);
  }
  return WorkDirectoryBase(spec) / (std::string(kPrefix) + std::to_string(owner.pid) + "-" +
                                    std::to_string(owner.start) + "-" + number);
}

std::vector<std::filesystem::path> RemoveStaleWorkDirectories(const std::filesystem::path& base) {
  std::vector<std::filesystem::path> removed;
  std::error_code error;
  std::filesystem::directory_iterator entries(base, error);
  if (error) return removed;
  for (const auto& entry : entries) {
    const std::optional<Owner> owner = ParseName(entry.path().filename().string());
    // A symlink is never followed nor removed; a folder without its marker is not ours.
    if (!owner || entry.symlink_status(error).type() != fs::file_type::directory) continue;
    const std::optional<long long> start = ProcessStartTicks(owner->pid);
    if (start && *start == owner->start) continue;  // its process still runs
    if (!HasMarker(entry.path(), *owner)) continue;
    std::filesystem::remove_all(entry.path(), error);
    if (!error) removed.push_back(entry.path());
  }
  return removed;
}

}  // namespace tessera::planner
