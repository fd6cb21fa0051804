// Reading what runs recorded (memory/history.hpp): OpenRecordedHistory,
// CheckStillReadable, OpsMatching.
#include <algorithm>
#include <filesystem>
#include <iterator>
#include <string>
#include <system_error>

#include "tessera/core/errors.hpp"
#include "tessera/memory/history.hpp"

namespace tessera {

std::shared_ptr<HistoryDatabase> OpenRecordedHistory(const std::filesystem::path& path,
                                                     std::string_view how_to_name) {
  const std::string how(how_to_name);
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {  // checked first: opening would create it
    throw StorageError("no history yet at " + path.string() +
                       ": run a computation first (runs are recorded unless TESSERA_HISTORY "
                       "is off), or name another database with " +
                       how);
  }
  if (std::filesystem::is_directory(path, error)) {
    throw StorageError(path.string() + " is a folder, not a history database: name the " +
                       "database file with " + how + " or TESSERA_HISTORY");
  }
  // Listing only reads: open read-only first, so a file (or folder) the user may not
  // write is still listed. Only a file of an older schema (or an empty one) needs a
  // writer to bring it up to date; that falls back to Open, which migrates.
  std::shared_ptr<HistoryDatabase> history = HistoryDatabase::OpenToRead(path);
  if (!history->ok()) history = HistoryDatabase::Open(path);
  if (!history->ok()) {
    throw StorageError("cannot read the history database " + path.string() +
                       " (see the warning above): delete the file to start a new history, "
                       "or name another with " +
                       how);
  }
  return history;
}

void CheckStillReadable(const HistoryDatabase& history, std::string_view how_to_name) {
  if (history.ok()) return;
  throw StorageError("reading the history database " + history.path().string() +
                     " failed (see the warning above): delete the file to start a new "
                     "history, or name another with " +
                     std::string(how_to_name));
}

std::vector<OpHistory> OpsMatching(const RunHistory& run, std::string_view filter) {
  std::vector<OpHistory> ops;
  std::copy_if(run.ops.begin(), run.ops.end(), std::back_inserter(ops),
               [filter](const OpHistory& op) {
                 return filter.empty() || op.name == filter || op.kind == filter ||
                        op.fingerprint.starts_with(filter);
               });
  return ops;
}

}  // namespace tessera
