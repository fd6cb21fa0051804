// RemoteExecutor: the executor RegisterRemoteExecutor registers
// (tessera/exec/remote_tasks.hpp says what it does). Internal to src/exec.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "tessera/exec/internal/executor.hpp"
#include "tessera/exec/remote_tasks.hpp"

namespace tessera::exec {

class RemoteExecutor : public Executor {
 public:
  RemoteExecutor(std::string name, std::unique_ptr<TaskLauncher> launcher)
      : name_(std::move(name)), launcher_(std::move(launcher)) {}

  std::string_view name() const override { return name_; }
  int workers() const override { return launcher_->workers(); }
  // Every op once its inputs have committed: PrepareOp, all its tasks submitted, each
  // outcome recorded, CommitOp after the last. A task whose worker was lost is submitted
  // again, up to ExecuteOptions::retries more times (then Error naming the op, the task and
  // the losses); a task's failure fails the run. Needs ExecuteOptions::plan_recipe
  // (compute and to_zarr set it): InvalidArgument otherwise.
  AdmissionFigures Run(PlanRun& run) override;

 private:
  std::string name_;
  std::unique_ptr<TaskLauncher> launcher_;
};

}  // namespace tessera::exec
