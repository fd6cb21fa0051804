// The "threads" executor: tasks on up to spec.effective_max_workers() threads of this
// process (the calling thread among them), of every op that is ready, each admitted by
// memory under total_mem: the TaskScheduler's policy (../task_scheduler.hpp). Internal
// to src/exec.
#pragma once

#include "tessera/exec/internal/executor.hpp"

namespace tessera::exec {

class ThreadsExecutor : public Executor {
 public:
  // `workers`: the threads it runs tasks on (at least 1).
  explicit ThreadsExecutor(int workers) : workers_(workers) {}

  std::string_view name() const override { return "threads"; }
  int workers() const override { return workers_; }
  AdmissionFigures Run(PlanRun& run) override;

 private:
  int workers_;
};

// Registers "threads".
void RegisterThreadsExecutor(ExecutorRegistry& registry);

}  // namespace tessera::exec
