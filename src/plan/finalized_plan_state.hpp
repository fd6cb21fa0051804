// What a FinalizedPlan holds: one record per planned op, the groups they form (a
// rechunk's stages, a reduction's rounds) and what the pass manager recorded. Internal
// to src/plan.
//
//   State state;                                   // filled by the passes (plan_context.hpp)
//   state.ops[i].info()                            // OpInfo of op i
//   state.groups[state.ops[i].group]               // the stages or rounds op i belongs to
//   state.Seal();                                  // after the last pass: ops() views
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "op_output.hpp"
#include "output_op.hpp"
#include "tessera/memory/history.hpp"
#include "tessera/plan/finalized_plan.hpp"

namespace tessera::planner {

// One op of the plan, in dependency order: the executable op (which holds its OpInfo and
// the output its tasks write), the stored arrays it reads that no op of the plan writes,
// the task its projection was found at, and the group it belongs to.
struct PlannedOp {
  std::shared_ptr<OutputOp> op;
  std::vector<std::string> sources;  // names of the sources (plan inputs) it reads
  std::int64_t worst_task = 0;       // the task of its projection (messages)
  int group = 0;                     // index into State::groups

  const OpInfo& info() const { return op->info(); }
  OpInfo& mutable_info() { return op->mutable_info(); }
  const std::shared_ptr<OpOutput>& output() const { return op->output(); }
};

// Ops planned together for one node: one op (a fused group, a contraction, ...), the
// copies of one rechunk in stage order, or the rounds of one reduction in round order.
// Describers (FinalizedPlan::summary) read the groups, not the ops' positions.
enum class OpGroupKind { kSingle, kRechunkStages, kReductionRounds };

struct OpGroup {
  OpGroupKind kind = OpGroupKind::kSingle;
  std::string node;      // the node the group computes (its name)
  std::vector<int> ops;  // indices into State::ops, in order
};

// What one pass of the pass manager left (FinalizedPlan::explain).
struct PassRecord {
  std::string name;
  bool ran = false;    // false: switched off
  double seconds = 0;  // how long it took (never in explain(): not deterministic)
  std::string plan;    // the plan as the pass left it
};

}  // namespace tessera::planner

namespace tessera {

struct FinalizedPlan::State {
  Spec spec;
  std::vector<planner::PlannedOp> ops;  // in dependency order
  std::vector<planner::OpGroup> groups;
  std::vector<int> result_ops;           // per requested output: its op
  std::filesystem::path work_directory;  // disk intermediates ("" = none)
  std::string object_work_prefix;        // object store intermediates ("" = none)
  bool allowed_mem_was_auto = false;     // spec.allowed_mem chosen by the search
  int budget_plans = 1;                  // plans built to choose it
  // With allowed_mem "auto": the smallest budget the search planned at but passed over
  // for its I/O (planner::PlanWithSmallestBudget), and what that plan would cost;
  // allowed_mem 0 when none was.
  struct PassedOverBudget {
    std::int64_t allowed_mem = 0;
    std::int64_t requests = 0;             // chunk reads and writes
    std::int64_t smallest_disk_chunk = 0;  // bytes; 0: nothing on disk
  };
  PassedOverBudget passed_over;
  // The budget the plan's budget-dependent choices were made for (>= spec.allowed_mem).
  std::int64_t choice_budget = 0;
  // What the plan does against the spec's limits because an option allowed it.
  std::vector<std::string> warnings;
  std::vector<planner::PassRecord> passes;  // in the order they ran

  // What the plan was made from, as plan_recipe.hpp sends it to other processes: the
  // outputs, spec (allowed_mem "auto" as asked) and options Finalize was given, and what
  // history answered for each step's fingerprint (nullopt: nothing).
  std::vector<PlanOutput> requested;
  Spec requested_spec;
  PlanOptions requested_options;
  std::map<std::string, std::optional<LearnedFootprint>> learned;

  // Views of `ops` the public accessors return by reference (FinalizedPlan::ops(),
  // executable_ops()): made once by Seal(), after the last pass, never edited.
  std::vector<OpInfo> infos;
  std::vector<std::shared_ptr<planner::ExecutableOp>> executables;

  // Starts a group computing `node`; the ops added next belong to it.
  void OpenGroup(planner::OpGroupKind kind, std::string node);
  // Appends `op` to the group opened last (op.group is set). Returns the op's index.
  int AddOp(planner::PlannedOp op);
  // Makes `infos` and `executables` from `ops`.
  void Seal();

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State();
};

}  // namespace tessera
