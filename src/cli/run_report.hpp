// The report of one recorded run (tessera/api/history.hpp): what each op projected,
// estimated and measured, and when each task ran on which worker.
//
//   std::optional<RunHistory> run = history->LoadRun(0);   // the latest run
//   WriteFile("run.html", RunReportHtml(*run));
//
// RunReportSvg is a standalone SVG 1.1 document (width, height, viewBox) with two
// charts: "memory per op" (per op, bars <rect class="bar KIND"> with KIND projected,
// estimated, measured or footprint, plus " over" and the warning colour when above what
// the plan counted (the projection, or history's larger estimate); <line class="allowed-mem">) and
// "task timeline" (<rect class="lane" data-worker=W> per worker, <rect class="task" data-op
// data-task data-worker> per task with a <title> tooltip). Memory bars start at one x and share one
// linear byte scale; task rects share one linear seconds scale (a zero-length task is 0.5 px wide).
// RunReportHtml is a self-contained page: a summary table of the run (class "run"), a
// table of its ops (class "ops") and the SVG inline; no scripts and nothing external.
//
// Pure functions of `run`; any text (names, status) is escaped, so every run gives a
// well-formed document, including one with no ops or tasks. Thread-safe.
#pragma once

#include <string>

#include "tessera/api/history.hpp"

namespace tessera::cli {

std::string RunReportSvg(const RunHistory& run);
std::string RunReportHtml(const RunHistory& run);

}  // namespace tessera::cli
