#include "report_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>
#include <system_error>
#include <vector>

#include "history_argument.hpp"
#include "run_report.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kRunsListed = 5;  // how many recent run ids an unknown RUN's error names

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// "17 (tessera rechunk, 2026-11-29T21:10:38Z), 16 (...)" for the error of an unknown id.
std::string RecentRunsText(const HistoryDatabase& history) {
  std::string text;
  for (const RunHistory& run : history.RecentRuns(kRunsListed)) {
    if (!text.empty()) text += ", ";
    text += std::to_string(run.id) + " (" + run.label + ", " + run.started_at + ")";
  }
  return text;
}

RunHistory LoadRun(const HistoryDatabase& history, std::int64_t run_id,
                   const std::string& run_text) {
  if (std::optional<RunHistory> run = history.LoadRun(run_id)) return std::move(*run);
  CheckStillReadable(history, kDbOption);
  const fs::path& database = history.path();
  if (run_id <= 0) {
    throw InvalidArgument("the history database " + database.string() +
                          " holds no run yet: run a computation first");
  }
  const std::string recent = RecentRunsText(history);
  throw InvalidArgument(
      "no run " + run_text + " in " + database.string() +
      (recent.empty() ? std::string(": it holds no run yet")
                      : "; its latest runs are " + recent + ": pass one of those ids or \"last\""));
}

// Writes `text` to `target` through a temporary file renamed into place.
void WriteAtomically(const fs::path& target, const std::string& text) {
  fs::path temporary = target;
  temporary += ".tmp-" + std::to_string(::getpid());
  const auto fail = [&](const std::string& cause) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw StorageError("cannot write the report to " + target.string() + ": " + cause +
                       "; check that its folder exists and is writable, or choose another -o");
  };
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) fail(std::error_code(errno, std::generic_category()).message());
    file.write(text.data(), static_cast<std::streamsize>(text.size()));
    file.close();
    if (!file) fail("writing " + temporary.string() + " failed");
  }
  std::error_code error;
  fs::rename(temporary, target, error);
  if (error) fail(error.message());
}

}  // namespace

ReportCommand::ReportCommand(CLI::App& app)
    : command_(app.add_subcommand(
          "report",
          "Render a recorded run as HTML or SVG: memory per op against allowed_mem, and the "
          "task timeline")) {
  command_->add_option("RUN", run_, "A run id from the history, or \"last\"")->required();
  command_->add_option("-o,--output", out_path_, "The report to write (.html or .svg)")->required();
  command_->add_option("--db", db_path_,
                       "The history database (default: TESSERA_HISTORY, else "
                       "$XDG_CACHE_HOME/tessera/history.sqlite)");
  command_->add_option("--format", format_, "html or svg (default: from the output's extension)")
      ->check(CLI::IsMember({"html", "svg"}));
  command_->callback([this] { Validate(); });
}

void ReportCommand::Validate() {
  const std::string run = Lower(run_);
  if (run == "last" || run == "latest") {
    run_id_ = 0;
  } else {
    const auto [end, error] = std::from_chars(run_.data(), run_.data() + run_.size(), run_id_);
    if (error != std::errc() || end != run_.data() + run_.size() || run_id_ <= 0) {
      throw CLI::ValidationError("RUN",
                                 "expected a run id (a positive integer) or \"last\", "
                                 "not \"" +
                                     run_ + "\"");
    }
  }
  if (!format_.empty()) return;
  const std::string extension = Lower(fs::path(out_path_).extension().string());
  if (extension == ".html" || extension == ".htm") {
    format_ = "html";
  } else if (extension == ".svg") {
    format_ = "svg";
  } else {
    throw CLI::ValidationError("--output", "cannot tell the format of \"" + out_path_ +
                                               "\": name it .html, .htm or .svg, or pass "
                                               "--format html or --format svg");
  }
}

void ReportCommand::Run(std::ostream& out) const {
  const RunHistory run = LoadRun(*OpenHistoryArgument(db_path_), run_id_, run_);
  WriteAtomically(out_path_, format_ == "svg" ? RunReportSvg(run) : RunReportHtml(run));
  out << "Report of run " << run.id << " (" << run.label << ", " << run.status << ") written to "
      << out_path_ << '\n';
}

}  // namespace tessera::cli
