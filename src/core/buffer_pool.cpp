#include "tessera/core/buffer_pool.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "buffer_pool_internal.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/spec.hpp"

// Under AddressSanitizer retained blocks are poisoned, so a Buffer used after its free
// is still reported although the pool did not free its memory; so are the bytes of a
// block past the size asked for.
#if defined(__SANITIZE_ADDRESS__) && __has_include(<sanitizer/asan_interface.h>)
#include <sanitizer/asan_interface.h>
#define TESSERA_POISON(data, bytes) ASAN_POISON_MEMORY_REGION(data, bytes)
#define TESSERA_UNPOISON(data, bytes) ASAN_UNPOISON_MEMORY_REGION(data, bytes)
#else
#define TESSERA_POISON(data, bytes) static_cast<void>(0)
#define TESSERA_UNPOISON(data, bytes) static_cast<void>(0)
#endif

namespace tessera {
namespace {

using internal::BufferBlock;

// Cache-line alignment: lets SIMD codecs and kernels use aligned loads.
constexpr std::size_t kAlignment = 64;
// Buffers of at least 4 MiB (a typical chunk) are aligned to 2 MiB and asked to be
// backed by transparent huge pages. First-touch page faults otherwise dominate chunk
// I/O: touching 800 MB of fresh 4 KiB pages took 3-4 s on the machines we measure
// on, 0.1 s with huge pages (numpy does the same for its large arrays).
constexpr std::size_t kHugePageSize = std::size_t{2} << 20;
constexpr std::size_t kHugePageThreshold = std::size_t{4} << 20;
// The default capacity: at most 256 MiB (a few chunks per worker of a typical 10-100 MB
// chunk) and at most 1/16 of the memory this process may use.
constexpr std::int64_t kDefaultCapacityCap = std::int64_t{256} << 20;
constexpr std::int64_t kDefaultCapacityRamShare = 16;
// A block is reused for a request when at most this fraction of it would be wasted
// (1/8): compressed chunks of one array differ a little in size, and each wasted byte
// is memory no account sees.
constexpr std::int64_t kMaxWasteShare = 8;

std::size_t AlignmentFor(std::size_t bytes) {
  return bytes >= kHugePageThreshold ? kHugePageSize : kAlignment;
}

// The bytes a fresh allocation of `size` really takes.
std::int64_t RoundedSize(std::int64_t size) {
  const std::size_t bytes = static_cast<std::size_t>(size);
  const std::size_t alignment = AlignmentFor(bytes);
  return static_cast<std::int64_t>((bytes + alignment - 1) / alignment * alignment);
}

BufferBlock AllocateFresh(std::int64_t size) {
  const std::int64_t rounded = RoundedSize(size);
  const std::size_t bytes = static_cast<std::size_t>(rounded);
  const std::size_t alignment = AlignmentFor(bytes);
  void* memory = std::aligned_alloc(alignment, bytes);
  if (memory == nullptr) throw std::bad_alloc();
  if (alignment == kHugePageSize) {
    // Advice only: without THP support the call fails harmlessly.
    madvise(memory, bytes, MADV_HUGEPAGE);
  }
  return {static_cast<std::byte*>(memory), rounded, true};
}

void FreeNow(const BufferBlock& block) noexcept {
  TESSERA_UNPOISON(block.data, static_cast<std::size_t>(block.bytes));
  std::free(block.data);
}

std::int64_t DefaultCapacity() {
  const std::int64_t total = detect_total_mem();
  if (total <= 0) return kDefaultCapacityCap;
  return std::min(kDefaultCapacityCap, total / kDefaultCapacityRamShare);
}

// The process-wide pool. Blocks, oldest first; a few hundred at most (capacity / 1 MiB),
// so linear scans under the mutex cost nothing next to the allocations they save.
class Pool {
 public:
  explicit Pool(std::int64_t capacity) : capacity_(capacity) {}

  // A retained block of `rounded` bytes or a little more; {} when none fits.
  BufferBlock Take(std::int64_t rounded) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::int64_t most = rounded + rounded / kMaxWasteShare;
    auto best = blocks_.end();
    // From the newest: among equal sizes the most recently used block is warmest.
    for (auto block = blocks_.end(); block != blocks_.begin();) {
      --block;
      if (block->bytes < rounded || block->bytes > most) continue;
      if (best == blocks_.end() || block->bytes < best->bytes) best = block;
      if (best->bytes == rounded) break;
    }
    if (best == blocks_.end()) {
      ++stats_.misses;
      return {};
    }
    const BufferBlock taken = *best;
    blocks_.erase(best);
    retained_ -= taken.bytes;
    ++stats_.hits;
    TESSERA_UNPOISON(taken.data, static_cast<std::size_t>(taken.bytes));
    return taken;
  }

