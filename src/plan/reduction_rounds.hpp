// The rounds that carry out one reduction node (reduce_op.hpp), each task combining as
// many blocks as allowed_mem holds.
//
// Round 1 reads the values in groups of blocks along the reduced dimensions; each later
// round combines groups of the previous round's partial states; the last round's group
// spans every reduced block and writes the result. A round's group is the largest whose
// exact task projection fits allowed_mem (found by bisection on the number of blocks, a
// group filling the reduced dimensions from the outermost), so the number of rounds
// follows from the budget. Round 1 also keeps at least 4 tasks per worker when the
// input has that many blocks, so that a reduction to few outputs still runs in
// parallel. When not even the smallest group fits (one block in round 1, two partials
// later), the round is planned with it anyway and the planner's memory check refuses it
// with the smallest allowed_mem. Internal to src/plan.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "reduce_op.hpp"
#include "tessera/core/spec.hpp"
#include "tessera/plan/node.hpp"

namespace tessera {

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

}  // namespace tessera
