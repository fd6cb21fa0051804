// RunReportSvg / RunReportHtml on hand-made runs: the geometry of the bars, the
// allowed_mem line and the task rects is read back from the SVG text and checked
// against the run's numbers; names are escaped; edge cases give well-formed documents.
#include "run_report.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace tessera::cli {
namespace {

constexpr std::int64_t kMB = 1'000'000;

// One start tag: its name and attributes (values as written, still escaped).
struct Tag {
  std::string name;
  std::map<std::string, std::string> attributes;
  double Number(const std::string& attribute) const {
    const auto found = attributes.find(attribute);
    if (found == attributes.end()) ADD_FAILURE() << name << " has no " << attribute;
    return found == attributes.end() ? NAN : std::stod(found->second);
  }
  bool HasClass(const std::string& css_class) const {
    const auto found = attributes.find("class");
    if (found == attributes.end()) return false;
    return (" " + found->second + " ").find(" " + css_class + " ") != std::string::npos;
  }
};

std::vector<Tag> TagsOf(const std::string& text, const std::string& name,
                        const std::string& css_class) {
  static const std::regex kTag(R"(<([a-zA-Z]+)((?:\s+[a-zA-Z0-9:-]+="[^"]*")*)\s*/?>)");
  static const std::regex kAttribute(R"re(([a-zA-Z0-9:-]+)="([^"]*)")re");
  std::vector<Tag> tags;
  for (auto match = std::sregex_iterator(text.begin(), text.end(), kTag);
       match != std::sregex_iterator(); ++match) {
    if ((*match)[1] != name) continue;
    Tag tag{name, {}};
    const std::string attributes = (*match)[2];
    for (auto attribute = std::sregex_iterator(attributes.begin(), attributes.end(), kAttribute);
         attribute != std::sregex_iterator(); ++attribute) {
      tag.attributes[(*attribute)[1]] = (*attribute)[2];
    }
    if (css_class.empty() || tag.HasClass(css_class)) tags.push_back(std::move(tag));
  }
  return tags;
}

// Tags balance, every '&' starts an entity, no '<' inside attribute values or text.
void ExpectWellFormed(const std::string& text) {
  std::vector<std::string> open;
  std::size_t at = 0;
  int roots = 0;
  while (at < text.size()) {
    if (text[at] == '&') {
      static const std::regex kEntity(R"(&(amp|lt|gt|quot|#39);)");
      EXPECT_TRUE(std::regex_search(text.begin() + static_cast<std::ptrdiff_t>(at), text.end(),
                                    kEntity, std::regex_constants::match_continuous))
          << "bare & at " << at;
    }
    if (text[at] != '<') {
      ++at;
      continue;
    }
    const std::size_t end = text.find('>', at);
    ASSERT_NE(end, std::string::npos) << "unclosed tag at " << at;
    const std::string tag = text.substr(at + 1, end - at - 1);
    EXPECT_EQ(tag.find('<'), std::string::npos) << "'<' inside a tag: " << tag;
    if (tag.starts_with('?') || tag.starts_with('!')) {
    } else if (tag.starts_with('/')) {
      ASSERT_FALSE(open.empty()) << "close without open: " << tag;
      EXPECT_EQ(open.back(), tag.substr(1));
      open.pop_back();
    } else {
      const std::string name = tag.substr(0, tag.find_first_of(" \n/"));
      if (open.empty()) ++roots;
      if (!tag.ends_with('/')) open.push_back(name);
    }
    at = end + 1;
  }
  EXPECT_TRUE(open.empty()) << "unclosed: " << (open.empty() ? "" : open.back());
  EXPECT_EQ(roots, 1);
}

OpHistory Op(int index, std::string name, std::int64_t projected, std::int64_t measured) {
  OpHistory op;
  op.index = index;
  op.name = std::move(name);
  op.kind = "elementwise";
  op.tasks = 2;
  op.projected_mem = projected;
  op.estimated_mem = projected;
  op.measured_mem_max = measured;
  op.measured_mem_median = measured;
  op.measured_mem_p95 = measured;
  op.footprint_mem_max = measured;
  op.seconds = 1;
  return op;
}

TaskHistory Task(int op, std::int64_t task, int worker, double start, double seconds) {
  return {.op = op,
          .task = task,
          .worker = worker,
          .start_seconds = start,
          .seconds = seconds,
          .projected_mem = 10 * kMB,
          .measured_mem = 8 * kMB,
          .unaccounted_mem = 0};
}

// Three ops: one under its projection, one above it (with unaccounted memory), one
// estimated from history; five tasks on two workers.
RunHistory SampleRun() {
  RunHistory run;
  run.id = 7;
  run.started_at = "2026-11-29T21:10:38Z";
  run.label = "tessera rechunk";
  run.executor = "threads";
  run.workers = 2;
  run.allowed_mem = 100 * kMB;
  run.status = "ok";
  run.seconds = 4;
  run.ops.push_back(Op(0, "read-1", 40 * kMB, 30 * kMB));
  OpHistory over = Op(1, "a<b&\"c\"", 20 * kMB, 50 * kMB);
  over.unaccounted_mem_max = 5 * kMB;
  over.footprint_mem_max = 55 * kMB;
  run.ops.push_back(over);
  // Measured above its projection but within what history made the plan count.
  OpHistory learned = Op(2, "write-3", 10 * kMB, 11 * kMB);
  learned.estimated_mem = 12 * kMB;
  learned.estimate_from_history = true;
  run.ops.push_back(learned);
  run.tasks = {Task(0, 0, 0, 0, 1), Task(0, 1, 1, 0.5, 1), Task(1, 0, 0, 1.5, 2),
               Task(1, 1, 1, 2, 0.25), Task(2, 0, 0, 3.5, 0.5)};
  return run;
}

const Tag& BarOf(const std::vector<Tag>& bars, int op) {
  for (const Tag& bar : bars) {
    if (bar.attributes.at("data-op") == std::to_string(op)) return bar;
  }
  static const Tag kNone;
  ADD_FAILURE() << "no bar for op " << op;
  return kNone;
}

TEST(RunReportSvg, IsOneWellFormedDocumentWithSize) {
  const std::string svg = RunReportSvg(SampleRun());
  ExpectWellFormed(svg);
  const std::vector<Tag> roots = TagsOf(svg, "svg", "");
  ASSERT_EQ(roots.size(), 1u);
  EXPECT_GT(roots[0].Number("width"), 0);
  EXPECT_GT(roots[0].Number("height"), 0);
  EXPECT_EQ(roots[0].attributes.at("viewBox"),
            "0 0 " + roots[0].attributes.at("width") + " " + roots[0].attributes.at("height"));
}

TEST(RunReportSvg, MemoryBarsShareOneLinearScale) {
  const RunHistory run = SampleRun();
  const std::string svg = RunReportSvg(run);
  const std::vector<Tag> projected = TagsOf(svg, "rect", "projected");
  const std::vector<Tag> measured = TagsOf(svg, "rect", "measured");
  ASSERT_EQ(projected.size(), 3u);
  ASSERT_EQ(measured.size(), 3u);
  const double left = projected[0].Number("x");
  const double pixels_per_byte = projected[0].Number("width") / (40.0 * kMB);
  for (const OpHistory& op : run.ops) {
    const Tag& projected_bar = BarOf(projected, op.index);
    const Tag& measured_bar = BarOf(measured, op.index);
    EXPECT_EQ(projected_bar.Number("x"), left);
    EXPECT_EQ(measured_bar.Number("x"), left);
    EXPECT_NEAR(measured_bar.Number("width") / projected_bar.Number("width"),
                static_cast<double>(op.measured_mem_max) / static_cast<double>(op.projected_mem),
                1e-3)
        << op.name;
    EXPECT_NEAR(projected_bar.Number("width"),
                static_cast<double>(op.projected_mem) * pixels_per_byte, 0.02);
  }
  const std::vector<Tag> allowed = TagsOf(svg, "line", "allowed-mem");
  ASSERT_EQ(allowed.size(), 1u);
  EXPECT_NEAR(allowed[0].Number("x1"), left + 100.0 * kMB * pixels_per_byte, 0.02);
  EXPECT_EQ(allowed[0].Number("x1"), allowed[0].Number("x2"));
  EXPECT_LT(allowed[0].Number("y1"), allowed[0].Number("y2"));
}

TEST(RunReportSvg, EstimateAndFootprintBarsAppearOnlyWhenTheyAddSomething) {
  const std::string svg = RunReportSvg(SampleRun());
  const std::vector<Tag> estimated = TagsOf(svg, "rect", "estimated");
  ASSERT_EQ(estimated.size(), 1u);  // only op 2's estimate differs from its projection
  EXPECT_EQ(estimated[0].attributes.at("data-op"), "2");
  const std::vector<Tag> footprint = TagsOf(svg, "rect", "footprint");
  ASSERT_EQ(footprint.size(), 1u);  // only op 1 has unaccounted memory
  EXPECT_EQ(footprint[0].attributes.at("data-op"), "1");
  const std::vector<Tag> projected_bars = TagsOf(svg, "rect", "projected");
  const Tag& projected = BarOf(projected_bars, 1);
  EXPECT_NEAR(footprint[0].Number("width") / projected.Number("width"), 55.0 / 20.0, 1e-3);
  EXPECT_NE(footprint[0].attributes.at("fill-opacity"), "1");  // visibly not "measured"
}

TEST(RunReportSvg, OnlyBarsAboveWhatThePlanCountedAreWarnings) {
  const std::string svg = RunReportSvg(SampleRun());
  const std::vector<Tag> bars = TagsOf(svg, "rect", "bar");
  std::set<std::string> warning_fills;
  std::set<std::string> other_fills;
  for (const Tag& bar : bars) {
    const bool should_warn = bar.attributes.at("data-op") == "1" &&
                             (bar.HasClass("measured") || bar.HasClass("footprint"));
    EXPECT_EQ(bar.HasClass("over"), should_warn) << bar.attributes.at("class");
    (should_warn ? warning_fills : other_fills).insert(bar.attributes.at("fill"));
  }
  ASSERT_EQ(warning_fills.size(), 1u);
  EXPECT_EQ(other_fills.count(*warning_fills.begin()), 0u);
}

TEST(RunReportSvg, TaskRectsFollowTheTimelineScaleOneLanePerWorker) {
  const RunHistory run = SampleRun();
  const std::string svg = RunReportSvg(run);
  const std::vector<Tag> lanes = TagsOf(svg, "rect", "lane");
  ASSERT_EQ(lanes.size(), 2u);
  std::map<std::string, double> lane_y;
  for (const Tag& lane : lanes) lane_y[lane.attributes.at("data-worker")] = lane.Number("y");
  EXPECT_LT(lane_y.at("0"), lane_y.at("1"));

  const std::vector<Tag> tasks = TagsOf(svg, "rect", "task");
  ASSERT_EQ(tasks.size(), run.tasks.size());
  const double left = tasks[0].Number("x");  // task 0 starts at 0 s
  const double pixels_per_second = tasks[0].Number("width") / run.tasks[0].seconds;
  for (std::size_t at = 0; at < tasks.size(); ++at) {
    const TaskHistory& task = run.tasks[at];
    const Tag& rect = tasks[at];
    EXPECT_EQ(rect.attributes.at("data-op"), std::to_string(task.op));
    EXPECT_EQ(rect.attributes.at("data-worker"), std::to_string(task.worker));
    EXPECT_NEAR(rect.Number("x"), left + task.start_seconds * pixels_per_second, 0.02);
    EXPECT_NEAR(rect.Number("width"), task.seconds * pixels_per_second, 0.02);
    const double y = rect.Number("y");
    const double lane = lane_y.at(std::to_string(task.worker));
    EXPECT_GE(y, lane);
    EXPECT_LE(y + rect.Number("height"), lane + lanes[0].Number("height"));
  }
  // Tasks of one op share a colour; ops differ.
  EXPECT_EQ(tasks[0].attributes.at("fill"), tasks[1].attributes.at("fill"));
  EXPECT_NE(tasks[0].attributes.at("fill"), tasks[2].attributes.at("fill"));
  EXPECT_NE(tasks[2].attributes.at("fill"), tasks[4].attributes.at("fill"));
  // Each rect has a tooltip naming its op and task.
  EXPECT_NE(svg.find("<title>a&lt;b&amp;&quot;c&quot;, task 1, worker 1"), std::string::npos);
}

TEST(RunReportSvg, EscapesNamesAndStatus) {
  RunHistory run = SampleRun();
  run.status = "failed: <disk> & \"full\"";
  run.label = "x\x01y\xff";  // a control character and a byte that is not UTF-8
  const std::string svg = RunReportSvg(run);
  ExpectWellFormed(svg);
  EXPECT_EQ(svg.find("a<b"), std::string::npos);
  EXPECT_NE(svg.find("a&lt;b&amp;&quot;c&quot;"), std::string::npos);
  EXPECT_NE(svg.find("failed: &lt;disk&gt; &amp; &quot;full&quot;"), std::string::npos);
  EXPECT_EQ(svg.find('\x01'), std::string::npos);
  EXPECT_EQ(svg.find('\xff'), std::string::npos);
}

TEST(RunReportSvg, EmptyRunIsAValidDocument) {
  RunHistory run;
  run.status = "running";
  const std::string svg = RunReportSvg(run);
  ExpectWellFormed(svg);
  EXPECT_TRUE(TagsOf(svg, "rect", "bar").empty());
  EXPECT_TRUE(TagsOf(svg, "rect", "task").empty());
  EXPECT_NE(svg.find("No ops recorded"), std::string::npos);
  EXPECT_NE(svg.find("No tasks recorded"), std::string::npos);
  EXPECT_NE(svg.find("never finished"), std::string::npos);
  const std::string html = RunReportHtml(run);
  ExpectWellFormed(html.substr(html.find("<html")));
}

TEST(RunReportSvg, ZeroDurationsAndZeroMemoryStayFinite) {
  RunHistory run = SampleRun();
  run.seconds = 0;
  run.allowed_mem = 0;
  for (OpHistory& op : run.ops) op = Op(op.index, op.name, 0, 0);
  for (TaskHistory& task : run.tasks) task.start_seconds = task.seconds = 0;
  const std::string svg = RunReportSvg(run);
  ExpectWellFormed(svg);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  EXPECT_TRUE(TagsOf(svg, "line", "allowed-mem").empty());  // no budget was recorded
  for (const Tag& task : TagsOf(svg, "rect", "task")) {
    EXPECT_GT(task.Number("width"), 0);  // a hairline, still visible
    EXPECT_LE(task.Number("width"), 1);
  }
  for (const Tag& bar : TagsOf(svg, "rect", "bar")) EXPECT_EQ(bar.Number("width"), 0);
}

TEST(RunReportSvg, OneHugeOpKeepsTheOthersOnScale) {
  RunHistory run = SampleRun();
  run.ops[0].projected_mem = run.ops[0].estimated_mem = std::int64_t{1} << 60;
  const std::string svg = RunReportSvg(run);
  ExpectWellFormed(svg);
  const std::vector<Tag> projected = TagsOf(svg, "rect", "projected");
  const double huge = BarOf(projected, 0).Number("width");
  EXPECT_GT(huge, 300);  // the scale ends at most one tick step beyond the largest value
  EXPECT_LT(BarOf(projected, 1).Number("width"), 0.01);
}

TEST(RunReportHtml, HasTheRunAndOpTablesAndTheSvgInline) {
  const std::string html = RunReportHtml(SampleRun());
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  ExpectWellFormed(html.substr(html.find("<html")));
  EXPECT_NE(html.find("<title>Tessera run 7: tessera rechunk</title>"), std::string::npos);
  EXPECT_NE(html.find("<table class=\"run\">"), std::string::npos);
  EXPECT_NE(html.find("<th>allowed_mem</th><td>100.0 MB (100000000 bytes)</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td>a&lt;b&amp;&quot;c&quot;</td>"), std::string::npos);
  EXPECT_NE(html.find("12.0 MB (history)"), std::string::npos);
  EXPECT_NE(html.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_EQ(html.find("<?xml"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://", html.find("<body")),
            html.find("http://www.w3.org/2000/svg"));  // the SVG namespace, nothing fetched
}

}  // namespace
}  // namespace tessera::cli
