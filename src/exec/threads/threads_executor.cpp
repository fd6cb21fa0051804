#include "threads/threads_executor.hpp"

#include <memory>
#include <utility>

#include "task_scheduler.hpp"
#include "tessera/exec/internal/plan_run.hpp"

namespace tessera::exec {

AdmissionFigures ThreadsExecutor::Run(PlanRun& run) {
  // The scheduler runs its hooks one at a time, as PlanRun requires.
  TaskScheduler::Hooks hooks;
  hooks.prepare = [&run](int op) { run.PrepareOp(op); };
  hooks.task_done = [&run](int op, const TaskRecord& record) { run.RecordTask(op, record); };
  hooks.commit = [&run](int op) { run.CommitOp(op); };
  TaskScheduler::Limits limits;
  limits.workers = workers_;
  limits.capacity = run.admission_capacity();
  limits.reserved_mem = run.spec().reserved_mem;
  TaskScheduler scheduler(run.ops(), limits, run.options(), run.start(), std::move(hooks));
  scheduler.Run();
  return {scheduler.max_tasks_at_once(), scheduler.max_admitted_mem()};
}

void RegisterThreadsExecutor(ExecutorRegistry& registry) {
  registry.Register("threads", "tasks in parallel on this machine", [](const Spec& spec) {
    return std::make_unique<ThreadsExecutor>(spec.effective_max_workers());
  });
}

}  // namespace tessera::exec
