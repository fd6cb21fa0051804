#include "tessera/exec/internal/executor.hpp"

#include <atomic>
#include <exception>
#include <optional>
#include <string>

#include "task_runner.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/exec/internal/plan_run.hpp"
#include "tessera/plan/finalized_plan.hpp"
#include "worker_warmup.hpp"

namespace tessera {

using planner::ExecutableOp;

ExecutionReport Execute(const std::vector<std::shared_ptr<ExecutableOp>>& ops, const Spec& spec,
                        const ExecuteOptions& options) {
  if (spec.max_workers < 0) {  // before an executor reads it
    throw InvalidArgument("max_workers must be >= 0 (0 = one per hardware thread), got " +
                          std::to_string(spec.max_workers));
  }
  const std::unique_ptr<exec::Executor> executor = exec::MakeExecutor(spec);
  std::optional<exec::PlanRun> run;
  try {
    run.emplace(ops, spec, options, executor->workers(), executor->leads());
  } catch (...) {
    executor->Abandon();
    throw;
  }
  exec::AdmissionFigures figures;
  try {
    figures = executor->Run(*run);
  } catch (...) {
    run->Fail(std::current_exception());
    throw;
  }
  return run->Finish(figures);
}

TaskRecord RunPlanTask(const std::vector<std::shared_ptr<ExecutableOp>>& ops, const Spec& spec,
                       int op, std::int64_t task, const ExecuteOptions& options,
                       std::chrono::steady_clock::time_point run_start) {
  if (op < 0 || static_cast<std::size_t>(op) >= ops.size() ||
      ops[static_cast<std::size_t>(op)] == nullptr) {
    throw InvalidArgument("RunPlanTask: the plan has no op " + std::to_string(op) + " (" +
                          std::to_string(ops.size()) + " ops)");
  }
  const ExecutableOp& executable = *ops[static_cast<std::size_t>(op)];
  if (task < 0 || task >= executable.info().num_tasks) {
    throw InvalidArgument("RunPlanTask: op \"" + executable.info().name + "\" has no task " +
                          std::to_string(task) + " (" +
                          std::to_string(executable.info().num_tasks) + " tasks)");
  }
  // What every thread pays once is paid before its first task, outside the
  // measurement (worker_warmup.hpp).
  exec::WarmUpWorkerThread();
  static const std::atomic<bool> kNeverCancelled{false};
  const exec::OpTaskRunner runner(op, executable, spec.reserved_mem, options, run_start);
  // Never cancelled, the runner returns the record or throws.
  return *runner.Run(task, executable.projected_mem(task), kNeverCancelled);
}

TaskRecord RunPlanTask(const FinalizedPlan& plan, int op, std::int64_t task,
                       const ExecuteOptions& options) {
  return RunPlanTask(plan.executable_ops(), plan.spec(), op, task, options);
}

}  // namespace tessera
