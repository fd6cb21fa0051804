// Work directories: where a plan's disk intermediates live while it runs.
//
// Each plan that spills gets its own "tessera-<pid>-<start>-<n>" under spec.work_dir (or
// the system temp dir): <pid> and <start> (the process's start time, in clock ticks
// since boot) name the process that owns it. Tessera creates it itself (mkdir, never
// through an existing name) and writes a marker file in it, kWorkDirectoryMarker, whose
// text names the directory and its process; only a real directory (not a symlink)
// carrying the marker its name calls for is Tessera's. So:
// - a name that is already taken by anything else is refused (StorageError saying what
//   to move), never written into;
// - a directory left by a killed run (its process is gone, or the pid now belongs to a
//   process started at another time) is removed by the next plan that spills into the
//   same base, when it carries its marker; a user's folder or symlink named like one
//   is left exactly as it is;
// - nothing is ever removed through a symlink;
// - the marker names the machine too (a work_dir shared by several machines): a directory
//   another machine made is never removed here, its process being out of sight.
// spec.work_dir must be an existing folder this process can write: Tessera does not
// create it (it would be left behind), and says so at planning, before any work.
// Internal to src/plan.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "tessera/core/spec.hpp"

namespace tessera::planner {

// The marker file's name inside a work directory.
inline constexpr std::string_view kWorkDirectoryMarker = ".tessera-work-directory";

// A new directory name (not created) for this process under `spec`'s base; with executor
// "mpi", the run's leader's, "tessera-<leader pid>-<start>-mpi<n>" (n counting MPI plans,
// which every rank makes alike), which the leader creates and removes while the other
// ranks only use it.
std::filesystem::path NewWorkDirectory(const Spec& spec);

// The base directory local intermediates go under: spec.work_dir, or the system temp dir
// (also when work_dir is an object store's s3:// prefix).
std::filesystem::path WorkDirectoryBase(const Spec& spec);

// With an s3:// work_dir, the bytes local disk intermediates may take: spec.local_disk, or
// when auto nine tenths of the free space of the system temp dir for the threads and sync
// executors, none for those of several processes (mpi, dask, ray).
std::int64_t LocalDiskAllowed(const Spec& spec);

// With an s3:// work_dir, the object store prefix of a plan whose local work directory is
// `work_directory`: "<work_dir>/<its name>", followed for a plan made in one process (not
// "mpi", whose ranks plan alike) by "-" and 8 random hex digits, so that runs on machines
// whose processes happen to share a pid and start time never share a prefix.
std::string NewObjectWorkPrefix(const Spec& spec, const std::filesystem::path& work_directory);

// The marker object under each object store intermediate's prefix, and the text the
// writing process puts in it (its host, pid and start): a prefix holding anything without
// this process's marker is not touched.
inline constexpr const char* kObjectPrefixMarker = ".tessera-intermediate";
std::string ObjectPrefixOwnerText();

// Throws InvalidArgument when spec.work_dir is set and is missing or not a folder, and
// StorageError when this process cannot create entries in it; each names the path and
// what to do. Does nothing for an empty work_dir (the system temp dir); checks an s3://
// work_dir's URL (InvalidArgument), sending nothing.
void CheckWorkDirectoryBase(const Spec& spec);

// Creates `directory` (a name from NewWorkDirectory) with its marker, or accepts it when
// this process already did. Throws StorageError when the name is taken by something
// else (a file, a symlink, a folder without this process's marker) or cannot be made.
void CreateWorkDirectory(const std::filesystem::path& directory);

// Makes `path`, an entry inside a work directory that this process created, a fresh empty
// folder: whatever was there (an earlier run of the same plan) is removed first, a
// symlink as a link, never what it points to. Throws StorageError when the parent is not
// this process's work directory.
void PrepareInsideWorkDirectory(const std::filesystem::path& path);

// Removes `path` (a symlink as a link) when its parent is this process's work directory;
// otherwise does nothing. Never throws.
void RemoveInsideWorkDirectory(const std::filesystem::path& path) noexcept;

// Removes `directory` and everything in it when it is this process's work directory
// (a real folder carrying this process's marker); otherwise does nothing. Never throws.
void RemoveWorkDirectory(const std::filesystem::path& directory) noexcept;

// Removes the work directories under `base` whose owning process is gone and that carry
// their marker; returns them. Errors (permissions, races with another cleaner) are
// ignored: cleaning is best effort.
std::vector<std::filesystem::path> RemoveStaleWorkDirectories(const std::filesystem::path& base);

}  // namespace tessera::planner
