#include "reduction_description.hpp"

#include <sstream>

#include "tessera/core/byte_size.hpp"

namespace tessera::planner {

std::string DescribeReduction(const FinalizedPlan::State& plan, const OpGroup& rounds) {
  const std::size_t last = rounds.ops.size() - 1;
  const auto round_info = [&](std::size_t round) -> const OpInfo& {
    return plan.ops[static_cast<std::size_t>(rounds.ops[round])].info();
  };
  const OpInfo& result = round_info(last);
  std::ostringstream out;
  out << "Reduction " << result.name << ": " << ShapeToString(result.shape) << " "
      << result.dtype.name() << " in " << rounds.ops.size()
      << (rounds.ops.size() == 1 ? " round" : " rounds") << ":\n";
  for (std::size_t i = 0; i <= last; ++i) {
    const OpInfo& round = round_info(i);
    const Index group = ShapeSize(round.task_shape);
    out << "  " << round.stage << ". " << round.name << " ";
    if (i == 0) {
      out << "reduces up to " << group << (group == 1 ? " block" : " blocks")
          << " of its input per task, one at a time,";
    } else {
      out << "combines up to " << group << " partial results per task,";
    }
    out << " in " << round.num_tasks << (round.num_tasks == 1 ? " task" : " tasks")
        << " of at most " << format_bytes(round.projected_mem) << "; ";
    if (i == last) {
      out << "writes the result (" << TierName(round.tier) << ").\n";
    } else {
      out << "keeps " << format_bytes(ShapeSize(round.shape)) << " of partial results ("
          << TierName(round.tier) << ").\n";
    }
  }
  return out.str();
}

}  // namespace tessera::planner
