// ContractOp: a contraction node (matmul, tensordot, vecdot, outer: NodeKind::kContract,
// plan/contraction.hpp) as the ExecutableOp an executor runs.
//
// Task t computes block t (C order) of the result's grid by streaming over the
// contracted dimensions in slabs of `widths` (one per contracted pair): per slab it
// reads the region of a (its batch and free block x the slab) and of b, repacks either
// when its dimensions are not in a GEMM's order, and adds their product into an
// accumulator holding the block (kernels/gemm.hpp). Its projection is exact for that
// sequence:
//
//   reserved_mem + accumulator + max(largest slab step, the output's write)
//   slab step = ProjectRead(a region) + ProjectRead(b region) + repacked copies
//
// with the slab steps and tasks taken over representative_tasks.hpp's picks.
// Internal to src/plan.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/gemm.hpp"
#include "output_op.hpp"
#include "tessera/core/spec.hpp"
#include "tessera/plan/internal/node.hpp"

namespace tessera::planner {

class ContractOp : public OutputOp {
 public:
  // `node` is the kContract node (its inputs are read through `a` and `b`); `widths`
  // the slab's extent along each contracted pair (>= 1). `info` names the op; its
  // shape, chunks, dtype, task_shape, num_tasks and contraction fields are set here.
  ContractOp(OpInfo info, const Node& node, std::shared_ptr<const StoredArray> a,
             std::shared_ptr<const StoredArray> b, std::shared_ptr<OpOutput> output, Shape widths,
             std::int64_t reserved_mem);

  std::int64_t projected_mem(std::int64_t task) const override;
  std::string DescribeTask(std::int64_t task) const override;
  bool IsTaskDone(std::int64_t task) const override;
  void RunTask(std::int64_t task) const override;
  std::int64_t MaxProjection(std::int64_t* worst_task = nullptr) const override;

  // One operand as a task reads it (defined in contract_op.cpp).
  struct Operand {
    std::shared_ptr<const StoredArray> array;
    Shape shape;
    Shape chunks;
    std::vector<int> dims;   // Contraction::a_dims or b_dims
    std::vector<int> order;  // its dimensions in GEMM order; empty: read as it is
    bool transposed = false;
    // Per batch dimension of the result: the operand's dimension along it that
    // advances with the result (not absent, not stretched from 1), or -1.
    std::vector<int> batch_dims;
    // Its leading dimensions in GEMM order (its batch dimensions): the result's batch
    // dimension each advances with, or -1 when stretched from 1.
    std::vector<int> leading_batch;
  };

 private:
  Region OperandRegion(const Operand& operand, const Region& block, const Region& slab) const;
  // Bytes a slab step holds: both reads and their repacked copies.
  std::int64_t ProjectSlab(const Region& block, const Region& slab) const;
  // The slab steps whose projections bound the others' (representative_tasks.hpp).
  std::vector<std::vector<Index>> WorstSlabs() const;
  // accumulator += a * b over the block's batch elements.
  void MultiplyInto(NDArray& accumulator, const NDArray& a, const NDArray& b, const Region& block,
                    const Region& slab) const;

  Operand a_;
  Operand b_;
  int num_batch_;
  int free_a_;
  ChunkGrid grid_;   // the result's blocks: one per task
  ChunkGrid slabs_;  // the contracted dimensions' slabs
  kernels::GemmKernel gemm_;
};

// The op computing contraction `node` with the widest slab that keeps every task within
// spec.allowed_mem: per contracted pair in order, the whole extent, else the largest
// multiple of a's chunk along it, else the largest width below that chunk (then the next
// pair shrinks too). When even width 1 does not fit, the op with the smallest slab
// (whose projection the finalize check then reports).
std::shared_ptr<ContractOp> MakeContractOp(OpInfo info, const Node& node,
                                           std::shared_ptr<const StoredArray> a,
                                           std::shared_ptr<const StoredArray> b,
                                           std::shared_ptr<OpOutput> output, const Spec& spec);

}  // namespace tessera::planner
