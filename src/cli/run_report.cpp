#include "run_report.hpp"

#include <cmath>
#include <cstdio>
#include <string_view>

#include "report_charts.hpp"
#include "svg_writer.hpp"
#include "tessera/core/byte_size.hpp"

namespace tessera::cli {
namespace {

constexpr double kHeaderHeight = 52;     // the title and the run's summary line
constexpr std::size_t kTitleChars = 80;  // fits kReportWidth at font-size 18

std::string Seconds(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) seconds = 0;
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f s", seconds);
  return text;
}

std::string Title(const RunHistory& run) {
  return "Tessera run " + std::to_string(run.id) + ": " + run.label;
}

// "ok", "running (never finished)" or "failed: cause".
std::string StatusText(const RunHistory& run) {
  if (run.status == "running") return "running (never finished: interrupted or still running)";
  return run.status.empty() ? "unknown" : run.status;
}

std::string_view StatusColour(const RunHistory& run) {
  if (run.status == "ok") return "#2ca02c";
  if (run.status == "running") return "#e08a00";
  return "#d62728";
}

std::string Bytes(std::int64_t bytes) {
  return format_bytes(bytes) + " (" + std::to_string(bytes) + " bytes)";
}

// The <svg> element without an XML declaration (for inlining in HTML).
std::string SvgElement(const RunHistory& run) {
  SvgWriter body;
  body.Text({{"class", "report-title"},
             {"x", "10"},
             {"y", "22"},
             {"font-size", "18"},
             {"font-weight", "bold"}},
            Shorten(Title(run), kTitleChars));
  body.Text({{"class", "report-summary"}, {"x", "10"}, {"y", "42"}, {"font-size", "12"}},
            "started " + run.started_at + ", " + run.executor + " executor, " +
                std::to_string(run.workers) + " workers, allowed_mem " +
                format_bytes(run.allowed_mem) + ", " + Seconds(run.seconds));
  body.Text({{"class", "report-status"},
             {"x", SvgNumber(kReportWidth - 10)},
             {"y", "42"},
             {"text-anchor", "end"},
             {"font-size", "12"},
             {"font-weight", "bold"},
             {"fill", std::string(StatusColour(run))}},
            "status: " + Shorten(StatusText(run), 60));
  double y = DrawMemoryChart(body, run, kHeaderHeight);
  y = DrawTimeline(body, run, y + 10);
  const std::string width = SvgNumber(kReportWidth);
  const std::string height = SvgNumber(std::ceil(y));
  SvgWriter svg;
  svg.Open("svg", {{"xmlns", "http://www.w3.org/2000/svg"},
                   {"version", "1.1"},
                   {"width", width},
                   {"height", height},
                   {"viewBox", "0 0 " + width + " " + height},
                   {"font-family", "sans-serif"}});
  svg.Title(Title(run));
  svg.Element(
      "rect",
      {{"class", "background"}, {"width", "100%"}, {"height", "100%"}, {"fill", "#ffffff"}});
  return svg.str() + body.str() + "</svg>\n";
}

void Row(std::string& html, std::string_view label, const std::string& value) {
  html += "<tr><th>" + XmlEscape(label) + "</th><td>" + XmlEscape(value) + "</td></tr>\n";
}

std::string Cell(const std::string& text, bool number = false) {
  return std::string(number ? "<td class=\"number\">" : "<td>") + XmlEscape(text) + "</td>";
}

std::string OpsTable(const RunHistory& run) {
  std::string html =
      "<table class=\"ops\">\n<thead><tr><th>op</th><th>kind</th>"
      "<th>tasks</th><th>projected</th><th>estimated</th>"
      "<th>measured max</th><th>measured median</th><th>measured p95</th>"
      "<th>unaccounted max</th><th>seconds</th></tr></thead>\n<tbody>\n";
  for (const OpHistory& op : run.ops) {
    const bool over = op.projected_mem > 0 && op.measured_mem_max > op.projected_mem;
    html += over ? "<tr class=\"over\">" : "<tr>";
    html += Cell(op.name) + Cell(op.kind) + Cell(std::to_string(op.tasks), true) +
            Cell(format_bytes(op.projected_mem), true) +
            Cell(format_bytes(op.estimated_mem) + (op.estimate_from_history ? " (history)" : ""),
                 true) +
            Cell(format_bytes(op.measured_mem_max), true) +
            Cell(format_bytes(op.measured_mem_median), true) +
            Cell(format_bytes(op.measured_mem_p95), true) +
            Cell(format_bytes(op.unaccounted_mem_max), true) + Cell(Seconds(op.seconds), true);
    html += "</tr>\n";
  }
  if (run.ops.empty()) html += "<tr><td colspan=\"10\">No ops recorded for this run.</td></tr>\n";
  return html + "</tbody>\n</table>\n";
}

constexpr std::string_view kStyle = R"(body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
tr.over td { background: #fde0e0; }
.status-ok { color: #2ca02c; } .status-running { color: #e08a00; } .status-bad { color: #d62728; }
svg { max-width: 100%; height: auto; }
)";

}  // namespace

std::string RunReportSvg(const RunHistory& run) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + SvgElement(run);
}

std::string RunReportHtml(const RunHistory& run) {
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  html += "<title>" + XmlEscape(Title(run)) + "</title>\n<style>\n";
  html += kStyle;
  html += "</style>\n</head>\n<body>\n<h1>" + XmlEscape(Title(run)) + "</h1>\n";
  html += "<table class=\"run\">\n";
  Row(html, "label", run.label);
  Row(html, "started_at", run.started_at);
  Row(html, "executor", run.executor);
  Row(html, "workers", std::to_string(run.workers));
  Row(html, "allowed_mem", Bytes(run.allowed_mem));
  Row(html, "reserved_mem", Bytes(run.reserved_mem));
  Row(html, "total_mem", Bytes(run.total_mem));
  Row(html, "seconds", Seconds(run.seconds));
  Row(html, "peak RSS", Bytes(run.peak_rss_bytes));
  html += "<tr><th>status</th><td class=\"";
  html += run.status == "ok"        ? "status-ok"
          : run.status == "running" ? "status-running"
                                    : "status-bad";
  html += "\">" + XmlEscape(StatusText(run)) + "</td></tr>\n</table>\n";
  html += "<h2>Ops</h2>\n" + OpsTable(run);
  html +=
      "<p>Memory figures are per task (the largest task of each op) and include "
      "reserved_mem. Estimated is what the plan counted: the projection, or what "
      "history measured (marked \"history\").</p>\n";
  html += "<h2>Charts</h2>\n" + SvgElement(run);
  return html + "</body>\n</html>\n";
}

}  // namespace tessera::cli
