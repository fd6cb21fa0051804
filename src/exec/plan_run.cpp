#include "tessera/exec/internal/plan_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "history_recorder.hpp"
#include "op_statistics.hpp"
#include "progress_bar.hpp"
#include "task_runner.hpp"
#include "tessera/core/buffer_pool.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/warning.hpp"
#include "tessera/memory/internal/footprint_estimate.hpp"
#include "tessera/memory/process_memory.hpp"

namespace tessera::exec {

using planner::ExecutableOp;
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Checks that every op is set and reads only earlier ops; returns, per op, the
// distinct ops it reads.
std::vector<std::vector<int>> CheckInputs(const std::vector<std::shared_ptr<ExecutableOp>>& ops) {
  std::vector<std::vector<int>> inputs(ops.size());
  for (std::size_t index = 0; index < ops.size(); ++index) {
    if (ops[index] == nullptr) {
      throw InvalidArgument("Execute: op " + std::to_string(index) + " of the plan is null");
    }
    inputs[index] = DistinctInputs(ops[index]->info());
    for (int input : inputs[index]) {
      if (input < 0 || static_cast<std::size_t>(input) >= index) {
        throw InvalidArgument("Execute: op \"" + ops[index]->info().name + "\" (index " +
                              std::to_string(index) + ") reads op " + std::to_string(input) +
                              ", which is not an earlier op of the plan");
      }
    }
  }
  return inputs;
}

// Runs `step` of op `name`, rethrowing its failure (same error type) with the op named.
template <typename Step>
void RunStep(const std::string& name, const char* what, Step&& step) {
  try {
    step();
  } catch (...) {
    const std::exception_ptr error = std::current_exception();
    ThrowLike(error, "op \"" + name + "\" failed " + what + ": " + DescribeException(error));
  }
}

// The most of `tasks` whose spans overlap (PeakOverlap; skipped tasks never ran).
std::int64_t MostAtOnce(std::span<const TaskRecord> tasks) {
  std::vector<TaskSpan> spans;
  for (const TaskRecord& record : tasks) {
    if (!record.skipped) spans.push_back({record.start_seconds, record.seconds, 0});
  }
  return PeakOverlap(spans).most_tasks;
}

// Fills the op's summaries of its tasks that ran (skipped ones measured nothing).
void SummarizeTasks(std::span<const TaskRecord> tasks, OpReport& op_report) {
  std::vector<std::int64_t> measured;
  std::vector<std::int64_t> unaccounted;
  std::vector<double> seconds;
  op_report.max_tasks_at_once = MostAtOnce(tasks);
  for (const TaskRecord& record : tasks) {
    if (record.skipped) continue;
    measured.push_back(record.measured_mem);
    unaccounted.push_back(record.unaccounted_mem);
    seconds.push_back(record.seconds);
    op_report.footprint_mem_max =
        std::max(op_report.footprint_mem_max, record.measured_mem + record.unaccounted_mem);
  }
  const Summary<std::int64_t> memory = Summarize(std::move(measured));
  op_report.measured_mem_max = memory.max;
  op_report.measured_mem_median = memory.median;
  op_report.measured_mem_p95 = memory.p95;
  const Summary<std::int64_t> outside = Summarize(std::move(unaccounted));
  op_report.unaccounted_mem_max = outside.max;
  op_report.unaccounted_mem_median = outside.median;
  op_report.unaccounted_mem_p95 = outside.p95;
  const Summary<double> durations = Summarize(std::move(seconds));
  op_report.task_seconds_max = durations.max;
  op_report.task_seconds_median = durations.median;
  op_report.task_seconds_p95 = durations.p95;
}

// The warning for an op whose largest task measured more than the plan counted for it
// beyond measurement noise (footprint_estimate.hpp); nullopt when none did.
std::optional<std::string> FootprintWarning(const ExecutableOp& op, const OpReport& op_report,
                                            std::span<const TaskRecord> tasks, const Spec& spec,
                                            bool history_on) {
  const TaskRecord* largest = nullptr;
  for (const TaskRecord& record : tasks) {
    if (record.skipped) continue;
    if (largest == nullptr || record.measured_mem + record.unaccounted_mem >
                                  largest->measured_mem + largest->unaccounted_mem) {
      largest = &record;
    }
  }
  if (largest == nullptr) return std::nullopt;
  const std::int64_t footprint = largest->measured_mem + largest->unaccounted_mem;
  if (!ExceedsProjection(footprint - spec.reserved_mem,
                         op_report.estimated_mem - spec.reserved_mem))
    return std::nullopt;
  std::string warning =
      "op \"" + op_report.name + "\" (" + op_report.kind + ") measured " + format_bytes(footprint) +
      " at " + op.DescribeTask(largest->task) + " (" + format_bytes(largest->measured_mem) +
      " in Tessera's buffers, reserved_mem included, and " +
      format_bytes(largest->unaccounted_mem) +
      " of fresh pages touched outside them, such as a kernel's own allocations), above the " +
      format_bytes(op_report.estimated_mem) + " the plan counted for it (" +
      (op_report.estimate_from_history ? "learned from history" : "its projection") + "); ";
  warning += history_on ? "history keeps the figure and the next plan of this step (fingerprint " +
                              op_report.fingerprint +
                              ") counts it, refusing to run where allowed_mem is below it"
                        : "turn history on (Spec::history) so that the next plan counts it";
  if (op.info().kind == OpKind::kMapBlocks || op.info().kind == OpKind::kBlockwise) {
    warning += ", or declare what a map_blocks kernel allocates (its extra_projected_mem)";
  }
  return warning;
}

// What the run keeps of one op between its Prepare() and its Commit().
struct OpRun {
  OpReport report;
  std::vector<std::size_t> tasks;  // where its records are in report.tasks
  Clock::time_point start;
  std::int64_t rss_before = 0;  // the RSS when the high-water mark it reads was reset
  bool rss_reset = false;       // whether that reset succeeded
};

// The records of one op: a view of report.tasks where they lie side by side (always
// when the op ran alone), else a copy in `gathered`.
std::span<const TaskRecord> OpTasks(const ExecutionReport& report,
                                    const std::vector<std::size_t>& indices,
                                    std::vector<TaskRecord>& gathered) {
  if (indices.empty()) return {};
  if (indices.back() - indices.front() + 1 == indices.size()) {
    return std::span<const TaskRecord>(report.tasks).subspan(indices.front(), indices.size());
  }
  gathered.reserve(indices.size());
  for (std::size_t index : indices) gathered.push_back(report.tasks[index]);
  return gathered;
}

OpReport StartReport(const OpInfo& info) {
  OpReport op_report;
  op_report.name = info.name;
  op_report.kind = std::string(OpKindName(info.kind));
  op_report.fingerprint = info.fingerprint;
  op_report.tasks = info.num_tasks;
  op_report.projected_mem = info.projected_mem;
  op_report.estimated_mem = std::max(info.estimated_mem, info.projected_mem);
  op_report.estimate_from_history = info.estimate_from_history;
  return op_report;
}

// Lets the pool of reusable chunk buffers hold what the running tasks hold at once
// (workers x the largest task, at most half of total_mem): freed blocks are then reused
// by the next tasks instead of being faulted in afresh (DESIGN.md, "Memory model"). The
// pool keeps only buffers tasks freed, so it stays within what they held. A pool twice
// that size measured slower on the dew-point benchmark (docs/compute.md). Never shrinks.
void SizeBufferPool(const std::vector<std::shared_ptr<ExecutableOp>>& ops, const Spec& spec,
                    int workers) {
  std::int64_t largest_task = 0;
  for (const auto& op : ops) {
    largest_task = std::max(largest_task, op->info().projected_mem - spec.reserved_mem);
  }
  const std::int64_t wanted = std::min(largest_task * workers, spec.effective_total_mem() / 2);
  if (wanted > BufferPoolCapacity()) SetBufferPoolCapacity(wanted);
}

}  // namespace

