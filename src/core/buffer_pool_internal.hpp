// Buffer blocks: how Buffer gets and gives back its memory (buffer_pool.cpp). Private to
// core; the public face of the pool is tessera/core/buffer_pool.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera::internal {

// An allocation: `bytes` is what was really allocated (>= what was asked for).
struct BufferBlock {
  std::byte* data = nullptr;
  std::int64_t bytes = 0;
  bool fresh = false;  // new from the system allocator (not reused from the pool)
};

// A block of at least `size` > 0 bytes, aligned to 64 bytes; blocks of 4 MiB or more are
// aligned to 2 MiB and backed by transparent huge pages where the system allows. From the
// pool when it holds a fitting block, fresh otherwise. Throws std::bad_alloc.
BufferBlock AllocateBufferBlock(std::int64_t size);

// Gives `block` (from AllocateBufferBlock) to the pool, or frees it when the pool does
// not take it. Any thread.
void FreeBufferBlock(BufferBlock block) noexcept;

}  // namespace tessera::internal
