// The shared Store test suite: every Store implementation must pass it. A new store
// is one entry in kStoreFactories. The S3 store's entry is there when a server is
// (tests/support/s3_test_bucket.hpp): ctest's stores_s3_test runs the suite against moto.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "s3_test_bucket.hpp"
#include "temp_dir.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/directory_store.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/s3_store.hpp"
#include "tessera/storage/store.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the system's temporary directory, removed at the end.
using testing::TempDir;

// A store under test and whatever keeps it alive (a temporary directory).
struct StoreFixture {
  std::shared_ptr<Store> store;
  std::shared_ptr<TempDir> directory;
  std::shared_ptr<void> cleanup = nullptr;  // removes an object store's prefix
};

// A store with only the methods every store must write (MemoryStore's underneath), so
// that Store's defaults (ReadBounded, ReadRange, ListFolder) meet the same tests.
class MinimalStore final : public Store {
 public:
  std::optional<Buffer> Get(std::string_view key) const override { return values_->Get(key); }
  using Store::Set;
  void Set(std::string_view key, std::span<const std::byte> value) override {
    values_->Set(key, value);
  }
  bool Erase(std::string_view key) override { return values_->Erase(key); }
  std::vector<std::string> List(std::string_view prefix) const override {
    return values_->List(prefix);
  }
  std::optional<std::int64_t> SizeOf(std::string_view key) const override {
    return values_->SizeOf(key);
  }
  std::string Describe() const override { return "minimal store"; }

 private:
  std::shared_ptr<MemoryStore> values_ = MemoryStore::Create();
};

struct StoreFactory {
  std::string name;
  std::function<StoreFixture()> make;
};

// A fresh prefix of the test bucket, emptied at the end.
StoreFixture S3Fixture(const std::string& bucket) {
  auto store = S3Store::Open(testing::FreshS3Url(bucket, "conformance"));
  std::shared_ptr<void> cleanup(nullptr, [store](void*) {
    try {
      store->EraseAll();
    } catch (const Error&) {
    }
  });
  return StoreFixture{store, nullptr, std::move(cleanup)};
}

std::vector<StoreFactory> MakeStoreFactories();

const std::vector<StoreFactory>& StoreFactories() {
  static const std::vector<StoreFactory> factories = MakeStoreFactories();
  return factories;
}

std::vector<StoreFactory> MakeStoreFactories() {
  std::vector<StoreFactory> factories = {
      {"MinimalStore",
       [] {
         return StoreFixture{std::make_shared<MinimalStore>(), nullptr};
       }},
      {"MemoryStore",
       [] {
         return StoreFixture{MemoryStore::Create(), nullptr};
       }},
      {"DirectoryStore",
       [] {
         auto directory = std::make_shared<TempDir>();
         return StoreFixture{DirectoryStore::Open(directory->path() / "store.zarr"), directory};
       }},
      {"DirectoryStoreFsync",
       [] {
         auto directory = std::make_shared<TempDir>();
         return StoreFixture{DirectoryStore::Open(directory->path() / "store.zarr",
                                                  {.create = true, .fsync = true}),
                             directory};
       }},
  };
  if (const std::optional<std::string> bucket = testing::S3TestBucket()) {
    factories.push_back({"S3Store", [bucket = *bucket] { return S3Fixture(bucket); }});
  }
  return factories;
}

std::string Text(const Buffer& buffer) {
  return std::string(reinterpret_cast<const char*>(buffer.data()),
                     static_cast<std::size_t>(buffer.size()));
}

class StoreConformanceTest : public ::testing::TestWithParam<std::size_t> {
 protected:
  void SetUp() override { fixture_ = StoreFactories()[GetParam()].make(); }
  Store& store() { return *fixture_.store; }

 private:
  StoreFixture fixture_;
};

TEST_P(StoreConformanceTest, MissingKeyIsAbsent) {
  EXPECT_FALSE(store().Get("missing").has_value());
  EXPECT_FALSE(store().SizeOf("missing").has_value());
  EXPECT_FALSE(store().Contains("missing"));
  EXPECT_FALSE(store().Erase("missing"));
  EXPECT_FALSE(store().Get("missing/nested/key").has_value());
  EXPECT_TRUE(store().List("").empty());
}

