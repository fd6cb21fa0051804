// Store: a key -> bytes map, the bottom of Tessera's storage (DESIGN.md "Storage").
//
//   auto store = tessera::DirectoryStore::Open("/data/t2m.zarr");
//   store->Set("0.0", bytes);             // atomic: readers see the old or the new value
//   std::optional<Buffer> chunk = store->Get("0.0");   // nullopt when absent
//   store->List("");                      // every key, '/'-separated, sorted
//   store->ListWithSizes("c/");           // keys under "c/" with their sizes, one listing
//   store->EraseKeys(keys);               // many removals at once (parallel on S3)
//   store->ListFolder("sub");             // the names one level below "sub/"
//   store->ReadRange("shard", -16, out);  // the last 16 bytes (a shard's index)
//
// Keys are relative, '/'-separated paths. ValidateKey() rejects keys that could
// escape a store's root: empty, absolute ("/x"), "." or ".." segments, empty
// segments ("a//b"), backslashes and NUL bytes. Every implementation calls it and
// throws InvalidArgument for a bad key.
//
// Thread safety: every method may be called concurrently from many threads; a Set
// racing a Get of the same key yields either the whole old or the whole new value.
// I/O failures throw StorageError naming the store and key.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/buffer.hpp"

namespace tessera {

// One value of a store opened for several ranged reads, all of the same version of it
// (a shard's index, then its inner chunks, even while a writer replaces the value).
// Thread-safe.
class OpenedValue {
 public:
  virtual ~OpenedValue() = default;
  // The value's size in bytes.
  virtual std::int64_t size() const = 0;
  // Reads out.size() bytes from byte `start` (REQUIRES: start + out.size() <= size()).
  virtual void ReadAt(std::int64_t start, std::span<std::byte> out) const = 0;
  // Store::ReadRange of this value (`described_key` names it in errors): returns size().
  std::int64_t ReadRange(std::int64_t offset, std::span<std::byte> out,
                         const std::string& described_key) const;
};

// A key with the size of its value, as Store::ListWithSizes lists them.
struct ListedKey {
  std::string key;
  std::int64_t size = 0;  // bytes

  bool operator==(const ListedKey&) const = default;
};

class Store {
 public:
  virtual ~Store() = default;

  // The value of `key`, or nullopt when absent.
  virtual std::optional<Buffer> Get(std::string_view key) const = 0;
  // Reads the value of `key` into memory the caller hands over once the size is known:
  // `destination(size)` returns exactly `size` writable bytes. A value larger than
  // `max_size` is not read and `destination` is not called, so a caller bounds its
  // allocations by what it expects (a corrupt 100 GB chunk is refused unread) and can
  // read straight into its own memory. Returns the value's size, or nullopt when
  // absent. The size and the bytes come from one read of one value. The default goes
  // through Get().
  using Destination = std::function<std::span<std::byte>(std::int64_t size)>;
  virtual std::optional<std::int64_t> ReadBounded(std::string_view key, std::int64_t max_size,
                                                  const Destination& destination) const;
  // ReadBounded into `out`, reusing its allocation when large enough (a thread reading
  // many chunks then touches fresh memory once).
  std::optional<std::int64_t> GetInto(std::string_view key, Buffer& out,
                                      std::int64_t max_size) const;
  // Reads out.size() bytes of `key`'s value from byte `offset` into `out`, the rest of
  // the value unread: how a shard's index and one inner chunk are read. A negative
  // `offset` counts from the value's end (-16: its last 16 bytes). Returns the value's
  // whole size, or nullopt when absent; StorageError naming the key and the sizes when
  // the range does not lie inside the value. The size and the bytes come from one read
  // of one value. The default goes through Get(); a directory reads the range alone.
  virtual std::optional<std::int64_t> ReadRange(std::string_view key, std::int64_t offset,
                                                std::span<std::byte> out) const;
  // `key`'s value opened once for many ReadRange-like reads (PinnedValueStore); nullptr
  // when it is absent, or when the store reads ranges no cheaper that way (the default:
  // each ReadRange is then a read of its own).
  virtual std::unique_ptr<OpenedValue> OpenForReads(std::string_view key) const;
  // Stores `value` under `key`, replacing any old value atomically.
  virtual void Set(std::string_view key, std::span<const std::byte> value) = 0;
  // Removes `key`; returns false when it was absent.
  virtual bool Erase(std::string_view key) = 0;
  // Removes every key of `keys` (absent ones too are fine), many at once where the store
  // can (an object store sends its DELETEs in parallel); returns how many were removed.
  // A store that cannot tell an absent key from a removed one without asking first (S3
  // answers a DELETE of nothing with success) counts every key it did not find absent,
  // so the count is exact for directories and memory, at most keys.size() for S3. Every
  // key is validated (InvalidArgument) before any is removed; on an I/O failure
  // (StorageError) some keys may be gone and others not. The default erases one by one.
  virtual std::int64_t EraseKeys(std::span<const std::string> keys);
  // Keys starting with `prefix` (a plain string prefix), sorted.
  virtual std::vector<std::string> List(std::string_view prefix) const = 0;
  // List with each key's size: what List then SizeOf of each key gives, in one pass where
  // the store can (an object store's listing carries the sizes; a directory's walk stats
  // the files it meets), so sizing N keys costs no N requests. Sorted by key. A key
  // removed between the listing and its sizing is left out. The default goes through
  // List and SizeOf.
  virtual std::vector<ListedKey> ListWithSizes(std::string_view prefix) const;
  // One level of the key hierarchy: the names directly below `folder` ("" for the root,
  // else a key prefix without the trailing '/'), sorted, each once: the next segment of
  // every key under it, whether it is a key itself (".zarray") or leads to longer keys
  // ("sub" of "sub/.zgroup"). Zarr groups are listed this way (ListZarrGroup) without
  // reading every chunk key. The default goes through List(); a store that can list one
  // level (a directory) overrides it. Nothing below `folder`: an empty list.
  virtual std::vector<std::string> ListFolder(std::string_view folder) const;
  // Stored size of `key` in bytes without reading it; nullopt when absent.
  virtual std::optional<std::int64_t> SizeOf(std::string_view key) const = 0;