  // Keeps `block`; false when it does not fit in the capacity at all. Blocks pushed out
  // to make room are appended to `evicted` for the caller to free outside the lock.
  bool Put(const BufferBlock& block, std::vector<BufferBlock>& evicted) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (block.bytes > capacity_) return false;
    EvictAbove(capacity_ - block.bytes, evicted);
    blocks_.push_back(block);  // on bad_alloc the pool is unchanged but for `evicted`
    retained_ += block.bytes;
    TESSERA_POISON(block.data, static_cast<std::size_t>(block.bytes));
    return true;
  }

  void SetCapacity(std::int64_t capacity, std::vector<BufferBlock>& evicted) {
    std::lock_guard<std::mutex> lock(mutex_);
    capacity_ = capacity;
    EvictAbove(capacity_, evicted);
  }

  void Release(std::vector<BufferBlock>& evicted) {
    std::lock_guard<std::mutex> lock(mutex_);
    EvictAbove(0, evicted);
  }

  BufferPoolStats Stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    BufferPoolStats stats = stats_;
    stats.capacity_bytes = capacity_;
    stats.retained_bytes = retained_;
    stats.retained_blocks = static_cast<std::int64_t>(blocks_.size());
    return stats;
  }

 private:
  // Moves the oldest blocks to `evicted` until at most `limit` bytes are retained. On
  // bad_alloc nothing has moved.
  void EvictAbove(std::int64_t limit, std::vector<BufferBlock>& evicted) {
    std::size_t count = 0;
    std::int64_t retained = retained_;
    while (retained > limit && count < blocks_.size()) retained -= blocks_[count++].bytes;
    const auto end = blocks_.begin() + static_cast<std::ptrdiff_t>(count);
    evicted.insert(evicted.end(), blocks_.begin(), end);
    blocks_.erase(blocks_.begin(), end);
    retained_ = retained;
    stats_.evicted += static_cast<std::int64_t>(count);
  }

  std::mutex mutex_;
  std::vector<BufferBlock> blocks_;  // guarded by mutex_
  std::int64_t retained_ = 0;        // guarded by mutex_
  std::int64_t capacity_;            // guarded by mutex_
  BufferPoolStats stats_;            // guarded by mutex_ (counters only)
};

// Never destroyed: Buffers freed by static destructors after main() still find it (its
// retained blocks are reachable from here, so leak checkers do not report them).
Pool& ThePool() {
  static Pool* const pool = new Pool(DefaultCapacity());
  return *pool;
}

void FreeAll(const std::vector<BufferBlock>& blocks) noexcept {
  for (const BufferBlock& block : blocks) FreeNow(block);
}

}  // namespace

namespace internal {

BufferBlock AllocateBufferBlock(std::int64_t size) {
  // Pooled or not is decided on the allocation's real size, as FreeBufferBlock decides.
  const std::int64_t rounded = RoundedSize(size);
  BufferBlock block;
  if (rounded >= kBufferPoolMinBytes) block = ThePool().Take(rounded);
  if (block.data == nullptr) block = AllocateFresh(size);
  // The bytes past `size` are not the Buffer's: a sanitizer reports reads and writes there.
  TESSERA_POISON(block.data + size, static_cast<std::size_t>(block.bytes - size));
  return block;
}

void FreeBufferBlock(BufferBlock block) noexcept {
  if (block.data == nullptr) return;
  bool kept = false;
  std::vector<BufferBlock> evicted;
  if (block.bytes >= kBufferPoolMinBytes) {
    try {
      kept = ThePool().Put(block, evicted);
    } catch (...) {  // no memory for the pool's bookkeeping: free the block instead
    }
  }
  FreeAll(evicted);
  if (!kept) FreeNow(block);
}

}  // namespace internal

void SetBufferPoolCapacity(std::int64_t bytes) {
  if (bytes < 0) {
    throw InvalidArgument("buffer pool capacity must be >= 0 bytes (0 disables the pool), got " +
                          std::to_string(bytes));
  }
  std::vector<BufferBlock> evicted;
  ThePool().SetCapacity(bytes, evicted);
  FreeAll(evicted);
}

std::int64_t BufferPoolCapacity() { return ThePool().Stats().capacity_bytes; }

std::int64_t BufferPoolRetainedBytes() { return ThePool().Stats().retained_bytes; }

void ReleaseBufferPool() {
  std::vector<BufferBlock> evicted;
  ThePool().Release(evicted);
  FreeAll(evicted);
}

BufferPoolStats GetBufferPoolStats() { return ThePool().Stats(); }

}  // namespace tessera