TEST_P(StoreConformanceTest, SetThenGet) {
  store().Set("key", std::string_view("value"));
  std::optional<Buffer> value = store().Get("key");
  ASSERT_TRUE(value.has_value());
  EXPECT_EQ(Text(*value), "value");
  EXPECT_EQ(store().SizeOf("key"), 5);
  EXPECT_TRUE(store().Contains("key"));
}

TEST_P(StoreConformanceTest, OverwriteReplacesWholeValue) {
  store().Set("key", std::string_view("a much longer first value"));
  store().Set("key", std::string_view("short"));
  EXPECT_EQ(Text(*store().Get("key")), "short");
  EXPECT_EQ(store().SizeOf("key"), 5);
  store().Set("key", std::string_view("longer again, longer than before"));
  EXPECT_EQ(Text(*store().Get("key")), "longer again, longer than before");
  EXPECT_EQ(store().List(""), std::vector<std::string>{"key"});
}

TEST_P(StoreConformanceTest, EraseRemovesKey) {
  store().Set("a", std::string_view("1"));
  store().Set("b", std::string_view("2"));
  EXPECT_TRUE(store().Erase("a"));
  EXPECT_FALSE(store().Get("a").has_value());
  EXPECT_FALSE(store().Contains("a"));
  EXPECT_FALSE(store().Erase("a"));
  EXPECT_EQ(store().List(""), std::vector<std::string>{"b"});
  store().Set("a", std::string_view("3"));
  EXPECT_EQ(Text(*store().Get("a")), "3");
}

TEST_P(StoreConformanceTest, ListIsSortedAndFiltersByPlainPrefix) {
  const std::vector<std::string> keys = {"xy",  "0.1",       "x/0/1", ".zarray", "1.0",
                                         "0.0", "x/.zarray", "y/z/w", "x/0/0"};
  for (const std::string& key : keys) store().Set(key, std::string_view(key));
  EXPECT_EQ(store().List(""), (std::vector<std::string>{".zarray", "0.0", "0.1", "1.0", "x/.zarray",
                                                        "x/0/0", "x/0/1", "xy", "y/z/w"}));
  EXPECT_EQ(store().List("x/"), (std::vector<std::string>{"x/.zarray", "x/0/0", "x/0/1"}));
  EXPECT_EQ(store().List("x"), (std::vector<std::string>{"x/.zarray", "x/0/0", "x/0/1", "xy"}));
  EXPECT_EQ(store().List("x/0"), (std::vector<std::string>{"x/0/0", "x/0/1"}));
  EXPECT_EQ(store().List("0."), (std::vector<std::string>{"0.0", "0.1"}));
  EXPECT_EQ(store().List("y/z"), std::vector<std::string>{"y/z/w"});
  EXPECT_EQ(store().List("y/z/w"), std::vector<std::string>{"y/z/w"});
  EXPECT_TRUE(store().List("nothing").empty());
  EXPECT_TRUE(store().List("x/0/0/deeper").empty());
  EXPECT_TRUE(store().List("../").empty());
  for (const std::string& key : keys) EXPECT_EQ(Text(*store().Get(key)), key);
}

// The listing with sizes is what List then SizeOf of each key gives.
TEST_P(StoreConformanceTest, ListWithSizesGivesEachKeysSize) {
  const std::vector<std::string> keys = {"c/1", "c/0", "c/sub/2", "cx", "d", "empty"};
  for (const std::string& key : keys) {
    store().Set(key, key == "empty" ? std::string_view() : std::string_view(key));
  }
  const std::vector<ListedKey> all = store().ListWithSizes("");
  std::vector<ListedKey> expected;
  for (const std::string& key : store().List("")) expected.push_back({key, *store().SizeOf(key)});
  EXPECT_EQ(all, expected);
  EXPECT_EQ(store().ListWithSizes("c/"),
            (std::vector<ListedKey>{{"c/0", 3}, {"c/1", 3}, {"c/sub/2", 7}}));
  EXPECT_EQ(store().ListWithSizes("empty"), (std::vector<ListedKey>{{"empty", 0}}));
  EXPECT_TRUE(store().ListWithSizes("nothing").empty());
}