std::vector<int> DistinctInputs(const OpInfo& info) {
  std::vector<int> inputs = info.inputs;
  std::sort(inputs.begin(), inputs.end());
  inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
  return inputs;
}

namespace {

// What a follower's run records of the options: no history (the leader records the run).
ExecuteOptions Recorded(const ExecuteOptions& options, bool leads) {
  ExecuteOptions recorded = options;
  recorded.record_history = options.record_history && leads;
  return recorded;
}

}  // namespace

struct PlanRun::State {
  State(const std::vector<std::shared_ptr<ExecutableOp>>& plan_ops, const Spec& run_spec,
        const ExecuteOptions& run_options, int workers, bool run_leads)
      : ops(plan_ops),
        spec(run_spec),
        options(run_options),
        leads(run_leads),
        inputs(CheckInputs(plan_ops)),
        start(Clock::now()),
        history(run_spec, Recorded(run_options, run_leads), workers),
        progress(run_leads && ProgressEnabled(run_options.progress), stderr),
        runs(plan_ops.size()),
        readers_left(plan_ops.size(), 0) {}

  const std::vector<std::shared_ptr<ExecutableOp>>& ops;
  const Spec& spec;
  const ExecuteOptions& options;
  const bool leads;                            // PlanRun's `leads`: false on a follower rank
  const std::vector<std::vector<int>> inputs;  // per op, DistinctInputs; checked first
  const Clock::time_point start;
  ExecutionReport report;
  HistoryRecorder history;
  ProgressBar progress;
  std::vector<OpRun> runs;
  std::vector<int> readers_left;  // per op, the ops reading it that have not committed
  // The process's high-water mark is reset only when no op is in flight (it is one per
  // process): ops that overlap read the one reset when the first of them started.
  int in_flight = 0;
  bool window_reset = false;
  std::int64_t window_rss_before = 0;
};

