// "Task timeline" (report_charts.hpp): x is seconds since the run started, one lane
// per worker, one rect per task coloured by its op, and a legend of the ops' colours.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <map>
#include <string>

#include "report_charts.hpp"
#include "tessera/core/byte_size.hpp"

namespace tessera::cli {
namespace {

constexpr double kLaneHeight = 16;
constexpr double kLaneGap = 4;
constexpr double kLegendRow = 16;
constexpr double kMinTaskWidth = 0.5;  // a zero-length task still shows as a hairline
// Beyond this many rects a report gets too large for a browser to draw smoothly (about
// 250 bytes each); the rest are counted in a note.
constexpr std::size_t kMaxTaskRects = 20000;
constexpr std::size_t kNameChars = 60;
constexpr std::string_view kUnknownColour = "#7f7f7f";

double NonNegative(double value) { return std::isfinite(value) && value > 0 ? value : 0; }

std::string Seconds(double seconds) {
  // Three significant decimals for short tasks, two for the axis and long ones.
  char text[32];
  std::snprintf(text, sizeof(text), seconds < 10 ? "%.3f s" : "%.2f s", seconds);
  return text;
}

void DrawLegend(SvgWriter& svg, const RunHistory& run, double y) {
  svg.Open("g", {{"class", "timeline-legend"}, {"font-size", "11"}});
  for (std::size_t position = 0; position < run.ops.size(); ++position) {
    const OpHistory& op = run.ops[position];
    const double row = y + static_cast<double>(position) * kLegendRow;
    svg.Element("rect", {{"class", "swatch"},
                         {"data-op", std::to_string(op.index)},
                         {"x", SvgNumber(kPlotLeft)},
                         {"y", SvgNumber(row - 10)},
                         {"width", "12"},
                         {"height", "12"},
                         {"fill", OpColour(position)}});
    svg.Text({{"class", "legend-label"},
              {"data-op", std::to_string(op.index)},
              {"x", SvgNumber(kPlotLeft + 18)},
              {"y", SvgNumber(row)}},
             Shorten(op.name, kNameChars) + " (" + op.kind + ")");
  }
  svg.Close("g");
}

}  // namespace

double DrawTimeline(SvgWriter& svg, const RunHistory& run, double top) {
  svg.Open("g", {{"class", "timeline"}});
  svg.Text({{"class", "chart-title"},
            {"x", "10"},
            {"y", SvgNumber(top + 16)},
            {"font-size", "15"},
            {"font-weight", "bold"}},
           "Task timeline (seconds since the run started)");
  double y = top + 32;
  if (run.tasks.empty()) {
    svg.Text({{"class", "note"}, {"x", SvgNumber(kPlotLeft)}, {"y", SvgNumber(y + 14)}},
             "No tasks recorded for this run (none ran, or all were skipped).");
    svg.Close("g");
    return y + 40;
  }

  std::map<int, std::size_t> position_of;  // OpHistory::index -> place in run.ops
  for (std::size_t position = 0; position < run.ops.size(); ++position) {
    position_of.emplace(run.ops[position].index, position);
  }
  double end = NonNegative(run.seconds);
  int lanes = std::max(run.workers, 1);
  for (const TaskHistory& task : run.tasks) {
    end = std::max(end, NonNegative(task.start_seconds) + NonNegative(task.seconds));
    lanes = std::max(lanes, task.worker + 1);
  }
  const LinearScale scale = NiceScale(end, kPlotLeft, kPlotWidth);
  const double lanes_bottom = y + lanes * (kLaneHeight + kLaneGap);
  DrawAxis(svg, scale, "timeline-axis", y, lanes_bottom,
           [](double seconds) { return SvgNumber(seconds) + " s"; });

  svg.Open("g", {{"class", "lanes"}, {"font-size", "11"}});
  for (int worker = 0; worker < lanes; ++worker) {
    const double lane_y = y + worker * (kLaneHeight + kLaneGap);
    svg.Element("rect", {{"class", "lane"},
                         {"data-worker", std::to_string(worker)},
                         {"x", SvgNumber(kPlotLeft)},
                         {"y", SvgNumber(lane_y)},
                         {"width", SvgNumber(kPlotWidth)},
                         {"height", SvgNumber(kLaneHeight)},
                         {"fill", "#f2f2f2"}});
    svg.Text({{"class", "lane-label"},
              {"x", SvgNumber(kPlotLeft - 8)},
              {"y", SvgNumber(lane_y + 12)},
              {"text-anchor", "end"}},
             "worker " + std::to_string(worker));
  }
  svg.Close("g");

  svg.Open("g", {{"class", "tasks"}});
  const std::size_t drawn = std::min(run.tasks.size(), kMaxTaskRects);
  for (std::size_t at = 0; at < drawn; ++at) {
    const TaskHistory& task = run.tasks[at];
    const auto found = position_of.find(task.op);
    const std::string op_name =
        found == position_of.end() ? "op " + std::to_string(task.op) : run.ops[found->second].name;
    const int worker = std::max(task.worker, 0);
    const double start = NonNegative(task.start_seconds);
    const double seconds = NonNegative(task.seconds);
    std::string tooltip = op_name + ", task " + std::to_string(task.task) + ", worker " +
                          std::to_string(worker) + ": " + Seconds(seconds) + " from " +
                          Seconds(start) + ", measured " + format_bytes(task.measured_mem);
    if (task.unaccounted_mem > 0)
      tooltip += " + " + format_bytes(task.unaccounted_mem) + " unaccounted";
    tooltip += " (projected " + format_bytes(task.projected_mem) + ")";
    svg.Element("rect",
                {{"class", "task"},
                 {"data-op", std::to_string(task.op)},
                 {"data-task", std::to_string(task.task)},
                 {"data-worker", std::to_string(worker)},
                 {"x", SvgNumber(scale.X(start))},
                 {"y", SvgNumber(y + worker * (kLaneHeight + kLaneGap) + 2)},
                 {"width", SvgNumber(std::max(scale.Length(seconds), kMinTaskWidth))},
                 {"height", SvgNumber(kLaneHeight - 4)},
                 {"fill", found == position_of.end() ? std::string(kUnknownColour)
                                                     : OpColour(found->second)}},
                tooltip);
  }
  svg.Close("g");
  y = lanes_bottom + 36;  // below the tick labels
  if (drawn < run.tasks.size()) {
    svg.Text({{"class", "note"}, {"x", SvgNumber(kPlotLeft)}, {"y", SvgNumber(y - 8)}},
             std::to_string(run.tasks.size() - drawn) + " more tasks not drawn (the first " +
                 std::to_string(drawn) + " are shown)");
    y += 14;
  }
  DrawLegend(svg, run, y);
  svg.Close("g");
  return y + static_cast<double>(run.ops.size()) * kLegendRow + 10;
}

}  // namespace tessera::cli
