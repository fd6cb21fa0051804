// The ops that carry out one rechunk node: its layout (rechunk_layout.hpp) made into
// CopyOps, each checked against allowed_mem with its exact projection. When the
// model's layout projects above allowed_mem, the layout is planned again under a
// smaller model budget; when even one-chunk tasks cannot fit, MemoryBudgetError names
// the chunks and the smallest allowed_mem that would run. Internal to src/plan.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "copy_op.hpp"
#include "op_output.hpp"
#include "tessera/core/spec.hpp"
#include "tessera/plan/internal/node.hpp"

namespace tessera::planner {

// Makes the intermediate written by copy `copy` (1-based) of a rechunk: written in
// `chunks`, its first `blocks_in_memory` blocks kept in RAM (all of them: the memory
// tier), the others stored on disk in `disk_chunks` (which tile `chunks`).
using IntermediateFactory =
    std::function<std::shared_ptr<OpOutput>(int copy, const Shape& chunks, const Shape& disk_chunks,
                                            Index blocks_in_memory, Index num_blocks)>;

struct RechunkInput {
  std::shared_ptr<const StoredArray> array;  // the rechunk's input, as stored
  bool decodes = true;                       // false when held decoded in RAM
};

struct RechunkOps {
  std::string strategy;
  std::vector<std::shared_ptr<CopyOp>> copies;  // in order; the last writes `output`
  std::vector<std::int64_t> worst_tasks;        // per copy: the task of its projection
  std::int64_t peak_memory_in_ram = 0;          // intermediates' bytes in RAM at once, at most
};

RechunkOps BuildRechunkOps(const Node& rechunk, const RechunkInput& input,
                           std::shared_ptr<OpOutput> output, std::int64_t memory_budget,
                           const Spec& spec, const IntermediateFactory& make_intermediate);

}  // namespace tessera::planner
