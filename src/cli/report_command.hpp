// `tessera report RUN -o FILE [--db PATH] [--format html|svg]`: renders one recorded run
// of the history database (tessera/api/history.hpp) as a self-contained HTML page or
// an SVG (run_report.hpp): per op projected, estimated and measured memory against
// allowed_mem, and the task timeline per worker.
//
// RUN is a run id or "last" (or "latest"). The format is --format, else FILE's extension
// (.html, .htm or .svg). The database is --db PATH, else ResolveHistoryPath("")
// (TESSERA_HISTORY, then the cache folder). FILE is written as FILE.tmp-<pid> and renamed
// into place, so a failure never leaves half a report; one line on `out` says where it
// went.
//
//   CLI::App app;
//   ReportCommand report(app);     // registers "report"
//   app.parse(argc, argv);
//   if (report.selected()) report.Run(std::cout);
//
// Usage errors (CLI::ParseError from app.parse, exit 2): a RUN that is neither an id nor
// "last", an unknown --format, a FILE extension that names no format without --format.
// Run() throws tessera::Error (exit 1) when history is off, the database does not exist
// (nothing is created), RUN is not in it, or FILE cannot be written.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "CLI/CLI.hpp"

namespace tessera::cli {

class ReportCommand {
 public:
  // Registers "report" on `app`; `app` must outlive this object.
  explicit ReportCommand(CLI::App& app);
  ReportCommand(const ReportCommand&) = delete;
  ReportCommand& operator=(const ReportCommand&) = delete;

  // True when the command line selected "report".
  bool selected() const { return command_->parsed(); }
  void Run(std::ostream& out) const;

 private:
  // Checks RUN and settles the format once the command line is parsed.
  void Validate();

  CLI::App* command_;  // owned by the parent App
  std::string run_;
  std::string out_path_;
  std::string db_path_;      // "" = ResolveHistoryPath("")
  std::string format_;       // "html" or "svg"; "" = from out_path_'s extension
  std::int64_t run_id_ = 0;  // 0 = the latest run
};

}  // namespace tessera::cli
