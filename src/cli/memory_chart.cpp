// "Memory per op" (report_charts.hpp): per op a group of horizontal bars on one byte
// scale, and a vertical line at allowed_mem across all groups.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "report_charts.hpp"
#include "tessera/core/byte_size.hpp"

namespace tessera::cli {
namespace {

constexpr double kBarHeight = 11;
constexpr double kBarGap = 3;
constexpr double kGroupGap = 14;
constexpr double kLabelLines = 30;      // an op's name and kind lines need this much height
constexpr std::size_t kNameChars = 32;  // fits kPlotLeft at font-size 12

constexpr std::string_view kProjectedColour = "#9aa5b1";
constexpr std::string_view kEstimatedColour = "#8c6bb1";
constexpr std::string_view kMeasuredColour = "#2ca02c";
constexpr std::string_view kWarningColour = "#d62728";
constexpr std::string_view kAllowedColour = "#222222";

struct Bar {
  std::string_view kind;  // the CSS class: projected, estimated, measured, footprint
  std::string what;       // for the tooltip and the legend
  std::int64_t bytes = 0;
  bool over = false;  // above what the plan counted for the op (Counted)
};

// What the plan counted per task: the projection, or history's larger estimate.
std::int64_t Counted(const OpHistory& op) { return std::max(op.projected_mem, op.estimated_mem); }

std::vector<Bar> BarsOf(const OpHistory& op) {
  std::vector<Bar> bars;
  bars.push_back({"projected", "projected", op.projected_mem, false});
  if (op.estimated_mem > 0 && op.estimated_mem != op.projected_mem) {
    bars.push_back({"estimated",
                    op.estimate_from_history ? "estimated (from history)" : "estimated",
                    op.estimated_mem, false});
  }
  const auto over = [&](std::int64_t bytes) { return Counted(op) > 0 && bytes > Counted(op); };
  bars.push_back({"measured", "measured max", op.measured_mem_max, over(op.measured_mem_max)});
  if (op.unaccounted_mem_max > 0) {
    const std::int64_t footprint = op.footprint_mem_max > 0
                                       ? op.footprint_mem_max
                                       : op.measured_mem_max + op.unaccounted_mem_max;
    bars.push_back({"footprint", "measured + unaccounted max", footprint, over(footprint)});
  }
  return bars;
}

SvgAttributes BarStyle(const Bar& bar) {
  const std::string_view fill = bar.over                  ? kWarningColour
                                : bar.kind == "projected" ? kProjectedColour
                                : bar.kind == "estimated" ? kEstimatedColour
                                                          : kMeasuredColour;
  SvgAttributes style = {{"fill", std::string(fill)}};
  if (bar.kind == "footprint") {  // a lighter, dashed-outline bar: visibly not "measured"
    style.emplace_back("fill-opacity", "0.35");
    style.emplace_back("stroke", std::string(fill));
    style.emplace_back("stroke-dasharray", "3 2");
  }
  return style;
}

std::string BytesLabel(double bytes) {
  constexpr double kMax = static_cast<double>(std::numeric_limits<std::int64_t>::max());
  return format_bytes(static_cast<std::int64_t>(std::min(std::round(bytes), kMax)));
}

double GroupHeight(std::size_t bars) {
  return std::max(static_cast<double>(bars) * (kBarHeight + kBarGap), kLabelLines);
}

void DrawLegend(SvgWriter& svg, double y) {
  const Bar samples[] = {{"projected", "projected", 0, false},
                         {"estimated", "estimated", 0, false},
                         {"measured", "measured max", 0, false},
                         {"footprint", "measured + unaccounted", 0, false},
                         {"measured", "over what the plan counted", 0, true}};
  svg.Open("g", {{"class", "memory-legend"}, {"font-size", "11"}});
  double x = kPlotLeft;
  for (const Bar& sample : samples) {
    SvgAttributes attributes = {{"class", "swatch"},
                                {"x", SvgNumber(x)},
                                {"y", SvgNumber(y - 9)},
                                {"width", "10"},
                                {"height", "10"}};
    for (auto& style : BarStyle(sample)) attributes.push_back(std::move(style));
    svg.Element("rect", attributes);
    svg.Text({{"x", SvgNumber(x + 14)}, {"y", SvgNumber(y)}}, sample.what);
    x += 14 + 6.2 * static_cast<double>(sample.what.size()) + 14;  // ~6.2 px a character
  }
  svg.Close("g");
}

}  // namespace

double DrawMemoryChart(SvgWriter& svg, const RunHistory& run, double top) {
  svg.Open("g", {{"class", "memory-chart"}});
  svg.Text({{"class", "chart-title"},
            {"x", "10"},
            {"y", SvgNumber(top + 16)},
            {"font-size", "15"},
            {"font-weight", "bold"}},
           "Memory per task, by op (largest task)");
  DrawLegend(svg, top + 36);
  double y = top + 56;
  if (run.ops.empty()) {
    svg.Text({{"class", "note"}, {"x", SvgNumber(kPlotLeft)}, {"y", SvgNumber(y + 14)}},
             "No ops recorded for this run.");
    svg.Close("g");
    return y + 40;
  }

  double max_bytes = static_cast<double>(std::max<std::int64_t>(run.allowed_mem, 0));
  for (const OpHistory& op : run.ops) {
    for (const Bar& bar : BarsOf(op))
      max_bytes = std::max(max_bytes, static_cast<double>(bar.bytes));
  }
  const LinearScale scale = NiceScale(max_bytes, kPlotLeft, kPlotWidth);
  double height = 0;
  for (const OpHistory& op : run.ops) height += GroupHeight(BarsOf(op).size()) + kGroupGap;
  DrawAxis(svg, scale, "memory-axis", y, y + height, BytesLabel);

  for (const OpHistory& op : run.ops) {
    const std::vector<Bar> bars = BarsOf(op);
    svg.Open("g", {{"class", "op"}, {"data-op", std::to_string(op.index)}});
    svg.Title(op.name + " (" + op.kind + ")");
    svg.Text({{"class", "op-name"},
              {"x", SvgNumber(kPlotLeft - 8)},
              {"y", SvgNumber(y + 11)},
              {"text-anchor", "end"},
              {"font-size", "12"}},
             Shorten(op.name, kNameChars));
    svg.Text({{"class", "op-kind"},
              {"x", SvgNumber(kPlotLeft - 8)},
              {"y", SvgNumber(y + 25)},
              {"text-anchor", "end"},
              {"font-size", "10"},
              {"fill", "#666666"}},
             Shorten(op.kind, kNameChars - 12) + ", " + std::to_string(op.tasks) + " tasks");
    double bar_y = y;
    for (const Bar& bar : bars) {
      const double value = static_cast<double>(std::max<std::int64_t>(bar.bytes, 0));
      SvgAttributes attributes = {
          {"class", "bar " + std::string(bar.kind) + (bar.over ? " over" : "")},
          {"data-op", std::to_string(op.index)},
          {"x", SvgNumber(scale.left)},
          {"y", SvgNumber(bar_y)},
          {"width", SvgNumber(scale.Length(value))},
          {"height", SvgNumber(kBarHeight)}};
      for (auto& style : BarStyle(bar)) attributes.push_back(std::move(style));
      std::string tooltip =
          bar.what + ": " + format_bytes(bar.bytes) + " (" + std::to_string(bar.bytes) + " bytes)";
      if (bar.over) tooltip += ", above the " + format_bytes(Counted(op)) + " the plan counted";
      svg.Element("rect", attributes, tooltip);
      svg.Text({{"class", "bar-label"},
                {"x", SvgNumber(scale.X(value) + 4)},
                {"y", SvgNumber(bar_y + kBarHeight - 1.5)},
                {"font-size", "10"}},
               format_bytes(bar.bytes));
      bar_y += kBarHeight + kBarGap;
    }
    svg.Close("g");
    y += GroupHeight(bars.size()) + kGroupGap;
  }

  if (run.allowed_mem > 0) {
    const std::string x = SvgNumber(scale.X(static_cast<double>(run.allowed_mem)));
    svg.Element("line",
                {{"class", "allowed-mem"},
                 {"x1", x},
                 {"y1", SvgNumber(top + 50)},
                 {"x2", x},
                 {"y2", SvgNumber(y)},
                 {"stroke", std::string(kAllowedColour)},
                 {"stroke-width", "1.5"},
                 {"stroke-dasharray", "6 3"}},
                "allowed_mem " + format_bytes(run.allowed_mem));
    svg.Text({{"class", "allowed-mem-label"},
              {"x", x},
              {"y", SvgNumber(top + 48)},
              {"text-anchor", "middle"},
              {"font-size", "10"}},
             "allowed_mem " + format_bytes(run.allowed_mem));
  }
  svg.Close("g");
  return y + 24;  // the tick labels sit below the last group
}

}  // namespace tessera::cli
