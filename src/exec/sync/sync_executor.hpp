// The "sync" executor: every task one at a time on the calling thread, in plan order:
// op by op (an op reads only earlier ops, so plan order is a dependency order), each
// op's tasks in task order. For debugging, for profiles that read as the plan does,
// and where threads are not wanted. Internal to src/exec.
#pragma once

#include "tessera/exec/internal/executor.hpp"

namespace tessera::exec {

class SyncExecutor : public Executor {
 public:
  std::string_view name() const override { return "sync"; }
  int workers() const override { return 1; }
  AdmissionFigures Run(PlanRun& run) override;
};

// Registers "sync".
void RegisterSyncExecutor(ExecutorRegistry& registry);

}  // namespace tessera::exec
