#include "tessera/core/spec.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <string>
#include <thread>

#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/parallel.hpp"

namespace tessera {
namespace {

// Reads a cgroup memory limit file; nullopt when absent or unlimited ("max").
std::int64_t ReadCgroupLimit(const char* path) {
  std::ifstream file(path);
  std::string text;
  if (!(file >> text) || text == "max") return 0;
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || value <= 0) return 0;
  return value;
}

}  // namespace

std::int64_t detect_total_mem() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  std::int64_t physical = pages > 0 && page_size > 0 ? static_cast<std::int64_t>(pages) *
                                                           static_cast<std::int64_t>(page_size)
                                                     : 0;
  for (const char* path :
       {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::int64_t limit = ReadCgroupLimit(path);
    // cgroup v1 reports "no limit" as a huge page-rounded number; physical RAM wins.
    if (limit > 0 && (physical == 0 || limit < physical)) return limit;
  }
  return physical;
}

Spec Spec::from(std::initializer_list<std::pair<std::string_view, std::string_view>> settings) {
  Spec spec;
  for (const auto& [name, value] : settings) spec.set(name, value);
  spec.validate();
  return spec;
}

Spec& Spec::set_allowed_mem(std::string_view size) {
  allowed_mem = parse_bytes(size);
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

Spec& Spec::set(std::string_view name, std::string_view value) {
  if (name == "allowed_mem") return set_allowed_mem(value);
  if (name == "reserved_mem") return set_reserved_mem(value);
  if (name == "total_mem") return set_total_mem(value);
  if (name == "work_dir") {
    work_dir = std::string(value);
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
                        "\": expected allowed_mem, reserved_mem, total_mem, work_dir, "
                        "executor or max_workers");
}

void Spec::validate() const {
  if (allowed_mem <= 0) {
    throw InvalidArgument("Spec allowed_mem must be set to a positive size (e.g. \"400MB\"), got " +
                          std::to_string(allowed_mem));
  }
  if (reserved_mem < 0 || total_mem < 0) {
    throw InvalidArgument("Spec sizes cannot be negative (reserved_mem " +
                          std::to_string(reserved_mem) + ", total_mem " +
                          std::to_string(total_mem) + ")");
  }
  if (allowed_mem <= reserved_mem) {
    throw InvalidArgument("Spec allowed_mem (" + format_bytes(allowed_mem) +
                          ") must exceed reserved_mem (" + format_bytes(reserved_mem) +
                          "): reserved_mem is part of every task's budget");
  }
  if (total_mem != 0 && total_mem < allowed_mem) {
    throw InvalidArgument("Spec total_mem (" + format_bytes(total_mem) +
                          ") is smaller than allowed_mem (" + format_bytes(allowed_mem) +
                          "): no task could ever run; raise total_mem or lower allowed_mem");
  }
  if (executor != "sync" && executor != "threads" && executor != "mpi") {
    throw InvalidArgument("Spec executor \"" + executor +
                          "\" is unknown: expected sync, threads or mpi");
  }
  if (max_workers < 0) {
    throw InvalidArgument("Spec max_workers must be >= 0, got " + std::to_string(max_workers));
  }
}

std::int64_t Spec::effective_total_mem() const {
  return total_mem != 0 ? total_mem : detect_total_mem();
}

int Spec::effective_max_workers() const {
  return max_workers != 0 ? max_workers : HardwareThreads();
}

}  // namespace tessera
