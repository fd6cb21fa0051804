// S3Store against a real S3-compatible server on loopback (moto, started by
// tests/s3/s3_server.py for ctest's stores_s3_test; skipped without one, see
// tests/support/s3_test_bucket.hpp), and against a scripted one (scripted_http_server.hpp)
// for what no healthy server does. The store conformance suite covers the Store
// contract; these cover what is S3's own: paging, pinned reads, requests per operation,
// errors, and the memory a read or write holds, measured.
#include "tessera/storage/s3_store.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "s3_client.hpp"
#include "s3_config.hpp"
#include "s3_test_bucket.hpp"
#include "sanitizers.hpp"
#include "scripted_http_server.hpp"
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

TEST_F(S3StoreTest, ListWithSizesTakesOneRequestPerPage) {
  constexpr int kKeys = 100;
  for (int key = 0; key < kKeys; ++key) {
    store_->Set("c/" + std::to_string(key), std::string(static_cast<std::size_t>(key), 'x'));
  }
  const std::int64_t before = store_->requests_sent();
  const std::vector<ListedKey> listed = store_->ListWithSizes("c/");
  EXPECT_EQ(store_->requests_sent() - before, 1) << "the sizes come with the listing";
  ASSERT_EQ(listed.size(), static_cast<std::size_t>(kKeys));
  for (const ListedKey& entry : listed) {
    EXPECT_EQ(entry.size, std::stoll(entry.key.substr(2))) << entry.key;
  }
}

TEST_F(S3StoreTest, EraseKeysSendsOneDeletePerKeyAndNoHead) {
  std::vector<std::string> keys;
  for (int key = 0; key < 40; ++key) {
    keys.push_back("k/" + std::to_string(key));
    store_->Set(keys.back(), std::string_view("x"));
  }
  store_->Set("kept", std::string_view("y"));
  keys.push_back("k/absent");
  const std::int64_t before = store_->requests_sent();
  const std::int64_t removed = store_->EraseKeys(keys);
  EXPECT_EQ(store_->requests_sent() - before, 41);
  EXPECT_GE(removed, 40);
  EXPECT_LE(removed, 41);
  EXPECT_EQ(store_->List(""), std::vector<std::string>{"kept"});
}

