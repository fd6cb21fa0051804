// Touching fresh pages in tests of measured memory.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tessera::testing {

// Writes `bytes` of fresh pages and unmaps them; returns the last byte written (1), so
// the writes stay, or -1 when the memory cannot be mapped. mmap, not new: a sanitizer's
// allocator would keep freed memory resident, and malloc may reuse pages.
inline int TouchAndUnmap(std::int64_t bytes) {
  const std::size_t size = static_cast<std::size_t>(bytes);
  void* memory = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return -1;
  char* pages = static_cast<char*>(memory);
  std::memset(pages, 1, size);
  const int last = *static_cast<volatile char*>(pages + size - 1);
  munmap(memory, size);
  return last;
}

}  // namespace tessera::testing