TEST_P(StoreConformanceTest, EraseKeysRemovesEveryKeyGiven) {
  for (const std::string key : {"a", "b", "c/d", "c/e"}) store().Set(key, std::string_view(key));
  EXPECT_EQ(store().EraseKeys({}), 0);
  const std::vector<std::string> erased = {"a", "c/d", "missing", "c/e"};
  const std::int64_t removed = store().EraseKeys(erased);
  // Exact where the store can tell an absent key; S3's DELETE cannot (at most one more).
  EXPECT_GE(removed, 3);
  EXPECT_LE(removed, 4);
  EXPECT_EQ(store().List(""), std::vector<std::string>{"b"});
  EXPECT_FALSE(store().Contains("c/d"));
  // A bad key among them is refused before any key is removed.
  const std::vector<std::string> with_bad_key = {"b", "../escape"};
  EXPECT_THROW(store().EraseKeys(with_bad_key), InvalidArgument);
  EXPECT_TRUE(store().Contains("b"));
}

TEST_P(StoreConformanceTest, ListFolderGivesOneLevelOfNames) {
  const std::vector<std::string> keys = {"xy",        "0.1",   "x/0/1", ".zarray",
                                         "x/.zarray", "y/z/w", "x/0/0"};
  for (const std::string& key : keys) store().Set(key, std::string_view(key));
  EXPECT_EQ(store().ListFolder(""), (std::vector<std::string>{".zarray", "0.1", "x", "xy", "y"}));
  EXPECT_EQ(store().ListFolder("x"), (std::vector<std::string>{".zarray", "0"}));
  EXPECT_EQ(store().ListFolder("x/0"), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(store().ListFolder("y"), std::vector<std::string>{"z"});
  EXPECT_TRUE(store().ListFolder("nothing").empty());
  EXPECT_TRUE(store().ListFolder("x/0/0").empty());  // a value has nothing below it
  EXPECT_THROW(store().ListFolder(".."), InvalidArgument);
  EXPECT_THROW(store().ListFolder("/x"), InvalidArgument);
}

// Byte ranges, as a shard's index (its last bytes) and one inner chunk are read.
TEST_P(StoreConformanceTest, ReadRangeReadsAnySliceFromEitherEnd) {
  store().Set("shard", std::string_view("0123456789"));
  const auto range = [&](std::int64_t offset, std::size_t length) {
    std::string out(length, '?');
    const std::optional<std::int64_t> size = store().ReadRange(
        "shard", offset, std::as_writable_bytes(std::span<char>(out.data(), out.size())));
    EXPECT_EQ(size, 10);
    return out;
  };
  EXPECT_EQ(range(0, 3), "012");
  EXPECT_EQ(range(4, 4), "4567");
  EXPECT_EQ(range(-3, 3), "789");
  EXPECT_EQ(range(-10, 10), "0123456789");
  EXPECT_EQ(range(10, 0), "");
  std::byte out[4];
  EXPECT_FALSE(store().ReadRange("missing", 0, out).has_value());
  for (const std::int64_t offset :
       {std::int64_t{8}, std::int64_t{-3}, std::int64_t{11}, std::int64_t{-11}}) {
    SCOPED_TRACE(offset);
    try {
      store().ReadRange("shard", offset, out);
      ADD_FAILURE() << "read a range outside the value";
    } catch (const StorageError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(store().DescribeKey("shard")), std::string::npos) << message;
      EXPECT_NE(message.find("10 bytes"), std::string::npos) << message << " at " << offset;
    }
  }
  EXPECT_THROW(store().ReadRange("../escape", 0, out), InvalidArgument);
}

