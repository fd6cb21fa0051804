#include "copy_op.hpp"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "region_copy.hpp"
#include "tessera/core/touched_blocks.hpp"

namespace tessera::planner {
namespace {

// The read's values as an array this task may hand over: moved out when nothing else
// holds them (a fresh read), copied when they are shared with the store.
NDArray TakeOrCopy(std::shared_ptr<const NDArray> data) {
  if (data.use_count() == 1) {
    // The only owner: moving the elements out of an object nobody else can see is safe.
    return std::move(const_cast<NDArray&>(*data));
  }
  return NDArray(*data);
}

// Along one dimension of `extent` in tasks of `task` over input chunks of `chunk`: the
// index of the first task touching the most chunks. A task's count depends only on
// where it starts within a chunk, which repeats every chunk / gcd(task, chunk) tasks, so
// one period (and the last task, cut by the extent) is all there is to look at: the
// cost does not grow with the extent (issue 14: 2^50 rows plan as fast as 2^10).
Index WorstTaskAlong(Index extent, Index task, Index chunk) {
  const Index tasks = (extent + task - 1) / task;
  const Index period = chunk / std::gcd(task, chunk);
  auto touched = [&](Index index) {
    const Index begin = index * task;
    const Index end = std::min(begin + task, extent);
    return (end - 1) / chunk - begin / chunk + 1;
  };
  Index most = -1;
  Index at = 0;
  auto consider = [&](Index index) {
    const Index count = touched(index);
    if (count > most) {
      most = count;
      at = index;
    }
  };
  // Within a period the starting offsets are the multiples of gcd(task, chunk), each
  // once; a period longer than 2^20 tasks is searched at the offset that touches most
  // (chunk - gcd), found by a modular inverse, instead of walked.
  constexpr Index kWalkLimit = Index{1} << 20;
  const Index walked = std::min(tasks, period);
  if (walked <= kWalkLimit) {
    for (Index index = 0; index < walked; ++index) consider(index);
  } else {
    consider(0);
    const Index gcd = std::gcd(task, chunk);
    // k * (task / gcd) == (chunk / gcd - 1) modulo period.
    const __int128 inverse = [&] {
      __int128 a = (task / gcd) % period, m = period, x0 = 0, x1 = 1;
      while (a > 1) {
        const __int128 q = a / m;
        __int128 t = m;
        m = a % m;
        a = t;
        t = x0;
        x0 = x1 - q * x0;
        x1 = t;
      }
      return (x1 % period + period) % period;
    }();
    const auto best = static_cast<Index>((inverse * (period - 1)) % period);
    if (best < tasks) consider(best);
  }
  consider(tasks - 1);
  return at;
}

// Per dimension, the task index (along that dimension) touching the most input chunks
// (first found): with the edges, the tasks whose projections bound the others'.
std::vector<std::vector<Index>> WorstTasks(const ChunkGrid& tasks, const Shape& input_chunks) {
  std::vector<std::vector<Index>> worst(tasks.shape().size());
  for (std::size_t d = 0; d < worst.size(); ++d) {
    if (tasks.shape()[d] <= 0) {
      worst[d] = {0, 1};
      continue;
    }
    const Index at = WorstTaskAlong(tasks.shape()[d], tasks.chunks()[d], input_chunks[d]);
    worst[d] = {at, at + 1};
  }
  return worst;
}

}  // namespace

CopyOp::CopyOp(OpInfo info, std::shared_ptr<const StoredArray> input, Shape input_chunks,
               std::shared_ptr<OpOutput> output, Shape output_chunks, Shape task_shape,
               std::int64_t reserved_mem)
    : OutputOp(std::move(info), std::move(output), reserved_mem),
      input_(std::move(input)),
      input_chunks_(std::move(input_chunks)),
      output_grid_(info_.shape, std::move(output_chunks)),
      task_grid_(info_.shape, std::move(task_shape)),
      one_block_per_task_(task_grid_.chunks() == output_grid_.chunks()) {
  info_.chunks = output_grid_.chunks();
  info_.task_shape = task_grid_.chunks();
  info_.num_tasks = task_grid_.num_blocks();
}

Region CopyOp::TaskRegion(std::int64_t task) const {
  return task_grid_.BlockRegion(task_grid_.BlockIndex(task));
}

std::int64_t CopyOp::projected_mem(std::int64_t task) const {
  const Region region = TaskRegion(task);
  std::int64_t held = input_->ProjectRead(region);
  std::int64_t peak = held;
  const std::int64_t itemsize = info_.dtype.itemsize();
  if (one_block_per_task_) {
    // The region is one chunk: handed over as it is (copied when the read shares it).
    const std::int64_t copy = input_->SharesRead(region) ? ShapeSize(region.shape) * itemsize : 0;
    return reserved_mem_ + held + copy + output_->ProjectWrite(task_grid_.BlockIndex(task));
  }
  auto block_peak = [&](const Shape& block) {
    const std::int64_t block_bytes = ShapeSize(output_grid_.BlockShape(block)) * itemsize;
    peak = std::max(peak, held + block_bytes + output_->ProjectWrite(block));
    return block_bytes;
  };
  // The output keeps a prefix of its blocks (OpOutput::KeepsBlock): when it keeps
  // none of the region's, `held` stays put and the blocks' peaks depend on their shapes
  // alone, so one block of each kind gives the peak (planning time does not grow with
  // the blocks a task writes).
  const std::vector<Shape> kinds = DistinctTouchedBlocks(output_grid_, region);
  if (!kinds.empty() && !output_->KeepsBlock(kinds.front())) {
    for (const Shape& block : kinds) block_peak(block);
    return reserved_mem_ + peak;
  }
  ForEachTouchedBlock(output_grid_, region, [&](const Shape& block) {
    const std::int64_t block_bytes = block_peak(block);
    if (output_->KeepsBlock(block)) held += block_bytes;
  });
  return reserved_mem_ + peak;
}

std::string CopyOp::DescribeTask(std::int64_t task) const {
  const Region region = TaskRegion(task);
  return "region " + ShapeToString(region.start) + " of shape " + ShapeToString(region.shape);
}

bool CopyOp::IsTaskDone(std::int64_t task) const {
  bool done = true;
  ForEachTouchedBlock(output_grid_, TaskRegion(task),
                      [&](const Shape& block) { done = done && output_->Has(block); });
  return done;
}

void CopyOp::RunTask(std::int64_t task) const {
  const Region region = TaskRegion(task);
  std::shared_ptr<const NDArray> data = input_->Read(region);
  if (one_block_per_task_) {
    output_->Write(task_grid_.BlockIndex(task), TakeOrCopy(std::move(data)));
    return;
  }
  ForEachTouchedBlock(output_grid_, region, [&](const Shape& block) {
    const Region block_region = output_grid_.BlockRegion(block);
    NDArray values(block_region.shape, info_.dtype);
    CopyBox(*data, region.start, values, block_region.start, block_region);
    output_->Write(block, std::move(values));
  });
}

std::int64_t CopyOp::MaxProjection(std::int64_t* worst_task) const {
  return LargestProjection(task_grid_, WorstTasks(task_grid_, input_chunks_), worst_task);
}

}  // namespace tessera::planner
