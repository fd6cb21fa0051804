#include "reduce_op.hpp"

#include <algorithm>
#include <utility>

#include "region_copy.hpp"
#include "representative_tasks.hpp"

namespace tessera::planner {

Shape ReducedBlocks(const ReductionRound& round) {
  Shape blocks(round.input_shape.size(), 1);
  for (std::size_t d = 0; d < blocks.size(); ++d) {
    if (round.reduced[d])
      blocks[d] = std::max<Index>(1, CeilDiv(round.input_shape[d], round.input_chunks[d]));
  }
  return blocks;
}

ChunkGrid ReductionOutputGrid(const ReductionRound& round) {
  const Shape blocks = ReducedBlocks(round);
  Shape shape = round.input_shape;
  Shape chunks = round.input_chunks;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (!round.reduced[d]) continue;
    shape[d] = CeilDiv(blocks[d], round.group[d]);
    chunks[d] = 1;
  }
  return ChunkGrid(std::move(shape), std::move(chunks));
}

ReduceOp::ReduceOp(OpInfo info, ReductionRound round, std::shared_ptr<const StoredArray> input,
                   std::shared_ptr<OpOutput> output, std::int64_t reserved_mem)
    : OutputOp(std::move(info), std::move(output), reserved_mem),
      round_(std::move(round)),
      input_(std::move(input)),
      input_grid_(round_.input_shape, round_.input_chunks),
      tasks_(ReductionOutputGrid(round_)),
      read_dtype_(round_.from_values ? round_.values_dtype : uint8) {
  info_.num_tasks = tasks_.num_blocks();
  info_.task_shape = round_.group;
  info_.input_chunks = round_.input_chunks;
}

Region ReduceOp::InputRegion(const Shape& task_block) const {
  Region region = tasks_.BlockRegion(task_block);
  for (std::size_t d = 0; d < region.start.size(); ++d) {
    if (!round_.reduced[d]) continue;
    const Index span = round_.group[d] * round_.input_chunks[d];
    const Index begin = std::min(task_block[d] * span, round_.input_shape[d]);
    region.start[d] = begin;
    region.shape[d] = std::min(begin + span, round_.input_shape[d]) - begin;
  }
  if (!round_.from_values) {
    // Partial states carry their bytes as a trailing dimension.
    region.start.push_back(0);
    region.shape.push_back(round_.kernel.state_bytes);
  }
  return region;
}

Shape ReduceOp::StatesShape(const Shape& task_block) const {
  Shape shape = tasks_.BlockShape(task_block);
  shape.push_back(round_.kernel.state_bytes);
  return shape;
}

Shape ReduceOp::OutputBlock(const Shape& task_block) const {
  if (!round_.last) {
    Shape block = task_block;
    block.push_back(0);
    return block;
  }
  Shape block;
  for (std::size_t d = 0; d < task_block.size(); ++d) {
    if (!round_.reduced[d] || round_.keepdims)
      block.push_back(round_.reduced[d] ? 0 : task_block[d]);
  }
  return block;
}

std::int64_t ReduceOp::projected_mem(std::int64_t task) const {
  const Shape task_block = tasks_.BlockIndex(task);
  const Region region = InputRegion(task_block);
  const std::int64_t outputs = ShapeSize(tasks_.BlockShape(task_block));
  const std::int64_t states = outputs * round_.kernel.state_bytes;
  std::int64_t peak = states;
  if (round_.from_values && ShapeSize(region.shape) > 0) {
    const Index blocks = CountTouchedBlocks(input_grid_, region);
    const std::int64_t block_states = blocks > 1 ? states : 0;
    // The group's blocks differ at its edges only: those stand for the others.
    const std::size_t ndim = region.start.size();
    Shape first(ndim);
    Shape counts(ndim);
    for (std::size_t d = 0; d < ndim; ++d) {
      const Index chunk = input_grid_.chunks()[d];
      first[d] = region.start[d] / chunk;
      counts[d] = (region.start[d] + region.shape[d] - 1) / chunk - first[d] + 1;
    }
    const ChunkGrid group(counts, Shape(ndim, 1));
    ForRepresentativeTasks(group, {}, [&](Index index) {
      Shape block = group.BlockIndex(index);
      for (std::size_t d = 0; d < ndim; ++d) block[d] += first[d];
      const Region read = input_grid_.BlockRegion(block);
      const std::int64_t held = input_->SharesRead(read) ? 0 : RegionBytes(read, read_dtype_);
      peak = std::max(peak, states + block_states + std::max(input_->ProjectRead(read), held));
    });
  } else if (ShapeSize(region.shape) > 0) {
    const std::int64_t held = input_->SharesRead(region) ? 0 : RegionBytes(region, read_dtype_);
    peak = std::max({peak, input_->ProjectRead(region), held + states});
  }
  const std::int64_t results = round_.last ? outputs * info_.dtype.itemsize() : 0;
  const std::int64_t written = round_.last ? results : states;
  const std::int64_t write = output_->ProjectWrite(OutputBlock(task_block));
  return reserved_mem_ + std::max({peak, states + results, written + write});
}

