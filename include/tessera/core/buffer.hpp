// Buffer: an owned, 64-byte aligned, *uninitialized* block of bytes.
//
// Chunk data moves through Buffers: a store reads into one, a codec decodes from one
// into another. Allocation does not fill the block (every chunk byte is overwritten
// anyway); only a block of kTouchedFreshBytes or more that is new from the system and
// charged to an account has its pages faulted in at once (one byte written per page),
// so that the account can note what they cost (MemoryAccount::NoteFresh). Move-only; use
// Clone() for a deep copy. Not thread-safe to mutate concurrently.
//
// Accounting: an allocation is charged, with its capacity, to the MemoryAccount current
// on the allocating thread (memory_account.hpp), and credited to that same account when
// the Buffer frees or reallocates it, on whichever thread. Moves carry the charge along.
// Blocks of 128 KiB or more come from and go back to the buffer pool (buffer_pool.hpp);
// a pooled block is charged exactly like a fresh one.
//
// Borrowed: Buffer::Borrow views memory another owner keeps alive (a numpy array that
// asarray shares); it is charged to no account and never freed, only its owner released,
// and it must not be written through (NDArray::Borrow makes that an error).
// ResizeUninitialized on a borrowed Buffer allocates a block of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace tessera {

class MemoryAccount;

// Fresh blocks from this size on (a page) are faulted in when a Buffer charged to an
// account allocates them, so that their pages are never taken for memory outside the
// account; a smaller one faults at most one page, or reuses malloc's.
inline constexpr std::int64_t kTouchedFreshBytes = std::int64_t{4} << 10;

class Buffer {
 public:
  Buffer() = default;
  // Allocates `size` bytes, uninitialized. Throws InvalidArgument for size < 0 and
  // std::bad_alloc when memory is exhausted.
  explicit Buffer(std::int64_t size);
  ~Buffer();

  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // A copy of `bytes`.
  static Buffer CopyOf(std::span<const std::byte> bytes);
  // A view of the `size` bytes at `data`, which `owner` keeps alive until the Buffer (and
  // every Buffer it moves into) lets go of it.
  static Buffer Borrow(const std::byte* data, std::int64_t size, std::shared_ptr<const void> owner);
  bool borrowed() const { return owner_ != nullptr; }
  Buffer Clone() const;

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  std::int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  std::span<std::byte> span() { return {data_, static_cast<std::size_t>(size_)}; }
  std::span<const std::byte> span() const { return {data_, static_cast<std::size_t>(size_)}; }

  // Shrinks the visible size to `new_size` <= capacity without reallocating.
  void Truncate(std::int64_t new_size);
  // Makes the size `new_size`, reusing the allocation when it is large enough;
  // otherwise frees it and allocates anew (charged to the current account). Contents
  // are unspecified afterwards (uninitialized). If the new allocation throws, the
  // Buffer is left empty.
  void ResizeUninitialized(std::int64_t new_size);
  // The bytes usable without reallocating, and the bytes charged to the account.
  std::int64_t capacity() const { return capacity_; }

 private:
  // Frees (or pools) the allocation and credits its account; leaves the Buffer empty.
  void Reset() noexcept;
  // Faults a fresh block's pages in and notes them to the account.
  void TouchFreshPages();

  std::byte* data_ = nullptr;
  std::int64_t size_ = 0;
  std::int64_t capacity_ = 0;
  std::int64_t block_bytes_ = 0;            // bytes really allocated (>= capacity_)
  std::shared_ptr<MemoryAccount> account_;  // charged capacity_; null when none
  std::shared_ptr<const void> owner_;       // a borrowed Buffer's owner; null when owned
};

}  // namespace tessera
