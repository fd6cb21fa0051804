// RemoteExecutor (remote_executor.hpp, tessera/exec/remote_tasks.hpp): ops in dependency order,
// all of a ready op's tasks submitted at once, the scheduler placing them by memory.
#include "remote_executor.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <utility>

#include "op_statistics.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/exec/internal/plan_run.hpp"
#include "tessera/plan/internal/plan_recipe.hpp"

namespace tessera::exec {
namespace {

std::size_t At(int index) { return static_cast<std::size_t>(index); }

// The memory a task of `info`'s op projecting `projected` is submitted with
// (RemoteTask::memory): its op's tier when the spec lists tiers (OpInfo::memory_size, which
// is allowed_mem without them), else what the plan counts for it.
std::int64_t SubmittedMemory(const Spec& spec, const OpInfo& info, std::int64_t projected) {
  if (!spec.memory_tiers.empty() && info.memory_size > 0) return info.memory_size;
  return std::max(projected, info.estimated_mem);
}

// How long a wait for a task lasts before the run checks ExecuteOptions::on_wait.
constexpr double kWaitSeconds = 0.2;

// The most tasks that ran at once and the largest sum of their costs (memory less
// reserved_mem, as every executor reports them), from the records' spans.
AdmissionFigures FromSpans(const std::vector<std::pair<TaskRecord, std::int64_t>>& ran,
                           std::int64_t reserved_mem) {
  std::vector<TaskSpan> spans;
  for (const auto& [record, memory] : ran) {
    if (record.skipped) continue;
    spans.push_back(
        {record.start_seconds, record.seconds, std::max<std::int64_t>(memory - reserved_mem, 1)});
  }
  const Overlap peak = PeakOverlap(spans);
  return AdmissionFigures{static_cast<int>(peak.most_tasks), peak.most_weight};
}

}  // namespace

AdmissionFigures RemoteExecutor::Run(PlanRun& run) {
  if (!run.options().plan_recipe) {
    throw InvalidArgument("executor \"" + name_ +
                          "\" runs plans made by compute() or to_zarr(), which send them to "
                          "the workers; this run has no plan to send");
  }
  const auto& ops = run.ops();
  const int num_ops = static_cast<int>(ops.size());
  const std::string recipe = run.options().plan_recipe();
  const double start_unix =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() -
      std::chrono::duration<double>(std::chrono::steady_clock::now() - run.start()).count();
  RemoteRun remote{planner::RecipeKey(recipe), start_unix, run.options().retries,
                   run.options().resume, 0};
  for (const auto& op : ops) {
    const OpInfo& info = op->info();
    if (info.num_tasks == 0) continue;
    remote.largest_task_memory =
        std::max(remote.largest_task_memory, SubmittedMemory(run.spec(), info, info.projected_mem));
  }

  std::vector<bool> started(At(num_ops), false);
  std::vector<bool> committed(At(num_ops), false);
  std::vector<std::int64_t> left(At(num_ops), 0);
  std::map<std::pair<int, std::int64_t>, RemoteTask> in_flight;
  std::vector<std::pair<TaskRecord, std::int64_t>> ran;
  int done_ops = 0;
  const auto commit = [&](int op) {
    run.CommitOp(op);
    committed[At(op)] = true;
    ++done_ops;
  };
  try {
    launcher_->Start(remote, recipe);
    while (done_ops < num_ops) {
      for (int op = 0; op < num_ops; ++op) {
        if (started[At(op)]) continue;
        const std::vector<int>& inputs = run.inputs(op);
        if (!std::all_of(inputs.begin(), inputs.end(), [&](int in) { return committed[At(in)]; })) {
          continue;
        }
        started[At(op)] = true;
        run.PrepareOp(op);
        left[At(op)] = ops[At(op)]->info().num_tasks;
        for (std::int64_t task = 0; task < left[At(op)]; ++task) {
          const RemoteTask submitted{
              op, task,
              SubmittedMemory(run.spec(), ops[At(op)]->info(), ops[At(op)]->projected_mem(task)),
              1};
          launcher_->Submit(submitted);
          in_flight.emplace(std::make_pair(op, task), submitted);
        }
        if (left[At(op)] == 0) commit(op);
      }
      if (done_ops == num_ops) break;
      if (in_flight.empty()) throw Error("executor \"" + name_ + "\": no op can start (internal)");
      std::optional<RemoteOutcome> ended = launcher_->WaitAny(kWaitSeconds);
      if (!ended) {
        if (run.options().on_wait) run.options().on_wait();
        continue;
      }
      RemoteOutcome& outcome = *ended;
      const auto found = in_flight.find({outcome.op, outcome.task});
      if (found == in_flight.end()) {
        throw Error("executor \"" + name_ + "\": an unknown task ended (internal)");
      }
      if (outcome.error) std::rethrow_exception(outcome.error);
      RemoteTask& task = found->second;
      if (outcome.worker_lost) {
        if (task.attempt > run.options().retries) {
          throw Error("op \"" + ops[At(task.op)]->info().name + "\" failed at " +
                      ops[At(task.op)]->DescribeTask(task.task) + ": its worker was lost " +
                      std::to_string(task.attempt) +
                      " times (raise retries, or give the workers more memory)");
        }
        ++task.attempt;
        launcher_->Submit(task);
        continue;
      }
      planner::SharedBlocks* blocks = ops[At(task.op)]->shared_blocks();
      for (auto& [block, values] : outcome.blocks) {
        if (blocks == nullptr) {
          throw Error("op \"" + ops[At(task.op)]->info().name +
                      "\" holds nothing in memory, yet its task sent blocks (internal)");
        }
        blocks->Put(block, std::move(values));
      }
      // The worker's plan names its ops after its own arrays: the record takes the
      // client's names.
      outcome.record.op = task.op;
      outcome.record.op_name = ops[At(task.op)]->info().name;
      outcome.record.task = task.task;
      outcome.record.attempts += task.attempt - 1;
      ran.emplace_back(outcome.record, task.memory);
      const int op = task.op;
      in_flight.erase(found);
      run.RecordTask(op, outcome.record);
      if (--left[At(op)] == 0) commit(op);
    }
  } catch (...) {
    launcher_->Finish(/*failed=*/true);
    throw;
  }
  launcher_->Finish(/*failed=*/false);
  return FromSpans(ran, run.spec().reserved_mem);
}

}  // namespace tessera::exec

namespace tessera {

void RegisterRemoteExecutor(const std::string& name, const std::string& summary,
                            LauncherFactory make) {
  if (name.empty() || !make) {
    throw InvalidArgument("RegisterRemoteExecutor: give a name and a factory of launchers");
  }
  exec::ExecutorRegistry& registry = exec::ExecutorRegistry::Global();
  registry.Unregister(name);
  registry.Register(name, summary, [name, make](const Spec& spec) {
    return std::make_unique<exec::RemoteExecutor>(name, make(spec));
  });
}

}  // namespace tessera
