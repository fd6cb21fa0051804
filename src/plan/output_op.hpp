// OutputOp: what every op of a finalized plan shares — its OpInfo, the OpOutput its tasks
// write, reserved_mem — and the search for its largest task projection. FusedOp and
// CopyOp derive from it and say what a task computes and holds. Internal to src/plan.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "op_output.hpp"
#include "tessera/core/chunk_grid.hpp"
#include "tessera/plan/internal/executable_op.hpp"

namespace tessera::planner {

class OutputOp : public ExecutableOp {
 public:
  const OpInfo& info() const override { return info_; }
  OpInfo& mutable_info() { return info_; }
  void CheckBeforeRun() const override { output_->CheckBeforeRun(); }
  void Prepare() override { output_->Prepare(); }
  void Commit() override { output_->Commit(); }
  void Release() override { output_->Release(); }
  void FollowPrepare() override { output_->FollowPrepare(); }
  void FollowCommit() override { output_->FollowCommit(); }
  void FollowRelease() override { output_->FollowRelease(); }
  SharedBlocks* shared_blocks() override { return output_->shared_blocks(); }

  const std::shared_ptr<OpOutput>& output() const { return output_; }
  // The largest projection over the op's representative tasks (representative_tasks.hpp),
  // and the task it was found at.
  virtual std::int64_t MaxProjection(std::int64_t* worst_task = nullptr) const = 0;

 protected:
  OutputOp(OpInfo info, std::shared_ptr<OpOutput> output, std::int64_t reserved_mem)
      : info_(std::move(info)), output_(std::move(output)), reserved_mem_(reserved_mem) {}

  // MaxProjection over `tasks` (one task per block), with `extra` worst-case picks.
  std::int64_t LargestProjection(const ChunkGrid& tasks,
                                 const std::vector<std::vector<Index>>& extra,
                                 std::int64_t* worst_task) const;

  OpInfo info_;
  std::shared_ptr<OpOutput> output_;
  std::int64_t reserved_mem_;
};

}  // namespace tessera::planner
