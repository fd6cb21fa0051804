#include "tessera/memory/process_memory.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>

#include "fresh_pages.hpp"

namespace tessera {
namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

TEST(ParseProcStatusBytes, ReadsKilobyteFields) {
  const char* status =
      "Name:\ttessera\n"
      "VmPeak:\t  123456 kB\n"
      "VmHWM:\t    2048 kB\n"
      "VmRSS:\t    1024 kB\n"
      "Threads:\t4\n"
      "VmBad:\tlots kB\n";
  EXPECT_EQ(ParseProcStatusBytes(status, "VmHWM"), 2048 * 1024);
  EXPECT_EQ(ParseProcStatusBytes(status, "VmRSS"), 1024 * 1024);
  EXPECT_EQ(ParseProcStatusBytes(status, "Threads"), 4);
  EXPECT_EQ(ParseProcStatusBytes(status, "VmBad"), -1);
  EXPECT_EQ(ParseProcStatusBytes(status, "VmSwap"), -1);
  EXPECT_EQ(ParseProcStatusBytes(status, "Vm"), -1);  // a prefix is not a field
  EXPECT_EQ(ParseProcStatusBytes("", "VmRSS"), -1);
  EXPECT_EQ(ParseProcStatusBytes("VmRSS: 7 kB", "VmRSS"), 7 * 1024);  // no final newline
}

TEST(ProcessMemory, RssGrowsWithTouchedMemory) {
  const std::int64_t before = CurrentRssBytes();
  ASSERT_GT(before, 0);
  constexpr std::int64_t kBytes = 64 * kMiB;
  auto memory = std::make_unique<char[]>(static_cast<std::size_t>(kBytes));
  std::memset(memory.get(), 1, static_cast<std::size_t>(kBytes));
  EXPECT_GE(CurrentRssBytes(), before + kBytes / 2);
  EXPECT_GE(PeakRssBytes(), CurrentRssBytes());
}

TEST(ProcessMemory, ResetPeakRssStartsANewHighWaterMark) {
  EXPECT_EQ(testing::TouchAndUnmap(96 * kMiB), 1);
  const std::int64_t old_peak = PeakRssBytes();
  ASSERT_GE(old_peak, 96 * kMiB);
  if (!ResetPeakRss()) GTEST_SKIP() << "/proc/self/clear_refs is not writable here";
  const std::int64_t new_peak = PeakRssBytes();
  EXPECT_LE(new_peak, old_peak - 48 * kMiB);  // the freed 96 MiB left the peak
  EXPECT_GE(new_peak, CurrentRssBytes() / 2);
  EXPECT_EQ(testing::TouchAndUnmap(32 * kMiB), 1);
  EXPECT_GE(PeakRssBytes(), new_peak + 16 * kMiB);
}

}  // namespace
}  // namespace tessera