// EraseAll deletes the keys it lists as they are: one holding "/../" (no Store key, but any
// S3 client can write it) must not be sent as the key it would squash to, another prefix's.
TEST_F(S3StoreTest, EraseAllDeletesKeysWithDotSegmentsAsListed) {
  const std::string victim_url = testing::FreshS3Url(bucket_, "victim");
  const auto victim = S3Store::Open(victim_url);
  victim->Set("k", std::string_view("precious"));
  const std::size_t bucket_part = std::string("s3://").size() + bucket_.size() + 1;
  s3::S3Request put;
  put.method = "PUT";
  put.key = url_.substr(bucket_part) + "/p/../../" + victim_url.substr(bucket_part) + "/k";
  const std::string raw = "raw";
  put.body = std::as_bytes(std::span<const char>(raw.data(), raw.size()));
  const s3::S3Client client(s3::ResolveS3Settings(s3::ProcessEnvironment()), bucket_, {});
  ASSERT_EQ(client.Perform(put).status, 200);
  EXPECT_EQ(store_->EraseAll(), 1);
  EXPECT_TRUE(victim->Contains("k")) << "EraseAll deleted " << victim_url << "/k";
  EXPECT_EQ(victim->EraseAll(), 1);
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

// ---- against a scripted server: what a healthy S3 never answers -------------------------

// An S3Store of prefix "p" of the scripted server's bucket "bucket".
std::shared_ptr<S3Store> ScriptedStore(const s3::ScriptedHttpServer& server, int attempts = 1) {
  return std::make_shared<S3Store>(s3::ScriptedS3Client(server, attempts), "p");
}

// The message of the StorageError `read` throws; "" (a failure) when it throws none.
template <class Read>
std::string StorageErrorOf(Read read) {
  try {
    read();
  } catch (const StorageError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no StorageError";
  return "";
}

std::span<std::byte> Bytes(std::string& text) {
  return std::as_writable_bytes(std::span<char>(text.data(), text.size()));
}

// A HEAD answer: `size` bytes (no Content-Length when negative), ETag `etag` unless "".
std::string HeadAnswer(std::int64_t size, const std::string& etag) {
  return s3::HttpResponse(200,
                          (size >= 0 ? "Content-Length: " + std::to_string(size) + "\r\n" : "") +
                              (etag.empty() ? "" : "ETag: " + etag + "\r\n"),
                          "", /*content_length=*/false);
}

TEST(S3StoreScripted, AHeadWithoutContentLengthIsNoSizeOfZero) {
  s3::ScriptedHttpServer server(
      [](const s3::RecordedRequest&, int) { return HeadAnswer(-1, "\"v1\""); });
  const auto store = ScriptedStore(server);
  for (const std::string& message : {StorageErrorOf([&] { store->SizeOf("k"); }),
                                     StorageErrorOf([&] { store->OpenForReads("k"); })}) {
    EXPECT_NE(message.find("HEAD s3://bucket/p/k"), std::string::npos) << message;
    EXPECT_NE(message.find("without a Content-Length"), std::string::npos) << message;
  }
}

TEST(S3StoreScripted, WeakEtagsPinNothing) {
  s3::ScriptedHttpServer server(
      [](const s3::RecordedRequest&, int) { return HeadAnswer(10, "W/\"v1\""); });
  EXPECT_EQ(ScriptedStore(server)->OpenForReads("k"), nullptr);
}

TEST(S3StoreScripted, AnIgnoredRangeIsAnErrorNotADownload) {
  const std::string whole(1 << 20, 'v');
  s3::ScriptedHttpServer server([&whole](const s3::RecordedRequest& request, int) {
    if (request.RequestLine().starts_with("HEAD")) return HeadAnswer(1 << 20, "\"v1\"");
    return s3::HttpResponse(200, "", whole);  // the whole value, Range or not
  });
  const auto store = ScriptedStore(server, /*attempts=*/3);
  std::string out(4, '?');
  const std::string message = StorageErrorOf([&] { store->ReadRange("k", 8, Bytes(out)); });
  EXPECT_NE(message.find("ignored the Range header (bytes=8-11)"), std::string::npos) << message;
  EXPECT_EQ(store->requests_sent(), 1);
  const std::unique_ptr<OpenedValue> opened = store->OpenForReads("k");
  ASSERT_NE(opened, nullptr);
  const std::string pinned = StorageErrorOf([&] { opened->ReadAt(0, Bytes(out)); });
  EXPECT_NE(pinned.find("ignored the Range header"), std::string::npos) << pinned;
  EXPECT_EQ(out, "????");
}

// A negative offset short of the end is a HEAD, then a GET that must read the version the
// HEAD sized: pinned by its ETag (412: another version) ...
TEST(S3StoreScripted, AReadShortOfTheEndIsPinnedToTheHeadsEtag) {
  s3::ScriptedHttpServer server([](const s3::RecordedRequest&, int index) {
    return index == 0 ? HeadAnswer(10, "\"v1\"") : s3::HttpResponse(412, "", "");
  });
  const auto store = ScriptedStore(server);
  std::string out(3, '?');
  const std::string message = StorageErrorOf([&] { store->ReadRange("k", -6, Bytes(out)); });
  EXPECT_NE(message.find("changed or was removed while being read"), std::string::npos) << message;
  const std::vector<s3::RecordedRequest> requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].Header("range"), "bytes=4-6");
  EXPECT_EQ(requests[1].Header("if-match"), "\"v1\"");
}

