#include "worker_warmup.hpp"

#include <cstdlib>
#include <cstring>

namespace tessera::exec {
namespace {

constexpr std::size_t kPage = 4096;

// Writes one byte per page of a stack array; noinline so the frame is really there.
[[gnu::noinline]] void TouchStack() {
  volatile unsigned char frame[static_cast<std::size_t>(kWorkerWarmUpBytes)];
  for (std::size_t at = 0; at < sizeof(frame); at += kPage) frame[at] = 1;
  frame[sizeof(frame) - 1] = 1;
}

// Allocates and touches blocks below glibc's trim threshold, then frees them: the
// thread's heap keeps those pages for the small allocations tasks make.
void TouchHeap() {
  constexpr std::size_t kBlocks = 4;
  constexpr std::size_t kBlock = static_cast<std::size_t>(kWorkerWarmUpBytes) / kBlocks;
  void* blocks[kBlocks] = {};
  for (void*& block : blocks) {
    block = std::malloc(kBlock);
    if (block != nullptr) std::memset(block, 0, kBlock);
  }
  for (void* block : blocks) std::free(block);
}

}  // namespace

void WarmUpWorkerThread() {
  thread_local bool warmed_up = false;  // once per thread, whoever calls
  if (warmed_up) return;
  TouchStack();
  TouchHeap();
  warmed_up = true;
}

}  // namespace tessera::exec
