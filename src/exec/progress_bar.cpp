#include "progress_bar.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace tessera::exec {
namespace {

constexpr int kBarWidth = 20;
// At most 10 redraws a second: smooth to the eye, negligible cost next to tasks.
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

std::string Printf(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string FormatRate(double rate) {
  if (rate >= 100) return Printf("%.0f", rate);
  if (rate >= 0.1) return Printf("%.1f", rate);
  return Printf("%.2f", rate);
}

}  // namespace

bool ProgressEnabled(ProgressMode mode) {
  const char* env = std::getenv("TESSERA_PROGRESS");
  if (env != nullptr && std::string_view(env) == "0") return false;
  switch (mode) {
    case ProgressMode::kAlways:
      return true;
    case ProgressMode::kNever:
      return false;
    case ProgressMode::kAuto:
      return isatty(STDERR_FILENO) == 1;
  }
  return false;
}

std::string FormatDuration(double seconds, bool tenths) {
  if (!(seconds >= 0)) seconds = 0;
  if (tenths && seconds < 59.95) return Printf("%.1fs", seconds);
  const auto whole = static_cast<std::int64_t>(std::ceil(seconds));
  const std::string minutes = std::to_string(whole / 60 % 60);
  const std::string secs = std::to_string(whole % 60);
  if (whole < 60) return secs + "s";
  if (whole < 3600) return minutes + "m" + (secs.size() < 2 ? "0" : "") + secs + "s";
  return std::to_string(whole / 3600) + "h" + (minutes.size() < 2 ? "0" : "") + minutes + "m";
}

std::string FormatProgressLine(std::string_view name, std::int64_t done, std::int64_t total,
                               double elapsed_seconds, bool finished) {
  const std::int64_t filled =
      total <= 0 ? kBarWidth : std::clamp<std::int64_t>(done * kBarWidth / total, 0, kBarWidth);
  std::string line(name);
  line += "  [";
  line.append(static_cast<std::size_t>(filled), '#');
  line.append(static_cast<std::size_t>(kBarWidth - filled), ' ');
  line += "] " + std::to_string(done) + "/" + std::to_string(total) + " tasks  ";
  const bool known = done > 0 && elapsed_seconds > 0;
  const double rate = known ? static_cast<double>(done) / elapsed_seconds : 0;
  line += (known ? FormatRate(rate) : std::string("-")) + " tasks/s  ";
  if (finished) {
    line += "in " + FormatDuration(elapsed_seconds, /*tenths=*/true);
  } else {
    const double remaining = static_cast<double>(std::max<std::int64_t>(total - done, 0));
    line += "ETA " + (known ? FormatDuration(remaining / rate, /*tenths=*/false) : "-");
  }
  return line;
}

void ProgressBar::Start(int op, std::string name, std::int64_t total) {
  const Clock::time_point now = Clock::now();
  running_[op] = OpLine{std::move(name), total, 0, now};
  if (!enabled_) return;
  last_draw_ = now;
  DrawLive();
}

void ProgressBar::Update(int op, std::int64_t done) {
  const auto found = running_.find(op);
  if (found == running_.end()) return;
  found->second.done = done;
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  if (now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  DrawLive();
}

void ProgressBar::Finish(int op, std::int64_t done) {
  const auto found = running_.find(op);
  if (found == running_.end()) return;
  const OpLine line = std::move(found->second);
  running_.erase(found);
  if (!enabled_) return;
  const std::chrono::duration<double> elapsed = Clock::now() - line.start;
  Draw(FormatProgressLine(line.name, done, line.total, elapsed.count(), true), true);
  if (!running_.empty()) DrawLive();
}

void ProgressBar::DrawLive() {
  if (running_.empty()) return;
  const OpLine& line = running_.begin()->second;
  const std::chrono::duration<double> elapsed = Clock::now() - line.start;
  std::string text = FormatProgressLine(line.name, line.done, line.total, elapsed.count(), false);
  if (const std::size_t others = running_.size() - 1; others > 0) {
    text += "  +" + std::to_string(others) + (others == 1 ? " op running" : " ops running");
  }
  Draw(text, false);
}

void ProgressBar::Interrupt() {
  if (!enabled_ || !drawn_) return;
  std::fputc('\n', out_);
  std::fflush(out_);
  drawn_ = false;
}

void ProgressBar::Draw(const std::string& line, bool end_line) {
  std::string text = "\r" + line;
  if (line.size() < last_width_) text.append(last_width_ - line.size(), ' ');
  if (end_line) text += '\n';
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fflush(out_);
  last_width_ = end_line ? 0 : line.size();
  drawn_ = !end_line;
}

}  // namespace tessera::exec
