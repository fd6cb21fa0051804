#include <cmath>

#include "report_charts.hpp"

namespace tessera::cli {
namespace {

constexpr double kTargetTicks = 5;  // about five intervals read well on a 600 px axis
constexpr std::string_view kAxisColour = "#c8c8c8";
constexpr std::string_view kLabelColour = "#555555";

}  // namespace

LinearScale NiceScale(double max_value, double left, double width) {
  LinearScale scale;
  scale.left = left;
  scale.width = width;
  if (!std::isfinite(max_value) || max_value <= 0) max_value = 1;
  const double rough = max_value / kTargetTicks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
  double step = 10 * magnitude;
  for (const double factor : {1.0, 2.0, 5.0}) {
    if (factor * magnitude >= rough) {
      step = factor * magnitude;
      break;
    }
  }
  const double intervals = std::ceil(max_value / step);
  scale.domain_max = intervals * step;
  for (double interval = 0; interval <= intervals; ++interval) {
    scale.ticks.push_back(interval * step);
  }
  return scale;
}

void DrawAxis(SvgWriter& svg, const LinearScale& scale, std::string_view css_class, double y_top,
              double y_bottom, const std::function<std::string(double)>& label) {
  svg.Open("g", {{"class", std::string(css_class)}});
  for (const double tick : scale.ticks) {
    const std::string x = SvgNumber(scale.X(tick));
    svg.Element("line", {{"class", "tick"},
                         {"x1", x},
                         {"y1", SvgNumber(y_top)},
                         {"x2", x},
                         {"y2", SvgNumber(y_bottom)},
                         {"stroke", std::string(kAxisColour)},
                         {"stroke-width", "1"}});
    svg.Text({{"class", "tick-label"},
              {"x", x},
              {"y", SvgNumber(y_bottom + 14)},
              {"text-anchor", "middle"},
              {"font-size", "11"},
              {"fill", std::string(kLabelColour)}},
             label(tick));
  }
  svg.Close("g");
}

std::string OpColour(std::size_t position) {
  // Tableau 10 without its red, which the memory chart keeps for warnings.
  static constexpr std::string_view kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f",
                                                  "#76b7b2", "#edc948", "#b07aa1",
                                                  "#ff9da7", "#9c755f", "#bab0ac"};
  return std::string(kPalette[position % std::size(kPalette)]);
}

}  // namespace tessera::cli
