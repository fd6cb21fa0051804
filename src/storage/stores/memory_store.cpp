#include "tessera/storage/memory_store.hpp"

#include <cstring>
#include <utility>

namespace tessera {

std::optional<Buffer> MemoryStore::Get(std::string_view key) const {
  ValidateKey(key);
  std::lock_guard lock(mutex_);
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second.Clone();
}

std::optional<std::int64_t> MemoryStore::ReadBounded(std::string_view key, std::int64_t max_size,
                                                     const Destination& destination) const {
  ValidateKey(key);
  std::lock_guard lock(mutex_);
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  const Buffer& value = it->second;
  if (value.size() > max_size) return value.size();
  const std::span<std::byte> out = destination(value.size());
  if (!value.empty()) std::memcpy(out.data(), value.data(), out.size());
  return value.size();
}

std::optional<std::int64_t> MemoryStore::ReadRange(std::string_view key, std::int64_t offset,
                                                   std::span<std::byte> out) const {
  ValidateKey(key);
  std::lock_guard lock(mutex_);
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  const Buffer& value = it->second;
  const auto length = static_cast<std::int64_t>(out.size());
  const std::int64_t start = RangeStart(offset, length, value.size(), DescribeKey(key));
  if (length > 0) std::memcpy(out.data(), value.data() + start, out.size());
  return value.size();
}

void MemoryStore::Set(std::string_view key, std::span<const std::byte> value) {
  ValidateKey(key);
  // Copy outside the lock: readers of other keys are not held up by a large value.
  Buffer copy = Buffer::CopyOf(value);
  Buffer old;
  {
    std::lock_guard lock(mutex_);
    auto it = values_.find(key);
    if (it == values_.end()) {
      total_bytes_ += copy.size();
      values_.emplace(std::string(key), std::move(copy));
    } else {
      total_bytes_ += copy.size() - it->second.size();
      old = std::exchange(it->second, std::move(copy));
    }
  }
  // `old` is freed here, after the lock is released.
}

bool MemoryStore::Erase(std::string_view key) {
  ValidateKey(key);
  Buffer old;
  std::lock_guard lock(mutex_);
  auto it = values_.find(key);
  if (it == values_.end()) return false;
  total_bytes_ -= it->second.size();
  old = std::move(it->second);
  values_.erase(it);
  return true;
}

std::vector<std::string> MemoryStore::List(std::string_view prefix) const {
  std::vector<std::string> keys;
  std::lock_guard lock(mutex_);
  for (auto it = values_.lower_bound(prefix); it != values_.end() && it->first.starts_with(prefix);
       ++it) {
    keys.push_back(it->first);
  }
  return keys;
}

std::vector<ListedKey> MemoryStore::ListWithSizes(std::string_view prefix) const {
  std::vector<ListedKey> listed;
  std::lock_guard lock(mutex_);
  for (auto it = values_.lower_bound(prefix); it != values_.end() && it->first.starts_with(prefix);
       ++it) {
    listed.push_back({it->first, it->second.size()});
  }
  return listed;
}

std::optional<std::int64_t> MemoryStore::SizeOf(std::string_view key) const {
  ValidateKey(key);
  std::lock_guard lock(mutex_);
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second.size();
}

std::int64_t MemoryStore::TotalBytes() const {
  std::lock_guard lock(mutex_);
  return total_bytes_;
}

}  // namespace tessera
