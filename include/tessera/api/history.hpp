// The history of runs, as the api layer hands it out: what every op of every run
// projected and measured (HistoryDatabase, RunHistory, OpHistory), where it lives
// (ResolveHistoryPath) and how a reader opens and queries it (OpenRecordedHistory,
// OpsMatching). Front ends (cli/) reach history through this header, never memory/.
//
//   auto history = tessera::OpenRecordedHistory(*tessera::ResolveHistoryPath(""));
//   std::optional<tessera::RunHistory> last = history->LoadRun(0);
#pragma once

#include "tessera/memory/history.hpp"
