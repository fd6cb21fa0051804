// ReduceOp: one round of a reduction as the ExecutableOp an executor runs.
//
// A round reads its input — the values (round 1) or the partial states of the round
// before — in groups of `group[d]` input blocks along each reduced dimension (one block
// along the others), and each task turns its group into one partial state per output
// element (kernels/reduction_kernels.hpp). A middle round writes the states as an
// array of bytes (the round's output grid plus a trailing state dimension); the last
// round, whose group spans every reduced block, writes the result.
//
// Task t is block t (C order) of the round's output grid: along a kept dimension the
// input's chunks, along a reduced one one element per group. Round 1 streams its group
// one block at a time: the states, a second state array for the block (merged into
// the first), and one block's read; a later round reads its group's partials at once:
//   round 1:  peak = max over blocks(states + block states + the read's peak), ...
//   later:    peak = max(read's peak, read + states), ...
//   then      max(states + results (last round), last held + write)
// exactly, from the input's and output's own projections. Internal to src/plan.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/reduction_kernels.hpp"
#include "output_op.hpp"

namespace tessera::planner {

struct ReductionRound {
  kernels::ReductionKernel kernel;
  // The round's input grid: the values' shape and chunks, or the partial states' grid
  // (without the state dimension) for a round after the first.
  Shape input_shape;
  Shape input_chunks;
  bool from_values = true;
  DType values_dtype = float64;  // from_values: the values' dtype
  std::vector<bool> reduced;     // per input dimension
  Shape group;                   // input blocks per task along each dimension (1 if kept)
  bool last = false;             // writes the result (else partial states)
  bool keepdims = false;         // last round: the result keeps reduced dimensions as 1
  // argmin/argmax: the axis indexed (-1: the flattened values) and the values' shape.
  int index_axis = -1;
  Shape values_shape;
  kernels::ReductionFinish finish;  // the last round's: values per output, correction
};

// Input blocks along each dimension the round reduces (at least 1: an empty dimension is
// one group), 1 along the others.
Shape ReducedBlocks(const ReductionRound& round);

// The round's output grid (see above): kept dimensions as the input's, reduced ones
// one element per group (at least one, even when the dimension is empty).
ChunkGrid ReductionOutputGrid(const ReductionRound& round);

class ReduceOp : public OutputOp {
 public:
  // `output`: the partial states (uint8, the output grid's shape plus state_bytes) for a
  // middle round, the reduction's result (its node's shape and chunks) for the last.
  ReduceOp(OpInfo info, ReductionRound round, std::shared_ptr<const StoredArray> input,
           std::shared_ptr<OpOutput> output, std::int64_t reserved_mem);

  std::int64_t projected_mem(std::int64_t task) const override;
  std::string DescribeTask(std::int64_t task) const override;
  bool IsTaskDone(std::int64_t task) const override;
  void RunTask(std::int64_t task) const override;
  std::int64_t MaxProjection(std::int64_t* worst_task = nullptr) const override;

  const ReductionRound& round() const { return round_; }

 private:
  Region InputRegion(const Shape& task_block) const;
  Shape OutputBlock(const Shape& task_block) const;
  Shape StatesShape(const Shape& task_block) const;

  NDArray ReduceValues(const Region& region, const Shape& states_shape) const;

  ReductionRound round_;
  std::shared_ptr<const StoredArray> input_;
  ChunkGrid input_grid_;
  ChunkGrid tasks_;
  DType read_dtype_;
};

}  // namespace tessera::planner
