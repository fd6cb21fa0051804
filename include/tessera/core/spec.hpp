// Spec: the resources a computation may use (API.md "Sizes and the spec").
//
//   tessera::Spec spec;                        // fields directly, in bytes
//   spec.allowed_mem = 400'000'000;
//   auto spec2 = tessera::Spec::from({{"allowed_mem", "400MB"}, {"executor", "sync"}});
//   spec2.set_reserved_mem("100MB");          // setters take size strings
//   spec2.validate();                         // throws InvalidArgument when inconsistent
//   spec2.set_allowed_mem("auto");            // the plan finds the smallest budget that runs
//   spec2.set_memory_tiers("512MB,1GB,2GB");  // sizes ops may be given (FinalizedPlan)
//
// A Spec is a plain value; copying is cheap; it is not shared mutable state.
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera {

struct Spec {
  // allowed_mem's value for "auto": planning (tessera::Finalize) chooses the smallest
  // allowed_mem that runs the plan, and the finalized plan's spec() holds that size.
  static constexpr std::int64_t kAutoAllowedMem = -1;

  std::int64_t allowed_mem = 0;   // per task, bytes (required, > reserved_mem), or auto
  std::int64_t reserved_mem = 0;  // per worker baseline, bytes
  std::int64_t total_mem = 0;     // 0 = detect (cgroup limit or physical RAM)
  // An existing writable folder, "" = the system temp dir; or an object store's prefix,
  // "s3://bucket/prefix": intermediates then go to local disk (the system temp dir) while
  // local_disk holds them, and to the object store after (the third tier).
  std::string work_dir;
  // With an s3:// work_dir: the bytes of local disk intermediates may take; auto = the
  // free space of the system temp dir, less a tenth (executors "threads" and "sync"; none
  // for "mpi", "dask" and "ray", whose processes share no local disk); 0 = none.
  static constexpr std::int64_t kAutoLocalDisk = -1;
  std::int64_t local_disk = kAutoLocalDisk;
  std::string executor = "threads";  // "sync", "threads", "mpi"; from Python "dask", "ray"
  // The executor's own settings, by name; the executor refuses names it does not know
  // (the "mpi" executor's: tessera/exec mpi_executor.hpp, docs/mpi.md).
  std::map<std::string, std::string> executor_options;
  int max_workers = 0;  // 0 = hardware concurrency
  // The history database (tessera/memory/history.hpp): "" = $TESSERA_HISTORY, else the
  // user's cache directory; "off" = keep no history; anything else is its path.
  std::string history;
  // The memory sizes a task may be given (e.g. serverless function sizes), ascending,
  // each above reserved_mem; empty = one size, allowed_mem. The plan assigns every op
  // the smallest that fits its tasks and estimates the cost in GB-seconds
  // (OpInfo::memory_tier); with allowed_mem "auto" the largest bounds the search.
  std::vector<std::int64_t> memory_tiers;

  // Builds a Spec from name/value strings: allowed_mem (a size, or "auto"),
  // reserved_mem, total_mem (sizes as parse_bytes), memory_tiers (sizes separated by
  // commas), work_dir, local_disk (a size or "auto"), history, executor, max_workers. Unknown names
  // and bad values throw InvalidArgument. The result is validated.
  static Spec from(std::initializer_list<std::pair<std::string_view, std::string_view>> settings);

  Spec& set_allowed_mem(std::string_view size);  // a size, or "auto"
  Spec& set_reserved_mem(std::string_view size);
  Spec& set_total_mem(std::string_view size);
  // "512MB, 1GB, 2GB": sorted ascending; "" clears the list. A repeated size throws.
  Spec& set_memory_tiers(std::string_view sizes);
  // Sets one setting by name, as from() does.
  Spec& set(std::string_view name, std::string_view value);

  // Throws InvalidArgument when allowed_mem (unless auto) <= reserved_mem, a size is
  // negative, total_mem (when set) is below allowed_mem, a memory tier is not above
  // reserved_mem or the tiers are not strictly ascending, the executor is unknown, or
  // max_workers < 0.
  void validate() const;

  bool allowed_mem_is_auto() const { return allowed_mem == kAutoAllowedMem; }

  // total_mem, or the detected memory when total_mem is 0: with executor "mpi", that of
  // every rank together (JoinCluster, tessera/core/cluster.hpp; collective the first time).
  std::int64_t effective_total_mem() const;
  // Whether a plan may keep intermediates in memory: not when its tasks run in worker
  // processes that share nothing but storage (executor "dask" or "ray"), where they go
  // through work_dir instead.
  bool keeps_intermediates_in_memory() const;
  // Whether every task runs in this process (executor "threads" or "sync"), hence on this
  // machine's local disk; not so for "mpi", "dask" and "ray".
  bool runs_in_one_process() const { return executor == "threads" || executor == "sync"; }
  // max_workers, or the hardware concurrency when 0 (at least 1). For the test suite's
  // configuration reruns the environment variable TESSERA_FORCE_WORKERS=N (N >= 1)
  // overrides both (docs/testing.md); any other value of it throws InvalidArgument.
  int effective_max_workers() const;
  // The same with `hardware_threads` standing for the hardware concurrency (the share of
  // a machine one process of several may use, as the mpi executor's ranks do).
  int effective_max_workers(int hardware_threads) const;
  // The most tasks the run's processes run at once together, as plans count them:
  // effective_max_workers(); with executor "mpi", the sum over the ranks of each rank's
  // (its share of its machine's threads, ClusterFacts::rank_threads), alike on every rank.
  int effective_total_workers() const;
};

// Memory this process may use: the smallest memory limit of the process's own cgroup
// and of each of its ancestors (found through /proc/self/cgroup: cgroup v2 memory.max,
// or cgroup v1 memory.limit_in_bytes of the "memory" controller), capped at physical
// RAM; physical RAM when no limit is set. Missing or unreadable files mean "no limit".
// Cached for a second (a limit changed at run time shows within it).
std::int64_t detect_total_mem();
// The same, reading <root>/proc/self/cgroup and the files under <root>/sys/fs/cgroup
// instead of the real ones (physical RAM still comes from the system), so tests can
// point it at a fake tree. detect_total_mem() is detect_total_mem("/").
std::int64_t detect_total_mem(const std::filesystem::path& root);

}  // namespace tessera
