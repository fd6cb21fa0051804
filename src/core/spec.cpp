#include "tessera/core/spec.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/byte_size.hpp"
#include "tessera/core/cluster.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/parallel.hpp"

namespace tessera {
namespace {

// cgroup v1 reports "no limit" as LONG_MAX rounded down to a page; anything this big is
// no limit even when physical RAM is unknown.
constexpr std::int64_t kCgroupV1Unlimited = 9223372036854771712;

std::int64_t PhysicalMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<std::int64_t>(pages) * static_cast<std::int64_t>(page_size);
}

// A cgroup memory limit file's value in bytes; 0 (no limit) when the file is missing or
// unreadable, says "max", or holds anything but one positive integer.
std::int64_t ReadCgroupLimit(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::string text;
  if (!(file >> text) || text == "max") return 0;
  std::string rest;
  if (file >> rest) return 0;  // more than one token: not a limit file we understand
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value <= 0) return 0;
  return value;
}

// The path components of a cgroup path from /proc/self/cgroup ("/a/b" -> {a, b}). A path
// that climbs above its hierarchy's root ("/../x": the cgroup lies outside this cgroup
// namespace) gives {}, the root of the hierarchy as mounted here.
std::vector<std::string> CgroupComponents(std::string_view path) {
  std::vector<std::string> components;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    const std::string_view component = path.substr(start, slash - start);
    if (component == "..") return {};
    if (!component.empty() && component != ".") components.emplace_back(component);
    start = slash + 1;
  }
  return components;
}

// The smallest limit in `file_name` of the cgroup `components` below `hierarchy` and of
// each of its ancestors up to `hierarchy` itself; 0 when none sets one. Values of
// `unlimited_from` or more are no limit.
std::int64_t SmallestLimitUpTheTree(const std::filesystem::path& hierarchy,
                                    const std::vector<std::string>& components,
                                    const char* file_name, std::int64_t unlimited_from) {
  std::int64_t smallest = 0;
  std::filesystem::path directory = hierarchy;
  std::vector<std::filesystem::path> directories{directory};
  for (const std::string& component : components) {
    directory /= component;
    directories.push_back(directory);
  }
  for (const std::filesystem::path& candidate : directories) {
    const std::int64_t limit = ReadCgroupLimit(candidate / file_name);
    if (limit <= 0 || limit >= unlimited_from) continue;
    if (smallest == 0 || limit < smallest) smallest = limit;
  }
  return smallest;
}

}  // namespace

std::int64_t detect_total_mem() {
  // Read at most once a second: planning asks for it at every budget it tries, and
  // reading the cgroup tree costs more than the rest of a small plan. A limit changed
  // at run time is seen within the second.
  static std::mutex mutex;
  static std::int64_t detected = 0;
  static std::chrono::steady_clock::time_point when;
  const std::lock_guard lock(mutex);
  const auto now = std::chrono::steady_clock::now();
  if (detected == 0 || now - when > std::chrono::seconds(1)) {
    detected = detect_total_mem("/");
    when = now;
  }
  return detected;
}

