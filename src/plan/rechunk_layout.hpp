// Rechunk layout: how an array moves from one chunk grid to another as a chain of
// copies, chosen before any op exists, from shapes and a memory model only.
//
// A copy reads an array by regions and writes an array on another grid; each task
// writes one region made of whole output chunks (so no two tasks share a chunk) and
// reads whatever input chunks that region touches. A stored input chunk touched in
// part is decoded whole, so a layout is good when its tasks' regions line up with the
// chunks they read. The candidates (docs/rechunk.md):
//   direct      source -> target, task regions grown to cover whole source chunks;
//   via RAM     source -> read chunks (source chunks grown toward the target, kept
//               decoded in RAM) -> target: every chunk decoded and encoded once; what
//               RAM cannot hold goes to disk in smaller chunks that tile the read chunks
//               and line up with the target's regions;
//   via disk    source -> min(read, write chunks) -> target (rechunker's intermediate),
//               and chains through chunk shapes spaced geometrically between source
//               and target (more stages, larger intermediate chunks, fewer I/O ops).
// Each intermediate is held in RAM as far as `memory_budget` allows (its first blocks),
// the rest on disk. The cheapest candidate whose every task fits the model wins; the
// planner then checks the exact projection of the real ops. Internal to src/plan.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/shape.hpp"

namespace tessera::planner {

struct RechunkProblem {
  Shape shape;
  std::int64_t itemsize = 1;
  Shape source_chunks;
  Shape target_chunks;
  bool source_decodes = true;      // false: the source is held decoded in RAM
  std::int64_t task_budget = 0;    // bytes one task may hold (allowed_mem - reserved_mem)
  std::int64_t memory_budget = 0;  // bytes of intermediates RAM may hold
  int workers = 1;                 // tasks that run at once: regions stop growing while
                                   // fewer than 4 per worker would remain
};

// One copy of a layout.
struct CopyStep {
  Shape read_chunks;         // chunks of the array read
  Shape write_chunks;        // chunks of the array written (its blocks in RAM, if any)
  Shape disk_chunks;         // chunks of the part of an intermediate on disk: write_chunks,
                             // or smaller ones tiling them (so each has one writer)
  Shape task_shape;          // the region one task writes: whole write chunks (or whole extents)
  bool reads_decode = true;  // a touched input chunk is decoded whole
  bool writes_target = false;
  Index blocks_in_memory = 0;  // of an intermediate written: its first blocks kept in RAM
  Index num_blocks = 0;        // blocks of the array written
};

// What a copy moves in all (exact for its regions and grids).
struct CopyTraffic {
  Index tasks = 0;
  Index chunk_reads = 0;  // input chunks touched, summed over tasks
  Index chunk_writes = 0;
  std::int64_t bytes_read = 0;  // decoded bytes: touched chunks whole when they decode
  std::int64_t bytes_written = 0;
};

struct RechunkLayout {
  std::string strategy;  // "direct", "via RAM", "via disk", "N stages via disk"
  std::vector<CopyStep> steps;
  double cost = 0;  // the model's cost, in byte-equivalents
};

CopyTraffic CountTraffic(const Shape& shape, std::int64_t itemsize, const CopyStep& step);

// The model's bytes for one task of `step` (a bound on what the op will project).
std::int64_t ModelTaskBytes(const Shape& shape, std::int64_t itemsize, const CopyStep& step);

// The cheapest layout whose tasks fit task_budget under the model; nullopt when not
// even one-chunk tasks fit.
std::optional<RechunkLayout> PlanRechunkLayout(const RechunkProblem& problem);

// The layout with the smallest tasks: through chunks min(source, target) (in RAM as far
// as memory_budget goes), one output chunk per task. What the budget error names when
// nothing fits.
RechunkLayout SmallestTaskLayout(const RechunkProblem& problem);

}  // namespace tessera::planner
