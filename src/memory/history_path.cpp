// ResolveHistoryPath (memory/history.hpp): where the history database lives.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

#include "tessera/memory/history.hpp"

namespace tessera {
namespace {

// "off", "0" and "none", in any case, switch history off.
bool SwitchesOff(std::string_view setting) {
  std::string lower(setting);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char letter) { return static_cast<char>(std::tolower(letter)); });
  return lower == "off" || lower == "0" || lower == "none";
}

// A set, non-empty environment variable, else nullptr.
const char* Environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

std::optional<std::filesystem::path> ResolveHistoryPath(std::string_view setting) {
  if (setting.empty()) {
    if (const char* variable = Environment("TESSERA_HISTORY")) setting = variable;
  }
  if (!setting.empty()) {
    if (SwitchesOff(setting)) return std::nullopt;
    return std::filesystem::path(setting);
  }
  const std::filesystem::path tail = std::filesystem::path("tessera") / "history.sqlite";
  if (const char* cache = Environment("XDG_CACHE_HOME")) return cache / tail;
  if (const char* home = Environment("HOME")) return std::filesystem::path(home) / ".cache" / tail;
  return std::nullopt;
}

}  // namespace tessera
