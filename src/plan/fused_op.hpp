// FusedOp: one op of a finalized plan — a fused group's evaluator and the output its
// tasks write — as the ExecutableOp an executor runs. Task t computes block t (C order)
// of the root's grid. A source asked for as the result of compute() is read straight
// into the result (ResultOutput::WriteFrom), holding no block of its own. Internal to
// src/plan.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "fused_evaluator.hpp"
#include "output_op.hpp"

namespace tessera::planner {

class ZarrOutput;

class FusedOp : public OutputOp {
 public:
  FusedOp(OpInfo info, std::shared_ptr<const FusedEvaluator> evaluator,
          std::shared_ptr<OpOutput> output, std::int64_t reserved_mem, int workers);
  // `workers`: the tasks the run runs at once, which a task grid keeps busy.

  std::int64_t projected_mem(std::int64_t task) const override;
  std::string DescribeTask(std::int64_t task) const override;
  bool IsTaskDone(std::int64_t task) const override;
  void RunTask(std::int64_t task) const override;

  const FusedEvaluator& evaluator() const { return *evaluator_; }
  // Over the edge blocks of every kind (representative_tasks.hpp).
  std::int64_t MaxProjection(std::int64_t* worst_task = nullptr) const override;
  // The largest number of stored blocks one task reads.
  Index MaxInputBlocks() const;

 private:
  std::shared_ptr<const FusedEvaluator> evaluator_;
  ChunkGrid grid_;
  int workers_;  // the tasks the run runs at once (Spec::effective_total_workers)
  // Set when the op reads a source straight into the result.
  const StoredArray* direct_source_ = nullptr;
  ResultOutput* direct_result_ = nullptr;
  // Set when the op may encode a source held in memory straight into a Zarr output.
  const NDArray* held_source_ = nullptr;
  ZarrOutput* direct_zarr_ = nullptr;
  // Whether `block` is encoded straight from held_source_.
  bool EncodesFromHeld(const Shape& block) const;
};

}  // namespace tessera::planner
