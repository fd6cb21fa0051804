#include "fused_op.hpp"

#include <algorithm>
#include <set>
#include <utility>

namespace tessera {

FusedOp::FusedOp(OpInfo info, std::shared_ptr<const FusedEvaluator> evaluator,
                 std::shared_ptr<OpOutput> output, std::int64_t reserved_mem)
    : info_(std::move(info)),
      evaluator_(std::move(evaluator)),
      output_(std::move(output)),
      grid_(evaluator_->root()->grid()),
      reserved_mem_(reserved_mem) {
  info_.shape = grid_.shape();
  info_.chunks = grid_.chunks();
  info_.dtype = evaluator_->root()->dtype();
  info_.num_tasks = grid_.num_blocks();
}

std::int64_t FusedOp::projected_mem(std::int64_t task) const {
  const Shape block = grid_.BlockIndex(task);
  const MemoryFigure figure = evaluator_->Project(grid_.BlockRegion(block));
  return reserved_mem_ + std::max(figure.peak, figure.result + output_->ProjectWrite(block));
}

std::string FusedOp::DescribeTask(std::int64_t task) const {
  return "block " + ShapeToString(grid_.BlockIndex(task));
}

bool FusedOp::IsTaskDone(std::int64_t task) const { return output_->Has(grid_.BlockIndex(task)); }

void FusedOp::RunTask(std::int64_t task) const {
  const Shape block = grid_.BlockIndex(task);
  output_->Write(block, evaluator_->Evaluate(grid_.BlockRegion(block)));
}

template <class Fn>
void FusedOp::ForRepresentativeTasks(Fn&& fn) const {
  constexpr Index kExhaustive = 4096;
  const Index tasks = grid_.num_blocks();
  if (tasks <= kExhaustive) {
    for (Index task = 0; task < tasks; ++task) fn(task);
    return;
  }
  // Per dimension the first, second, last-but-one and last block; every combination.
  const Shape& blocks = grid_.grid_shape();
  std::vector<std::vector<Index>> choices;
  for (const Index count : blocks) {
    std::set<Index> picks{0, std::min<Index>(1, count - 1), std::max<Index>(count - 2, 0),
                          count - 1};
    choices.emplace_back(picks.begin(), picks.end());
  }
  Shape pick(blocks.size(), 0);
  Shape block(blocks.size());
  while (true) {
    for (std::size_t d = 0; d < blocks.size(); ++d)
      block[d] = choices[d][static_cast<std::size_t>(pick[d])];
    fn(grid_.LinearIndex(block));
    std::size_t d = blocks.size();
    while (d > 0) {
      --d;
      if (++pick[d] < static_cast<Index>(choices[d].size())) break;
      pick[d] = 0;
      if (d == 0) return;
    }
  }
}

std::int64_t FusedOp::MaxProjection(std::int64_t* worst_task) const {
  std::int64_t largest = 0;
  std::int64_t worst = 0;
  ForRepresentativeTasks([&](Index task) {
    const std::int64_t projected = projected_mem(task);
    if (projected > largest) {
      largest = projected;
      worst = task;
    }
  });
  if (worst_task != nullptr) *worst_task = worst;
  return largest;
}

Index FusedOp::MaxInputBlocks() const {
  Index largest = 0;
  ForRepresentativeTasks([&](Index task) {
    largest = std::max(largest, evaluator_->InputBlocks(grid_.BlockRegion(grid_.BlockIndex(task))));
  });
  return largest;
}

}  // namespace tessera
