// The worker side of remote executors (tessera/exec/remote_tasks.hpp): plans
// remade once per process by key, their ops opened as a follower opens them.
#include <chrono>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "tessera/core/errors.hpp"
#include "tessera/exec/internal/plan_run.hpp"
#include "tessera/exec/remote_tasks.hpp"
#include "tessera/plan/internal/plan_recipe.hpp"

namespace tessera {
namespace {

std::size_t At(int index) { return static_cast<std::size_t>(index); }

// A plan remade in this process, and which of its ops this process has opened.
struct WorkerPlan {
  explicit WorkerPlan(FinalizedPlan made) : plan(std::move(made)) {
    const std::size_t ops = plan.executable_ops().size();
    prepared.assign(ops, false);
    committed.assign(ops, false);
  }

  FinalizedPlan plan;
  std::mutex mutex;
  std::vector<bool> prepared;   // GUARDED_BY(mutex)
  std::vector<bool> committed;  // GUARDED_BY(mutex)

  // Opens op `op` and every op it reads as a follower, once each: the client prepared and
  // committed them before it sent this task.
  void Open(int op) {
    const std::lock_guard lock(mutex);
    const auto& ops = plan.executable_ops();
    for (const int input : exec::DistinctInputs(ops[At(op)]->info())) {
      if (ops[At(input)]->shared_blocks() != nullptr) {
        throw InvalidArgument(
            "op \"" + ops[At(op)]->info().name + "\" reads \"" + ops[At(input)]->info().name +
            "\", a result held in memory by the process that asked for it: "
            "with executor \"" +
            plan.spec().executor + "\" compute the two apart, or write the first with to_zarr");
      }
      if (!prepared[At(input)]) ops[At(input)]->FollowPrepare();
      prepared[At(input)] = true;
      if (!committed[At(input)]) ops[At(input)]->FollowCommit();
      committed[At(input)] = true;
    }
    if (!prepared[At(op)]) ops[At(op)]->FollowPrepare();
    prepared[At(op)] = true;
  }
};

// A plan by key: made once (by the first task that needs it; the others wait on `mutex`),
// or the failure of making it, which every later task of the key rethrows at once.
struct PlanEntry {
  std::mutex mutex;
  bool made = false;                 // GUARDED_BY(mutex)
  std::shared_ptr<WorkerPlan> plan;  // GUARDED_BY(mutex)
  std::exception_ptr failure;        // GUARDED_BY(mutex)
};

struct WorkerPlans {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<PlanEntry>> entries;  // GUARDED_BY(mutex)
};

WorkerPlans& Plans() {
  static auto* plans = new WorkerPlans();  // never destroyed: tasks may run until exit
  return *plans;
}

std::shared_ptr<WorkerPlan> PlanNamed(const std::string& key, std::string_view recipe) {
  std::shared_ptr<PlanEntry> entry;
  {
    WorkerPlans& plans = Plans();
    const std::lock_guard lock(plans.mutex);
    auto& slot = plans.entries[key];
    if (!slot) slot = std::make_shared<PlanEntry>();
    entry = slot;
  }
  const std::lock_guard lock(entry->mutex);
  if (!entry->made) {
    try {
      entry->plan = std::make_shared<WorkerPlan>(planner::DecodePlanRecipe(recipe));
    } catch (...) {
      entry->failure = std::current_exception();
    }
    entry->made = true;
  }
  if (entry->failure) std::rethrow_exception(entry->failure);
  return entry->plan;
}

}  // namespace

RemoteTaskResult RunRemoteTask(const std::string& key, std::string_view recipe, int op,
                               std::int64_t task, const RemoteTaskOptions& options) {
  const std::shared_ptr<WorkerPlan> worker = PlanNamed(key, recipe);
  const auto& ops = worker->plan.executable_ops();
  if (op < 0 || op >= static_cast<int>(ops.size())) {
    throw InvalidArgument("remote task: op " + std::to_string(op) + " out of range");
  }
  worker->Open(op);
  ExecuteOptions execute;
  execute.retries = options.retries;
  execute.resume = options.resume;
  // The run's start on this machine's steady clock, from the client's wall clock.
  const double now_unix =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const auto run_start = std::chrono::steady_clock::now() -
                         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(now_unix - options.start_unix_seconds));
  RemoteTaskResult result;
  planner::SharedBlocks* blocks = ops[At(op)]->shared_blocks();
  if (blocks != nullptr) blocks->TakeWritten();  // nothing of an earlier task on this thread
  try {
    result.record = RunPlanTask(ops, worker->plan.spec(), op, task, execute, run_start);
  } catch (...) {
    if (blocks != nullptr) {
      for (const Index block : blocks->TakeWritten()) blocks->Drop(block);
    }
    throw;
  }
  result.record.worker = options.worker;
  if (blocks != nullptr) {
    for (const Index block : blocks->TakeWritten()) {
      if (auto values = blocks->Held(block)) result.blocks.emplace_back(block, std::move(values));
      blocks->Drop(block);
    }
  }
  return result;
}

bool ForgetRemotePlan(const std::string& key) {
  std::shared_ptr<PlanEntry> dropped;  // destroyed after the lock (its kernels may take the GIL)
  WorkerPlans& plans = Plans();
  const std::lock_guard lock(plans.mutex);
  const auto found = plans.entries.find(key);
  if (found == plans.entries.end()) return false;
  dropped = std::move(found->second);
  plans.entries.erase(found);
  return true;
}

}  // namespace tessera
