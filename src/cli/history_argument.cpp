#include "history_argument.hpp"

#include <filesystem>
#include <optional>
#include <system_error>

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

std::shared_ptr<HistoryDatabase> OpenRecordedHistory(const std::string& db_option) {
  const std::filesystem::path path = DatabasePath(db_option);
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {  // checked first: opening would create it
    throw StorageError("no history yet at " + path.string() +
                       ": run a computation first (runs are recorded unless TESSERA_HISTORY "
                       "is off), or name another database with --db PATH");
  }
  if (std::filesystem::is_directory(path, error)) {
    throw StorageError(path.string() +
                       " is a folder, not a history database: name the database file with "
                       "--db PATH or TESSERA_HISTORY");
  }
  // Listing only reads: open read-only first, so a file (or folder) the user may not
  // write is still listed. Only a file of an older schema (or an empty one) needs a
  // writer to bring it up to date; that falls back to Open, which migrates.
  std::shared_ptr<HistoryDatabase> history = HistoryDatabase::OpenToRead(path);
  if (!history->ok()) history = HistoryDatabase::Open(path);
  if (!history->ok()) {
    throw StorageError("cannot read the history database " + path.string() +
                       " (see the warning above): delete the file to start a new history, "
                       "or name another with --db PATH");
  }
  return history;
}

void CheckStillReadable(const HistoryDatabase& history) {
  if (history.ok()) return;
  throw StorageError("reading the history database " + history.path().string() +
                     " failed (see the warning above): delete the file to start a new "
                     "history, or name another with --db PATH");
}

}  // namespace tessera::cli