std::int64_t detect_total_mem(const std::filesystem::path& root) {
  const std::int64_t physical = PhysicalMemory();

  // /proc/self/cgroup lines are "hierarchy-id:controllers:path": "0::/a/b" for cgroup v2,
  // "4:memory:/a/b" (controllers comma-separated) for the v1 memory hierarchy. When the
  // file is missing or names neither, the hierarchies' roots are read.
  std::vector<std::string> v2_path;
  std::vector<std::string> v1_path;
  {
    std::ifstream file(root / "proc/self/cgroup");
    std::string line;
    while (std::getline(file, line)) {
      const std::size_t first = line.find(':');
      const std::size_t second =
          first == std::string::npos ? std::string::npos : line.find(':', first + 1);
      if (second == std::string::npos) continue;
      const std::string_view id = std::string_view(line).substr(0, first);
      const std::string_view controllers =
          std::string_view(line).substr(first + 1, second - first - 1);
      const std::string_view path = std::string_view(line).substr(second + 1);
      if (id == "0" && controllers.empty()) {
        v2_path = CgroupComponents(path);
        continue;
      }
      std::size_t start = 0;
      while (start <= controllers.size()) {
        std::size_t comma = controllers.find(',', start);
        if (comma == std::string_view::npos) comma = controllers.size();
        if (controllers.substr(start, comma - start) == "memory") {
          v1_path = CgroupComponents(path);
          break;
        }
        start = comma + 1;
      }
    }
  }

  const std::filesystem::path cgroup = root / "sys/fs/cgroup";
  const std::int64_t unlimited_from =
      physical > 0 ? std::min(physical, kCgroupV1Unlimited) : kCgroupV1Unlimited;
  std::int64_t limit = SmallestLimitUpTheTree(cgroup, v2_path, "memory.max",
                                              std::numeric_limits<std::int64_t>::max());
  const std::int64_t v1_limit =
      SmallestLimitUpTheTree(cgroup / "memory", v1_path, "memory.limit_in_bytes", unlimited_from);
  if (v1_limit > 0 && (limit == 0 || v1_limit < limit)) limit = v1_limit;

  if (limit <= 0) return physical;
  return physical > 0 ? std::min(limit, physical) : limit;
}

Spec Spec::from(std::initializer_list<std::pair<std::string_view, std::string_view>> settings) {
  Spec spec;
  for (const auto& [name, value] : settings) spec.set(name, value);
  spec.validate();
  return spec;
}

Spec& Spec::set_allowed_mem(std::string_view size) {
  allowed_mem = size == "auto" ? kAutoAllowedMem : parse_bytes(size);
  return *this;
}

Spec& Spec::set_reserved_mem(std::string_view size) {
  reserved_mem = parse_bytes(size);
  return *this;
}

Spec& Spec::set_total_mem(std::string_view size) {
  total_mem = parse_bytes(size);
  return *this;
}

Spec& Spec::set_memory_tiers(std::string_view sizes) {
  std::vector<std::int64_t> tiers;
  if (sizes.find_first_not_of(' ') != std::string_view::npos) {
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = std::min(sizes.find(',', start), sizes.size());
      std::string_view item = sizes.substr(start, comma - start);
      while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
      while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
      if (item.empty()) {
        throw InvalidArgument("Spec memory_tiers: an empty size in \"" + std::string(sizes) +
                              "\"; write sizes separated by commas, e.g. \"512MB,1GB,2GB\"");
      }
      tiers.push_back(parse_bytes(item));
      if (comma == sizes.size()) break;
      start = comma + 1;
    }
  }
  std::sort(tiers.begin(), tiers.end());
  if (std::adjacent_find(tiers.begin(), tiers.end()) != tiers.end()) {
    throw InvalidArgument("Spec memory_tiers: \"" + std::string(sizes) +
                          "\" names a size twice; give each size once");
  }
  memory_tiers = std::move(tiers);
  return *this;
}

Spec& Spec::set(std::string_view name, std::string_view value) {
  if (name == "allowed_mem") return set_allowed_mem(value);
  if (name == "reserved_mem") return set_reserved_mem(value);
  if (name == "total_mem") return set_total_mem(value);
  if (name == "memory_tiers") return set_memory_tiers(value);
  if (name == "work_dir") {
    work_dir = std::string(value);
    return *this;
  }
  if (name == "local_disk") {
    local_disk = value == "auto" ? kAutoLocalDisk : parse_bytes(value);
    return *this;
  }
  if (name == "history") {
    history = std::string(value);
    return *this;
  }
  if (name == "executor") {
    executor = std::string(value);
    return *this;
  }
  if (name == "max_workers") {
    int workers = 0;
    auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), workers);
    if (error != std::errc() || end != value.data() + value.size() || workers < 0) {
      throw InvalidArgument("Spec max_workers must be a whole number >= 0, got \"" +
                            std::string(value) + "\"");
    }
    max_workers = workers;
    return *this;
  }
  throw InvalidArgument("unknown Spec setting \"" + std::string(name) +
                        "\": expected allowed_mem, reserved_mem, total_mem, memory_tiers, "
                        "work_dir, local_disk, history, executor or max_workers");
}

