// The rounds that carry out one reduction node (reduce_op.hpp).
//
// Round 1 reads the values in groups of blocks along the reduced dimensions, one block
// at a time; each later round combines groups of the previous round's partial states,
// read at once; the last round's group spans every reduced block and writes the result.
// A later round's group is the largest whose exact task projection fits allowed_mem
// (found by bisection on the number of partials, a group filling the reduced dimensions
// from the outermost), so the number of rounds follows from the budget. Round 1's
// memory does not grow with its group (it streams), so its group is as large as
// parallelism allows: at least 4 tasks per worker when the input has that many blocks.
// When not even the smallest group fits (one block in round 1, two partials later),
// MemoryBudgetError names the smallest allowed_mem under which every round fits.
// Internal to src/plan.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "reduce_op.hpp"
#include "tessera/core/spec.hpp"
#include "tessera/plan/internal/node.hpp"

namespace tessera::planner {

// Makes the output of middle round `round` (1-based): partial states of `shape`/`chunks`
// (uint8).
using PartialsFactory =
    std::function<std::shared_ptr<OpOutput>(int round, const Shape& shape, const Shape& chunks)>;

struct ReductionOps {
  std::vector<std::shared_ptr<ReduceOp>> rounds;  // in order; the last writes the result
  std::vector<std::int64_t> worst_tasks;          // per round: the task of its projection
};

// `values`: how round 1 reads the reduction's input (stored, or computed when read).
ReductionOps BuildReductionOps(const Node& reduce, std::shared_ptr<const StoredArray> values,
                               std::shared_ptr<OpOutput> result, const Spec& spec,
                               const PartialsFactory& make_partials);

}  // namespace tessera::planner
