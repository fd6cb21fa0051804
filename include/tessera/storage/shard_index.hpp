// Sharding as a key-value adapter: a shard is one stored value that holds many inner
// chunks, each an encoded byte string, and an index saying where each one lies. This
// layer reads and writes that container over any Store, by byte range, and knows
// nothing of arrays or the inner chunks' codecs (the Zarr layer above decodes them).
//
//   ShardIndexLayout layout{.entries = 100, .checksum = true, .at_end = true};
//   // Reading: one ranged read for the index, then one per inner chunk a task needs.
//   std::optional<ShardIndex> index = ShardIndex::Read(store, key, layout);
//   if (index && !index->entry(7).empty()) index->ReadEntry(store, key, 7, buffer);
//   // Writing: inner chunks in any order, then the whole shard at once.
//   ShardBuilder builder;
//   builder.Start(layout, expected_bytes);    // reusable: each Start begins a new shard
//   builder.Add(7, encoded_chunk);            // an entry never added stays empty
//   store.Set(key, builder.Finish());
//
// The index is Zarr v3's sharding_indexed index: for each inner chunk, in C order of the
// shard's inner chunk grid, a pair of uint64 (offset, nbytes), 2^64 - 1 in both for an
// empty chunk; encoded little- or big-endian, optionally followed by its CRC-32C, and
// stored at the shard's start (offsets then count the index) or its end. A nested shard
// is a sub-range of an outer one: every call takes the range (ShardRange) it lies in.
//
// Errors: FormatError naming the key (and the entry) for an index that is truncated,
// fails its checksum, points outside the shard or into the index, or has overlapping
// chunks; StorageError from the store.
// Thread safety: ShardIndex and ShardIndexLayout are values; ShardBuilder is used by one
// thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/core/buffer.hpp"
#include "tessera/storage/store.hpp"

namespace tessera {

struct ShardIndexLayout {
  std::int64_t entries = 0;  // inner chunks per shard
  bool big_endian = false;   // byte order of the index's integers
  bool checksum = true;      // a CRC-32C follows the index
  bool at_end = true;        // the index is the shard's last bytes (else its first)

  // Bytes of the encoded index.
  std::int64_t IndexBytes() const { return 16 * entries + (checksum ? 4 : 0); }
};

// Where a shard lies: a whole value (size unknown until read: -1), or a byte range of
// one (a nested shard inside an outer shard).
struct ShardRange {
  std::int64_t offset = 0;
  std::int64_t size = -1;
};

struct ShardEntry {
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  std::uint64_t offset = kEmpty;  // from the start of the shard
  std::uint64_t nbytes = kEmpty;
  bool empty() const { return offset == kEmpty && nbytes == kEmpty; }
};

class ShardIndex {
 public:
  // Reads the index of the shard at `range` of `key`'s value with one ranged read and
  // validates it; nullopt when the value is absent (the whole shard is the fill value).
  static std::optional<ShardIndex> Read(const Store& store, const std::string& key,
                                        const ShardIndexLayout& layout, ShardRange range = {});
  // Decodes and validates an index read from a shard of `shard_size` bytes; `where`
  // names the shard in errors.
  static ShardIndex Decode(std::span<const std::byte> bytes, const ShardIndexLayout& layout,
                           std::int64_t shard_size, const std::string& where);

  const ShardEntry& entry(std::int64_t index) const {
    return entries_[static_cast<std::size_t>(index)];
  }
  std::int64_t size() const { return static_cast<std::int64_t>(entries_.size()); }
  // The shard's size in bytes and where it starts in its value.
  std::int64_t shard_size() const { return shard_size_; }
  std::int64_t shard_offset() const { return shard_offset_; }
  // The byte range of entry `index` inside the value (for a nested shard or a read).
  // REQUIRES: !entry(index).empty().
  ShardRange EntryRange(std::int64_t index) const;
  // Reads entry `index`'s bytes into `out` (resized) with one ranged read.
  // REQUIRES: !entry(index).empty().
  void ReadEntry(const Store& store, const std::string& key, std::int64_t index,
                 Buffer& out) const;

 private:
  std::vector<ShardEntry> entries_;
  std::int64_t shard_size_ = 0;
  std::int64_t shard_offset_ = 0;
};

class ShardBuilder {
 public:
  ShardBuilder() = default;
  explicit ShardBuilder(const ShardIndexLayout& layout) { Start(layout, 0); }
  // Starts a new shard of `layout`, forgetting any entries added; allocates room for
  // entries totalling `data_bytes` and the index up front (keeping a larger allocation),
  // so that Add never reallocates while they fit (a grown buffer briefly holds the old
  // one too).
  void Start(const ShardIndexLayout& layout, std::int64_t data_bytes);
  // Appends entry `index`'s encoded bytes. REQUIRES: Start was called; 0 <= index <
  // entries, each once.
  void Add(std::int64_t index, std::span<const std::byte> bytes);
  // True when no entry was added (zarr-python then writes no shard at all).
  bool empty() const { return added_ == 0; }
  // The whole shard, valid until the next Start; the builder keeps its buffers.
  std::span<const std::byte> Finish();
  // The most bytes a shard of entries totalling `data_bytes` takes.
  static std::int64_t ShardBytes(const ShardIndexLayout& layout, std::int64_t data_bytes) {
    return data_bytes + layout.IndexBytes();
  }

 private:
  ShardIndexLayout layout_;
  std::vector<ShardEntry> entries_;
  Buffer shard_;  // [index][data] or [data][index], the data appended as it comes
  std::int64_t data_bytes_ = 0;
  std::int64_t added_ = 0;
};

}  // namespace tessera
