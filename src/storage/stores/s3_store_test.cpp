// S3Store against a real S3-compatible server on loopback (moto, started by
// tests/s3/s3_server.py for ctest's stores_s3_test; skipped without one, see
// tests/support/s3_test_bucket.hpp). The store conformance suite covers the Store
// contract; these cover what is S3's own: paging, pinned reads, errors, and the memory a
// read or write holds, measured.
#include "tessera/storage/s3_store.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "s3_test_bucket.hpp"
#include "sanitizers.hpp"
#include "tessera/core/buffer.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/memory_account.hpp"

namespace tessera {
namespace {

class S3StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::optional<std::string> bucket = testing::S3TestBucket();
    if (!bucket) GTEST_SKIP() << "no S3 server (run under tests/s3/s3_server.py)";
    bucket_ = *bucket;
    url_ = testing::FreshS3Url(bucket_, "s3-store");
    store_ = S3Store::Open(url_);
  }
  void TearDown() override {
    if (store_ != nullptr) store_->EraseAll();
  }

  std::string bucket_;
  std::string url_;
  std::shared_ptr<S3Store> store_;
};

// Peak resident memory of this process (VmHWM), after `clear_refs` reset it.
std::int64_t ResetPeakRss() {
  std::ofstream("/proc/self/clear_refs") << "5";
  return 0;
}
std::int64_t PeakRssGrowth(std::int64_t before_rss) {
  std::ifstream status("/proc/self/status");
  std::string line;
  std::int64_t peak = 0;
  while (std::getline(status, line)) {
    if (line.starts_with("VmHWM:")) peak = std::stoll(line.substr(6)) * 1024;
  }
  return peak - before_rss;
}
std::int64_t CurrentRss() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmRSS:")) return std::stoll(line.substr(6)) * 1024;
  }
  return 0;
}

TEST_F(S3StoreTest, ListingPagesThroughContinuationTokens) {
  // S3 lists at most 1000 keys a page: 1203 keys take two pages.
  constexpr int kKeys = 1203;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kKeys; i += 8)
        store_->Set("c/" + std::to_string(i), std::string_view("x"));
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::int64_t before = store_->requests_sent();
  const std::vector<std::string> keys = store_->List("c/");
  EXPECT_EQ(keys.size(), static_cast<std::size_t>(kKeys));
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_EQ(store_->requests_sent() - before, 2) << "one request per page of 1000";
  EXPECT_EQ(store_->ListFolder(""), std::vector<std::string>{"c"});
  EXPECT_EQ(store_->EraseAll(), kKeys);
  EXPECT_TRUE(store_->List("").empty());
}

TEST_F(S3StoreTest, PinnedReadsRefuseAValueReplacedMeanwhile) {
  store_->Set("shard", std::string_view("0123456789"));
  const std::unique_ptr<OpenedValue> opened = store_->OpenForReads("shard");
  ASSERT_NE(opened, nullptr);
  EXPECT_EQ(opened->size(), 10);
  std::string part(4, '\0');
  opened->ReadAt(3, std::as_writable_bytes(std::span<char>(part.data(), part.size())));
  EXPECT_EQ(part, "3456");
  store_->Set("shard", std::string_view("abcdefghij"));
  try {
    opened->ReadAt(0, std::as_writable_bytes(std::span<char>(part.data(), part.size())));
    FAIL() << "read a value replaced after it was opened";
  } catch (const StorageError& error) {
    EXPECT_NE(std::string(error.what()).find("changed"), std::string::npos) << error.what();
  }
}

TEST_F(S3StoreTest, MissingBucketSaysSo) {
  try {
    S3Store::Open("s3://tessera-no-such-bucket/x");
    FAIL() << "opened a bucket that does not exist";
  } catch (const StorageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("tessera-no-such-bucket"), std::string::npos) << message;
    EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
  }
}

TEST_F(S3StoreTest, EraseSaysWhetherTheKeyWasThere) {
  EXPECT_FALSE(store_->Erase("absent"));
  store_->Set("present", std::string_view("1"));
  EXPECT_TRUE(store_->Erase("present"));
  EXPECT_FALSE(store_->Contains("present"));
}

// What a read and a write hold besides the caller's own buffers, measured: a Get makes one
// Buffer of the value (no copy of it), a read into the caller's memory and a write from
// it make none; libcurl's own buffers stay under a few hundred KiB. The memory model
// therefore counts an object store's reads and writes as a directory's.
TEST_F(S3StoreTest, ReadsAndWritesHoldNoCopyOfTheValue) {
  constexpr std::int64_t kSize = std::int64_t{48} << 20;
  Buffer value(kSize);
  for (std::int64_t i = 0; i < kSize; ++i) value.data()[i] = static_cast<std::byte>(i * 7);
  Buffer destination(kSize);
  std::memset(destination.data(), 0, static_cast<std::size_t>(kSize));
  store_->Set("warm", std::string_view("connection"));  // a connection made before measuring

  const auto account = std::make_shared<MemoryAccount>();
  std::int64_t write_growth = 0;
  std::int64_t read_growth = 0;
  {
    ScopedMemoryAccount scope(account);
    ResetPeakRss();
    std::int64_t rss = CurrentRss();
    store_->Set("big", value.span());
    write_growth = PeakRssGrowth(rss);
    ResetPeakRss();
    rss = CurrentRss();
    const auto size = store_->ReadBounded("big", kSize, [&](std::int64_t bytes) {
      EXPECT_EQ(bytes, kSize);
      return destination.span();
    });
    read_growth = PeakRssGrowth(rss);
    EXPECT_EQ(size, kSize);
  }
  EXPECT_EQ(account->peak_bytes(), 0) << "a Buffer was made for a value the caller holds";
  EXPECT_EQ(std::memcmp(destination.data(), value.data(), static_cast<std::size_t>(kSize)), 0);
  {
    ScopedMemoryAccount scope(account);
    const std::optional<Buffer> got = store_->Get("big");
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->size(), kSize);
  }
  EXPECT_EQ(account->peak_bytes(), kSize) << "Get holds the value once";
  if (!testing::kAddressSanitizer) {
    // A copy of the value would show as 48 MiB.
    EXPECT_LT(write_growth, 4 << 20) << "PUT grew the peak RSS by " << write_growth;
    EXPECT_LT(read_growth, 4 << 20) << "GET grew the peak RSS by " << read_growth;
  }
  std::printf("S3 store, 48 MiB value: peak RSS growth of PUT %lld KiB, of GET %lld KiB\n",
              static_cast<long long>(write_growth >> 10),
              static_cast<long long>(read_growth >> 10));
}

}  // namespace
}  // namespace tessera
