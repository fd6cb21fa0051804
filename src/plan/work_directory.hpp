// Work directories: where a plan's disk intermediates live while it runs.
//
// Each plan that spills gets its own "tessera-<pid>-<start>-<n>" under spec.work_dir (or
// the system temp dir): <pid> and <start> (the process's start time, in clock ticks
// since boot) name the process that owns it, so a directory left by a killed run is
// recognised — its process is gone, or the pid now belongs to a process started at
// another time — and removed by the next plan that spills into the same base.
// Directories of running processes and anything not named this way are never touched.
// Internal to src/plan.
#pragma once

#include <filesystem>
#include <vector>

#include "tessera/core/spec.hpp"

namespace tessera {

// A new directory name (not created) for this process under `spec`'s base.
std::filesystem::path NewWorkDirectory(const Spec& spec);

// The base directory intermediates go under: spec.work_dir, or the system temp dir.
std::filesystem::path WorkDirectoryBase(const Spec& spec);

// Removes the work directories under `base` whose owning process is gone; returns them.
// Errors (permissions, races with another cleaner) are ignored: cleaning is best effort.
std::vector<std::filesystem::path> RemoveStaleWorkDirectories(const std::filesystem::path& base);

}  // namespace tessera