PlanRun::PlanRun(const std::vector<std::shared_ptr<ExecutableOp>>& ops, const Spec& spec,
                 const ExecuteOptions& options, int workers, bool leads)
    : state_(std::make_unique<State>(ops, spec, options, workers, leads)) {
  State& state = *state_;
  // What would fail later for a reason known now fails before any op does work.
  for (const auto& op : ops) op->CheckBeforeRun();
  SizeBufferPool(ops, spec, workers);
  for (const std::vector<int>& inputs : state.inputs) {
    for (int input : inputs) ++state.readers_left[static_cast<std::size_t>(input)];
  }
  state.report.history_run = state.history.run_id();
  state.report.allowed_mem = spec.allowed_mem;
  std::int64_t all_tasks = 0;
  for (const auto& op : ops) all_tasks += std::max<std::int64_t>(op->info().num_tasks, 0);
  state.report.tasks.reserve(static_cast<std::size_t>(all_tasks));
  if (options.on_start && leads) options.on_start(all_tasks);
}

bool PlanRun::leads() const { return state_->leads; }

PlanRun::~PlanRun() = default;

const std::vector<std::shared_ptr<ExecutableOp>>& PlanRun::ops() const { return state_->ops; }
const Spec& PlanRun::spec() const { return state_->spec; }
const ExecuteOptions& PlanRun::options() const { return state_->options; }
std::chrono::steady_clock::time_point PlanRun::start() const { return state_->start; }

std::int64_t PlanRun::admission_capacity() const {
  return state_->spec.effective_total_mem() - state_->spec.reserved_mem;
}

const std::vector<int>& PlanRun::inputs(int op) const {
  return state_->inputs.at(static_cast<std::size_t>(op));
}

void PlanRun::PrepareOp(int index) {
  State& state = *state_;
  ExecutableOp& op = *state.ops[static_cast<std::size_t>(index)];
  OpRun& run = state.runs[static_cast<std::size_t>(index)];
  run.start = Clock::now();
  if (state.in_flight++ == 0) {
    state.window_reset = ResetPeakRss();
    state.window_rss_before = CurrentRssBytes();
  }
  run.rss_reset = state.window_reset;
  run.rss_before = state.window_rss_before;
  run.report = StartReport(op.info());
  run.tasks.reserve(static_cast<std::size_t>(std::max<std::int64_t>(op.info().num_tasks, 0)));
  RunStep(op.info().name, "to prepare its output", [&] {
    if (state.leads) {
      op.Prepare();
    } else {
      op.FollowPrepare();
    }
  });
  state.progress.Start(index, op.info().name, op.info().num_tasks);
}