// PinnedValueStore over every store: the pinned key reads as the store reads it (ranges
// from either end, sizes, errors naming the key), other keys pass through, and an absent
// key stays absent.
TEST_P(StoreConformanceTest, PinnedValueReadsAsTheStoreDoes) {
  store().Set("shard", std::string_view("0123456789"));
  store().Set("other", std::string_view("abc"));
  const PinnedValueStore pinned(store(), "shard");
  std::string out(4, '?');
  const auto bytes = std::as_writable_bytes(std::span<char>(out.data(), out.size()));
  EXPECT_EQ(pinned.ReadRange("shard", -4, bytes), 10);
  EXPECT_EQ(out, "6789");
  EXPECT_EQ(pinned.ReadRange("shard", 2, bytes.first(3)), 10);
  EXPECT_EQ(out.substr(0, 3), "234");
  EXPECT_EQ(pinned.SizeOf("shard"), 10);
  EXPECT_EQ(pinned.ReadRange("other", 1, bytes.first(2)), 3);
  EXPECT_EQ(out.substr(0, 2), "bc");
  EXPECT_EQ(pinned.Describe(), store().Describe());
  try {
    pinned.ReadRange("shard", 8, bytes);
    ADD_FAILURE() << "read a range outside the value";
  } catch (const StorageError& error) {
    EXPECT_NE(std::string(error.what()).find(store().DescribeKey("shard")), std::string::npos)
        << error.what();
  }
  PinnedValueStore view(store(), "shard");
  Store& as_store = view;
  EXPECT_THROW(as_store.Set("shard", std::string_view("x")), Error);
  EXPECT_THROW(view.Erase("shard"), Error);
  const PinnedValueStore absent(store(), "missing");
  EXPECT_FALSE(absent.ReadRange("missing", 0, bytes).has_value());
  EXPECT_FALSE(absent.SizeOf("missing").has_value());
}

TEST_P(StoreConformanceTest, EmptyValue) {
  store().Set("empty", std::span<const std::byte>());
  std::optional<Buffer> value = store().Get("empty");
  ASSERT_TRUE(value.has_value());
  EXPECT_EQ(value->size(), 0);
  EXPECT_EQ(store().SizeOf("empty"), 0);
  EXPECT_TRUE(store().Contains("empty"));
  EXPECT_EQ(store().List(""), std::vector<std::string>{"empty"});
}

TEST_P(StoreConformanceTest, BinaryValuesWithNulBytes) {
  std::vector<std::byte> value;
  for (int repeat = 0; repeat < 3; ++repeat) {
    for (int byte = 0; byte < 256; ++byte) value.push_back(static_cast<std::byte>(byte));
  }
  value.push_back(std::byte{0});
  store().Set("binary", value);
  std::optional<Buffer> back = store().Get("binary");
  ASSERT_TRUE(back.has_value());
  ASSERT_EQ(back->size(), static_cast<std::int64_t>(value.size()));
  EXPECT_EQ(std::memcmp(back->data(), value.data(), value.size()), 0);
  EXPECT_EQ(store().SizeOf("binary"), static_cast<std::int64_t>(value.size()));
}

TEST_P(StoreConformanceTest, LargeValue) {
  std::vector<std::byte> value(3 << 20);
  for (std::size_t pos = 0; pos < value.size(); ++pos) {
    value[pos] = static_cast<std::byte>((pos * 7919) >> 3);
  }
  store().Set("large", value);
  std::optional<Buffer> back = store().Get("large");
  ASSERT_TRUE(back.has_value());
  ASSERT_EQ(back->size(), static_cast<std::int64_t>(value.size()));
  EXPECT_EQ(std::memcmp(back->data(), value.data(), value.size()), 0);
}

TEST_P(StoreConformanceTest, NestedKeys) {
  store().Set("a/b/c", std::string_view("deep"));
  store().Set("a/b/d", std::string_view("sibling"));
  store().Set("a/e", std::string_view("shallow"));
  EXPECT_EQ(Text(*store().Get("a/b/c")), "deep");
  EXPECT_EQ(Text(*store().Get("a/b/d")), "sibling");
  EXPECT_EQ(store().SizeOf("a/e"), 7);
  EXPECT_FALSE(store().Get("a/b").has_value());  // a "directory" is not a key
  EXPECT_FALSE(store().Contains("a"));
  EXPECT_EQ(store().List("a/"), (std::vector<std::string>{"a/b/c", "a/b/d", "a/e"}));
  EXPECT_TRUE(store().Erase("a/b/c"));
  EXPECT_EQ(store().List(""), (std::vector<std::string>{"a/b/d", "a/e"}));
}

