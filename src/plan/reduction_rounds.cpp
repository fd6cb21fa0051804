#include "reduction_rounds.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "budget_text.hpp"
#include "node_detail.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::planner {
namespace {

// A group of at most `k` blocks: the outermost reduced dimensions first (a region
// growing along them keeps each block contiguous in it, so blocks decode in place),
// each group extent evened out so the last group along a dimension is not a sliver.
Shape GroupOf(Index k, const Shape& blocks, const std::vector<bool>& reduced) {
  Shape group(blocks.size(), 1);
  Index left = std::max<Index>(k, 1);
  for (std::size_t d = 0; d < blocks.size(); ++d) {
    if (!reduced[d]) continue;
    const Index g = std::min(blocks[d], left);
    group[d] = CeilDiv(blocks[d], CeilDiv(blocks[d], g));
    left = std::max<Index>(left / g, 1);
  }
  return group;
}

}  // namespace

namespace {

// Plans the rounds of one reduction; see reduction_rounds.hpp.
class RoundPlanner {
 public:
  RoundPlanner(const Node& reduce, std::shared_ptr<const StoredArray> values,
               std::shared_ptr<OpOutput> result, const Spec& spec,
               const PartialsFactory& make_partials)
      : reduce_(reduce), result_(std::move(result)), spec_(spec), make_partials_(make_partials) {
    const Node& input = *reduce.inputs().front();
    const NodeDetail& detail = reduce.detail();
    first_.kernel = kernels::GetReductionKernel(detail.reduction, input.dtype(), reduce.dtype());
    first_.input_shape = input.shape();
    first_.input_chunks = input.chunks();
    first_.values_dtype = input.dtype();
    first_.reduced.assign(input.shape().size(), false);
    for (const int axis : detail.axes) first_.reduced[static_cast<std::size_t>(axis)] = true;
    first_.keepdims = detail.keepdims;
    first_.values_shape = input.shape();
    first_.index_axis = detail.axes.size() == 1 && input.ndim() > 1 ? detail.axes.front() : -1;
    first_.finish.correction = detail.correction;
    first_.finish.reduced_count = 1;
    for (const int axis : detail.axes)
      first_.finish.reduced_count *=
          static_cast<double>(input.shape()[static_cast<std::size_t>(axis)]);
    values_ = std::move(values);
  }

  ReductionOps Plan() {
    ReductionOps ops;
    ReductionRound round = first_;
    std::shared_ptr<const StoredArray> reader = values_;
    const Index min_tasks = 4 * static_cast<Index>(spec_.effective_total_workers());
    for (int number = 1;; ++number) {
      const Shape blocks = ReducedBlocks(round);
      const Index reduced_blocks = ShapeSize(blocks);
      round.group = blocks;
      const Index kept_tasks = ReductionOutputGrid(round).num_blocks();
      const auto fits = [&](const Shape& group, bool last) {
        return Make(round, reader, number, group, last)->MaxProjection() <= spec_.allowed_mem;
      };
      // Round 1 keeps the workers busy: no single round over few outputs.
      const bool parallel_enough =
          !round.from_values || kept_tasks == 0 || kept_tasks >= min_tasks || reduced_blocks == 1;
      if (parallel_enough && fits(blocks, true)) {
        ops.rounds.push_back(Make(round, reader, number, blocks, true));
        break;
      }
      // The largest group that fits, by bisection on its number of blocks.
      const Index smallest = round.from_values ? 1 : 2;
      Index most = reduced_blocks - 1;
      if (round.from_values && kept_tasks < min_tasks) {
        const Index groups = CeilDiv(min_tasks, kept_tasks);
        most = std::min(most, std::max<Index>(1, CeilDiv(reduced_blocks, groups)));
      }
      most = std::max(most, smallest);
      Index low = smallest;
      if (fits(GroupOf(most, blocks, round.reduced), false)) {
        low = most;
      } else {
        if (!fits(GroupOf(smallest, blocks, round.reduced), smallest >= reduced_blocks)) {
          Refuse(round, reader, number, smallest);
        }
        Index high = most;  // does not fit
        while (high - low > 1) {
          const Index mid = low + (high - low) / 2;
          (fits(GroupOf(mid, blocks, round.reduced), false) ? low : high) = mid;
        }
      }
      const Shape group = GroupOf(low, blocks, round.reduced);
      if (ShapeSize(group) >= reduced_blocks) {
        ops.rounds.push_back(Make(round, reader, number, blocks, true));  // two partials left
        break;
      }
      ops.rounds.push_back(Make(round, reader, number, group, false));
      // The next round reads this one's partial states.
      round = PartialsRound(round, group);
      reader = ops.rounds.back()->output();
    }
    const int count = static_cast<int>(ops.rounds.size());
    for (int k = 0; k < count; ++k) {
      OpInfo& info = ops.rounds[static_cast<std::size_t>(k)]->mutable_info();
      info.stage = k + 1;
      info.num_stages = count;
      std::int64_t worst = 0;
      info.projected_mem = ops.rounds[static_cast<std::size_t>(k)]->MaxProjection(&worst);
      ops.worst_tasks.push_back(worst);
    }
    return ops;
  }

