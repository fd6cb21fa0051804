#include "history_command.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <iomanip>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "history_argument.hpp"
#include "nlohmann/json.hpp"
#include "tessera/api/history.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::cli {
namespace {

using nlohmann::ordered_json;

// Fingerprints are long hashes; this many characters tell steps apart in a table (and
// --op accepts any prefix).
constexpr std::size_t kShortFingerprint = 12;

std::string Seconds(double seconds) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(3) << seconds << " s";
  return text.str();
}

// Rows of cells printed with each column as wide as its widest cell: the first
// `text_columns` left-aligned, the others (numbers) right-aligned.
void WriteTable(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                std::size_t text_columns) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (std::size_t column = 0; column < row.size(); ++column) {
      widths[column] = std::max(widths[column], row[column].size());
    }
  }
  for (const auto& row : rows) {
    out << "  ";
    for (std::size_t column = 0; column < row.size(); ++column) {
      if (column > 0) out << "  ";
      out << (column < text_columns ? std::left : std::right)
          << std::setw(static_cast<int>(widths[column])) << row[column];
    }
    out << '\n';
  }
}

void WriteRunText(std::ostream& out, const RunHistory& run, const std::vector<OpHistory>& ops) {
  out << "run " << run.id << "  " << run.started_at << "  " << run.label << "  " << run.executor
      << " x" << run.workers << "  " << run.status << "  " << Seconds(run.seconds) << "  peak RSS "
      << format_bytes(run.peak_rss_bytes) << "  allowed_mem " << format_bytes(run.allowed_mem)
      << "  reserved_mem " << format_bytes(run.reserved_mem) << '\n';
  if (ops.empty()) {
    out << "  (no op recorded)\n";
    return;
  }
  std::vector<std::vector<std::string>> rows = {{"op", "kind", "fingerprint", "tasks", "projected",
                                                 "estimate", "measured max", "measured p95",
                                                 "unaccounted max", "task p95"}};
  for (const OpHistory& op : ops) {
    rows.push_back({op.name, op.kind, op.fingerprint.substr(0, kShortFingerprint),
                    std::to_string(op.tasks), format_bytes(op.projected_mem),
                    format_bytes(op.estimated_mem) + (op.estimate_from_history ? " (history)" : ""),
                    format_bytes(op.measured_mem_max), format_bytes(op.measured_mem_p95),
                    format_bytes(op.unaccounted_mem_max), Seconds(op.task_seconds_p95)});
  }
  WriteTable(out, rows, /*text_columns=*/3);  // op, kind, fingerprint
}

ordered_json OpJson(const OpHistory& op) {
  return ordered_json{{"index", op.index},
                      {"name", op.name},
                      {"kind", op.kind},
                      {"fingerprint", op.fingerprint},
                      {"tasks", op.tasks},
                      {"projected_mem", op.projected_mem},
                      {"estimated_mem", op.estimated_mem},
                      {"estimate_from_history", op.estimate_from_history},
                      {"measured_mem_max", op.measured_mem_max},
                      {"measured_mem_median", op.measured_mem_median},
                      {"measured_mem_p95", op.measured_mem_p95},
                      {"unaccounted_mem_max", op.unaccounted_mem_max},
                      {"unaccounted_mem_median", op.unaccounted_mem_median},
                      {"unaccounted_mem_p95", op.unaccounted_mem_p95},
                      {"footprint_mem_max", op.footprint_mem_max},
                      {"seconds", op.seconds},
                      {"task_seconds_max", op.task_seconds_max},
                      {"task_seconds_median", op.task_seconds_median},
                      {"task_seconds_p95", op.task_seconds_p95},
                      {"rss_growth_bytes", op.rss_growth_bytes}};
}

ordered_json RunJson(const RunHistory& run, const std::vector<OpHistory>& ops) {
  ordered_json json{{"id", run.id},
                    {"started_at", run.started_at},
                    {"label", run.label},
                    {"executor", run.executor},
                    {"workers", run.workers},
                    {"allowed_mem", run.allowed_mem},
                    {"reserved_mem", run.reserved_mem},
                    {"total_mem", run.total_mem},
                    {"status", run.status},
                    {"seconds", run.seconds},
                    {"peak_rss_bytes", run.peak_rss_bytes}};
  json["ops"] = ordered_json::array();
  for (const OpHistory& op : ops) json["ops"].push_back(OpJson(op));
  return json;
}

}  // namespace

HistoryCommand::HistoryCommand(CLI::App& app)
    : command_(app.add_subcommand(
          "history", "Show what recent runs projected and measured per op (memory history)")) {
  command_->add_option("--op", op_,
                       "Only ops with this name or kind, or whose fingerprint starts with it");
  command_->add_option("--runs", runs_, "How many recent runs to show")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](const std::string& text) {
            int runs = 0;
            const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), runs);
            if (error == std::errc() && end == text.data() + text.size() && runs >= 1)
              return std::string();
            return "must be a whole number of runs, at least 1 (got " + text + ")";
          },
          "N>=1"));
  command_->add_flag("--json", json_, "Print one JSON object instead of text");
  command_->add_option("--db", database_,
                       "The history database (default: TESSERA_HISTORY, else "
                       "~/.cache/tessera/history.sqlite)");
}

void HistoryCommand::Run(std::ostream& out) const {
  const std::shared_ptr<HistoryDatabase> history = OpenHistoryArgument(database_);
  const std::filesystem::path& path = history->path();
  const std::vector<RunHistory> runs = history->RecentRuns(runs_);
  CheckStillReadable(*history, kDbOption);

  ordered_json json{{"database", path.string()}, {"runs", ordered_json::array()}};
  bool first = true;
  for (const RunHistory& run : runs) {
    const std::vector<OpHistory> ops = OpsMatching(run, op_);
    if (!op_.empty() && ops.empty()) continue;
    if (json_) {
      json["runs"].push_back(RunJson(run, ops));
      continue;
    }
    if (!first) out << '\n';
    first = false;
    WriteRunText(out, run, ops);
  }
  if (json_) {
    out << json.dump(2) << '\n';
  } else if (runs.empty()) {
    out << "no runs recorded yet in " << path.string() << '\n';
  } else if (first) {
    out << "no op matching \"" << op_ << "\" in the " << runs.size() << " most recent runs of "
        << path.string() << '\n';
  }
}

}  // namespace tessera::cli
