// ProgressBar: one line per op on a terminal, redrawn in place.
//
//   ProgressBar bar(ProgressEnabled(options.progress), stderr);
//   bar.Start(3, "add-3", 40);   // op 3 of the plan
//   bar.Update(3, 12);   // "add-3  [######              ] 12/40 tasks  3.1 tasks/s  ETA 9s"
//   bar.Finish(3, 40);   // the final line, ended by a newline
//
// Several ops may be in flight at once (the executor overlaps independent ops): the live
// line shows the one of lowest plan index, followed by "  +2 ops running" when others
// are; each op's final line is printed when it finishes, in the order they finish.
// Redraws (with \r) at most 10 times a second; a disabled bar writes nothing. Not
// thread-safe: the executor calls it under its completion mutex.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>

#include "tessera/exec/execution_report.hpp"

namespace tessera::exec {

// Whether a run with `mode` shows progress: never when the environment sets
// TESSERA_PROGRESS=0; otherwise kAlways, or kAuto when stderr is a terminal.
bool ProgressEnabled(ProgressMode mode);

// One progress line: "name  [bar] done/total tasks  R tasks/s  ETA T", or for a finished
// op "name  [bar] done/total tasks  R tasks/s  in T". The rate is done / elapsed; rate
// and ETA show "-" until a task has finished.
std::string FormatProgressLine(std::string_view name, std::int64_t done, std::int64_t total,
                               double elapsed_seconds, bool finished);

// "9s", "2m05s", "1h02m": whole seconds rounded up (an ETA); "12.9s" below a minute
// when `tenths`.
std::string FormatDuration(double seconds, bool tenths);

class ProgressBar {
 public:
  // `out` must outlive the bar; ignored when !enabled.
  ProgressBar(bool enabled, std::FILE* out) : enabled_(enabled), out_(out) {}

  // Op `op` (its index in the plan) starts, with `total` tasks.
  void Start(int op, std::string name, std::int64_t total);
  // `done` tasks of op `op` have finished (run or skipped).
  void Update(int op, std::int64_t done);
  // Draws the final line of op `op` and ends it.
  void Finish(int op, std::int64_t done);
  // Ends a partly drawn line (the run failed) so what is printed next starts clean.
  void Interrupt();

 private:
  using Clock = std::chrono::steady_clock;
  struct OpLine {
    std::string name;
    std::int64_t total = 0;
    std::int64_t done = 0;
    Clock::time_point start;
  };
  // The live line: the in-flight op of lowest index, and how many others run.
  void DrawLive();
  void Draw(const std::string& line, bool end_line);

  bool enabled_;
  std::FILE* out_;
  std::map<int, OpLine> running_;  // ops started and not finished, by plan index
  Clock::time_point last_draw_;
  bool drawn_ = false;          // a line of this op is on the terminal, unended
  std::size_t last_width_ = 0;  // to blank out what a longer previous line left
};

}  // namespace tessera::exec
