// GatherOp: a gather node (tessera/plan/internal/index_map.hpp) as the ExecutableOp an executor
// runs. Task t computes block t (C order) of the output: for each input chunk the
// block's indices touch — only those — it reads the sub-box of that chunk the block
// needs (StoredArray::Read of the box bounding the indices inside the chunk) and
// scatters its values into the block, copying runs that are contiguous on both sides
// with memcpy. It holds the output block and one read at a time, then writes the block:
//   projected = reserved_mem + block + max(largest read, the output's write),
// each term exact for its store (op_output.hpp). What a task knows of its indices is
// held as segments (a few per read along each axis: one for a slice, flip, roll,
// repeat or permutation, one per period for tile), outside the accounted buffers and
// small beside them. Internal to src/plan.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "output_op.hpp"
#include "tessera/plan/internal/index_map.hpp"

namespace tessera::planner {

class GatherOp : public OutputOp {
 public:
  // `inputs[k]` reads source k of `map`, an array on the grid `input_grids[k]`. `info`
  // names the op; its shape, chunks, dtype are the output's; num_tasks, chunk_reads and
  // chunk_writes are set here.
  GatherOp(OpInfo info, std::shared_ptr<const IndexMap> map,
           std::vector<std::shared_ptr<const StoredArray>> inputs,
           std::vector<ChunkGrid> input_grids, std::shared_ptr<OpOutput> output,
           std::int64_t reserved_mem);

  std::int64_t projected_mem(std::int64_t task) const override;
  std::string DescribeTask(std::int64_t task) const override;
  bool IsTaskDone(std::int64_t task) const override;
  void RunTask(std::int64_t task) const override;
  // Over the edge blocks and, per dimension, the block whose reads are the largest.
  std::int64_t MaxProjection(std::int64_t* worst_task = nullptr) const override;

  // Output positions position + k (from the block's start) reading input indices
  // index + (k / every) * step, for k in [0, count) (every > 1: repeat's runs).
  struct Segment {
    Index position = 0;
    Index index = 0;
    Index count = 0;
    Index step = 0;
    Index every = 1;
    Index IndexAt(Index k) const { return index + k / every * step; }
    friend bool operator==(const Segment&, const Segment&) = default;
  };
  // Along one output axis of a block, what one input chunk supplies: its segments and
  // the range [first, last] of the input indices they read (inside the chunk).
  struct AxisPiece {
    Index first = 0;
    Index last = 0;
    std::vector<Segment> segments;
  };
  // Per output axis, the pieces source `source` supplies to the block at `region`; an
  // axis without pieces means the source supplies nothing to this block.
  std::vector<std::vector<AxisPiece>> Pieces(std::size_t source, const Region& region) const;

 private:
  // The pieces of output axis `d` of the block at `region` (other axes ignored).
  std::vector<AxisPiece> AxisPieces(std::size_t source, std::size_t d, const Region& region) const;
  // The box of the source's input read for one combination of pieces (one per axis).
  Region ReadBox(std::size_t source, const std::vector<const AxisPiece*>& pieces) const;
  // The largest ProjectRead over the block's reads (a bound from the largest piece per
  // axis when there are too many combinations to enumerate).
  std::int64_t LargestRead(const Region& region) const;
  void Scatter(const NDArray& box_values, const Region& box, std::size_t source,
               const std::vector<const AxisPiece*>& pieces, NDArray& block) const;

  std::shared_ptr<const IndexMap> map_;
  std::vector<std::shared_ptr<const StoredArray>> inputs_;
  std::vector<ChunkGrid> input_grids_;
  // Per source, per input axis: the output axis reading it, or -1 (fixed).
  std::vector<std::vector<int>> reader_axis_;
  ChunkGrid grid_;
  std::vector<std::vector<Index>> worst_blocks_;  // per dimension, for MaxProjection
};

}  // namespace tessera::planner
