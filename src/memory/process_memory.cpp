#include "tessera/memory/process_memory.hpp"

#include <charconv>
#include <fstream>
#include <iterator>
#include <string>

namespace tessera {
namespace {

constexpr std::int64_t kKiB = 1024;

std::string ReadProcSelfStatus() {
  std::ifstream file("/proc/self/status");
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

std::int64_t ReadStatusBytes(std::string_view field) {
  const std::int64_t bytes = ParseProcStatusBytes(ReadProcSelfStatus(), field);
  return bytes < 0 ? 0 : bytes;
}

}  // namespace

std::int64_t ParseProcStatusBytes(std::string_view status, std::string_view field) {
  std::size_t line_start = 0;
  while (line_start < status.size()) {
    std::size_t line_end = status.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = status.size();
    std::string_view line = status.substr(line_start, line_end - line_start);
    line_start = line_end + 1;
    if (line.size() <= field.size() || line.substr(0, field.size()) != field ||
        line[field.size()] != ':') {
      continue;
    }
    line.remove_prefix(field.size() + 1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(line.data(), line.data() + line.size(), value);
    if (error != std::errc() || value < 0) return -1;
    const std::string_view unit(end, static_cast<std::size_t>(line.data() + line.size() - end));
    // The kernel prints memory fields in kB (KiB); a field without a unit is a count.
    if (unit == " kB") return value * kKiB;
    if (unit.empty()) return value;
    return -1;
  }
  return -1;
}

std::int64_t CurrentRssBytes() { return ReadStatusBytes("VmRSS"); }

std::int64_t PeakRssBytes() { return ReadStatusBytes("VmHWM"); }

bool ResetPeakRss() {
  std::ofstream file("/proc/self/clear_refs");
  if (!file) return false;
  // "5" resets the peak RSS (Documentation/admin-guide/mm/soft-dirty.rst, proc.rst).
  file << "5";
  file.flush();
  return static_cast<bool>(file);
}

}  // namespace tessera
