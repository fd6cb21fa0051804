// to_zarr into a store (an object store's prefix, here a recording memory store standing
// in for one): the array's documents are written last, after a marker that says the
// prefix is Tessera's unfinished output; a store change failing at any point leaves the
// source unchanged and the target either without documents (no reader sees an array) or
// complete; a rerun replaces the leftover, a resume continues it; and a target that is a
// source, a group, or someone's other objects is refused before anything is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "tessera/api/array.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/plan/target_files.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera {
namespace {

// A memory store that logs every change ("set KEY", "erase KEY"), in order, and fails
// every change from the one numbered `fail_from` (from 0; -1: none) with a StorageError
// (the executor retries a task that fails so: a failure that lasts fails the run).
class RecordingStore final : public Store {
 public:
  std::optional<Buffer> Get(std::string_view key) const override { return base_.Get(key); }
  using Store::Set;
  void Set(std::string_view key, std::span<const std::byte> value) override {
    Change("set ", key);
    base_.Set(key, value);
  }
  bool Erase(std::string_view key) override {
    Change("erase ", key);
    return base_.Erase(key);
  }
  std::vector<std::string> List(std::string_view prefix) const override {
    return base_.List(prefix);
  }
  std::optional<std::int64_t> SizeOf(std::string_view key) const override {
    return base_.SizeOf(key);
  }
  std::string Describe() const override { return "recording store"; }

  void FailFrom(std::int64_t change) {
    const std::lock_guard lock(mutex_);
    fail_from_ = change;
    changes_ = 0;
    log_.clear();
  }
  std::vector<std::string> log() const {
    const std::lock_guard lock(mutex_);
    return log_;
  }
  std::int64_t changes() const {
    const std::lock_guard lock(mutex_);
    return changes_;
  }

 private:
  void Change(const char* what, std::string_view key) {
    const std::lock_guard lock(mutex_);
    const std::int64_t change = changes_++;
    if (fail_from_ >= 0 && change >= fail_from_) {
      throw StorageError("injected failure of change " + std::to_string(change) + " (" + what +
                         std::string(key) + ")");
    }
    log_.push_back(what + std::string(key));
  }

  MemoryStore base_;
  mutable std::mutex mutex_;
  std::int64_t fail_from_ = -1;   // GUARDED_BY(mutex_)
  std::int64_t changes_ = 0;      // GUARDED_BY(mutex_)
  std::vector<std::string> log_;  // GUARDED_BY(mutex_)
};

Spec TestSpec() {
  Spec spec;
  spec.allowed_mem = 64'000'000;
  spec.max_workers = 2;
  return spec;
}

NDArray Values(double offset) {
  NDArray values({40, 30}, float64);
  const std::span<double> data = values.mutable_data<double>();
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = offset + static_cast<double>(i);
  return values;
}

bool HasDocuments(const Store& store, const std::string& path) {
  return store.Contains(JoinKey(path, "zarr.json")) || store.Contains(JoinKey(path, ".zarray"));
}

std::vector<std::string> KeysUnder(const Store& store, const std::string& path) {
  return store.List(path + "/");
}

// Writes `values` to `path` of `store` (v3, chunks 10 x 10).
void Write(const std::shared_ptr<Store>& store, const std::string& path, const NDArray& values,
           ToZarrOptions options = {}) {
  asarray(values, {10, 10}, TestSpec()).to_zarr(store, path, options);
}

TEST(StoreTargetTest, DocumentsComeLastAfterTheMarkerWhichGoesAfterThem) {
  auto store = std::make_shared<RecordingStore>();
  Write(store, "out", Values(0));
  const std::vector<std::string> log = store->log();
  const auto at = [&log](const std::string& entry) {
    return std::find(log.begin(), log.end(), entry) - log.begin();
  };
  const auto marker = std::string("out/") + kStorePartialMarkerName;
  ASSERT_LT(at("set " + marker), static_cast<std::ptrdiff_t>(log.size()));
  EXPECT_EQ(at("set " + marker), 0) << "the marker goes first";
  const auto documents = at("set out/zarr.json");
  for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(log.size()); ++k) {
    if (log[static_cast<std::size_t>(k)].starts_with("set out/c/")) {
      EXPECT_LT(k, documents) << "chunk written after the documents: "
                              << log[static_cast<std::size_t>(k)];
    }
  }
  EXPECT_EQ(at("erase " + marker), documents + 1) << "the marker goes right after them";
  EXPECT_FALSE(store->Contains(marker));
  EXPECT_EQ(ZarrArray::Open(store, "out").Read(), Values(0));
}

