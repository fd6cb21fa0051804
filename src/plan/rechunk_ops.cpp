#include "rechunk_ops.hpp"

#include <algorithm>
#include <cmath>

#include "budget_text.hpp"
#include "rechunk_layout.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::planner {
namespace {

// Model budgets tried in turn: each a fraction of the one before.
constexpr double kBudgetShrink = 0.8;
constexpr int kAttempts = 16;

std::string CopyName(const Node& rechunk, std::size_t copy, std::size_t copies) {
  if (copy + 1 == copies) return rechunk.name();
  return rechunk.name() + "." + std::to_string(copy + 1);
}

RechunkOps MakeOps(const Node& rechunk, const RechunkLayout& layout, const RechunkInput& input,
                   const std::shared_ptr<OpOutput>& output, const Spec& spec,
                   const IntermediateFactory& make_intermediate) {
  RechunkOps ops;
  ops.strategy = layout.strategy;
  std::shared_ptr<const StoredArray> reading = input.array;
  std::int64_t previous_in_ram = 0;
  const std::size_t count = layout.steps.size();
  for (std::size_t k = 0; k < count; ++k) {
    const CopyStep& step = layout.steps[k];
    const bool last = k + 1 == count;
    std::shared_ptr<OpOutput> writing =
        last ? output
             : make_intermediate(static_cast<int>(k + 1), step.write_chunks, step.disk_chunks,
                                 step.blocks_in_memory, step.num_blocks);
    OpInfo info;
    info.name = CopyName(rechunk, k, count);
    info.kind = OpKind::kRechunk;
    info.fused = {rechunk.name()};
    info.shape = rechunk.shape();
    info.dtype = rechunk.dtype();
    info.tier = writing->tier();
    info.inner_chunks = writing->InnerChunks();
    const CopyTraffic traffic = CountTraffic(rechunk.shape(), rechunk.dtype().itemsize(), step);
    info.chunk_reads = traffic.chunk_reads;
    info.chunk_writes = traffic.chunk_writes;
    info.bytes_read = traffic.bytes_read;
    info.bytes_written = traffic.bytes_written;
    info.input_chunks = step.read_chunks;
    if (!last && step.disk_chunks != step.write_chunks) info.disk_chunks = step.disk_chunks;
    info.stage = static_cast<int>(k + 1);
    info.num_stages = static_cast<int>(count);
    const std::int64_t chunk_bytes = ShapeSize(step.write_chunks) * rechunk.dtype().itemsize();
    if (!last) {
      info.bytes_in_memory = std::min(
          rechunk.nbytes(), static_cast<std::int64_t>(step.blocks_in_memory) * chunk_bytes);
    }
    ops.peak_memory_in_ram =
        std::max(ops.peak_memory_in_ram, previous_in_ram + info.bytes_in_memory);
    previous_in_ram = info.bytes_in_memory;
    auto copy = std::make_shared<CopyOp>(std::move(info), reading, step.read_chunks, writing,
                                         step.write_chunks, step.task_shape, spec.reserved_mem);
    std::int64_t worst = 0;
    copy->mutable_info().projected_mem = copy->MaxProjection(&worst);
    ops.worst_tasks.push_back(worst);
    ops.copies.push_back(copy);
    reading = writing;
  }
  return ops;
}

std::int64_t LargestProjection(const RechunkOps& ops, std::size_t* at = nullptr) {
  std::int64_t largest = 0;
  for (std::size_t i = 0; i < ops.copies.size(); ++i) {
    if (ops.copies[i]->info().projected_mem > largest) {
      largest = ops.copies[i]->info().projected_mem;
      if (at != nullptr) *at = i;
    }
  }
  return largest;
}

std::string DescribeChunk(const Shape& chunks, DType dtype) {
  return ShapeToString(chunks) + ", " + format_bytes(ShapeSize(chunks) * dtype.itemsize());
}

}  // namespace

RechunkOps BuildRechunkOps(const Node& rechunk, const RechunkInput& input,
                           std::shared_ptr<OpOutput> output, std::int64_t memory_budget,
                           const Spec& spec, const IntermediateFactory& make_intermediate) {
  const Node& source = *rechunk.inputs().front();
  RechunkProblem problem;
  problem.shape = rechunk.shape();
  problem.itemsize = rechunk.dtype().itemsize();
  problem.source_chunks = source.chunks();
  problem.target_chunks = rechunk.chunks();
  problem.source_decodes = input.decodes;
  problem.memory_budget = memory_budget;
  problem.workers = spec.effective_total_workers();
  const std::int64_t budget = spec.allowed_mem - spec.reserved_mem;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    problem.task_budget =
        static_cast<std::int64_t>(static_cast<double>(budget) * std::pow(kBudgetShrink, attempt));
    const std::optional<RechunkLayout> layout = PlanRechunkLayout(problem);
    if (!layout) break;
    RechunkOps ops = MakeOps(rechunk, *layout, input, output, spec, make_intermediate);
    if (LargestProjection(ops) <= spec.allowed_mem) return ops;
  }
  // The model found nothing: the smallest tasks (their intermediate in RAM when it may
  // be, else on disk), projected exactly, either fit after all or name the budget.
  RechunkProblem on_disk = problem;
  on_disk.memory_budget = 0;
  RechunkOps smallest =
      MakeOps(rechunk, SmallestTaskLayout(on_disk), input, output, spec, make_intermediate);
  if (problem.memory_budget > 0) {
    RechunkOps in_ram =
        MakeOps(rechunk, SmallestTaskLayout(problem), input, output, spec, make_intermediate);
    if (LargestProjection(in_ram) < LargestProjection(smallest)) smallest = std::move(in_ram);
  }
  std::size_t at = 0;
  const std::int64_t needed = LargestProjection(smallest, &at);
  if (needed <= spec.allowed_mem) return smallest;
  const OpInfo& info = smallest.copies[at]->info();
  throw MemoryBudgetError(
      "Projected blockwise memory (" + std::to_string(needed) + ") exceeds allowed_mem (" +
          std::to_string(spec.allowed_mem) + "), including reserved_mem (" +
          std::to_string(spec.reserved_mem) + "), in op \"" + rechunk.name() +
          "\" (rechunk from chunks " + DescribeChunk(source.chunks(), source.dtype()) +
          " to chunks " + DescribeChunk(rechunk.chunks(), rechunk.dtype()) + ", " +
          std::to_string(info.num_tasks) + " tasks in its largest copy, largest at " +
          smallest.copies[at]->DescribeTask(smallest.worst_tasks[at]) +
          "): a task must hold at least one source or target chunk with its codec buffers; " +
          SmallestBudgetText(needed) + ". Raise allowed_mem or rechunk from or to smaller chunks.",
      needed);
}

}  // namespace tessera::planner
