#include "tessera/memory/process_memory.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>

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

// Touches `bytes` of fresh pages and unmaps them; returns the last byte, so the writes
// stay. mmap, not new: a sanitizer's allocator would keep freed memory resident.
int TouchAndFree(std::int64_t bytes) {
  const std::size_t size = static_cast<std::size_t>(bytes);
  void* memory = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return -1;
  char* pages = static_cast<char*>(memory);
  std::memset(pages, 1, size);
  const int last = *static_cast<volatile char*>(pages + size - 1);
  munmap(memory, size);
  return last;
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
  EXPECT_EQ(TouchAndFree(96 * kMiB), 1);
  const std::int64_t old_peak = PeakRssBytes();
  ASSERT_GE(old_peak, 96 * kMiB);
  if (!ResetPeakRss()) GTEST_SKIP() << "/proc/self/clear_refs is not writable here";
  const std::int64_t new_peak = PeakRssBytes();
  EXPECT_LE(new_peak, old_peak - 48 * kMiB);  // the freed 96 MiB left the peak
  EXPECT_GE(new_peak, CurrentRssBytes() / 2);
  EXPECT_EQ(TouchAndFree(32 * kMiB), 1);
  EXPECT_GE(PeakRssBytes(), new_peak + 16 * kMiB);
}

TEST(ProcessMemory, ThreadFaultedBytesCountOnlyThisThreadsFreshPages) {
  // 32 MiB touched on this thread shows here; 32 MiB touched on another thread does not.
  const std::int64_t before = ThreadFaultedBytes();
  EXPECT_EQ(TouchAndFree(32 * kMiB), 1);
  const std::int64_t mine = ThreadFaultedBytes() - before;
  EXPECT_GE(mine, 31 * kMiB);
  EXPECT_LE(mine, 34 * kMiB);
  std::int64_t other = 0;
  std::thread([&] {
    const std::int64_t start = ThreadFaultedBytes();
    EXPECT_EQ(TouchAndFree(32 * kMiB), 1);
    other = ThreadFaultedBytes() - start;
  }).join();
  EXPECT_GE(other, 31 * kMiB);
  EXPECT_LE(ThreadFaultedBytes() - before - mine, 2 * kMiB);
}

}  // namespace
}  // namespace tessera
