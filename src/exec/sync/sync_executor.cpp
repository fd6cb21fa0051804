#include "sync/sync_executor.hpp"

#include <memory>

#include "memory_admission.hpp"
#include "tessera/exec/internal/plan_run.hpp"
#include "worker_warmup.hpp"

namespace tessera::exec {

using planner::ExecutableOp;

AdmissionFigures SyncExecutor::Run(PlanRun& run) {
  WarmUpWorkerThread();  // outside any task, as every worker thread is
  // One task at a time always fits; the pool only keeps the figures the report gives.
  MemoryAdmission admission(run.admission_capacity());
  for (std::size_t index = 0; index < run.ops().size(); ++index) {
    const int op = static_cast<int>(index);
    const ExecutableOp& executable = *run.ops()[index];
    run.PrepareOp(op);
    for (std::int64_t task = 0; task < executable.info().num_tasks; ++task) {
      const std::int64_t cost =
          TaskCost(executable.info(), executable.projected_mem(task), run.spec().reserved_mem);
      admission.Admit(cost);
      const TaskRecord record = run.RunTask(op, task);
      admission.Release(cost);
      run.RecordTask(op, record);
    }
    run.CommitOp(op);
  }
  return {admission.max_running(), admission.max_admitted()};
}

void RegisterSyncExecutor(ExecutorRegistry& registry) {
  registry.Register("sync", "one task at a time",
                    [](const Spec&) { return std::make_unique<SyncExecutor>(); });
}

}  // namespace tessera::exec