std::string ReduceOp::DescribeTask(std::int64_t task) const {
  const Region region = InputRegion(tasks_.BlockIndex(task));
  return "the input region " + ShapeToString(region.start) + " of shape " +
         ShapeToString(region.shape);
}

bool ReduceOp::IsTaskDone(std::int64_t task) const {
  return output_->Has(OutputBlock(tasks_.BlockIndex(task)));
}

// Round 1: the states of `region`, reduced one block at a time.
NDArray ReduceOp::ReduceValues(const Region& region, const Shape& states_shape) const {
  NDArray states(states_shape, uint8);
  if (ShapeSize(region.shape) == 0) {
    const NDArray empty(region.shape, read_dtype_);
    round_.kernel.from_values(empty, round_.reduced, region.start, round_.values_shape,
                              round_.index_axis, states.mutable_bytes().data());
    return states;
  }
  const bool several = CountTouchedBlocks(input_grid_, region) > 1;
  NDArray block_states(several ? states_shape : Shape{0}, uint8);
  bool first = true;
  ForEachTouchedBlock(input_grid_, region, [&](const Shape& block) {
    const Region read = input_grid_.BlockRegion(block);
    const std::shared_ptr<const NDArray> values = input_->Read(read);
    std::byte* into = first ? states.mutable_bytes().data() : block_states.mutable_bytes().data();
    round_.kernel.from_values(*values, round_.reduced, read.start, round_.values_shape,
                              round_.index_axis, into);
    if (!first) {
      round_.kernel.merge(states.mutable_bytes().data(), block_states.bytes().data(),
                          ShapeSize(states_shape) / round_.kernel.state_bytes);
    }
    first = false;
  });
  return states;
}

void ReduceOp::RunTask(std::int64_t task) const {
  const Shape task_block = tasks_.BlockIndex(task);
  const Region region = InputRegion(task_block);
  NDArray states = [&] {
    if (round_.from_values) return ReduceValues(region, StatesShape(task_block));
    const std::shared_ptr<const NDArray> partials = input_->Read(region);  // then the states
    NDArray combined(StatesShape(task_block), uint8);
    round_.kernel.from_partials(*partials, round_.reduced, combined.mutable_bytes().data());
    return combined;
  }();
  if (!round_.last) {
    output_->Write(OutputBlock(task_block), std::move(states));
    return;
  }
  const Shape output_block = OutputBlock(task_block);
  const Shape block_shape = tasks_.BlockShape(task_block);
  Shape result_shape;
  for (std::size_t d = 0; d < block_shape.size(); ++d) {
    if (!round_.reduced[d] || round_.keepdims) result_shape.push_back(block_shape[d]);
  }
  NDArray results(std::move(result_shape), info_.dtype);
  round_.kernel.finish(states.bytes().data(), results.size(), round_.finish,
                       results.mutable_bytes().data());
  { const NDArray freed = std::move(states); }
  output_->Write(output_block, std::move(results));
}

std::int64_t ReduceOp::MaxProjection(std::int64_t* worst_task) const {
  return LargestProjection(tasks_, {}, worst_task);
}

}  // namespace tessera::planner