// An overwrite failing from each of its store changes on, in turn: the source never
// changes; the target has no documents, or is a complete array (the old one, when the
// failure came before the marker; the new one, when only the marker's removal failed); a
// rerun replaces the leftover without overwrite, and a resume continues it.
TEST(StoreTargetTest, AFailureAtEveryChangeLeavesNoArrayThatLooksComplete) {
  auto probe = std::make_shared<RecordingStore>();
  Write(probe, "out", Values(0));
  probe->FailFrom(-1);
  Write(probe, "out", Values(1));
  const std::int64_t changes = probe->changes();
  ASSERT_GT(changes, 12);
  for (std::int64_t fail_at = 0; fail_at < changes; ++fail_at) {
    SCOPED_TRACE("failing change " + std::to_string(fail_at));
    auto store = std::make_shared<RecordingStore>();
    Write(store, "src", Values(5));
    Write(store, "out", Values(0));
    const Array source = from_zarr(store, "src", TestSpec());
    store->FailFrom(fail_at);
    const Array doubled = source * 2.0 - 10.0;
    bool failed = false;
    try {
      doubled.to_zarr(store, "out");
    } catch (const StorageError& error) {
      failed = true;
      EXPECT_NE(std::string(error.what()).find("injected failure"), std::string::npos);
    }
    store->FailFrom(-1);
    EXPECT_EQ(ZarrArray::Open(store, "src").Read(), Values(5));
    const NDArray expected = doubled.compute();
    if (HasDocuments(*store, "out")) {
      const NDArray found = ZarrArray::Open(store, "out").Read();
      EXPECT_TRUE(found == expected || (failed && found == Values(0)));
    }
    if (!failed) continue;
    ToZarrOptions again;
    again.overwrite = false;  // a leftover of Tessera's own needs no overwrite
    again.resume = fail_at % 2 == 0;
    if (HasDocuments(*store, "out")) again.overwrite = true;  // complete: an array now
    doubled.to_zarr(store, "out", again);
    EXPECT_EQ(ZarrArray::Open(store, "out").Read(), expected);
    EXPECT_FALSE(store->Contains(std::string("out/") + kStorePartialMarkerName));
  }
}

// Writes "src" of `store`, then "src" + 1 to `target` in a run that fails after 3 of its
// 12 chunks (the marker, 3 documents to remove, the marker again, then chunks); returns
// the array that run wrote.
Array WriteInterrupted(const std::shared_ptr<RecordingStore>& store, const std::string& target) {
  Write(store, "src", Values(3));
  const Array y = from_zarr(store, "src", TestSpec()) + 1.0;
  store->FailFrom(8);
  EXPECT_THROW(y.to_zarr(store, target), StorageError);
  store->FailFrom(-1);
  return y;
}

TEST(StoreTargetTest, AResumeWritesOnlyTheChunksNotYetWritten) {
  auto store = std::make_shared<RecordingStore>();
  const Array y = WriteInterrupted(store, "out");
  const std::vector<std::string> kept = KeysUnder(*store, "out");
  const auto chunks_kept = std::count_if(
      kept.begin(), kept.end(), [](const std::string& key) { return key.starts_with("out/c/"); });
  ASSERT_GT(chunks_kept, 0);
  ASSERT_FALSE(HasDocuments(*store, "out"));
  ToZarrOptions resume;
  resume.resume = true;
  y.to_zarr(store, "out", resume);
  const std::vector<std::string> log = store->log();
  const auto chunk_writes = std::count_if(log.begin(), log.end(), [](const std::string& entry) {
    return entry.starts_with("set out/c/");
  });
  EXPECT_EQ(chunk_writes, 12 - chunks_kept);  // 4 x 3 chunks in all
  EXPECT_EQ(ZarrArray::Open(store, "out").Read(), y.compute());

  // Resuming other work is refused, naming why.
  store->FailFrom(8);
  EXPECT_THROW(y.to_zarr(store, "other"), StorageError);
  store->FailFrom(-1);
  const Array z = from_zarr(store, "src", TestSpec()) + 2.0;
  try {
    z.rechunk({20, 30}).to_zarr(store, "other", resume);
    ADD_FAILURE() << "a resume of other work ran";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("cannot resume"), std::string::npos) << error.what();
  }
}

