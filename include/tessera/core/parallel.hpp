// ParallelFor: run fn(0..count-1) on up to `max_threads` threads.
//
// Items are handed out one at a time from a shared counter, so uneven items balance.
// The calling thread takes part. If any call throws, no new items start and the first
// exception is rethrown once every running item has returned. fn must be safe to call
// concurrently for different indices.
#pragma once

#include <cstdint>
#include <functional>

namespace tessera {

void ParallelFor(std::int64_t count, int max_threads, const std::function<void(std::int64_t)>& fn);

// Hardware concurrency, at least 1 (the CPUs online when first asked).
int HardwareThreads();

}  // namespace tessera