TaskRecord PlanRun::RunTask(int op, std::int64_t task) const {
  return RunPlanTask(state_->ops, state_->spec, op, task, state_->options, state_->start);
}

void PlanRun::RecordTask(int index, const TaskRecord& record) {
  State& state = *state_;
  OpRun& run = state.runs[static_cast<std::size_t>(index)];
  if (record.skipped) {
    ++run.report.tasks_skipped;
  } else {
    run.report.retries += record.attempts - 1;
  }
  run.report.projected_mem = std::max(run.report.projected_mem, record.projected_mem);
  run.tasks.push_back(state.report.tasks.size());
  state.report.tasks.push_back(record);
  state.progress.Update(index, static_cast<std::int64_t>(run.tasks.size()));
  if (state.options.on_task) state.options.on_task(record);
}

void PlanRun::CommitOp(int index) {
  State& state = *state_;
  ExecutableOp& op = *state.ops[static_cast<std::size_t>(index)];
  OpRun& run = state.runs[static_cast<std::size_t>(index)];
  RunStep(op.info().name, "to commit its output", [&] {
    if (state.leads) {
      op.Commit();
    } else {
      op.FollowCommit();
    }
  });
  state.progress.Finish(index, static_cast<std::int64_t>(run.tasks.size()));
  std::vector<TaskRecord> gathered;
  const std::span<const TaskRecord> tasks = OpTasks(state.report, run.tasks, gathered);
  SummarizeTasks(tasks, run.report);
  run.report.seconds = SecondsSince(run.start);
  const std::int64_t peak = PeakRssBytes();
  state.report.peak_rss_bytes = std::max(state.report.peak_rss_bytes, peak);
  if (run.rss_reset) {
    run.report.rss_growth_bytes = std::max<std::int64_t>(peak - run.rss_before, 0);
  }
  --state.in_flight;
  state.history.RecordOp(index, run.report, tasks);
  if (std::optional<std::string> warning =
          state.leads
              ? FootprintWarning(op, run.report, tasks, state.spec, state.history.run_id() != 0)
              : std::nullopt) {
    Warn(*warning);
    state.report.warnings.push_back(std::move(*warning));
  }
  run.tasks = {};
  // The op has committed: inputs it was the last reader of are no longer needed.
  for (int input : state.inputs[static_cast<std::size_t>(index)]) {
    if (--state.readers_left[static_cast<std::size_t>(input)] > 0) continue;
    ExecutableOp& released = *state.ops[static_cast<std::size_t>(input)];
    RunStep(released.info().name, "to release its output", [&] {
      if (state.leads) {
        released.Release();
      } else {
        released.FollowRelease();
      }
    });
  }
}

void PlanRun::SetClusterReport(ClusterReport cluster) {
  state_->report.cluster = std::move(cluster);
}

ExecutionReport PlanRun::Finish(const AdmissionFigures& figures) {
  State& state = *state_;
  ExecutionReport& report = state.report;
  report.ops.reserve(state.ops.size());
  for (OpRun& run : state.runs) report.ops.push_back(std::move(run.report));
  report.max_tasks_at_once = figures.max_tasks_at_once;
  report.max_admitted_mem = figures.max_admitted_mem;
  report.admission_capacity = admission_capacity();
  report.seconds = SecondsSince(state.start);
  // Without permission to reset it, the high-water mark counts from the process start.
  report.peak_rss_bytes = std::max(report.peak_rss_bytes, PeakRssBytes());
  state.history.Finish("ok", report);
  return std::move(report);
}

void PlanRun::Fail(const std::exception_ptr& error) {
  State& state = *state_;
  state.progress.Interrupt();
  state.report.seconds = SecondsSince(state.start);
  state.history.Finish("failed: " + DescribeException(error), state.report);
}

}  // namespace tessera::exec
