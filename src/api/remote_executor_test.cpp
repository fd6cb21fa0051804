// Remote executors (tessera/exec/remote_tasks.hpp) and plan recipes: a launcher of the
// test's own runs every task on a thread through RunRemoteTask, as a worker process would
// (the plan remade from its recipe, apart from the client's), and can lose a task's first
// attempts as a dead worker would.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "temp_dir.hpp"
#include "tessera/plan/internal/plan_recipe.hpp"
#include "tessera/tessera.hpp"

namespace tessera {
namespace {

constexpr std::int64_t kMB = 1'000'000;

// What every launcher of a test saw, and which attempts it loses.
struct LauncherLog {
  std::mutex mutex;
  std::vector<RemoteTask> submitted;
  std::map<std::pair<int, std::int64_t>, int> lose_attempts;  // (op, task) -> attempts lost
  std::set<std::string> keys;
  bool hold = false;  // tasks are taken and never end (a stuck cluster)
};

class ThreadLauncher : public TaskLauncher {
 public:
  explicit ThreadLauncher(LauncherLog* log) : log_(log) {}
  ~ThreadLauncher() override { Finish(false); }

  int workers() const override { return 2; }
  void Start(const RemoteRun& run, const std::string& recipe) override {
    run_ = run;
    recipe_ = recipe;
    const std::lock_guard lock(log_->mutex);
    log_->keys.insert(run.key);
  }
  void Submit(const RemoteTask& task) override {
    bool lose = false;
    {
      const std::lock_guard lock(log_->mutex);
      log_->submitted.push_back(task);
      const auto found = log_->lose_attempts.find({task.op, task.task});
      lose = found != log_->lose_attempts.end() && task.attempt <= found->second;
      if (log_->hold) return;
    }
    threads_.emplace_back([this, task, lose] {
      RemoteOutcome outcome;
      outcome.op = task.op;
      outcome.task = task.task;
      if (lose) {
        outcome.worker_lost = true;
      } else {
        try {
          RemoteTaskOptions options{run_.start_unix_seconds, run_.retries, run_.resume, 1};
          RemoteTaskResult result = RunRemoteTask(run_.key, recipe_, task.op, task.task, options);
          outcome.record = result.record;
          outcome.blocks = std::move(result.blocks);
        } catch (...) {
          outcome.error = std::current_exception();
        }
      }
      const std::lock_guard lock(mutex_);
      done_.push_back(std::move(outcome));
      ended_.notify_one();
    });
  }
  std::optional<RemoteOutcome> WaitAny(double timeout_seconds) override {
    std::unique_lock lock(mutex_);
    if (!ended_.wait_for(lock, std::chrono::duration<double>(timeout_seconds),
                         [&] { return !done_.empty(); })) {
      return std::nullopt;
    }
    RemoteOutcome outcome = std::move(done_.front());
    done_.pop_front();
    return outcome;
  }
  void Finish(bool) noexcept override {
    for (std::thread& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
    threads_.clear();
  }

 private:
  LauncherLog* log_;
  RemoteRun run_;
  std::string recipe_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable ended_;
  std::deque<RemoteOutcome> done_;
};

// The log of the test running now: the executor registered stays in the process's
// registry after the test, so it points at an object that outlives every test.
LauncherLog& CurrentLog() {
  static auto* log = new LauncherLog();
  return *log;
}

class RemoteExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_.submitted.clear();
    log_.lose_attempts.clear();
    log_.keys.clear();
    log_.hold = false;
    RegisterRemoteExecutor("dask", "the test's threads, as remote workers", [](const Spec&) {
      return std::make_unique<ThreadLauncher>(&CurrentLog());
    });
  }
  Spec MakeSpec(const std::string& executor) const {
    Spec spec;
    spec.allowed_mem = 100 * kMB;
    spec.executor = executor;
    spec.max_workers = 2;
    spec.work_dir = dir_.path().string();
    spec.history = "off";
    return spec;
  }
  NDArray Numbers(Index rows, Index cols) const {
    NDArray data({rows, cols}, float64);
    auto values = data.mutable_data<double>();
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i % 97) * 0.5;
    return data;
  }

