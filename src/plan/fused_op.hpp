// FusedOp: one op of a finalized plan — a fused group's evaluator and the output its
// tasks write — as the ExecutableOp an executor runs. Task t computes block t (C order)
// of the root's grid. Internal to src/plan.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "fused_evaluator.hpp"
#include "op_output.hpp"
#include "tessera/plan/executable_op.hpp"

namespace tessera {

class FusedOp : public ExecutableOp {
 public:
  FusedOp(OpInfo info, std::shared_ptr<const FusedEvaluator> evaluator,
          std::shared_ptr<OpOutput> output, std::int64_t reserved_mem);

  const OpInfo& info() const override { return info_; }
  OpInfo& mutable_info() { return info_; }
  std::int64_t projected_mem(std::int64_t task) const override;
  std::string DescribeTask(std::int64_t task) const override;
  void Prepare() override { output_->Prepare(); }
  bool IsTaskDone(std::int64_t task) const override;
  void RunTask(std::int64_t task) const override;
  void Commit() override { output_->Commit(); }
  void Release() override { output_->Release(); }

  const std::shared_ptr<OpOutput>& output() const { return output_; }
  const FusedEvaluator& evaluator() const { return *evaluator_; }
  // The largest projection over the op's tasks (every task when there are few, else
  // every distinct combination of first/second/last-but-one/last block per dimension,
  // which covers each kind of edge), and the task it was found at.
  std::int64_t MaxProjection(std::int64_t* worst_task = nullptr) const;
  // The largest number of stored blocks one task reads.
  Index MaxInputBlocks() const;

 private:
  OpInfo info_;
  std::shared_ptr<const FusedEvaluator> evaluator_;
  std::shared_ptr<OpOutput> output_;
  ChunkGrid grid_;
  std::int64_t reserved_mem_;
};

}  // namespace tessera
