// Bounds on what a run's tasks held, for tests of the memory promise: a task's
// footprint is the Buffer bytes it held (measured_mem, reserved_mem included) plus the
// fresh memory its thread touched outside them (unaccounted_mem: a codec's context, a
// kernel's own allocations). The promise is about the footprint, not the Buffers alone.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "sanitizers.hpp"
#include "tessera/exec/internal/executor.hpp"

namespace tessera::testing {

inline std::int64_t Footprint(const TaskRecord& task) {
  return task.measured_mem + task.unaccounted_mem;
}

// Pages a task's thread may touch for the runtime's own bookkeeping that no projection
// counts (the allocator's metadata as its heap grows, a fused chain's per-task program
// of vectors and shared pointers, a deeper stack frame): named here so that every bound
// states it. Measured: 40-100 kB per task for the 20-node fused dew point on 32 kB
// chunks, whatever the chunk size. docs/memory-model.md, "Unaccounted memory".
inline constexpr std::int64_t kRuntimeBookkeepingBytes = 128 * 1024;

// The most a task may touch against `bound` bytes: the bound plus the runtime's
// bookkeeping natively; under ASan its shadow and redzones make the same Buffers touch up
// to kFreshPageFactor times as many pages.
inline std::int64_t FootprintLimit(std::int64_t bound) {
  return static_cast<std::int64_t>(static_cast<double>(bound) * kFreshPageFactor) +
         kRuntimeBookkeepingBytes;
}

// Every task's measured Buffers within its projection, and its footprint too (natively:
// under ASan its own allocator and quarantine touch pages no program of ours does, so
// only the Buffers, which it does not change, are checked there).
inline void ExpectFootprintsWithinProjection(const ExecutionReport& report) {
  for (const TaskRecord& task : report.tasks) {
    if (task.skipped) continue;
    EXPECT_LE(task.measured_mem, task.projected_mem) << task.op_name << " task " << task.task;
    if (kAddressSanitizer) continue;  // its allocator, shadow and quarantine fault pages
    EXPECT_LE(Footprint(task), FootprintLimit(task.projected_mem))
        << task.op_name << " task " << task.task << ": measured " << task.measured_mem
        << " + unaccounted " << task.unaccounted_mem << " bytes against a projection of "
        << task.projected_mem;
  }
}

// Every task's footprint within `budget` (allowed_mem, say).
inline void ExpectFootprintsWithin(const ExecutionReport& report, std::int64_t budget) {
  for (const TaskRecord& task : report.tasks) {
    if (task.skipped) continue;
    EXPECT_LE(task.measured_mem, budget) << task.op_name << " task " << task.task;
    if (kAddressSanitizer) continue;  // its allocator, shadow and quarantine fault pages
    EXPECT_LE(Footprint(task), FootprintLimit(budget))
        << task.op_name << " task " << task.task << ": measured " << task.measured_mem
        << " + unaccounted " << task.unaccounted_mem << " bytes against " << budget;
  }
}

}  // namespace tessera::testing
