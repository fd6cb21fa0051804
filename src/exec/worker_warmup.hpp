// Readies a worker thread before it runs any task, so that what every thread pays once
// is paid outside tasks, as part of the process baseline (reserved_mem), and not
// measured as the first task's unaccounted memory.
//
//   WarmUpWorkerThread();   // before a thread's first task; later calls do nothing
//
// It faults in the top of the thread's stack and gives the thread its allocator heap
// (glibc creates a heap per thread at its first allocation and keeps small freed blocks),
// touching kWorkerWarmUpBytes of each. Internal to src/exec.
#pragma once

#include <cstdint>

namespace tessera::exec {

inline constexpr std::int64_t kWorkerWarmUpBytes = 128 * 1024;

void WarmUpWorkerThread();

}  // namespace tessera::exec
