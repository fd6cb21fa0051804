// OpInfo: what a finalized plan knows of one of its ops (FinalizedPlan::ops()): its
// kind, tasks, projected and learned memory, where its output lives (Tier), what it
// moves and what it is expected to cost.
//
//   for (const tessera::OpInfo& op : plan.ops())
//     std::cout << op.name << " " << tessera::OpKindName(op.kind) << " "
//               << tessera::format_bytes(op.projected_mem) << "\n";
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/dtype.hpp"
#include "tessera/core/shape.hpp"

namespace tessera {

// Where an op's output lives while later ops read it.
enum class Tier {
  kNone,    // nothing is stored (a source, or an output streamed to its consumer)
  kResult,  // the in-memory result of compute()
  kTarget,  // the user's Zarr target (to_zarr)
  kMemory,  // an intermediate in RAM
  kDisk,    // an intermediate on local disk (work_dir)
  kMixed,   // an intermediate partly in RAM (its first blocks), the rest on local disk
  kObject,  // an intermediate in an object store (an s3:// work_dir): the third tier
  kMemoryAndObject,  // an intermediate partly in RAM (its first blocks), the rest in the
                     // object store
};
// "none", "result", "target", "memory", "disk", "memory+disk", "object store",
// "memory+object store"
std::string_view TierName(Tier tier);
// Whether an intermediate of `tier` is stored, wholly or partly, outside RAM: on local
// disk or in the object store.
bool IsStoredTier(Tier tier);

// How fast the cost estimate assumes a task moves data where history has no duration
// for its step (OpInfo::task_seconds): a rough figure for decoding, computing and
// encoding on one core; one run of the step replaces it with what was measured.
inline constexpr double kModeledTaskBytesPerSecond = 200e6;

// What an op computes. The name (OpKindName) is for printing and for history, which
// keeps kinds by name; code compares the enum.
enum class OpKind {
  kElementwise,  // a fused group of elementwise ops (tile by tile)
  kBlockwise,    // a fused group holding a map_blocks function (block by block)
  kMapBlocks,    // a map_blocks function alone, or at the root of its group
  kGenerate,     // a generator alone (ones, arange, random, ...)
  kRechunk,      // one copy (stage) of a rechunk
  kReduce,       // one round of a reduction
  kContract,     // a contraction (matmul, tensordot, ...)
  kGather,       // elements picked by an index map
  kReshape,      // elements in C order in another shape
};
// "elementwise", "blockwise", "map_blocks", "generate", "rechunk", "reduce", "contract",
// "gather", "reshape".
std::string_view OpKindName(OpKind kind);
std::ostream& operator<<(std::ostream& out, OpKind kind);

// What the plan knows of one op (FinalizedPlan::ops()).
struct OpInfo {
  std::string name;  // unique in the plan, e.g. "add-7"
  OpKind kind = OpKind::kElementwise;
  std::vector<std::string> fused;  // names of the ops fused into this one, inputs first
  Shape shape;
  Shape chunks;
  DType dtype = float64;
  std::int64_t num_tasks = 0;
  std::int64_t projected_mem = 0;    // largest task projection, reserved_mem included
  Tier tier = Tier::kNone;           // where its output goes
  std::int64_t bytes_in_memory = 0;  // of an intermediate's bytes, those held in RAM
  Shape task_shape;                  // the region one task writes (chunks, or a multiple)
  Shape input_chunks;                // a rechunk copy's input chunks (empty for others)
  // A sharded Zarr target's inner chunks; `chunks` are then its shards, the unit its
  // tasks write (one task per shard). Empty otherwise.
  Shape inner_chunks;
  Shape disk_chunks;  // an intermediate's chunks on disk, when not `chunks`
  // What the op's tasks move in all: stored chunks read (each decoded whole) and
  // written, and their decoded bytes. Rechunk copies count exactly; other ops count
  // each stored array they read once and their output once (bytes only).
  std::int64_t chunk_reads = 0;
  std::int64_t chunk_writes = 0;
  std::int64_t bytes_read = 0;
  std::int64_t bytes_written = 0;
  // A rechunk is carried out by copies, one op each: this op is copy `stage` (1-based)
  // of `num_stages`; 0 for other ops.
  int stage = 0;
  int num_stages = 0;
  // A contraction (matmul, tensordot, ...): each task sums over the contracted
  // dimensions in `contraction_steps` slabs of `contraction_block`; 0 / empty for others.
  Shape contraction_block;
  std::int64_t contraction_steps = 0;
  // Identifies the step across runs, for history: a hash of the kinds, functions
  // (map_blocks' identity), dtypes and chunk shapes of the op, its fused members and the
  // arrays they read — not of names, shapes or data, which change from run to run.
  std::string fingerprint;
  // What the plan counts per task (reserved_mem included): projected_mem, or, where
  // history measured this fingerprint above it (a user kernel's own allocations), the
  // learned footprint times a margin (tessera/memory/internal/footprint_estimate.hpp). The memory
  // check and `concurrency` use it.
  std::int64_t estimated_mem = 0;
  bool estimate_from_history = false;
  std::int64_t learned_mem = 0;  // history's largest measured task (reserved_mem included)
  std::int64_t learned_run = 0;  // the run that measured it; 0 when history has none
  int concurrency = 1;           // tasks that may run at once under total_mem
  // The memory one task of this op is given: the smallest of Spec::memory_tiers that
  // holds estimated_mem, or allowed_mem when the spec lists no tiers.
  std::int64_t memory_size = 0;
  // Seconds one task is expected to take: the median history measured for this
  // fingerprint (task_seconds_from_history), else a model: the larger of the bytes a
  // task reads and writes and the memory it holds (less reserved_mem), at
  // kModeledTaskBytesPerSecond.
  double task_seconds = 0;
  bool task_seconds_from_history = false;
  // What the op's tasks cost: memory_size in GB (10^9 bytes) x task_seconds x num_tasks.
  double cost_gb_seconds = 0;
  std::vector<int> inputs;  // indices (in FinalizedPlan::ops()) of ops it reads
};

}  // namespace tessera