// ... or, without a strong ETag, by the total size the GET reports.
TEST(S3StoreScripted, AReadShortOfTheEndWithoutAnEtagComparesSizes) {
  s3::ScriptedHttpServer server([](const s3::RecordedRequest&, int index) {
    return index == 0 ? HeadAnswer(10, "W/\"v1\"")
                      : s3::HttpResponse(206, "Content-Range: bytes 4-6/12\r\n", "456");
  });
  const auto store = ScriptedStore(server);
  std::string out(3, '?');
  const std::string message = StorageErrorOf([&] { store->ReadRange("k", -6, Bytes(out)); });
  EXPECT_NE(message.find("its HEAD said 10 bytes, its GET 12"), std::string::npos) << message;
  EXPECT_EQ(server.requests().at(1).Header("if-match"), "");
}

TEST(S3StoreScripted, RangesPastTheLargestOffsetAreRefusedNamingTheSize) {
  s3::ScriptedHttpServer server(
      [](const s3::RecordedRequest&, int) { return HeadAnswer(10, "\"v1\""); });
  const auto store = ScriptedStore(server);
  std::string out(4, '?');
  for (const std::int64_t offset :
       {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max() - 1}) {
    SCOPED_TRACE(offset);
    const std::string message = StorageErrorOf([&] { store->ReadRange("k", offset, Bytes(out)); });
    EXPECT_NE(message.find("the value has 10 bytes"), std::string::npos) << message;
  }
  EXPECT_EQ(store->requests_sent(), 2) << "a HEAD each, no GET";
}

TEST(S3StoreScripted, AnEmptyChunkedValueIsAnEmptyValue) {
  s3::ScriptedHttpServer server([](const s3::RecordedRequest&, int) {
    return s3::HttpResponse(200, "Transfer-Encoding: chunked\r\n", "0\r\n\r\n",
                            /*content_length=*/false);
  });
  const auto store = ScriptedStore(server);
  const std::optional<Buffer> value = store->Get("empty");
  ASSERT_TRUE(value.has_value());
  EXPECT_EQ(value->size(), 0);
  EXPECT_EQ(store->ReadBounded("empty", 0, [](std::int64_t) { return std::span<std::byte>(); }), 0);
}

TEST(S3StoreScripted, AListingThatRepeatsItsTokenFails) {
  s3::ScriptedHttpServer server([](const s3::RecordedRequest&, int) {
    return s3::HttpResponse(200, "",
                            "<ListBucketResult><IsTruncated>true</IsTruncated>"
                            "<NextContinuationToken>again</NextContinuationToken>"
                            "<Contents><Key>p/a</Key><Size>1</Size></Contents>"
                            "</ListBucketResult>");
  });
  const auto store = ScriptedStore(server);
  const std::string message = StorageErrorOf([&] { store->List(""); });
  EXPECT_NE(message.find("LIST s3://bucket/p/"), std::string::npos) << message;
  EXPECT_NE(message.find("continuation token an earlier page gave"), std::string::npos) << message;
  EXPECT_EQ(store->requests_sent(), 2);
}

struct DestinationFull : std::runtime_error {
  DestinationFull() : std::runtime_error("the destination is full") {}
};

// A Destination's exception (an allocation for a hostile Content-Length, say) comes out of
// the store as itself, with no retry and nothing leaked (the suite runs under ASan).
TEST(S3StoreScripted, ADestinationsExceptionPropagatesUntried) {
  s3::ScriptedHttpServer server(
      [](const s3::RecordedRequest&, int) { return s3::HttpResponse(200, "", "0123456789"); });
  const auto store = ScriptedStore(server, /*attempts=*/3);
  const auto full = [](std::int64_t) -> std::span<std::byte> { throw DestinationFull(); };
  EXPECT_THROW(store->ReadBounded("k", 100, full), DestinationFull);
  EXPECT_EQ(store->requests_sent(), 1);
  const auto no_memory = [](std::int64_t) -> std::span<std::byte> { throw std::bad_alloc(); };
  EXPECT_THROW(store->ReadBounded("k", 100, no_memory), std::bad_alloc);
  EXPECT_EQ(store->requests_sent(), 2);
  EXPECT_EQ(store->Get("k")->size(), 10);
}

}  // namespace
}  // namespace tessera
