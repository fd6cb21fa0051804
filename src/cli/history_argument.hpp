// The history database a reading command works on (`tessera history`, `tessera report`):
// --db PATH, else where runs are recorded (ResolveHistoryPath: TESSERA_HISTORY, else the
// cache folder). Reading never creates a file.
//
//   std::shared_ptr<HistoryDatabase> history = OpenHistoryArgument(db_option);
//   auto runs = history->RecentRuns(10);
//   CheckStillReadable(*history, kDbOption);   // the file may break while it is read
//
// Errors say what to do: InvalidArgument when history is off or has no location;
// StorageError (OpenRecordedHistory) when the file is missing, a folder, or cannot be
// read (after the database's own warning).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "tessera/api/history.hpp"

namespace tessera::cli {

// How a command names another database, for the advice of history's messages.
inline constexpr std::string_view kDbOption = "--db PATH";

std::shared_ptr<HistoryDatabase> OpenHistoryArgument(const std::string& db_option);

}  // namespace tessera::cli
