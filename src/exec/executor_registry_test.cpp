// The executor interface: the registry that Spec::executor chooses by, an executor
// registered by the test itself running a real plan, and every executor's results
// equal to the others'.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/errors.hpp"
#include "tessera/exec/internal/executor.hpp"
#include "tessera/exec/internal/plan_run.hpp"
#include "tessera/plan/finalized_plan.hpp"
#include "tessera/plan/internal/node.hpp"
#include "tessera/plan/reduction.hpp"

namespace tessera {

using planner::ExecutableOp;
using planner::MakeArange;
using planner::MakeBinary;
using planner::MakeRandom;
using planner::MakeRechunk;
using planner::MakeReduce;
using planner::MakeUnary;
using planner::NodePtr;

namespace {

// An executor the scheduler knows nothing of: one op at a time, always the ready op
// (every op it reads committed) of the highest index, its tasks last to first. It
// writes down the order it ran the ops in.
class ReverseExecutor : public exec::Executor {
 public:
  explicit ReverseExecutor(std::vector<int>* order) : order_(order) {}

  std::string_view name() const override { return "reverse"; }
  int workers() const override { return 1; }
  exec::AdmissionFigures Run(exec::PlanRun& run) override {
    const int ops = static_cast<int>(run.ops().size());
    std::vector<bool> committed(static_cast<std::size_t>(ops), false);
    for (int done = 0; done < ops; ++done) {
      int op = ops - 1;
      while (committed[static_cast<std::size_t>(op)] || !Ready(run, committed, op)) --op;
      run.PrepareOp(op);
      for (std::int64_t task = run.ops()[static_cast<std::size_t>(op)]->info().num_tasks - 1;
           task >= 0; --task) {
        run.RecordTask(op, run.RunTask(op, task));
      }
      run.CommitOp(op);
      committed[static_cast<std::size_t>(op)] = true;
      order_->push_back(op);
    }
    return {1, 0};
  }

 private:
  static bool Ready(const exec::PlanRun& run, const std::vector<bool>& committed, int op) {
    const std::vector<int>& inputs = run.inputs(op);
    return std::all_of(inputs.begin(), inputs.end(),
                       [&](int input) { return committed[static_cast<std::size_t>(input)]; });
  }

  std::vector<int>* order_;
};

// Registers an executor in the process's registry for one test.
class ScopedExecutor {
 public:
  ScopedExecutor(std::string name, exec::ExecutorRegistry::Factory factory)
      : name_(std::move(name)) {
    exec::ExecutorRegistry::Global().Register(name_, "a test's executor", std::move(factory));
  }
  ~ScopedExecutor() { exec::ExecutorRegistry::Global().Unregister(name_); }
  ScopedExecutor(const ScopedExecutor&) = delete;
  ScopedExecutor& operator=(const ScopedExecutor&) = delete;