  testing::TempDir dir_;
  LauncherLog& log_ = CurrentLog();
};

std::vector<double> Values(const NDArray& array) {
  auto values = array.data<double>();
  return {values.begin(), values.end()};
}

TEST_F(RemoteExecutorTest, GivesTheThreadsExecutorsResultsAndRecordsEveryTask) {
  const auto build = [&](const Spec& spec) {
    Array x = asarray(Numbers(40, 30), {7, 30}, spec);
    return sum(exp(x * 0.01).rechunk({40, 4}), 0);
  };
  const NDArray threads = build(MakeSpec("threads")).compute();
  ExecutionReport report;
  ComputeOptions options;
  options.report = &report;
  const Array remote = build(MakeSpec("dask"));
  const FinalizedPlan plan = tessera::plan({remote});
  const NDArray values = remote.compute(options);
  EXPECT_EQ(Values(values), Values(threads));
  EXPECT_EQ(static_cast<std::int64_t>(report.tasks.size()), plan.num_tasks());
  EXPECT_EQ(static_cast<std::int64_t>(log_.submitted.size()), plan.num_tasks());
  ASSERT_EQ(report.ops.size(), plan.ops().size());
  for (const RemoteTask& task : log_.submitted) {
    const OpInfo& op = plan.ops()[static_cast<std::size_t>(task.op)];
    EXPECT_GE(task.memory, op.estimated_mem > 0 ? std::min(op.estimated_mem, op.projected_mem) : 1);
    EXPECT_LE(task.memory, std::max(op.projected_mem, op.estimated_mem));
  }
  for (const TaskRecord& record : report.tasks) {
    EXPECT_EQ(record.worker, 1);  // the launcher's, from the worker
    EXPECT_GE(record.start_seconds, 0);
    EXPECT_LE(record.measured_mem, report.ops[static_cast<std::size_t>(record.op)].projected_mem);
  }
  EXPECT_EQ(log_.keys.size(), 1u);
}

TEST_F(RemoteExecutorTest, SendsTheEnginesOwnKernelsByName) {
  // Cumulative sums scan each block with a kernel of the engine's own (a built-in recipe).
  const auto build = [&](const Spec& spec) {
    return cumulative_prod(cumulative_sum(asarray(Numbers(9, 8), {4, 3}, spec), 1) * 0.01, 0);
  };
  EXPECT_EQ(Values(build(MakeSpec("dask")).compute()),
            Values(build(MakeSpec("threads")).compute()));
  EXPECT_FALSE(log_.submitted.empty());
}

TEST_F(RemoteExecutorTest, ALostWorkerCostsItsTaskARetryNotTheRun) {
  const Spec spec = MakeSpec("dask");
  const NDArray data = Numbers(20, 10);
  log_.lose_attempts[{0, 1}] = 2;  // op 0's task 1 loses its worker twice
  ExecutionReport report;
  ComputeOptions options;
  options.report = &report;
  const NDArray values = (asarray(data, {5, 10}, spec) * 3.0).compute(options);
  for (std::size_t i = 0; i < Values(values).size(); ++i) {
    EXPECT_EQ(Values(values)[i], Values(data)[i] * 3.0);
  }
  int attempts = 0;
  for (const TaskRecord& record : report.tasks) {
    if (record.op == 0 && record.task == 1) attempts = record.attempts;
  }
  EXPECT_EQ(attempts, 3);
  EXPECT_EQ(report.ops.front().retries, 2);
}

TEST_F(RemoteExecutorTest, AWorkerLostMoreOftenThanTheRetriesFailsTheRunNamingIt) {
  const Spec spec = MakeSpec("dask");
  log_.lose_attempts[{0, 0}] = 5;
  ComputeOptions options;
  options.execute.retries = 1;
  try {
    (asarray(Numbers(10, 10), {5, 10}, spec) + 1.0).compute(options);
    FAIL() << "the run should fail";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("its worker was lost 2 times"), std::string::npos)
        << error.what();
  }
}

