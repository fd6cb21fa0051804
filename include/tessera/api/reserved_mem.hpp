// Measuring reserved_mem: the memory a worker holds before any task's data (code,
// libraries, thread stacks, the runtime's own structures), which every task adds to.
//
//   tessera::Spec spec = tessera::Spec::from({{"allowed_mem", "2GB"}});
//   spec.reserved_mem = tessera::measure_reserved_mem(spec);   // e.g. 41 MB
//
// It runs a trivial computation (a sum of 64 KiB blocks) with spec's executor and
// max_workers, history off, and returns the process's resident-set high-water mark
// during that run (PeakRssBytes after ResetPeakRss), rounded up to whole MiB. Where the
// high-water mark cannot be reset it is the peak since the process started, which is
// larger: a safe figure. The command line equivalent is `tessera measure-reserved`.
#pragma once

#include <cstdint>

#include "tessera/core/spec.hpp"

namespace tessera {

// Throws InvalidArgument for an invalid executor or max_workers, Error when the process's
// memory cannot be read (/proc/self/status).
std::int64_t measure_reserved_mem(const Spec& spec = {});

}  // namespace tessera