 private:
  std::shared_ptr<ReduceOp> Make(const ReductionRound& round,
                                 std::shared_ptr<const StoredArray> reader, int number,
                                 const Shape& group, bool last) const {
    ReductionRound candidate = round;
    candidate.group = group;
    candidate.last = last;
    OpInfo info;
    info.kind = OpKind::kReduce;
    info.fused = {reduce_.name()};
    std::shared_ptr<OpOutput> output = result_;
    if (last) {
      info.name = reduce_.name();
      info.shape = reduce_.shape();
      info.chunks = reduce_.chunks();
      info.dtype = reduce_.dtype();
    } else {
      info.name = reduce_.name() + "." + std::to_string(number);
      const ChunkGrid grid = ReductionOutputGrid(candidate);
      info.shape = grid.shape();
      info.shape.push_back(round.kernel.state_bytes);
      info.chunks = grid.chunks();
      info.chunks.push_back(round.kernel.state_bytes);
      info.dtype = uint8;
      output = make_partials_(number, info.shape, info.chunks);
    }
    info.tier = output->tier();
    info.inner_chunks = output->InnerChunks();
    return std::make_shared<ReduceOp>(std::move(info), std::move(candidate), std::move(reader),
                                      output, spec_.reserved_mem);
  }

  // The round reading the partial states `round` writes with groups of `group`.
  static ReductionRound PartialsRound(const ReductionRound& round, const Shape& group) {
    ReductionRound next = round;
    next.group = group;
    const ChunkGrid partials = ReductionOutputGrid(next);
    next.input_shape = partials.shape();
    next.input_chunks = partials.chunks();
    next.from_values = false;
    return next;
  }

  // The smallest allowed_mem under which every round fits: round 1 with one block per
  // task, and — when partial states must be combined — a round of two partials, middle
  // or last (its reads are the same whatever the rounds before chose).
  std::int64_t Requirement(int number) const {
    const Shape blocks = ReducedBlocks(first_);
    std::int64_t needed =
        Make(first_, values_, 1, GroupOf(1, blocks, first_.reduced), ShapeSize(blocks) <= 1)
            ->MaxProjection();
    if (ShapeSize(blocks) <= 1) return needed;
    // Two partials along the outermost reduced dimension.
    ReductionRound two = PartialsRound(first_, Shape(first_.input_shape.size(), 1));
    bool first = true;
    for (std::size_t d = 0; d < two.input_shape.size(); ++d) {
      if (!two.reduced[d]) continue;
      two.input_shape[d] = first ? 2 : 1;
      first = false;
    }
    const Shape pair = ReducedBlocks(two);
    // The two partials, stored as a round before would store them.
    Shape shape = two.input_shape;
    shape.push_back(two.kernel.state_bytes);
    Shape chunks = two.input_chunks;
    chunks.push_back(two.kernel.state_bytes);
    const std::shared_ptr<OpOutput> partials = make_partials_(number, shape, chunks);
    needed = std::max(needed, Make(two, partials, number, pair, false)->MaxProjection());
    needed = std::max(needed, Make(two, partials, number, pair, true)->MaxProjection());
    return needed;
  }

  [[noreturn]] void Refuse(const ReductionRound& round, std::shared_ptr<const StoredArray> reader,
                           int number, Index smallest) const {
    const Shape blocks = ReducedBlocks(round);
    const std::shared_ptr<ReduceOp> op =
        Make(round, std::move(reader), number, GroupOf(smallest, blocks, round.reduced),
             smallest >= ShapeSize(blocks));
    std::int64_t worst = 0;
    const std::int64_t projected = op->MaxProjection(&worst);
    const std::int64_t needed = std::max(projected, Requirement(number));
    throw MemoryBudgetError("Projected blockwise memory (" + std::to_string(projected) +
                                ") exceeds allowed_mem (" + std::to_string(spec_.allowed_mem) +
                                "), including reserved_mem (" + std::to_string(spec_.reserved_mem) +
                                "), in op \"" + op->info().name + "\" (reduce, " +
                                std::to_string(op->info().num_tasks) + " tasks, largest at " +
                                op->DescribeTask(worst) + "): a task must hold " +
                                (round.from_values ? std::string("one input block")
                                                   : std::string("two partial results")) +
                                " and its partial results; " + SmallestBudgetText(needed) +
                                ". Raise allowed_mem or use smaller chunks along the kept axes.",
                            needed);
  }

  const Node& reduce_;
  std::shared_ptr<const StoredArray> values_;
  std::shared_ptr<OpOutput> result_;
  const Spec& spec_;
  const PartialsFactory& make_partials_;
  ReductionRound first_;
};

}  // namespace

ReductionOps BuildReductionOps(const Node& reduce, std::shared_ptr<const StoredArray> values,
                               std::shared_ptr<OpOutput> result, const Spec& spec,
                               const PartialsFactory& make_partials) {
  return RoundPlanner(reduce, std::move(values), std::move(result), spec, make_partials).Plan();
}

}  // namespace tessera::planner
