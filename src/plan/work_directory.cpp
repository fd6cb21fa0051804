#include "work_directory.hpp"

#include <unistd.h>

#include <atomic>
#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace tessera {
namespace {

constexpr std::string_view kPrefix = "tessera-";

// Field 22 of /proc/<pid>/stat: when the process started, in clock ticks after boot.
// nullopt when there is no such process.
std::optional<long long> ProcessStartTime(long long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return std::nullopt;
  // The command name (field 2) is in parentheses and may hold spaces: skip past it.
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  for (int index = 3; index <= 22; ++index) {
    if (!(fields >> field)) return std::nullopt;
  }
  long long start = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), start);
  if (error != std::errc() || end != field.data() + field.size()) return std::nullopt;
  return start;
}

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

// The owner a work directory's name records: "tessera-<pid>-<start>-<n>".
std::optional<Owner> ParseName(std::string_view name) {
  if (!name.starts_with(kPrefix)) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  std::optional<long long> parts[3];
  for (int i = 0; i < 3; ++i) {
    const std::size_t dash = i < 2 ? name.find('-') : name.size();
    if (dash == std::string_view::npos) return std::nullopt;
    parts[i] = ParseNumber(name.substr(0, dash));
    if (!parts[i]) return std::nullopt;
    name.remove_prefix(i < 2 ? dash + 1 : dash);
  }
  return Owner{*parts[0], *parts[1]};
}

}  // namespace

std::filesystem::path WorkDirectoryBase(const Spec& spec) {
  return spec.work_dir.empty() ? std::filesystem::temp_directory_path()
                               : std::filesystem::path(spec.work_dir);
}

std::filesystem::path NewWorkDirectory(const Spec& spec) {
  static std::atomic<int> counter{0};
  const long long pid = getpid();
  return WorkDirectoryBase(spec) /
         (std::string(kPrefix) + std::to_string(pid) + "-" +
          std::to_string(ProcessStartTime(pid).value_or(0)) + "-" + std::to_string(++counter));
}

std::vector<std::filesystem::path> RemoveStaleWorkDirectories(const std::filesystem::path& base) {
  std::vector<std::filesystem::path> removed;
  std::error_code error;
  std::filesystem::directory_iterator entries(base, error);
  if (error) return removed;
  for (const auto& entry : entries) {
    const std::optional<Owner> owner = ParseName(entry.path().filename().string());
    if (!owner || !entry.is_directory(error)) continue;
    const std::optional<long long> start = ProcessStartTime(owner->pid);
    if (start && *start == owner->start) continue;  // its process still runs
    std::filesystem::remove_all(entry.path(), error);
    if (!error) removed.push_back(entry.path());
  }
  return removed;
}

}  // namespace tessera
