// Reshape: how the axes of an array and of its reshape line up, and ReshapeOp, the
// ExecutableOp computing a reshape node (tessera/plan/internal/index_map.hpp MakeReshape).
//
// The axes of both shapes split into groups with equal products, in order: input axes
// [in_begin, in_end) hold the same elements, in C order, as output axes
// [out_begin, out_end) (a merge, a split, or one axis each). When, in every group, the
// chunks of all axes but the first are whole, a block of the output is one region of
// the input read and reinterpreted: task t reads that region, copies it into the
// output block and writes it:
//   projected = reserved_mem + block + max(the region's read, the output's write).
// Internal to src/plan.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "output_op.hpp"

namespace tessera::planner {

struct ReshapeGroup {
  std::size_t in_begin = 0, in_end = 0;
  std::size_t out_begin = 0, out_end = 0;
};

// The groups of `in` and `out` (equal sizes > 0); an axis of extent 1 with no
// counterpart makes a group of its own.
std::vector<ReshapeGroup> ReshapeGroups(const Shape& in, const Shape& out);
// The input's chunks closest to `in_chunks` with which blocks line up: per group,
// whole along every axis but the first, and along the first a multiple of what makes
// a block a whole number of output rows.
Shape AlignedInputChunks(const std::vector<ReshapeGroup>& groups, const Shape& in,
                         const Shape& in_chunks, const Shape& out);
// The output's chunks for aligned input chunks: per group, the first axis holds what
// one input block holds, the others whole.
Shape ReshapeOutputChunks(const std::vector<ReshapeGroup>& groups, const Shape& in,
                          const Shape& in_chunks, const Shape& out);

class ReshapeOp : public OutputOp {
 public:
  // `info` names the op; its shape, chunks (aligned with `input_shape`'s chunks) and
  // dtype are the output's; num_tasks is set here.
  ReshapeOp(OpInfo info, std::shared_ptr<const StoredArray> input, Shape input_shape,
            std::shared_ptr<OpOutput> output, std::int64_t reserved_mem);

  std::int64_t projected_mem(std::int64_t task) const override;
  std::string DescribeTask(std::int64_t task) const override;
  bool IsTaskDone(std::int64_t task) const override;
  void RunTask(std::int64_t task) const override;
  std::int64_t MaxProjection(std::int64_t* worst_task = nullptr) const override;

  // The region of the input holding output block `block`'s elements.
  Region InputRegion(const Shape& block) const;

 private:
  std::shared_ptr<const StoredArray> input_;
  Shape input_shape_;
  std::vector<ReshapeGroup> groups_;
  ChunkGrid grid_;
};

}  // namespace tessera::planner
