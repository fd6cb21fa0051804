// `tessera history [--op NAME] [--runs N] [--json] [--db PATH]`: what recent runs
// projected and measured, per op, from the history database (api/history.hpp).
//
// For each of the N most recent runs (default 10), newest first: the run (id, start
// time, label, executor, status, duration, peak RSS) and a table of its ops: name, kind,
// short fingerprint, tasks, projected task memory, the estimate the plan counted
// ("(history)" when it came from earlier runs), measured max and p95, unaccounted max
// and task seconds p95. --op keeps the ops whose name or kind is NAME or whose
// fingerprint starts with NAME (runs left without ops are not shown). --json prints one
// JSON object, {"database": PATH, "runs": [...]}, with every recorded field in bytes and
// seconds.
//
//   CLI::App app;
//   HistoryCommand history(app);      // registers "history"
//   app.parse(argc, argv);
//   if (history.selected()) history.Run(std::cout);
//
// The database is --db, else ResolveHistoryPath("") (TESSERA_HISTORY, else the user's
// cache folder). Reading never creates a database. Errors (tessera::Error, exit 1):
// history switched off with no --db, a database that does not exist yet, one that
// cannot be read (after its warning). --runs below 1 is a usage error (exit 2).
#pragma once

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"

namespace tessera::cli {

class HistoryCommand {
 public:
  // Registers "history" on `app`; `app` must outlive this object.
  explicit HistoryCommand(CLI::App& app);
  HistoryCommand(const HistoryCommand&) = delete;
  HistoryCommand& operator=(const HistoryCommand&) = delete;

  // True when the command line selected "history".
  bool selected() const { return command_->parsed(); }
  void Run(std::ostream& out) const;

 private:
  CLI::App* command_;  // owned by the parent App
  std::string op_;
  int runs_ = 10;
  bool json_ = false;
  std::string database_;
};

}  // namespace tessera::cli
