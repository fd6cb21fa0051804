#include "tessera/plan/finalized_plan.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "finalized_plan_state.hpp"
#include "rechunk_description.hpp"
#include "reduction_description.hpp"
#include "request_cost.hpp"
#include "smallest_budget.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/memory/internal/footprint_estimate.hpp"
#include "work_directory.hpp"

namespace tessera {

using planner::BytesMoved;
using planner::ExecutableOp;
using planner::kAutoIoSlack;
using planner::OpGroup;
using planner::OpGroupKind;
using planner::PassRecord;
using planner::PlannedOp;
using planner::RemoveWorkDirectory;
using planner::ResultOutput;
namespace {

std::string DotEscape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

FinalizedPlan::State::~State() {
  executables.clear();
  ops.clear();
  // Only a directory this process made and marked; a plan that never ran made none.
  if (!work_directory.empty()) RemoveWorkDirectory(work_directory);
}

void FinalizedPlan::State::OpenGroup(OpGroupKind kind, std::string node) {
  groups.push_back(OpGroup{kind, std::move(node), {}});
}

int FinalizedPlan::State::AddOp(PlannedOp op) {
  const int index = static_cast<int>(ops.size());
  op.group = static_cast<int>(groups.size()) - 1;
  groups.back().ops.push_back(index);
  ops.push_back(std::move(op));
  return index;
}

void FinalizedPlan::State::Seal() {
  infos.clear();
  executables.clear();
  for (const PlannedOp& planned : ops) {
    infos.push_back(planned.info());
    executables.push_back(planned.op);
  }
}

std::string_view OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kElementwise:
      return "elementwise";
    case OpKind::kBlockwise:
      return "blockwise";
    case OpKind::kMapBlocks:
      return "map_blocks";
    case OpKind::kGenerate:
      return "generate";
    case OpKind::kRechunk:
      return "rechunk";
    case OpKind::kReduce:
      return "reduce";
    case OpKind::kContract:
      return "contract";
    case OpKind::kGather:
      return "gather";
    case OpKind::kReshape:
      return "reshape";
  }
  return "elementwise";
}

std::ostream& operator<<(std::ostream& out, OpKind kind) { return out << OpKindName(kind); }

std::string_view TierName(Tier tier) {
  switch (tier) {
    case Tier::kNone:
      return "none";
    case Tier::kResult:
      return "result";
    case Tier::kTarget:
      return "target";
    case Tier::kMemory:
      return "memory";
    case Tier::kDisk:
      return "disk";
    case Tier::kMixed:
      return "memory+disk";
    case Tier::kObject:
      return "object store";
    case Tier::kMemoryAndObject:
      return "memory+object store";
  }
  return "none";
}

bool IsStoredTier(Tier tier) {
  return tier == Tier::kDisk || tier == Tier::kMixed || tier == Tier::kObject ||
         tier == Tier::kMemoryAndObject;
}

FinalizedPlan::FinalizedPlan(std::shared_ptr<State> state) : state_(std::move(state)) {}

std::int64_t FinalizedPlan::max_projected_mem() const {
  std::int64_t largest = 0;
  for (const OpInfo& info : state_->infos) largest = std::max(largest, info.projected_mem);
  return largest;
}

std::int64_t FinalizedPlan::max_estimated_mem() const {
  std::int64_t largest = 0;
  for (const OpInfo& info : state_->infos) largest = std::max(largest, info.estimated_mem);
  return largest;
}

std::int64_t SmallestAllowedMem(const OpInfo& op) {
  return op.estimate_from_history ? std::max(op.projected_mem, op.learned_mem) : op.projected_mem;
}

std::int64_t FinalizedPlan::required_allowed_mem() const {
  // allowed_mem must exceed reserved_mem (Spec::validate), and cover every task.
  std::int64_t required = state_->spec.reserved_mem + 1;
  for (const OpInfo& info : state_->infos) required = std::max(required, SmallestAllowedMem(info));
  return required;
}

bool FinalizedPlan::allowed_mem_was_auto() const { return state_->allowed_mem_was_auto; }

int FinalizedPlan::budget_plans() const { return state_->budget_plans; }

std::int64_t FinalizedPlan::bytes_moved() const { return BytesMoved(*state_); }

double FinalizedPlan::estimated_cost_gb_seconds() const {
  double total = 0;
  for (const OpInfo& info : state_->infos) total += info.cost_gb_seconds;
  return total;
}