  bool Contains(std::string_view key) const { return SizeOf(key).has_value(); }
  void Set(std::string_view key, std::string_view text) {
    Set(key, std::as_bytes(std::span<const char>(text.data(), text.size())));
  }
  // Get() of a small text value (a marker, a document) as a string; nullopt when absent.
  std::optional<std::string> GetText(std::string_view key) const;
  // Human description for messages: a path, or "memory store".
  virtual std::string Describe() const = 0;
  // True when Set keeps a copy of the value in this process's memory (a memory store),
  // so that a write costs the writer that copy too (memory projections count it).
  virtual bool HoldsValuesInMemory() const { return false; }
  // Where another process opens the same store (a directory's absolute path), so that a
  // plan reading or writing it can be sent there (plan/internal/graph_codec.hpp);
  // nullopt: nowhere (the values live in this process's memory).
  virtual std::optional<std::string> Location() const { return std::nullopt; }
  // Describe() joined with `key`, e.g. "/data/a.zarr/.zarray".
  std::string DescribeKey(std::string_view key) const;
};

// A read-only view of `base` in which `key`'s value is opened once (Store::OpenForReads), so
// that every ReadRange and SizeOf of it reads that one version without opening it
// again; other keys go to `base`. Set and Erase throw. Lives within one read of a shard.
class PinnedValueStore final : public Store {
 public:
  PinnedValueStore(const Store& base, std::string_view key);

  std::optional<Buffer> Get(std::string_view key) const override { return base_.Get(key); }
  std::optional<std::int64_t> ReadBounded(std::string_view key, std::int64_t max_size,
                                          const Destination& destination) const override {
    return base_.ReadBounded(key, max_size, destination);
  }
  std::optional<std::int64_t> ReadRange(std::string_view key, std::int64_t offset,
                                        std::span<std::byte> out) const override;
  void Set(std::string_view key, std::span<const std::byte> value) override;
  bool Erase(std::string_view key) override;
  std::vector<std::string> List(std::string_view prefix) const override {
    return base_.List(prefix);
  }
  std::vector<ListedKey> ListWithSizes(std::string_view prefix) const override {
    return base_.ListWithSizes(prefix);
  }
  std::optional<std::int64_t> SizeOf(std::string_view key) const override;
  std::string Describe() const override { return base_.Describe(); }
  bool HoldsValuesInMemory() const override { return base_.HoldsValuesInMemory(); }

 private:
  const Store& base_;
  std::string key_;
  std::unique_ptr<OpenedValue> value_;  // null: every read goes to base_
};

// Throws InvalidArgument when `key` is not a safe relative key (see above).
void ValidateKey(std::string_view key);

// The start of the range ReadRange reads: `offset` (negative: from the end) within a
// value of `size` bytes, checked to hold `length` bytes; StorageError naming
// `described_key` otherwise. For stores implementing ReadRange.
std::int64_t RangeStart(std::int64_t offset, std::int64_t length, std::int64_t size,
                        const std::string& described_key);

// Joins a prefix (possibly empty) and a key with '/'.
std::string JoinKey(std::string_view prefix, std::string_view key);

}  // namespace tessera
