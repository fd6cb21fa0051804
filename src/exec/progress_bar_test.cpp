#include "progress_bar.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tessera::exec {
namespace {

TEST(FormatProgressLine, ShowsBarCountsRateAndEta) {
  EXPECT_EQ(FormatProgressLine("add-3", 12, 40, 3.87, false),
            "add-3  [######              ] 12/40 tasks  3.1 tasks/s  ETA 10s");
  EXPECT_EQ(FormatProgressLine("add-3", 0, 40, 0.5, false),
            "add-3  [                    ] 0/40 tasks  - tasks/s  ETA -");
  EXPECT_EQ(FormatProgressLine("sum", 40, 40, 12.91, true),
            "sum  [####################] 40/40 tasks  3.1 tasks/s  in 12.9s");
  EXPECT_EQ(FormatProgressLine("big", 1000, 100000, 4.0, false),
            "big  [                    ] 1000/100000 tasks  250 tasks/s  ETA 6m36s");
  EXPECT_EQ(FormatProgressLine("slow", 1, 1000, 50.0, false),
            "slow  [                    ] 1/1000 tasks  0.02 tasks/s  ETA 13h52m");
  EXPECT_EQ(FormatProgressLine("none", 0, 0, 0.01, true),
            "none  [####################] 0/0 tasks  - tasks/s  in 0.0s");
}

TEST(FormatDuration, PicksUnitsByLength) {
  EXPECT_EQ(FormatDuration(8.2, false), "9s");
  EXPECT_EQ(FormatDuration(8.2, true), "8.2s");
  EXPECT_EQ(FormatDuration(60, false), "1m00s");
  EXPECT_EQ(FormatDuration(125, true), "2m05s");
  EXPECT_EQ(FormatDuration(3720, false), "1h02m");
  EXPECT_EQ(FormatDuration(-1, false), "0s");
}

TEST(ProgressEnabled, FollowsModeAndEnvironment) {
  unsetenv("TESSERA_PROGRESS");
  EXPECT_TRUE(ProgressEnabled(ProgressMode::kAlways));
  EXPECT_FALSE(ProgressEnabled(ProgressMode::kNever));
  setenv("TESSERA_PROGRESS", "0", 1);
  EXPECT_FALSE(ProgressEnabled(ProgressMode::kAlways));
  EXPECT_FALSE(ProgressEnabled(ProgressMode::kAuto));
  unsetenv("TESSERA_PROGRESS");
}

std::string Contents(std::FILE* file) {
  std::rewind(file);
  std::string text;
  for (int c = std::fgetc(file); c != EOF; c = std::fgetc(file)) text += static_cast<char>(c);
  return text;
}

TEST(ProgressBar, DrawsInPlaceAndEndsEachOpsLine) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  ProgressBar bar(true, out);
  bar.Start(0, "a-long-name", 2);
  bar.Update(0, 1);  // within 100 ms of the start: not drawn
  bar.Finish(0, 2);
  bar.Start(1, "b", 1);
  bar.Interrupt();
  const std::string text = Contents(out);
  std::fclose(out);
  const std::string first = "\ra-long-name  [                    ] 0/2 tasks  - tasks/s  ETA -";
  ASSERT_EQ(text.substr(0, first.size()), first);
  EXPECT_NE(text.find("\ra-long-name  [####################] 2/2 tasks  "), std::string::npos);
  EXPECT_EQ(text.find("1/2 tasks"), std::string::npos);
  EXPECT_NE(text.find("\n\rb  ["), std::string::npos);
  EXPECT_EQ(text.back(), '\n');  // the interrupted line is ended
}

TEST(ProgressBar, ShowsTheOldestOfOverlappingOpsAndEndsEachWhenItFinishes) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  ProgressBar bar(true, out);
  bar.Start(0, "a", 4);
  bar.Start(1, "b", 2);  // drawn at once: the live line counts it
  bar.Finish(1, 2);      // b finishes first: its final line, then a's live line again
  bar.Finish(0, 4);
  const std::string text = Contents(out);
  std::fclose(out);
  EXPECT_NE(text.find("\ra  [                    ] 0/4 tasks  - tasks/s  ETA -  +1 op running"),
            std::string::npos)
      << text;
  const std::size_t b_done = text.find("\rb  [####################] 2/2 tasks  ");
  ASSERT_NE(b_done, std::string::npos) << text;
  const std::size_t a_live =
      text.find("\ra  [                    ] 0/4 tasks  - tasks/s  ETA -\r", b_done);
  EXPECT_NE(a_live, std::string::npos) << text;  // without "+1 op running" now
  EXPECT_NE(text.find("\ra  [####################] 4/4 tasks  ", b_done), std::string::npos);
  EXPECT_EQ(text.back(), '\n');
}

TEST(ProgressBar, DisabledWritesNothing) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  ProgressBar bar(false, out);
  bar.Start(0, "a", 2);
  bar.Update(0, 1);
  bar.Finish(0, 2);
  bar.Interrupt();
  EXPECT_EQ(Contents(out), "");
  std::fclose(out);
}

}  // namespace
}  // namespace tessera::exec