TEST_P(StoreConformanceTest, UnusualButValidKeys) {
  for (std::string key : {"...", ".hidden", "a..b", "with space", "unicode-\xc3\xa9", "a/.b/..c"}) {
    store().Set(key, std::string_view(key));
    EXPECT_EQ(Text(*store().Get(key)), key) << key;
  }
  EXPECT_EQ(store().List("").size(), 6u);
}

struct BadKey {
  std::string key;
  std::string rule;  // a phrase the message must contain
};

std::vector<BadKey> BadKeys() {
  return {{"", "empty"},
          {"/etc/passwd", "absolute"},
          {"/", "absolute"},
          {"..", "\"..\" segment"},
          {"../x", "\"..\" segment"},
          {"a/../../x", "\"..\" segment"},
          {"a/..", "\"..\" segment"},
          {".", "\".\" segment"},
          {"./a", "\".\" segment"},
          {"a/./b", "\".\" segment"},
          {"a//b", "empty segment"},
          {"a/", "empty segment"},
          {"a\\b", "backslash"},
          {"..\\x", "backslash"},
          {std::string("a\0b", 3), "NUL"}};
}

TEST_P(StoreConformanceTest, BadKeysAreRejectedForEveryOperation) {
  for (const BadKey& bad : BadKeys()) {
    SCOPED_TRACE("key rule: " + bad.rule);
    try {
      store().Set(bad.key, std::string_view("x"));
      ADD_FAILURE() << "Set accepted a bad key";
    } catch (const InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find(bad.rule), std::string::npos) << error.what();
    }
    EXPECT_THROW(store().Get(bad.key), InvalidArgument);
    EXPECT_THROW(store().Erase(bad.key), InvalidArgument);
    EXPECT_THROW(store().SizeOf(bad.key), InvalidArgument);
    EXPECT_THROW(store().Contains(bad.key), InvalidArgument);
  }
  EXPECT_TRUE(store().List("").empty());
}

TEST_P(StoreConformanceTest, DescribeKeyNamesStoreAndKey) {
  std::string description = store().DescribeKey("a/.zarray");
  EXPECT_NE(description.find(store().Describe()), std::string::npos);
  EXPECT_TRUE(description.ends_with("/a/.zarray")) << description;
}