void Spec::validate() const {
  if (allowed_mem <= 0 && !allowed_mem_is_auto()) {
    throw InvalidArgument(
        "Spec allowed_mem must be set to a positive size (e.g. \"400MB\") or \"auto\", got " +
        std::to_string(allowed_mem));
  }
  if (local_disk < 0 && local_disk != kAutoLocalDisk) {
    throw InvalidArgument("Spec local_disk must be a size (0 = no local disk) or \"auto\", got " +
                          std::to_string(local_disk));
  }
  if (reserved_mem < 0 || total_mem < 0) {
    throw InvalidArgument("Spec sizes cannot be negative (reserved_mem " +
                          std::to_string(reserved_mem) + ", total_mem " +
                          std::to_string(total_mem) + ")");
  }
  if (!allowed_mem_is_auto() && allowed_mem <= reserved_mem) {
    throw InvalidArgument("Spec allowed_mem (" + format_bytes(allowed_mem) +
                          ") must exceed reserved_mem (" + format_bytes(reserved_mem) +
                          "): reserved_mem is part of every task's budget");
  }
  for (std::size_t i = 0; i < memory_tiers.size(); ++i) {
    if (memory_tiers[i] <= reserved_mem) {
      throw InvalidArgument("Spec memory tier " + format_bytes(memory_tiers[i]) +
                            " must exceed reserved_mem (" + format_bytes(reserved_mem) +
                            "): reserved_mem is part of every task's memory");
    }
    if (i > 0 && memory_tiers[i] <= memory_tiers[i - 1]) {
      throw InvalidArgument("Spec memory_tiers must be strictly ascending, got " +
                            format_bytes(memory_tiers[i - 1]) + " then " +
                            format_bytes(memory_tiers[i]));
    }
  }
  if (total_mem != 0 && total_mem < allowed_mem) {
    throw InvalidArgument("Spec total_mem (" + format_bytes(total_mem) +
                          ") is smaller than allowed_mem (" + format_bytes(allowed_mem) +
                          "): no task could ever run; raise total_mem or lower allowed_mem");
  }
  if (executor != "sync" && executor != "threads" && executor != "mpi" && executor != "dask" &&
      executor != "ray") {
    throw InvalidArgument("Spec executor \"" + executor +
                          "\" is unknown: expected sync, threads, mpi, dask or ray (dask and "
                          "ray from Python)");
  }
  if (max_workers < 0) {
    throw InvalidArgument("Spec max_workers must be >= 0, got " + std::to_string(max_workers));
  }
}

std::int64_t Spec::effective_total_mem() const {
  if (total_mem != 0) return total_mem;
  // An MPI run plans for the memory of every rank together, alike on each rank.
  if (executor == "mpi") return JoinCluster().total_mem;
  return detect_total_mem();
}

bool Spec::keeps_intermediates_in_memory() const { return executor != "dask" && executor != "ray"; }

int Spec::effective_max_workers() const { return effective_max_workers(HardwareThreads()); }

int Spec::effective_total_workers() const {
  if (executor != "mpi") return effective_max_workers();
  int total = 0;
  for (const int threads : JoinCluster().rank_threads) total += effective_max_workers(threads);
  return std::max(total, 1);
}

int Spec::effective_max_workers(int hardware_threads) const {
  // The test suite's "one worker" rerun (docs/testing.md): TESSERA_FORCE_WORKERS=N stands
  // in for every spec's worker count. Read here, where the count is resolved, and nowhere
  // else.
  if (const char* forced = std::getenv("TESSERA_FORCE_WORKERS"); forced && *forced) {
    const std::string_view text(forced);
    int workers = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), workers);
    if (error != std::errc() || end != text.data() + text.size() || workers < 1) {
      throw InvalidArgument("TESSERA_FORCE_WORKERS must be a whole number >= 1, got \"" +
                            std::string(text) + "\"");
    }
    return workers;
  }
  return max_workers != 0 ? max_workers : std::max(hardware_threads, 1);
}

}  // namespace tessera
