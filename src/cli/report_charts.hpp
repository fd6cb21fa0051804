// The two charts of a run report (run_report.hpp), drawn into an SvgWriter one below
// the other, and the linear scale they share.
//
//   SvgWriter svg;
//   double y = DrawMemoryChart(svg, run, /*top=*/60);   // returns the y below the chart
//   y = DrawTimeline(svg, run, y);
//
// Both charts plot on [kPlotLeft, kPlotLeft + kPlotWidth]; labels sit left of it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "svg_writer.hpp"
#include "tessera/api/history.hpp"

namespace tessera::cli {

inline constexpr double kPlotLeft = 230;     // room for op names and lane labels
inline constexpr double kPlotWidth = 600;    // the data area
inline constexpr double kReportWidth = 950;  // plus room for the value labels right of bars

// Maps [0, domain_max] linearly onto [left, left + width].
struct LinearScale {
  double domain_max = 1;
  double left = 0;
  double width = 1;
  std::vector<double> ticks;  // domain values of the axis ticks, 0 first

  double X(double value) const { return left + Length(value); }
  double Length(double value) const { return value / domain_max * width; }
};

// A scale whose domain covers `max_value` and ends on a tick, with ticks every
// 1, 2 or 5 × 10^k (about five). A max_value that is not positive gives [0, 1].
LinearScale NiceScale(double max_value, double left, double width);

// Tick lines from y_top to y_bottom and their labels (label(value)) below y_bottom.
void DrawAxis(SvgWriter& svg, const LinearScale& scale, std::string_view css_class, double y_top,
              double y_bottom, const std::function<std::string(double)>& label);

// "Memory per op": per op, bars for projected, estimated, measured max and measured +
// unaccounted max, and the allowed_mem line. Returns the y below the chart.
double DrawMemoryChart(SvgWriter& svg, const RunHistory& run, double top);

// "Task timeline": one lane per worker, a rect per task coloured by op, and a legend.
// Returns the y below the chart.
double DrawTimeline(SvgWriter& svg, const RunHistory& run, double top);

// The colour of op `position` (its place in run.ops) in the timeline.
std::string OpColour(std::size_t position);

}  // namespace tessera::cli
