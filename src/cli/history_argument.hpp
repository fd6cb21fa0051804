// The history database a reading command works on (`tessera history`, `tessera report`):
// --db PATH, else where runs are recorded (ResolveHistoryPath: TESSERA_HISTORY, else the
// cache folder). Reading never creates a file.
//
//   std::shared_ptr<HistoryDatabase> history = OpenRecordedHistory(db_option);
//   auto runs = history->RecentRuns(10);
//   CheckStillReadable(*history);   // the file may break while it is read
//
// Errors say what to do: InvalidArgument when history is off or has no location;
// StorageError when the file is missing, a folder, or cannot be read (after the
// database's own warning).
#pragma once

#include <memory>
#include <string>

#include "tessera/memory/history.hpp"

namespace tessera::cli {

std::shared_ptr<HistoryDatabase> OpenRecordedHistory(const std::string& db_option);

// Throws StorageError when `history` stopped working during the reads just made.
void CheckStillReadable(const HistoryDatabase& history);

}  // namespace tessera::cli
