// The buffer pool: freed chunk-sized Buffers are kept and handed to new ones, so chunk
// memory is not mapped and page-faulted afresh for every task (DESIGN.md "Memory model":
// touching fresh pages costs more than the arithmetic on them).
//
//   tessera::SetBufferPoolCapacity(512 << 20);   // retain at most 512 MiB of free blocks
//   { tessera::Buffer a(64 << 20); }             // freed: its block goes to the pool
//   tessera::Buffer b(64 << 20);                 // reuses that block; no page faults
//   tessera::BufferPoolRetainedBytes();          // 0 again: b holds the block
//   tessera::ReleaseBufferPool();                // frees whatever the pool retains
//
// Only blocks of at least kBufferPoolMinBytes (the capacity rounded up to the Buffer's
// alignment: 64 bytes, or 2 MiB from 4 MiB on) go through the pool; smaller Buffers are
// malloc'd and freed as before (malloc keeps those itself). The floor is 128 KiB, glibc's
// first mmap threshold: a larger block freed by a worker thread goes back to the system
// (its arena is trimmed), so the next one is faulted in afresh (the inner chunks of a
// sharded array, 500 KB each, cost a tenth of a read that way). A new Buffer takes the
// smallest retained block that holds it and wastes at most an eighth of it; otherwise it
// is allocated fresh. When a returned block would take the retained bytes above the
// capacity, the least recently returned blocks are freed first; a block larger than the
// whole capacity is freed at once.
//
// Budget: retained blocks are process memory that no task's MemoryAccount counts (an
// account counts the bytes its Buffers hold, pooled or fresh, exactly alike), so the
// capacity is part of what a process may use besides its tasks: whoever sizes the
// tasks against total_mem subtracts BufferPoolCapacity(). Retained pages stay resident.
//
// The default capacity is min(256 MiB, detect_total_mem() / 16): enough to keep a few
// chunks per worker of a typical 10-100 MB chunk size, and at most 1/16 of the machine.
//
// Thread safety: every function may be called from any thread (one mutex guards the
// pool; chunk allocations are rare and large, so it is not contended).
#pragma once

#include <cstdint>

namespace tessera {

// Blocks below this size never go through the pool.
inline constexpr std::int64_t kBufferPoolMinBytes = std::int64_t{256} << 10;

// Sets the most bytes of free blocks the pool retains; 0 disables the pool. Blocks
// retained beyond a lowered capacity are freed at once (oldest first). Throws
// InvalidArgument when bytes < 0.
void SetBufferPoolCapacity(std::int64_t bytes);
std::int64_t BufferPoolCapacity();

// Bytes of free blocks the pool holds now (blocks in use by Buffers are not counted).
std::int64_t BufferPoolRetainedBytes();

// Frees every retained block (e.g. before handing memory back to the system); the
// capacity is unchanged.
void ReleaseBufferPool();

// Counters since the process started, for tests and benchmarks.
struct BufferPoolStats {
  std::int64_t capacity_bytes = 0;
  std::int64_t retained_bytes = 0;
  std::int64_t retained_blocks = 0;
  std::int64_t hits = 0;     // allocations served from the pool
  std::int64_t misses = 0;   // pooled-size allocations that found no fitting block
  std::int64_t evicted = 0;  // blocks freed because the pool was full (or released)
};
BufferPoolStats GetBufferPoolStats();

}  // namespace tessera