std::int64_t FinalizedPlan::num_tasks() const {
  std::int64_t total = 0;
  for (const OpInfo& info : state_->infos) total += info.num_tasks;
  return total;
}

const std::vector<OpInfo>& FinalizedPlan::ops() const { return state_->infos; }

const Spec& FinalizedPlan::spec() const { return state_->spec; }

const std::vector<std::shared_ptr<ExecutableOp>>& FinalizedPlan::executable_ops() const {
  return state_->executables;
}

NDArray FinalizedPlan::TakeResult(std::size_t index) {
  if (index >= state_->result_ops.size()) {
    throw InvalidArgument("TakeResult: the plan has " + std::to_string(state_->result_ops.size()) +
                          " outputs, not " + std::to_string(index + 1));
  }
  const auto& output = state_->ops[static_cast<std::size_t>(state_->result_ops[index])].output();
  auto* result = dynamic_cast<ResultOutput*>(output.get());
  if (result == nullptr) {
    throw InvalidArgument("TakeResult: output " + std::to_string(index) +
                          " was written to Zarr, not kept in memory");
  }
  return result->TakeResult();
}

std::string FinalizedPlan::to_dot() const {
  std::ostringstream dot;
  dot << "digraph tessera_plan {\n  rankdir=LR;\n  node [fontname=\"Helvetica\"];\n";
  std::vector<std::string> sources_drawn;
  for (std::size_t i = 0; i < state_->infos.size(); ++i) {
    const OpInfo& info = state_->infos[i];
    dot << "  op" << i << " [shape=box, style=rounded, label=\"" << DotEscape(info.name) << "\\n"
        << DotEscape(std::string(OpKindName(info.kind))) << ", " << info.num_tasks
        << " tasks\\nprojected " << format_bytes(info.projected_mem) << "\\n-> "
        << TierName(info.tier);
    if (info.estimate_from_history) {
      dot << "\\nfrom history: " << format_bytes(info.estimated_mem);
    }
    if (info.fused.size() > 1) {
      dot << "\\nfused: " << info.fused.size() << " ops";
    }
    dot << "\"];\n";
    for (const int input : info.inputs) dot << "  op" << input << " -> op" << i << ";\n";
    for (const std::string& source : state_->ops[i].sources) {
      if (std::find(sources_drawn.begin(), sources_drawn.end(), source) == sources_drawn.end()) {
        sources_drawn.push_back(source);
        dot << "  \"" << DotEscape(source) << "\" [shape=cylinder];\n";
      }
      dot << "  \"" << DotEscape(source) << "\" -> op" << i << ";\n";
    }
  }
  dot << "}\n";
  return dot.str();
}

const std::vector<std::string>& FinalizedPlan::warnings() const { return state_->warnings; }