TEST_F(RemoteExecutorTest, OnWaitStopsARunWhoseTasksNeverEnd) {
  log_.hold = true;
  std::atomic<int> waits{0};
  ComputeOptions options;
  options.execute.on_wait = [&waits] {
    if (++waits == 3) throw Error("interrupted (the test's Ctrl-C)");
  };
  try {
    (asarray(Numbers(10, 10), {5, 10}, MakeSpec("dask")) + 1.0).compute(options);
    FAIL() << "the run should stop";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("the test's Ctrl-C"), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(waits.load(), 3);
  EXPECT_EQ(log_.submitted.size(), 2u);
}

TEST_F(RemoteExecutorTest, WritesZarrTargetsFromTheWorkers) {
  const Spec spec = MakeSpec("dask");
  const NDArray data = Numbers(12, 12);
  const std::string out = (dir_.path() / "out.zarr").string();
  asarray(data, {12, 1}, spec).rechunk({1, 12}).to_zarr(out);
  const Array back = from_zarr(out, MakeSpec("threads"));
  EXPECT_EQ(back.chunks(), (Shape{1, 12}));
  EXPECT_EQ(Values(back.compute()), Values(data));
}

TEST_F(RemoteExecutorTest, RefusesAPlanThatCannotReachOtherProcesses) {
  const Spec spec = MakeSpec("dask");
  Array kernel =
      map_blocks([](std::span<const NDArray> in, const BlockInfo&) { return NDArray(in[0]); },
                 {asarray(Numbers(4, 4), {2, 2}, spec)}, float64, 0, "copy-kernel");
  try {
    kernel.compute();
    FAIL() << "a C++ kernel cannot be sent";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("copy-kernel"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("cannot be sent to other processes"),
              std::string::npos)
        << error.what();
  }
  EXPECT_TRUE(log_.submitted.empty());
}

TEST(PlanRecipe, RemakesThePlanWithTheHistoryItCountedAndWithoutADatabase) {
  testing::TempDir dir;
  Spec spec;
  spec.set_allowed_mem("auto");
  spec.total_mem = 2000 * kMB;
  spec.max_workers = 2;
  spec.work_dir = dir.path().string();
  spec.history = (dir.path() / "history.sqlite").string();
  NDArray data({64, 64}, float64);
  const auto build = [&] { return (asarray(data, {8, 64}, spec) + 1.0).rechunk({64, 8}) * 2.0; };
  build().compute();  // a run history records
  const FinalizedPlan plan = tessera::plan({build()});
  ASSERT_TRUE(std::any_of(plan.ops().begin(), plan.ops().end(),
                          [](const OpInfo& op) { return op.learned_run != 0; }));
  const std::string recipe = planner::EncodePlanRecipe(plan);
  std::filesystem::remove(dir.path() / "history.sqlite");  // the worker has none
  const FinalizedPlan remade = planner::DecodePlanRecipe(recipe);
  EXPECT_EQ(planner::PlanHash(remade.executable_ops()), planner::PlanHash(plan.executable_ops()));
  EXPECT_EQ(remade.spec().allowed_mem, plan.spec().allowed_mem);
  ASSERT_EQ(remade.ops().size(), plan.ops().size());
  for (std::size_t i = 0; i < plan.ops().size(); ++i) {
    EXPECT_EQ(remade.ops()[i].fingerprint, plan.ops()[i].fingerprint);
    EXPECT_EQ(remade.ops()[i].estimated_mem, plan.ops()[i].estimated_mem);
    EXPECT_EQ(remade.ops()[i].learned_run, plan.ops()[i].learned_run);
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "history.sqlite"));
}

TEST(PlanRecipe, RefusesDamagedBytesWithAFormatError) {
  testing::TempDir dir;
  Spec spec;
  spec.allowed_mem = 100 * kMB;
  spec.work_dir = dir.path().string();
  spec.history = "off";
  const FinalizedPlan plan = tessera::plan({ones({10, 10}, float32, {5, 5}, spec) + 1.0});
  const std::string recipe = planner::EncodePlanRecipe(plan);
  for (std::size_t size = 0; size < recipe.size(); size += 7) {
    EXPECT_THROW(planner::DecodePlanRecipe(recipe.substr(0, size)), FormatError) << size;
  }
  EXPECT_THROW(planner::DecodePlanRecipe("not a recipe"), FormatError);
}

}  // namespace
}  // namespace tessera