TEST(StoreTargetTest, AResumeIsRefusedWhenASourceChunkChanged) {
  auto store = std::make_shared<RecordingStore>();
  WriteInterrupted(store, "out");
  // A v3 chunk key holds '/' ("src/c/1/1"): its removal changes the source's fingerprint.
  ASSERT_TRUE(store->Erase("src/c/1/1"));
  ToZarrOptions resume;
  resume.resume = true;
  const Array changed = from_zarr(store, "src", TestSpec()) + 1.0;
  try {
    changed.to_zarr(store, "out", resume);
    ADD_FAILURE() << "resumed over chunks computed from another source";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("the source differs"), std::string::npos)
        << error.what();
  }
  EXPECT_FALSE(HasDocuments(*store, "out"));
}

TEST(StoreTargetTest, RefusesATargetThatIsOrHoldsOrLiesInsideASource) {
  auto store = std::make_shared<MemoryStore>();
  Write(store, "data/a", Values(1));
  const Array source = from_zarr(store, "data/a", TestSpec());
  for (const std::string target : {"data/a", "data", "data/a/inner"}) {
    SCOPED_TRACE(target);
    try {
      (source + 1.0).to_zarr(store, target);
      ADD_FAILURE() << "written into its own source";
    } catch (const InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find("a source of this run"), std::string::npos)
          << error.what();
    }
    EXPECT_EQ(ZarrArray::Open(store, "data/a").Read(), Values(1));
  }
  // A sibling whose name starts alike is no part of the source.
  (source + 1.0).to_zarr(store, "data/a2");
  EXPECT_EQ(ZarrArray::Open(store, "data/a2").Read(), Values(2));
  EXPECT_EQ(ZarrArray::Open(store, "data/a").Read(), Values(1));
}

TEST(StoreTargetTest, RefusesGroupsOtherObjectsAndAnArrayWhenNotOverwriting) {
  auto store = std::make_shared<MemoryStore>();
  CreateZarrGroup(*store, "group", 3);
  Write(store, "group/member", Values(1));
  store->Set("loose/notes.txt", std::string_view("someone's notes"));
  Write(store, "kept", Values(4));
  const Array x = asarray(Values(9), {10, 10}, TestSpec());
  const auto refused = [&](const std::string& path, const ToZarrOptions& options,
                           const std::string& says) {
    SCOPED_TRACE(path);
    try {
      x.to_zarr(store, path, options);
      ADD_FAILURE() << "written";
    } catch (const InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find(says), std::string::npos) << error.what();
    }
  };
  refused("group", {}, "is a Zarr group (arrays: member)");
  refused("loose", {}, "holds objects that are not a Zarr array (notes.txt)");
  ToZarrOptions keep;
  keep.overwrite = false;
  refused("kept", keep, "already exists");
  EXPECT_EQ(ZarrArray::Open(store, "group/member").Read(), Values(1));
  EXPECT_EQ(store->Get("loose/notes.txt")->size(), 15);
  EXPECT_EQ(ZarrArray::Open(store, "kept").Read(), Values(4));
  // A group member is written inside the group, and the group stays one.
  x.to_zarr(store, "group/new");
  EXPECT_EQ(ZarrArray::Open(store, "group/new").Read(), Values(9));
  EXPECT_TRUE(IsZarrGroup(*store, "group"));
}

}  // namespace
}  // namespace tessera