std::string FinalizedPlan::summary() const {
  const Spec& spec = state_->spec;
  std::ostringstream out;
  out << "Plan: " << state_->infos.size() << (state_->infos.size() == 1 ? " op, " : " ops, ")
      << num_tasks() << " tasks; largest task projects " << format_bytes(max_projected_mem())
      << " of allowed_mem " << format_bytes(spec.allowed_mem) << " (reserved_mem "
      << format_bytes(spec.reserved_mem) << ")\n";
  if (state_->allowed_mem_was_auto) {
    out << "allowed_mem auto: " << format_bytes(spec.allowed_mem) << " (" << spec.allowed_mem
        << " bytes), the smallest found that runs this plan with I/O within "
        << static_cast<int>(kAutoIoSlack * 100)
        << "% of the plan with all the memory (decoded bytes, and "
        << format_bytes(static_cast<std::int64_t>(planner::kDirectoryRequestCost.request_bytes))
        << " a request) and intermediate chunks on disk of at least "
        << format_bytes(planner::kDirectoryRequestCost.chunk_floor) << " (or the data's own) ("
        << state_->budget_plans << " trial plans)\n";
    const FinalizedPlan::State::PassedOverBudget& cheaper = state_->passed_over;
    if (cheaper.allowed_mem > 0) {
      out << "  a smaller budget costs requests: at " << format_bytes(cheaper.allowed_mem)
          << " this plan needs " << planner::Grouped(cheaper.requests) << " I/O operations";
      if (cheaper.smallest_disk_chunk > 0) {
        out << " (intermediate chunks of " << format_bytes(cheaper.smallest_disk_chunk)
            << " on disk)";
      }
      out << ", against " << planner::Grouped(planner::PlanRequests(state_->infos)) << " at "
          << format_bytes(spec.allowed_mem) << "\n";
    }
  }
  for (const std::string& warning : state_->warnings) out << "warning: " << warning << '\n';
  const bool sized = !spec.memory_tiers.empty();
  std::size_t name_width = 2;
  std::size_t kind_width = 4;
  for (const OpInfo& info : state_->infos) {
    name_width = std::max(name_width, info.name.size());
    kind_width = std::max(kind_width, OpKindName(info.kind).size());
  }
  out << "  " << std::left << std::setw(static_cast<int>(name_width)) << "op"
      << "  " << std::setw(static_cast<int>(kind_width)) << "kind"
      << "  " << std::right << std::setw(8) << "tasks"
      << "  " << std::setw(12) << "projected";
  if (sized)
    out << "  " << std::setw(10) << "size"
        << "  " << std::setw(12) << "GB-seconds";
  out << "  " << std::left << std::setw(11) << "output"
      << "  "
      << "fused\n";
  for (std::size_t i = 0; i < state_->infos.size(); ++i) {
    const OpInfo& info = state_->infos[i];
    std::string fused;
    for (const std::string& member : info.fused) {
      fused += (fused.empty() ? "" : " -> ") + member;
    }
    std::string reads;
    for (const std::string& source : state_->ops[i].sources)
      reads += (reads.empty() ? "" : ", ") + source;
    for (const int input : info.inputs) {
      reads += (reads.empty() ? "" : ", ") + state_->infos[static_cast<std::size_t>(input)].name;
    }
    out << "  " << std::left << std::setw(static_cast<int>(name_width)) << info.name << "  "
        << std::setw(static_cast<int>(kind_width)) << info.kind << "  " << std::right
        << std::setw(8) << info.num_tasks << "  " << std::setw(12)
        << (format_bytes(info.projected_mem) + (info.estimate_from_history ? "*" : ""));
    if (sized) {
      std::ostringstream cost;
      cost << std::fixed << std::setprecision(3) << info.cost_gb_seconds
           << (info.task_seconds_from_history ? "" : "~");
      out << "  " << std::setw(10) << format_bytes(info.memory_size) << "  " << std::setw(12)
          << cost.str();
    }
    out << "  " << std::left << std::setw(11) << TierName(info.tier) << "  " << fused;
    if (!reads.empty()) out << "  (reads " << reads << ")";
    out << "\n";
  }
  for (const OpInfo& info : state_->infos) {
    if (!info.estimate_from_history) continue;
    out << "  " << info.name << ": from history, run " << info.learned_run << " measured "
        << format_bytes(info.learned_mem) << " per task against its projection of "
        << format_bytes(info.projected_mem) << "; counted as " << format_bytes(info.estimated_mem)
        << " (x" << kLearnedMargin << ", at most allowed_mem), " << info.concurrency
        << (info.concurrency == 1 ? " task" : " tasks") << " at once\n";
  }
  if (sized) {
    int timed = 0;
    for (const OpInfo& info : state_->infos) timed += info.task_seconds_from_history ? 1 : 0;
    std::ostringstream cost;  // its own stream: fixed notation must not leak into `out`
    cost << std::fixed << std::setprecision(3) << estimated_cost_gb_seconds();
    out << "  estimated cost: " << cost.str() << " GB-seconds (size in GB x task seconds x tasks; "
        << timed << " of " << state_->infos.size()
        << " ops timed by history, the others (~) modeled at "
        << format_bytes(static_cast<std::int64_t>(kModeledTaskBytesPerSecond)) << "/s per task)\n";
  }
  for (const OpGroup& group : state_->groups) {
    if (group.kind == OpGroupKind::kRechunkStages) out << "\n" << DescribeRechunk(*state_, group);
    if (group.kind == OpGroupKind::kReductionRounds) {
      out << "\n" << DescribeReduction(*state_, group);
    }
  }
  return out.str();
}

std::string FinalizedPlan::explain(bool with_timings) const {
  std::ostringstream out;
  for (const PassRecord& pass : state_->passes) {
    out << "== " << pass.name;
    if (!pass.ran) {
      out << " (off)\n";
      continue;
    }
    if (with_timings) {
      std::ostringstream seconds;
      seconds << std::fixed << std::setprecision(6) << pass.seconds;
      out << " (" << seconds.str() << " s)";
    }
    out << "\n" << pass.plan;
  }
  return out.str();
}

}  // namespace tessera
