#include "tessera/storage/shard_index.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "tessera/core/errors.hpp"
#include "tessera/storage/codec.hpp"

namespace tessera {
namespace {

std::uint64_t LoadUint64(const std::byte* in, bool big_endian) {
  std::uint64_t value = 0;
  for (int byte = 0; byte < 8; ++byte) {
    const int shift = big_endian ? 8 * (7 - byte) : 8 * byte;
    value |= std::to_integer<std::uint64_t>(in[byte]) << shift;
  }
  return value;
}

void StoreUint64(std::uint64_t value, std::byte* out, bool big_endian) {
  for (int byte = 0; byte < 8; ++byte) {
    const int shift = big_endian ? 8 * (7 - byte) : 8 * byte;
    out[byte] = static_cast<std::byte>((value >> shift) & 0xFFu);
  }
}

std::uint32_t LoadUint32Le(const std::byte* in) {
  std::uint32_t value = 0;
  for (int byte = 0; byte < 4; ++byte) value |= std::to_integer<std::uint32_t>(in[byte]) << (8 * byte);
  return value;
}

// The index's CRC-32C after its pairs, little-endian (the crc32c codec's framing).
void StoreCrc32c(std::span<const std::byte> pairs, std::byte* out) {
  const std::uint32_t crc = Crc32cOf(pairs);
  for (int byte = 0; byte < 4; ++byte) out[byte] = static_cast<std::byte>((crc >> (8 * byte)) & 0xFFu);
}

std::string Where(const Store& store, const std::string& key, const ShardRange& range) {
  std::string where = store.DescribeKey(key);
  if (range.size >= 0) {
    where += " (the nested shard at bytes " + std::to_string(range.offset) + ".." +
             std::to_string(range.offset + range.size) + ")";
  }
  return where;
}

}  // namespace

std::optional<ShardIndex> ShardIndex::Read(const Store& store, const std::string& key,
                                           const ShardIndexLayout& layout, ShardRange range) {
  const std::int64_t index_bytes = layout.IndexBytes();
  // Allocated once the shard is known to hold the index: an absent or short shard of a
  // layout with very many entries allocates nothing.
  Buffer bytes;
  std::optional<std::int64_t> value_size;
  std::int64_t shard_size = range.size;
  if (range.size < 0) {
    // A whole value: read the index from its end or start; the read says the size.
    const std::optional<std::int64_t> size = store.SizeOf(key);
    if (!size) return std::nullopt;
    if (*size < index_bytes) {
      throw FormatError(store.DescribeKey(key) + ": the shard is " + std::to_string(*size) +
                        " bytes, shorter than its index of " + std::to_string(index_bytes) +
                        " bytes (" + std::to_string(layout.entries) +
                        " inner chunks): the shard is truncated");
    }
    bytes.ResizeUninitialized(index_bytes);
    value_size = store.ReadRange(key, layout.at_end ? -index_bytes : 0, bytes.span());
    if (!value_size) return std::nullopt;
    shard_size = *value_size;
    range.offset = 0;
  } else {
    if (range.size < index_bytes) {
      throw FormatError(Where(store, key, range) + ": the shard is " +
                        std::to_string(range.size) + " bytes, shorter than its index of " +
                        std::to_string(index_bytes) + " bytes: the shard is truncated");
    }
    bytes.ResizeUninitialized(index_bytes);
    const std::int64_t start = layout.at_end ? range.offset + range.size - index_bytes : range.offset;
    value_size = store.ReadRange(key, start, bytes.span());
    if (!value_size) {
      throw StorageError(store.DescribeKey(key) + ": the value vanished while being read");
    }
  }
  ShardIndex index = Decode(bytes.span(), layout, shard_size, Where(store, key, range));
  index.shard_offset_ = range.offset;
  return index;
}

ShardIndex ShardIndex::Decode(std::span<const std::byte> bytes, const ShardIndexLayout& layout,
                              std::int64_t shard_size, const std::string& where) {
  const std::int64_t index_bytes = layout.IndexBytes();
  if (static_cast<std::int64_t>(bytes.size()) != index_bytes) {
    throw FormatError(where + ": shard index is " + std::to_string(bytes.size()) +
                      " bytes, expected " + std::to_string(index_bytes));
  }
  if (shard_size < index_bytes) {
    // The data bytes below are counted from the shard's size less its index.
    throw FormatError(where + ": the shard is " + std::to_string(shard_size) +
                      " bytes, shorter than its index of " + std::to_string(index_bytes) +
                      " bytes: the shard is truncated");
  }
  std::span<const std::byte> pairs = bytes;
  if (layout.checksum) {
    pairs = bytes.first(bytes.size() - 4);
    const std::uint32_t stored = LoadUint32Le(bytes.data() + pairs.size());
    const std::uint32_t computed = Crc32cOf(pairs);
    if (stored != computed) {
      throw FormatError(where + ": shard index: crc32c checksum mismatch (stored " +
                        std::to_string(stored) + ", computed " + std::to_string(computed) +
                        " over " + std::to_string(pairs.size()) +
                        " bytes): the index is corrupt");
    }
  }
  ShardIndex index;
  index.shard_size_ = shard_size;
  index.entries_.resize(static_cast<std::size_t>(layout.entries));
  // The bytes inner chunks may occupy: the shard less its index.
  const auto data_begin = static_cast<std::uint64_t>(layout.at_end ? 0 : index_bytes);
  const auto data_end =
      static_cast<std::uint64_t>(layout.at_end ? shard_size - index_bytes : shard_size);
  std::vector<std::int64_t> stored;
  for (std::int64_t entry = 0; entry < layout.entries; ++entry) {
    ShardEntry& slot = index.entries_[static_cast<std::size_t>(entry)];
    slot.offset = LoadUint64(pairs.data() + 16 * entry, layout.big_endian);
    slot.nbytes = LoadUint64(pairs.data() + 16 * entry + 8, layout.big_endian);
    if (slot.empty()) continue;
    const bool inside = slot.offset >= data_begin && slot.offset <= data_end &&
                        slot.nbytes <= data_end - slot.offset;
    if (!inside) {
      throw FormatError(where + ": shard index entry " + std::to_string(entry) +
                        " (offset " + std::to_string(slot.offset) + ", " +
                        std::to_string(slot.nbytes) + " bytes) points outside the " +
                        std::to_string(data_end - data_begin) + " data bytes of the " +
                        std::to_string(shard_size) + "-byte shard (bytes " +
                        std::to_string(data_begin) + ".." + std::to_string(data_end) +
                        "): the shard is truncated or its index is corrupt");
    }
    if (slot.nbytes > 0) stored.push_back(entry);
  }
  std::ranges::sort(stored, [&](std::int64_t a, std::int64_t b) {
    return index.entry(a).offset < index.entry(b).offset;
  });
  for (std::size_t position = 1; position < stored.size(); ++position) {
    const ShardEntry& previous = index.entry(stored[position - 1]);
    const ShardEntry& next = index.entry(stored[position]);
    if (previous.offset + previous.nbytes > next.offset) {
      throw FormatError(where + ": shard index entries " + std::to_string(stored[position - 1]) +
                        " (bytes " + std::to_string(previous.offset) + ".." +
                        std::to_string(previous.offset + previous.nbytes) + ") and " +
                        std::to_string(stored[position]) + " (bytes " +
                        std::to_string(next.offset) + ".." +
                        std::to_string(next.offset + next.nbytes) +
                        ") overlap: the index is corrupt");
    }
  }
  return index;
}

ShardRange ShardIndex::EntryRange(std::int64_t index) const {
  const ShardEntry& slot = entry(index);
  return ShardRange{shard_offset_ + static_cast<std::int64_t>(slot.offset),
                    static_cast<std::int64_t>(slot.nbytes)};
}

void ShardIndex::ReadEntry(const Store& store, const std::string& key, std::int64_t index,
                           Buffer& out) const {
  const ShardRange range = EntryRange(index);
  out.ResizeUninitialized(range.size);
  if (range.size == 0) return;
  if (!store.ReadRange(key, range.offset, out.span())) {
    throw StorageError(store.DescribeKey(key) + ": the shard vanished while being read");
  }
}

void ShardBuilder::Start(const ShardIndexLayout& layout, std::int64_t data_bytes) {
  layout_ = layout;
  entries_.assign(static_cast<std::size_t>(layout.entries), ShardEntry{});
  data_bytes_ = 0;
  added_ = 0;
  const std::int64_t total = data_bytes + layout_.IndexBytes();
  if (shard_.capacity() < total) shard_.ResizeUninitialized(total);
}

void ShardBuilder::Add(std::int64_t index, std::span<const std::byte> bytes) {
  const std::int64_t base = layout_.at_end ? 0 : layout_.IndexBytes();
  const std::int64_t used = base + data_bytes_;
  const std::int64_t needed = used + static_cast<std::int64_t>(bytes.size()) +
                              (layout_.at_end ? layout_.IndexBytes() : 0);
  if (needed > shard_.capacity()) {
    // Grows by doubling, keeping what was appended.
    Buffer grown(std::max(needed, 2 * shard_.capacity()));
    if (used > 0) std::memcpy(grown.data(), shard_.data(), static_cast<std::size_t>(used));
    shard_ = std::move(grown);
  }
  shard_.ResizeUninitialized(shard_.capacity());
  if (!bytes.empty()) std::memcpy(shard_.data() + used, bytes.data(), bytes.size());
  entries_[static_cast<std::size_t>(index)] =
      ShardEntry{static_cast<std::uint64_t>(used), bytes.size()};
  data_bytes_ += static_cast<std::int64_t>(bytes.size());
  ++added_;
}

std::span<const std::byte> ShardBuilder::Finish() {
  const std::int64_t index_bytes = layout_.IndexBytes();
  const std::int64_t total = data_bytes_ + index_bytes;
  if (shard_.capacity() < total) {
    // Only an index at the end can still be missing its room (Add reserves the rest).
    Buffer grown(total);
    if (data_bytes_ > 0) {
      std::memcpy(grown.data(), shard_.data(),
                  static_cast<std::size_t>(layout_.at_end ? data_bytes_ : index_bytes + data_bytes_));
    }
    shard_ = std::move(grown);
  }
  shard_.ResizeUninitialized(shard_.capacity());
  std::byte* index = shard_.data() + (layout_.at_end ? data_bytes_ : 0);
  for (std::size_t entry = 0; entry < entries_.size(); ++entry) {
    StoreUint64(entries_[entry].offset, index + 16 * entry, layout_.big_endian);
    StoreUint64(entries_[entry].nbytes, index + 16 * entry + 8, layout_.big_endian);
  }
  if (layout_.checksum) {
    const std::span<const std::byte> pairs(index, static_cast<std::size_t>(16 * layout_.entries));
    StoreCrc32c(pairs, index + 16 * layout_.entries);
  }
  shard_.Truncate(total);
  return shard_.span();
}

}  // namespace tessera
