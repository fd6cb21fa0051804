// What a FinalizedPlan holds. Internal to src/plan.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "op_output.hpp"
#include "tessera/plan/finalized_plan.hpp"

namespace tessera {

struct FinalizedPlan::State {
  Spec spec;
  std::vector<std::shared_ptr<ExecutableOp>> ops;  // in dependency order
  std::vector<std::shared_ptr<OpOutput>> outputs;  // per op: what it writes
  std::vector<OpInfo> infos;
  std::vector<std::vector<std::string>> sources;  // per op: stored arrays it reads
  std::vector<std::int64_t> worst_tasks;          // per op: the task of its projection
  std::vector<int> result_ops;                    // per requested output: its op
  std::filesystem::path work_directory;           // disk intermediates ("" = none)
  bool allowed_mem_was_auto = false;              // spec.allowed_mem chosen by the search
  int budget_plans = 1;                           // plans built to choose it
  // The budget the plan's budget-dependent choices were made for (>= spec.allowed_mem).
  std::int64_t choice_budget = 0;
  // What the plan does against the spec's limits because an option allowed it.
  std::vector<std::string> warnings;

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State();
};

}  // namespace tessera
