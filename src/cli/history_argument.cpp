#include "history_argument.hpp"

#include <filesystem>
#include <optional>

#include "tessera/core/errors.hpp"

namespace tessera::cli {
namespace {

// --db, else the configured database; throws when history is off.
std::filesystem::path DatabasePath(const std::string& db_option) {
  if (!db_option.empty()) return db_option;
  if (const std::optional<std::filesystem::path> path = ResolveHistoryPath("")) return *path;
  throw InvalidArgument(
      "history is off: TESSERA_HISTORY=off (or neither XDG_CACHE_HOME nor HOME set) means "
      "history is switched off, so no run was recorded; set TESSERA_HISTORY to a database "
      "file (or unset it to use ~/.cache/tessera/history.sqlite), or name one with --db PATH");
}

}  // namespace

std::shared_ptr<HistoryDatabase> OpenHistoryArgument(const std::string& db_option) {
  return OpenRecordedHistory(DatabasePath(db_option), kDbOption);
}

}  // namespace tessera::cli
