#include "tessera/core/buffer.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "buffer_pool_internal.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/memory_account.hpp"

namespace tessera {

Buffer::Buffer(std::int64_t size) {
  if (size < 0) throw InvalidArgument("Buffer size must be >= 0, got " + std::to_string(size));
  if (size == 0) return;
  account_ = CurrentMemoryAccount();
  internal::BufferBlock block;
  auto allocate = [&] {
    block = internal::AllocateBufferBlock(size);
    data_ = block.data;
    size_ = size;
    if (account_ && block.fresh && size >= kTouchedFreshBytes) TouchFreshPages();
  };
  // Under an account, a chunk-sized Buffer notes every page its allocation faulted in:
  // the allocator's own (a fresh block's header, its bookkeeping) and the block's.
  if (account_ && size >= kTouchedFreshBytes) {
    TouchAccountedMemory(allocate);
  } else {
    allocate();
  }
  capacity_ = size;
  block_bytes_ = block.bytes;
  if (account_) account_->Charge(capacity_);
}

void Buffer::TouchFreshPages() {
  // Fault the block in now, within the constructor's count of the pages the Buffer
  // took: a huge page counts once, memory malloc had already counts nothing, so the
  // executor subtracts exactly what the Buffer cost in page faults.
  // Every page the Buffer spans, the partial ones at either end included: a block is
  // aligned to 64 bytes, not to a page, so `size_` bytes may span one page more than
  // size_ / 4096 rounded up, and that page would otherwise fault in later, unaccounted.
  TouchPages(data_, size_);
}

Buffer::~Buffer() { Reset(); }

void Buffer::Reset() noexcept {
  if (data_ != nullptr && owner_ == nullptr) internal::FreeBufferBlock({data_, block_bytes_});
  owner_.reset();
  if (account_) account_->Credit(capacity_);
  data_ = nullptr;
  size_ = 0;
  capacity_ = 0;
  block_bytes_ = 0;
  account_.reset();
}

Buffer::Buffer(Buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)),
      block_bytes_(std::exchange(other.block_bytes_, 0)),
      account_(std::move(other.account_)),
      owner_(std::move(other.owner_)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    Reset();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    block_bytes_ = std::exchange(other.block_bytes_, 0);
    account_ = std::move(other.account_);
    owner_ = std::move(other.owner_);
  }
  return *this;
}

Buffer Buffer::CopyOf(std::span<const std::byte> bytes) {
  Buffer buffer(static_cast<std::int64_t>(bytes.size()));
  if (!bytes.empty()) std::memcpy(buffer.data(), bytes.data(), bytes.size());
  return buffer;
}

Buffer Buffer::Borrow(const std::byte* data, std::int64_t size, std::shared_ptr<const void> owner) {
  if (size < 0) throw InvalidArgument("Buffer size must be >= 0, got " + std::to_string(size));
  if (owner == nullptr || (data == nullptr && size > 0)) {
    throw InvalidArgument("Buffer::Borrow needs the bytes and an owner that keeps them alive");
  }
  Buffer buffer;
  // The bytes are only read through a borrowed Buffer (NDArray::Borrow enforces it).
  buffer.data_ = const_cast<std::byte*>(data);
  buffer.size_ = size;
  buffer.capacity_ = size;
  buffer.owner_ = std::move(owner);
  return buffer;
}

Buffer Buffer::Clone() const { return CopyOf(span()); }

void Buffer::Truncate(std::int64_t new_size) {
  if (new_size < 0 || new_size > capacity_) {
    throw InvalidArgument("Buffer::Truncate(" + std::to_string(new_size) + ") outside capacity " +
                          std::to_string(capacity_));
  }
  size_ = new_size;
}

void Buffer::ResizeUninitialized(std::int64_t new_size) {
  if (new_size < 0) {
    throw InvalidArgument("Buffer size must be >= 0, got " + std::to_string(new_size));
  }
  if (new_size > capacity_ || borrowed()) {
    // Free first: the contents need not survive, so the old and new allocations are
    // never held together (and the old block may come straight back from the pool).
    Reset();
    *this = Buffer(new_size);
  }
  size_ = new_size;
}

}  // namespace tessera
