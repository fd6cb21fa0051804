#include "pass_manager.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <utility>

#include "passes.hpp"
#include "plan_verifier.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::planner {
namespace {

// The plan once lowered: per group its ops, what each computes, holds and reads.
std::string DescribePhysicalPlan(const FinalizedPlan::State& state) {
  std::ostringstream out;
  std::size_t described = 0;
  for (const OpGroup& group : state.groups) {
    // At most kDescribedNodes groups, as DescribeLogicalPlan.
    if (described++ == kDescribedNodes) {
      out << "  ... and " << state.groups.size() - kDescribedNodes << " more groups\n";
      break;
    }
    const char* what = group.kind == OpGroupKind::kRechunkStages     ? " stages"
                       : group.kind == OpGroupKind::kReductionRounds ? " rounds"
                                                                     : "";
    const bool nested = group.kind != OpGroupKind::kSingle;
    if (nested) out << "  " << group.node << ": " << group.ops.size() << what << "\n";
    for (const int index : group.ops) {
      const PlannedOp& planned = state.ops[static_cast<std::size_t>(index)];
      const OpInfo& info = planned.info();
      out << (nested ? "    " : "  ") << "#" << index << " " << info.name << " " << info.kind << " "
          << info.dtype.name() << " " << ShapeToString(info.shape) << " chunks "
          << ShapeToString(info.chunks) << ": " << info.num_tasks
          << (info.num_tasks == 1 ? " task" : " tasks") << " of "
          << format_bytes(info.projected_mem);
      if (info.estimated_mem != 0) {
        out << " (counted " << format_bytes(info.estimated_mem) << ", " << info.concurrency
            << " at once)";
      }
      if (info.memory_size != 0) out << ", given " << format_bytes(info.memory_size);
      out << " -> " << TierName(info.tier);
      std::string reads;
      for (const std::string& source : planned.sources)
        reads += (reads.empty() ? "" : ", ") + source;
      for (const int input : info.inputs)
        reads += (reads.empty() ? "#" : ", #") + std::to_string(input);
      if (!reads.empty()) out << "; reads " << reads;
      if (info.fused.size() > 1) {
        std::string fused;
        for (const std::string& member : info.fused)
          fused += (fused.empty() ? "" : " -> ") + member;
        out << "; fused " << fused;
      }
      out << "\n";
    }
  }
  return out.str();
}

std::string NamesThatMayBeOff(const std::vector<PlanPass>& passes) {
  std::string names;
  for (const PlanPass& pass : passes) {
    if (pass.may_be_off) names += (names.empty() ? "" : ", ") + std::string(pass.name);
  }
  return names;
}

}  // namespace

const std::vector<PlanPass>& PassManager::StandardPasses() {
  static const std::vector<PlanPass> passes = {
      {"prune", false, &PrunePass},
      {"rechunk_of_rechunk", true, &RechunkOfRechunkPass},
      {"power_by_constant", true, &PowerByConstantPass},
      {"boundaries", false, &BoundariesPass},
      {"fusion", true, &FusionPass},
      {"fusion_split", true, &FusionSplitPass},
      {"tiers", true, &TierPass},
      {"lowering", false, &LoweringPass},
      {"fingerprint", false, &FingerprintPass},
      {"history", true, &HistoryPass},
      {"estimates", false, &EstimatePass},
      {"memory_check", false, &MemoryCheckPass},
      {"memory_sizes", false, &MemorySizePass},
  };
  return passes;
}

PassManager::PassManager(std::vector<PlanPass> passes) : passes_(std::move(passes)) {}

void PassManager::InsertAfter(std::string_view after, PlanPass pass) {
  const auto found = std::find_if(passes_.begin(), passes_.end(),
                                  [&](const PlanPass& existing) { return existing.name == after; });
  if (found == passes_.end()) {
    throw InvalidArgument("InsertAfter: no pass named \"" + std::string(after) + "\"");
  }
  passes_.insert(found + 1, pass);
}

std::vector<std::string> PassManager::DisabledPasses(const PlanOptions& options) const {
  std::vector<std::string> named = options.disabled_passes;
  if (!options.fuse) named.emplace_back("fusion");
  if (const char* variable = std::getenv("TESSERA_DISABLE_PASSES"); variable != nullptr) {
    std::stringstream list(variable);
    std::string name;
    while (std::getline(list, name, ',')) {
      name.erase(0, name.find_first_not_of(" \t"));
      name.erase(name.find_last_not_of(" \t") + 1);
      if (!name.empty()) named.push_back(name);
    }
  }
  std::vector<std::string> disabled;
  for (const std::string& name : named) {
    const auto pass = std::find_if(passes_.begin(), passes_.end(),
                                   [&](const PlanPass& known) { return known.name == name; });
    if (pass == passes_.end()) {
      throw InvalidArgument("plan: no pass is named \"" + name +
                            "\" (PlanOptions::disabled_passes or TESSERA_DISABLE_PASSES); the "
                            "passes that may be off: " +
                            NamesThatMayBeOff(passes_));
    }
    if (!pass->may_be_off) {
      throw InvalidArgument("plan: pass \"" + name +
                            "\" cannot be off: no plan is made without it; the passes that may "
                            "be off: " +
                            NamesThatMayBeOff(passes_));
    }
    if (std::find(disabled.begin(), disabled.end(), name) == disabled.end()) {
      disabled.push_back(name);
    }
  }
  return disabled;
}

void PassManager::Run(PlanContext& context) const {
  const std::vector<std::string> disabled = DisabledPasses(context.options);
  bool memory_checked = false;
  std::string last_plan;  // as the last pass that changed it left it
  for (const PlanPass& pass : passes_) {
    PassRecord record;
    record.name = std::string(pass.name);
    record.ran = std::find(disabled.begin(), disabled.end(), record.name) == disabled.end();
    if (!record.ran) {
      context.state->passes.push_back(std::move(record));
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    pass.run(context);
    record.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    memory_checked = memory_checked || pass.name == "memory_check";
    VerifyPlan(context, pass.name, memory_checked);
    record.plan = context.lowered ? DescribePhysicalPlan(*context.state)
                                  : DescribeLogicalPlan(context.logical);
    if (record.plan == last_plan) {
      record.plan = "  (unchanged)\n";
    } else {
      last_plan = record.plan;
    }
    context.state->passes.push_back(std::move(record));
  }
  context.state->Seal();
}

}  // namespace tessera::planner
