// MemoryStore: a Store held in this process's memory (the RAM tier).
// Thread-safe (one mutex; values are copied in and out). Used by tests as the
// reference store and by rechunk for in-memory intermediates.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "tessera/storage/store.hpp"

namespace tessera {

class MemoryStore final : public Store {
 public:
  static std::shared_ptr<MemoryStore> Create() { return std::make_shared<MemoryStore>(); }

  std::optional<Buffer> Get(std::string_view key) const override;
  std::optional<std::int64_t> ReadRange(std::string_view key, std::int64_t offset,
                                        std::span<std::byte> out) const override;
  std::optional<std::int64_t> ReadBounded(std::string_view key, std::int64_t max_size,
                                          const Destination& destination) const override;
  using Store::Set;
  void Set(std::string_view key, std::span<const std::byte> value) override;
  bool Erase(std::string_view key) override;
  std::vector<std::string> List(std::string_view prefix) const override;
  std::vector<ListedKey> ListWithSizes(std::string_view prefix) const override;
  std::optional<std::int64_t> SizeOf(std::string_view key) const override;
  std::string Describe() const override { return "memory store"; }
  bool HoldsValuesInMemory() const override { return true; }

  // Total bytes of all values.
  std::int64_t TotalBytes() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Buffer, std::less<>> values_;  // GUARDED_BY(mutex_)
  std::int64_t total_bytes_ = 0;                       // GUARDED_BY(mutex_)
};

}  // namespace tessera