// A Set racing a Get of the same key yields the whole old or the whole new value.
TEST_P(StoreConformanceTest, ConcurrentSetAndGetSeeWholeValues) {
  // Two values of different sizes and contents, so a torn read would show up as a
  // wrong size or mixed bytes.
  const std::vector<std::byte> first(64 << 10, std::byte{0xAA});
  const std::vector<std::byte> second(100 << 10, std::byte{0x55});
  store().Set("chunk", first);
  constexpr int kWritesPerWriter = 150;
  std::atomic<int> writers_left{2};
  std::atomic<int> bad_reads{0};
  std::atomic<int> reads{0};
  std::vector<std::thread> threads;
  for (int writer = 0; writer < 2; ++writer) {
    threads.emplace_back([&, writer] {
      for (int write = 0; write < kWritesPerWriter; ++write) {
        store().Set("chunk", (write + writer) % 2 == 0 ? second : first);
      }
      writers_left.fetch_sub(1);
    });
  }
  for (int reader = 0; reader < 2; ++reader) {
    threads.emplace_back([&] {
      while (writers_left.load() > 0) {
        std::optional<Buffer> value = store().Get("chunk");
        reads.fetch_add(1);
        bool whole = false;
        if (value.has_value() && !value->empty()) {
          const std::vector<std::byte>& expected =
              value->size() == static_cast<std::int64_t>(first.size()) ? first : second;
          whole = value->size() == static_cast<std::int64_t>(expected.size()) &&
                  std::memcmp(value->data(), expected.data(), expected.size()) == 0;
        }
        if (!whole) bad_reads.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(bad_reads.load(), 0) << "of " << reads.load() << " reads";
  EXPECT_EQ(store().List(""), std::vector<std::string>{"chunk"});
}

TEST_P(StoreConformanceTest, ConcurrentSetsOfDifferentNestedKeys) {
  constexpr int kThreads = 4;
  constexpr int kKeysPerThread = 50;
  std::vector<std::thread> threads;
  for (int thread = 0; thread < kThreads; ++thread) {
    threads.emplace_back([&, thread] {
      for (int key = 0; key < kKeysPerThread; ++key) {
        std::string name = "group/" + std::to_string(key % 5) + "/" + std::to_string(thread) + "." +
                           std::to_string(key);
        store().Set(name, std::string_view(name));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<std::string> keys = store().List("group/");
  ASSERT_EQ(keys.size(), static_cast<std::size_t>(kThreads * kKeysPerThread));
  for (const std::string& key : keys) EXPECT_EQ(Text(*store().Get(key)), key);
}

INSTANTIATE_TEST_SUITE_P(AllStores, StoreConformanceTest,
                         ::testing::Range<std::size_t>(0, StoreFactories().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& param_info) {
                           return StoreFactories()[param_info.param].name;
                         });

// ---- key helpers ---------------------------------------------------------------------

TEST(ValidateKeyTest, AcceptsRelativeKeys) {
  for (std::string_view key : {"a", ".zarray", "a/b/c", "0.0.0", "x/0/1", "...", "a..b/c"}) {
    EXPECT_NO_THROW(ValidateKey(key)) << key;
  }
}

TEST(ValidateKeyTest, MessagesSayWhichRuleAndHowToFix) {
  for (const BadKey& bad : BadKeys()) {
    try {
      ValidateKey(bad.key);
      ADD_FAILURE() << "accepted a key breaking the rule: " << bad.rule;
    } catch (const InvalidArgument& error) {
      std::string message = error.what();
      EXPECT_NE(message.find("invalid store key"), std::string::npos) << message;
      EXPECT_NE(message.find(bad.rule), std::string::npos) << message;
      EXPECT_NE(message.find("; "), std::string::npos) << "no advice: " << message;
    }
  }
}

TEST(ValidateKeyTest, NulByteIsShownEscaped) {
  try {
    ValidateKey(std::string("a\0b", 3));
    FAIL();
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("a\\x00b"), std::string::npos) << error.what();
  }
}

TEST(JoinKeyTest, JoinsWithOneSlash) {
  EXPECT_EQ(JoinKey("", ".zarray"), ".zarray");
  EXPECT_EQ(JoinKey("group", ".zarray"), "group/.zarray");
  EXPECT_EQ(JoinKey("group/", ".zarray"), "group/.zarray");
  EXPECT_EQ(JoinKey("a/b", "0.0"), "a/b/0.0");
  EXPECT_EQ(JoinKey("a", ""), "a");
  EXPECT_EQ(JoinKey("", ""), "");
}

TEST(MemoryStoreTest, TotalBytesTracksValues) {
  auto store = MemoryStore::Create();
  EXPECT_EQ(store->TotalBytes(), 0);
  store->Set("a", std::string_view("12345"));
  store->Set("b", std::string_view("123"));
  EXPECT_EQ(store->TotalBytes(), 8);
  store->Set("a", std::string_view("1"));
  EXPECT_EQ(store->TotalBytes(), 4);
  store->Erase("b");
  EXPECT_EQ(store->TotalBytes(), 1);
  EXPECT_EQ(store->Describe(), "memory store");
}

TEST(MemoryStoreTest, GetReturnsAnIndependentCopy) {
  auto store = MemoryStore::Create();
  store->Set("a", std::string_view("abc"));
  std::optional<Buffer> value = store->Get("a");
  value->data()[0] = std::byte{'z'};
  EXPECT_EQ(Text(*store->Get("a")), "abc");
}

}  // namespace
}  // namespace tessera
