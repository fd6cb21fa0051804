// CopyOp: one copy of a rechunk as the ExecutableOp an executor runs. Task t writes
// region t (C order) of the grid of `task_shape` — whole chunks of the output, so no
// two tasks write one chunk — reading that region of the input, whatever chunks it
// touches. Its projection is exact for the input's read and the output's writes:
// the region, the input's read buffers, then per output chunk the chunk cut out of the
// region (unless the region is one chunk, moved as it is) and the write's buffers;
// chunks an in-RAM output keeps stay counted. Internal to src/plan.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "output_op.hpp"

namespace tessera::planner {

class CopyOp : public OutputOp {
 public:
  // `info` names the op; its shape, chunks (the output's), task_shape and num_tasks are
  // set here. `input_chunks` is the input's chunk grid (for choosing worst-case tasks).
  CopyOp(OpInfo info, std::shared_ptr<const StoredArray> input, Shape input_chunks,
         std::shared_ptr<OpOutput> output, Shape output_chunks, Shape task_shape,
         std::int64_t reserved_mem);

  std::int64_t projected_mem(std::int64_t task) const override;
  std::string DescribeTask(std::int64_t task) const override;
  bool IsTaskDone(std::int64_t task) const override;
  void RunTask(std::int64_t task) const override;

  // Over the edge regions and, per dimension, the one touching the most input chunks.
  std::int64_t MaxProjection(std::int64_t* worst_task = nullptr) const override;

 private:
  Region TaskRegion(std::int64_t task) const;

  std::shared_ptr<const StoredArray> input_;
  Shape input_chunks_;
  ChunkGrid output_grid_;
  ChunkGrid task_grid_;
  bool one_block_per_task_;  // task regions are the output's chunks
};

}  // namespace tessera::planner
