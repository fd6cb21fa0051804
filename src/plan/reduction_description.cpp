#include "reduction_description.hpp"

#include <sstream>

#include "tessera/core/byte_size.hpp"

namespace tessera {

std::string DescribeReduction(const std::vector<OpInfo>& infos, std::size_t last) {
  const OpInfo& result = infos[last];
  const std::size_t first = last + 1 - static_cast<std::size_t>(result.num_stages);
  std::ostringstream out;
  out << "Reduction " << result.name << ": " << ShapeToString(result.shape) << " "
      << result.dtype.name() << " in " << result.num_stages
      << (result.num_stages == 1 ? " round" : " rounds") << ":\n";
  for (std::size_t i = first; i <= last; ++i) {
    const OpInfo& round = infos[i];
    const Index group = ShapeSize(round.task_shape);
    out << "  " << round.stage << ". " << round.name << " ";
    if (i == first) {
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

}  // namespace tessera
