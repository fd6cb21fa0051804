// The processes one run spans (the ranks of an MPI job), as planning must see them alike
// in every one of them: how many there are, which one this is, the memory of them all
// together, and which process leads (owns the run's work directories).
//
//   spec.executor = "mpi";
//   spec.effective_total_mem()                 // JoinCluster().total_mem: every rank's
//   const tessera::ClusterFacts& cluster = tessera::JoinCluster();   // memory, summed
//   cluster.rank == 0                          // the leader
//
// The MPI executor (built only where MPI was found) installs the provider when the
// library loads. JoinCluster asks it once per process and keeps the answer: its first
// call is collective under MPI (every rank must make it, as every rank plans the same
// computation). A build without MPI has no provider: JoinCluster then throws
// InvalidArgument saying so. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace tessera {

struct ClusterFacts {
  int ranks = 1;
  int rank = 0;                        // this process: 0 .. ranks - 1; 0 leads
  std::vector<std::int64_t> rank_mem;  // each rank's detected memory (detect_total_mem)
  std::int64_t total_mem = 0;          // their sum
  std::vector<int> rank_threads;       // each rank's share of its machine's hardware threads
  int nodes = 1;                       // the machines the ranks run on
  long long leader_pid = 0;            // the leader's process, as work directory names
  long long leader_start = 0;          // record it (pid, ProcessStartTicks)
  bool leads() const { return rank == 0; }
};

// Returns the facts of the cluster this process belongs to; collective the first time.
using ClusterProvider = ClusterFacts (*)();

// Installs the provider (the MPI executor's, at load time). A second call replaces it.
void SetClusterProvider(ClusterProvider provider);

// The cluster this process belongs to, from the provider (asked once, then kept).
// Throws InvalidArgument when there is no provider (Tessera was built without MPI) and
// whatever the provider throws (MPI could not start).
const ClusterFacts& JoinCluster();

// Whether JoinCluster was called successfully in this process (the cluster is known).
bool ClusterJoined();

// When process `pid` started, in clock ticks after boot (field 22 of /proc/<pid>/stat):
// with the pid, what names a process across pid reuse. nullopt when there is none.
std::optional<long long> ProcessStartTicks(long long pid);

}  // namespace tessera
