// Process memory as the kernel sees it: resident set size now and at its peak.
//
//   tessera::ResetPeakRss();                 // start a new high-water mark (if permitted)
//   RunSomething();
//   std::int64_t peak = tessera::PeakRssBytes();
//
// Linux only: values come from /proc/self/status (VmRSS, VmHWM). Where it cannot be read
// the functions return 0 rather than throw: callers use them for reports, never for
// decisions that need them. Every function may be called from any thread.
#pragma once

#include <cstdint>
#include <string_view>

namespace tessera {

// Resident set size of this process now, in bytes (VmRSS); 0 when unknown.
std::int64_t CurrentRssBytes();

// The process's resident set high-water mark in bytes (VmHWM): since the process
// started, or since the last successful ResetPeakRss(); 0 when unknown.
std::int64_t PeakRssBytes();

// Resets the high-water mark to the current RSS by writing "5" to /proc/self/clear_refs
// (Linux >= 4.0). False when that is not permitted or not supported; PeakRssBytes()
// then keeps counting from the process start.
bool ResetPeakRss();

// The value of a "Name:   1234 kB" line of a /proc/<pid>/status text, in bytes; -1 when
// the field is missing or malformed. Exposed for tests.
std::int64_t ParseProcStatusBytes(std::string_view status, std::string_view field);

}  // namespace tessera
