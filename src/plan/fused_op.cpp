#include "fused_op.hpp"

#include <algorithm>
#include <utility>

#include "region_copy.hpp"
#include "representative_tasks.hpp"
#include "zarr_output.hpp"

namespace tessera::planner {
namespace {

// Whole stored chunks are read per task only when there are at least this many per core.
constexpr int kTasksPerCore = 2;

// Whether `chunks` is a whole multiple of `of` along every dimension.
bool IsMultipleOf(const Shape& chunks, const Shape& of) {
  if (chunks.size() != of.size() || chunks.empty()) return false;
  for (std::size_t d = 0; d < chunks.size(); ++d) {
    if (of[d] <= 0 || chunks[d] % of[d] != 0) return false;
  }
  return true;
}

}  // namespace

FusedOp::FusedOp(OpInfo info, std::shared_ptr<const FusedEvaluator> evaluator,
                 std::shared_ptr<OpOutput> output, std::int64_t reserved_mem, int workers)
    : OutputOp(std::move(info), std::move(output), reserved_mem),
      evaluator_(std::move(evaluator)),
      grid_(evaluator_->root()->grid()),
      workers_(workers) {
  info_.shape = grid_.shape();
  info_.chunks = grid_.chunks();
  info_.dtype = evaluator_->root()->dtype();
  info_.num_tasks = grid_.num_blocks();
  const StoredArray* source = evaluator_->StoredCopySource();
  auto* result = dynamic_cast<ResultOutput*>(output_.get());
  auto* zarr = dynamic_cast<ZarrOutput*>(output_.get());
  if (source != nullptr && source->HeldWhole() != nullptr && zarr != nullptr) {
    held_source_ = source->HeldWhole();
    direct_zarr_ = zarr;
  }
  if (source != nullptr && source->ReadsInto() && result != nullptr) {
    direct_source_ = source;
    direct_result_ = result;
    // A task reads a whole stored chunk (a shard) into place: it holds one read block's
    // scratch at a time all the same, and reads the shard's index once, not per block;
    // unless that leaves too few tasks to keep every core busy.
    const Shape stored = source->ReadIntoChunks();
    if (IsMultipleOf(stored, grid_.chunks())) {
      ChunkGrid by_stored(grid_.shape(), stored);
      if (by_stored.num_blocks() >= Index{kTasksPerCore} * workers_) {
        grid_ = std::move(by_stored);
        info_.chunks = stored;
        info_.num_tasks = grid_.num_blocks();
      }
    }
  }
}

std::int64_t FusedOp::projected_mem(std::int64_t task) const {
  const Shape block = grid_.BlockIndex(task);
  if (direct_source_ != nullptr) {
    return reserved_mem_ + direct_source_->ProjectReadInto(grid_.BlockRegion(block));
  }
  if (EncodesFromHeld(block)) {
    return reserved_mem_ + direct_zarr_->ProjectWriteFrom(block, *held_source_);
  }
  const MemoryFigure figure = evaluator_->Project(grid_.BlockRegion(block));
  return reserved_mem_ + std::max(figure.peak, figure.result + output_->ProjectWrite(block));
}

std::string FusedOp::DescribeTask(std::int64_t task) const {
  return "block " + ShapeToString(grid_.BlockIndex(task));
}

bool FusedOp::IsTaskDone(std::int64_t task) const { return output_->Has(grid_.BlockIndex(task)); }

void FusedOp::RunTask(std::int64_t task) const {
  const Shape block = grid_.BlockIndex(task);
  if (direct_source_ != nullptr) {
    direct_result_->WriteFrom(grid_.BlockRegion(block), *direct_source_);
    return;
  }
  if (EncodesFromHeld(block)) {
    direct_zarr_->WriteFrom(block, *held_source_);
    return;
  }
  output_->Write(block, evaluator_->Evaluate(grid_.BlockRegion(block)));
}

bool FusedOp::EncodesFromHeld(const Shape& block) const {
  // A block that is one run of the held array is read as a view of it anyway (and
  // encoded from there); any other would be copied out first.
  return direct_zarr_ != nullptr && !IsOneRun(held_source_->shape(), grid_.BlockRegion(block));
}

std::int64_t FusedOp::MaxProjection(std::int64_t* worst_task) const {
  return LargestProjection(grid_, {}, worst_task);
}

Index FusedOp::MaxInputBlocks() const {
  Index largest = 0;
  ForRepresentativeTasks(grid_, {}, [&](Index task) {
    largest = std::max(largest, evaluator_->InputBlocks(grid_.BlockRegion(grid_.BlockIndex(task))));
  });
  return largest;
}

}  // namespace tessera::planner