 private:
  std::string name_;
};

Spec PlanSpec() {
  Spec spec;
  spec.allowed_mem = 100'000;
  spec.history = "off";
  spec.max_workers = 3;
  return spec;
}

// A real plan of several ops, two of them independent: a rechunk of x - y (its copies
// through an intermediate) and sums over both axes, and, apart, the sum of z.
FinalizedPlan MakePlan() {
  const NodePtr x = MakeRandom({40, 30}, {10, 10}, 11);
  const NodePtr y = MakeRandom({40, 30}, {10, 10}, 12);
  const NodePtr difference = MakeBinary("subtract", x, MakeUnary("exp", y));
  const NodePtr rechunked = MakeRechunk(difference, {40, 3});
  const NodePtr column_sums = MakeReduce(ReductionOp::kSum, rechunked, {0}, false, std::nullopt);
  const NodePtr z = MakeArange(0, 0.5, 1000, float64, {50});
  const NodePtr total = MakeReduce(ReductionOp::kSum, z, {0}, false, std::nullopt);
  return Finalize({PlanOutput{rechunked, std::nullopt}, PlanOutput{column_sums, std::nullopt},
                   PlanOutput{total, std::nullopt}},
                  PlanSpec());
}

struct Outcome {
  std::vector<NDArray> results;
  ExecutionReport report;
};

// Plans MakePlan() afresh and runs it with `executor`.
Outcome RunWith(const std::string& executor) {
  FinalizedPlan plan = MakePlan();
  Spec spec = plan.spec();
  spec.executor = executor;
  ExecuteOptions options;
  options.progress = ProgressMode::kNever;
  options.record_history = false;
  Outcome outcome;
  outcome.report = Execute(plan.executable_ops(), spec, options);
  for (std::size_t output = 0; output < 3; ++output) {
    outcome.results.push_back(plan.TakeResult(output));
  }
  return outcome;
}

// The (op, task) pairs a run recorded, sorted.
std::vector<std::pair<int, std::int64_t>> TasksOf(const ExecutionReport& report) {
  std::vector<std::pair<int, std::int64_t>> tasks;
  for (const TaskRecord& record : report.tasks) tasks.emplace_back(record.op, record.task);
  std::sort(tasks.begin(), tasks.end());
  return tasks;
}

// Builds with MPI (TESSERA_WITH_MPI, as the library) register "mpi"; others name it
// unavailable, saying how to get it.
#ifdef TESSERA_WITH_MPI
constexpr bool kWithMpi = true;
#else
constexpr bool kWithMpi = false;
#endif
const std::vector<std::string> kBuiltIn = kWithMpi
                                              ? std::vector<std::string>{"mpi", "sync", "threads"}
                                              : std::vector<std::string>{"sync", "threads"};
const std::string kMpiNotBuilt =
    "\"mpi\" was not built: MPI was not found when this Tessera was built (install "
    "libopenmpi-dev and openmpi-bin, then rebuild)";
// What a refusal lists after the executors it can make: those it cannot, and why.
const std::string kUnavailable =
    kWithMpi
        ? " (\"dask\" runs from Python only, \"ray\" runs from Python only)"
        : " (\"dask\" runs from Python only, " + kMpiNotBuilt + ", \"ray\" runs from Python only)";

TEST(ExecutorRegistry, KnowsTheBuiltInExecutors) {
  EXPECT_EQ(exec::ExecutorRegistry::Global().names(), kBuiltIn);
  Spec spec = PlanSpec();
  spec.executor = "sync";
  EXPECT_EQ(exec::MakeExecutor(spec)->name(), "sync");
  EXPECT_EQ(exec::MakeExecutor(spec)->workers(), 1);
  spec.executor = "threads";
  EXPECT_EQ(exec::MakeExecutor(spec)->name(), "threads");
  EXPECT_EQ(exec::MakeExecutor(spec)->workers(), 3);
}

// What `registry` says when asked for `executor`: the InvalidArgument's message, or
// "made <name>" when it made one.
std::string Refusal(const exec::ExecutorRegistry& registry, const std::string& executor) {
  Spec spec = PlanSpec();
  spec.executor = executor;
  try {
    return "made " + std::string(registry.Make(spec)->name());
  } catch (const InvalidArgument& error) {
    return error.what();
  }
}

TEST(ExecutorRegistry, RefusesAnUnknownNameNamingTheKnownOnes) {
  const exec::ExecutorRegistry& global = exec::ExecutorRegistry::Global();
  if (kWithMpi) {
    EXPECT_EQ(
        Refusal(global, "gpu"),
        "unknown executor \"gpu\"; valid executors: \"mpi\", \"sync\", \"threads\"" + kUnavailable);
    // Making it starts MPI (src/exec/mpi's tests do, under mpirun).
  } else {
    EXPECT_EQ(Refusal(global, "gpu"),
              "unknown executor \"gpu\"; valid executors: \"sync\", \"threads\"" + kUnavailable);
    EXPECT_EQ(Refusal(global, "mpi"),
              "executor \"mpi\" was not built: MPI was not found when this Tessera was built "
              "(install libopenmpi-dev and openmpi-bin, then rebuild); use \"sync\" (one task "
              "at a time) or \"threads\" (tasks in parallel on this machine)");
  }
  Spec spec = PlanSpec();
  spec.executor = "gpu";
  EXPECT_THROW(exec::MakeExecutor(spec), InvalidArgument);
  // A registry of its own lists what it holds, new names included.
  exec::ExecutorRegistry registry;
  std::vector<int> order;
  registry.Register("reverse", "last task first",
                    [&](const Spec&) { return std::make_unique<ReverseExecutor>(&order); });
  RegisterBuiltinExecutors(registry);
  EXPECT_EQ(Refusal(registry, "gpu"),
            (kWithMpi ? "unknown executor \"gpu\"; valid executors: \"mpi\", \"reverse\", "
                        "\"sync\", \"threads\""
                      : "unknown executor \"gpu\"; valid executors: \"reverse\", \"sync\", "
                        "\"threads\"") +
                kUnavailable);
  EXPECT_EQ(Refusal(registry, "dask"),
            std::string("executor \"dask\" runs from Python only; use ") +
                (kWithMpi ? "\"mpi\" (tasks on the ranks of an MPI job), " : "") +
                "\"reverse\" (last task first), \"sync\" (one task at a time) or \"threads\" "
                "(tasks in parallel on this machine)");
  EXPECT_EQ(Refusal(registry, "reverse"), "made reverse");
  EXPECT_TRUE(registry.Unregister("reverse"));
  EXPECT_FALSE(registry.Unregister("reverse"));
  EXPECT_EQ(Refusal(registry, "reverse").rfind("unknown executor \"reverse\"", 0), 0u);
}

TEST(ExecutorRegistry, RefusesANameTakenAndAnEmptyOne) {
  exec::ExecutorRegistry registry;
  RegisterBuiltinExecutors(registry);
  auto factory = [](const Spec&) -> std::unique_ptr<exec::Executor> { return nullptr; };
  EXPECT_THROW(registry.Register("threads", "again", factory), InvalidArgument);
  EXPECT_THROW(registry.RegisterUnavailable("mpi", "again"), InvalidArgument);
  EXPECT_THROW(registry.Register("", "nameless", factory), InvalidArgument);
  EXPECT_THROW(registry.Register("none", "no factory", nullptr), InvalidArgument);
  EXPECT_EQ(registry.names(), kBuiltIn);
}

TEST(ExecutorInterface, AnExecutorRegisteredHereRunsARealPlanAsThreadsDoes) {
  std::vector<int> order;
  const ScopedExecutor reverse(
      "reverse", [&](const Spec&) { return std::make_unique<ReverseExecutor>(&order); });
  const Outcome threads = RunWith("threads");
  const Outcome reversed = RunWith("reverse");
  ASSERT_EQ(reversed.results.size(), threads.results.size());
  for (std::size_t output = 0; output < threads.results.size(); ++output) {
    EXPECT_EQ(reversed.results[output], threads.results[output]) << "output " << output;
  }
  // Every op ran once, not in plan order, and the shared report is whole.
  const std::size_t ops = threads.report.ops.size();
  ASSERT_GE(ops, 4u);
  ASSERT_EQ(order.size(), ops);
  EXPECT_EQ(std::set<int>(order.begin(), order.end()).size(), ops);
  EXPECT_FALSE(std::is_sorted(order.begin(), order.end()));
  EXPECT_EQ(TasksOf(reversed.report), TasksOf(threads.report));
  ASSERT_EQ(reversed.report.ops.size(), ops);
  for (std::size_t op = 0; op < ops; ++op) {
    EXPECT_EQ(reversed.report.ops[op].kind, threads.report.ops[op].kind);
    EXPECT_EQ(reversed.report.ops[op].tasks, threads.report.ops[op].tasks);
    EXPECT_GT(reversed.report.ops[op].measured_mem_max, 0);
  }
  EXPECT_EQ(reversed.report.max_tasks_at_once, 1);
}

TEST(ExecutorInterface, SyncAndThreadsGiveEqualResults) {
  const Outcome sync = RunWith("sync");
  const Outcome threads = RunWith("threads");
  ASSERT_EQ(sync.results.size(), threads.results.size());
  for (std::size_t output = 0; output < sync.results.size(); ++output) {
    EXPECT_EQ(sync.results[output], threads.results[output]) << "output " << output;
  }
  EXPECT_EQ(TasksOf(sync.report), TasksOf(threads.report));
  EXPECT_EQ(sync.report.max_tasks_at_once, 1);
}

TEST(RunPlanTask, RunsAndMeasuresOneTaskOfAFinalizedPlan) {
  FinalizedPlan plan = MakePlan();
  const std::vector<std::shared_ptr<ExecutableOp>>& ops = plan.executable_ops();
  ASSERT_FALSE(ops.empty());
  ExecuteOptions options;
  options.progress = ProgressMode::kNever;
  ops[0]->Prepare();  // what the run does before an op's first task
  const std::int64_t last = ops[0]->info().num_tasks - 1;
  const TaskRecord record = RunPlanTask(plan, 0, last, options);
  EXPECT_EQ(record.op, 0);
  EXPECT_EQ(record.op_name, ops[0]->info().name);
  EXPECT_EQ(record.task, last);
  EXPECT_EQ(record.attempts, 1);
  EXPECT_FALSE(record.skipped);
  EXPECT_EQ(record.projected_mem, ops[0]->projected_mem(last));
  EXPECT_GT(record.measured_mem, 0);
  EXPECT_LE(record.measured_mem, record.projected_mem);
  EXPECT_THROW(RunPlanTask(plan, static_cast<int>(ops.size()), 0, options), InvalidArgument);
  EXPECT_THROW(RunPlanTask(plan, -1, 0, options), InvalidArgument);
  EXPECT_THROW(RunPlanTask(plan, 0, last + 1, options), InvalidArgument);
}

}  // namespace
}  // namespace tessera
