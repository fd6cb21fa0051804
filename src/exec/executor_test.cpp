#include "tessera/exec/internal/executor.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "concurrency_gauge.hpp"
#include "sanitizers.hpp"
#include "temp_dir.hpp"
#include "tessera/core/buffer.hpp"
#include "tessera/core/buffer_pool.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/warning.hpp"
#include "tessera/memory/history.hpp"
#include "tessera/plan/internal/node.hpp"

namespace tessera {

using planner::ExecutableOp;
namespace {

// What every fake op of one test writes down, in order: "prepare a", "commit a", ...
class EventLog {
 public:
  void Add(std::string event) {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(std::move(event));
  }
  std::vector<std::string> events() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> events_;
};

// A fake op: task t allocates Buffers of bytes(t) one after another while holding the
// previous ones (so its exact peak is their sum), can fail, and counts its runs.
class FakeOp : public ExecutableOp {
 public:
  FakeOp(std::string name, std::int64_t num_tasks, EventLog* log = nullptr)
      : log_(log), runs_(static_cast<std::size_t>(num_tasks)) {
    info_.name = std::move(name);
    info_.kind = OpKind::kElementwise;
    info_.num_tasks = num_tasks;
    info_.projected_mem = 1000;
    info_.concurrency = 64;
  }

  OpInfo& mutable_info() { return info_; }
  const OpInfo& info() const override { return info_; }
  std::int64_t projected_mem(std::int64_t) const override { return info_.projected_mem; }
  std::string DescribeTask(std::int64_t task) const override {
    return "block (" + std::to_string(task) + ")";
  }
  void Prepare() override { Log("prepare"); }
  bool IsTaskDone(std::int64_t task) const override { return done_.count(task) > 0; }
  void RunTask(std::int64_t task) const override {
    ++runs_[static_cast<std::size_t>(task)];
    if (body_) body_(task);
    std::vector<Buffer> held;
    for (std::int64_t bytes : buffers_) {
      held.emplace_back(bytes);
      if (bytes > 0) std::memset(held.back().data(), 1, static_cast<std::size_t>(bytes));
    }
    if (auto failure = failures_.find(task); failure != failures_.end()) {
      if (failure->second.remaining.fetch_sub(1) > 0) failure->second.raise();
    }
  }
  void Commit() override { Log("commit"); }
  void Release() override { Log("release"); }

  // Each task allocates these Buffers, holding them all until it ends.
  void set_buffers(std::vector<std::int64_t> buffers) { buffers_ = std::move(buffers); }
  // `task` fails its first `times` attempts by calling `raise`.
  void FailTask(std::int64_t task, int times, std::function<void()> raise) {
    failures_[task].remaining = times;
    failures_[task].raise = std::move(raise);
  }
  void MarkDone(std::int64_t task) { done_.insert(task); }
  // Runs at the start of every attempt.
  void set_body(std::function<void(std::int64_t)> body) { body_ = std::move(body); }
  int runs(std::int64_t task) const { return runs_[static_cast<std::size_t>(task)].load(); }

 private:
  struct Failure {
    mutable std::atomic<int> remaining{0};
    std::function<void()> raise;
  };
  void Log(const char* what) {
    if (log_ != nullptr) log_->Add(std::string(what) + " " + info_.name);
  }

  OpInfo info_;
  EventLog* log_;
  std::vector<std::int64_t> buffers_;
  std::map<std::int64_t, Failure> failures_;
  std::set<std::int64_t> done_;
  std::function<void(std::int64_t)> body_;
  mutable std::vector<std::atomic<int>> runs_;
};

Spec MakeSpec(const std::string& executor, int max_workers = 2) {
  Spec spec;
  spec.allowed_mem = 1 << 30;
  spec.reserved_mem = 500;
  spec.executor = executor;
  spec.max_workers = max_workers;
  return spec;
}

ExecuteOptions Quiet() {
  ExecuteOptions options;
  options.progress = ProgressMode::kNever;
  return options;
}

using Plan = std::vector<std::shared_ptr<ExecutableOp>>;

// Every behaviour, under both local executors.
class ExecutorTest : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Executors, ExecutorTest, ::testing::Values("sync", "threads"));

TEST_P(ExecutorTest, MeasuresEachTasksBufferPeakPlusReservedMem) {
  auto op = std::make_shared<FakeOp>("measure", 6);
  // 1000 + 3000 bytes held together; 3 MiB goes through the buffer pool: charged alike.
  op->set_buffers({1000, 3000, std::int64_t{3} << 20});
  const ExecutionReport report = Execute({op}, MakeSpec(GetParam()), Quiet());
  const std::int64_t expected = 1000 + 3000 + (std::int64_t{3} << 20) + 500;
  ASSERT_EQ(report.tasks.size(), 6u);
  std::set<std::int64_t> seen;
  for (const TaskRecord& record : report.tasks) {
    EXPECT_EQ(record.measured_mem, expected);
    EXPECT_EQ(record.projected_mem, 1000);
    EXPECT_EQ(record.attempts, 1);
    EXPECT_FALSE(record.skipped);
    EXPECT_EQ(record.op_name, "measure");
    seen.insert(record.task);
  }
  EXPECT_EQ(seen.size(), 6u);
  ASSERT_EQ(report.ops.size(), 1u);
  const OpReport& op_report = report.ops[0];
  EXPECT_EQ(op_report.name, "measure");
  EXPECT_EQ(op_report.kind, "elementwise");
  EXPECT_EQ(op_report.tasks, 6);
  EXPECT_EQ(op_report.tasks_skipped, 0);
  EXPECT_EQ(op_report.measured_mem_max, expected);
  EXPECT_EQ(op_report.measured_mem_median, expected);
  EXPECT_EQ(op_report.measured_mem_p95, expected);
  EXPECT_EQ(op_report.projected_mem, 1000);
  EXPECT_EQ(op_report.retries, 0);
  EXPECT_GE(op_report.seconds, op_report.task_seconds_max);
  EXPECT_GE(report.seconds, op_report.seconds);
  EXPECT_GT(report.peak_rss_bytes, 0);
}

TEST_P(ExecutorTest, OnStartGetsEveryOpsTasksBeforeTheFirstRuns) {
  auto first = std::make_shared<FakeOp>("first", 3);
  auto second = std::make_shared<FakeOp>("second", 2);
  second->mutable_info().inputs = {0};
  std::vector<std::int64_t> started;
  int tasks_seen_at_start = -1;
  int tasks = 0;
  ExecuteOptions options = Quiet();
  options.on_start = [&](std::int64_t total) {
    started.push_back(total);
    tasks_seen_at_start = tasks;
  };
  options.on_task = [&](const TaskRecord&) { ++tasks; };
  Execute({first, second}, MakeSpec(GetParam()), options);
  EXPECT_EQ(started, (std::vector<std::int64_t>{5}));
  EXPECT_EQ(tasks_seen_at_start, 0);
  EXPECT_EQ(tasks, 5);
}

TEST_P(ExecutorTest, ATaskThatFailsOnceIsRetried) {
  auto op = std::make_shared<FakeOp>("flaky", 4);
  op->set_buffers({2048});
  op->FailTask(2, 1, [] { throw std::runtime_error("transient"); });
  int calls = 0;
  ExecuteOptions options = Quiet();
  options.on_task = [&](const TaskRecord&) { ++calls; };
  const ExecutionReport report = Execute({op}, MakeSpec(GetParam()), options);
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(report.ops[0].retries, 1);
  for (const TaskRecord& record : report.tasks) {
    EXPECT_EQ(record.attempts, record.task == 2 ? 2 : 1);
    EXPECT_EQ(record.measured_mem, 2048 + 500);  // the attempt that succeeded
  }
  EXPECT_EQ(op->runs(2), 2);
  EXPECT_EQ(op->runs(1), 1);
}

TEST_P(ExecutorTest, ATaskThatKeepsFailingNamesOpBlockAttemptsAndCause) {
  EventLog log;
  auto first = std::make_shared<FakeOp>("boom-1", 3, &log);
  first->FailTask(1, 100, [] { throw std::runtime_error("disk on fire"); });
  auto second = std::make_shared<FakeOp>("after", 1, &log);
  second->mutable_info().inputs = {0};
  ExecuteOptions options = Quiet();
  options.retries = 2;
  try {
    Execute({first, second}, MakeSpec(GetParam()), options);
    FAIL() << "Execute succeeded";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "op \"boom-1\" failed at block (1) after 3 attempts: disk on fire");
  }
  EXPECT_EQ(first->runs(1), 3);
  // Neither a commit nor a later op after the failure.
  EXPECT_EQ(log.events(), std::vector<std::string>{"prepare boom-1"});
}

// Issue 14: a corrupt chunk or bad metadata reads the same on every attempt, so only
// storage failures (and exceptions that are not Tessera's) are tried again.
TEST_P(ExecutorTest, OnlyStorageFailuresAreRetried) {
  struct Case {
    std::function<void()> raise;
    int expected_runs;
  };
  const Case cases[] = {
      {[] { throw FormatError("chunk 0.1 does not decode"); }, 1},
      {[] { throw InvalidArgument("Integers to negative integer powers"); }, 1},
      {[] { throw MemoryBudgetError("too big"); }, 1},
      {[] { throw Error("internal error"); }, 1},
      {[] { throw StorageError("read failed: EIO"); }, 3},
      {[] { throw std::runtime_error("not ours"); }, 3},
  };
  for (const Case& c : cases) {
    auto op = std::make_shared<FakeOp>("once", 2);
    op->FailTask(1, 100, c.raise);
    ExecuteOptions options = Quiet();
    options.retries = 2;
    std::string message;
    try {
      Execute({op}, MakeSpec(GetParam()), options);
      ADD_FAILURE() << "Execute succeeded";
    } catch (const Error& error) {
      message = error.what();
    }
    SCOPED_TRACE(message);
    EXPECT_EQ(op->runs(1), c.expected_runs);
    const std::string attempts = c.expected_runs == 1 ? "after 1 attempt: " : "after 3 attempts: ";
    EXPECT_NE(message.find("op \"once\" failed at block (1) " + attempts), std::string::npos);
  }
}

TEST_P(ExecutorTest, TheLastCausesErrorTypeIsKept) {
  auto check = [&](std::function<void()> raise, auto type_tag) {
    using Expected = decltype(type_tag);
    auto op = std::make_shared<FakeOp>("typed", 1);
    op->FailTask(0, 100, std::move(raise));
    ExecuteOptions options = Quiet();
    options.retries = 0;
    try {
      Execute({op}, MakeSpec(GetParam()), options);
      ADD_FAILURE() << "Execute succeeded";
    } catch (const Expected& error) {
      EXPECT_NE(
          std::string(error.what()).find("op \"typed\" failed at block (0) after 1 attempt: "),
          std::string::npos)
          << error.what();
    }
  };
  check([] { throw StorageError("gone"); }, StorageError(""));
  check([] { throw FormatError("corrupt"); }, FormatError(""));
  check([] { throw InvalidArgument("bad"); }, InvalidArgument(""));
  check([] { throw MemoryBudgetError("too big"); }, MemoryBudgetError(""));
  check([] { throw 42; }, Error(""));
}

TEST_P(ExecutorTest, AFailureStopsTheRemainingTasks) {
  auto op = std::make_shared<FakeOp>("stop", 200);
  op->FailTask(0, 1000, [] { throw std::runtime_error("first task fails"); });
  op->set_body([](std::int64_t) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); });
  ExecuteOptions options = Quiet();
  options.retries = 0;
  EXPECT_THROW(Execute({op}, MakeSpec(GetParam()), options), Error);
  int ran = 0;
  for (std::int64_t task = 0; task < 200; ++task) ran += op->runs(task);
  EXPECT_LT(ran, 50);
}

TEST_P(ExecutorTest, ResumeSkipsTasksAlreadyDone) {
  auto op = std::make_shared<FakeOp>("resume", 5);
  op->MarkDone(1);
  op->MarkDone(3);
  std::vector<TaskRecord> seen;
  ExecuteOptions options = Quiet();
  options.resume = true;
  options.on_task = [&](const TaskRecord& record) { seen.push_back(record); };
  const ExecutionReport report = Execute({op}, MakeSpec(GetParam()), options);
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_EQ(report.ops[0].tasks_skipped, 2);
  for (const TaskRecord& record : report.tasks) {
    const bool done_before = record.task == 1 || record.task == 3;
    EXPECT_EQ(record.skipped, done_before);
    EXPECT_EQ(record.attempts, done_before ? 0 : 1);
    EXPECT_EQ(op->runs(record.task), done_before ? 0 : 1);
  }
  // Without resume every task runs.
  const ExecutionReport again = Execute({op}, MakeSpec(GetParam()), Quiet());
  EXPECT_EQ(again.ops[0].tasks_skipped, 0);
  EXPECT_EQ(op->runs(1), 1);
}

TEST_P(ExecutorTest, ReleasesAnOutputOnceItsLastReaderHasCommitted) {
  EventLog log;
  auto a = std::make_shared<FakeOp>("a", 2, &log);
  auto b = std::make_shared<FakeOp>("b", 2, &log);
  auto c = std::make_shared<FakeOp>("c", 2, &log);
  auto d = std::make_shared<FakeOp>("d", 2, &log);
  b->mutable_info().inputs = {0};
  c->mutable_info().inputs = {1, 0, 1};  // duplicates count once
  d->mutable_info().inputs = {2};
  Execute({a, b, c, d}, MakeSpec(GetParam()), Quiet());
  const std::vector<std::string> expected = {
      "prepare a", "commit a",  "prepare b", "commit b", "prepare c", "commit c",
      "release a", "release b", "prepare d", "commit d", "release c"};  // d: nobody reads it
  EXPECT_EQ(log.events(), expected);
}

TEST_P(ExecutorTest, CallsOnTaskOncePerTaskOneAtATime) {
  auto op = std::make_shared<FakeOp>("callback", 40);
  op->set_body([](std::int64_t) { std::this_thread::sleep_for(std::chrono::microseconds(200)); });
  std::vector<int> calls(40, 0);
  std::atomic<int> inside{0};
  bool overlapped = false;
  ExecuteOptions options = Quiet();
  options.on_task = [&](const TaskRecord& record) {
    if (++inside > 1) overlapped = true;
    ++calls[static_cast<std::size_t>(record.task)];
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    --inside;
  };
  const ExecutionReport report = Execute({op}, MakeSpec(GetParam()), options);
  EXPECT_FALSE(overlapped);
  for (int count : calls) EXPECT_EQ(count, 1);
  EXPECT_EQ(report.tasks.size(), 40u);
}

TEST_P(ExecutorTest, RunsOpsWithoutTasks) {
  EventLog log;
  auto empty = std::make_shared<FakeOp>("empty", 0, &log);
  const ExecutionReport report = Execute({empty}, MakeSpec(GetParam()), Quiet());
  EXPECT_EQ(report.ops[0].tasks, 0);
  EXPECT_EQ(report.ops[0].measured_mem_max, 0);
  EXPECT_EQ(log.events(), (std::vector<std::string>{"prepare empty", "commit empty"}));
}

// Runs `op`'s tasks so that each waits (up to `patience`) for a second one to be running,
// and returns the most that ran at once.
int MostConcurrentTasks(const std::shared_ptr<FakeOp>& op, const Spec& spec,
                        std::chrono::milliseconds patience) {
  testing::ConcurrencyGauge gauge;
  op->set_body([&](std::int64_t) {
    gauge.Enter();
    const auto deadline = std::chrono::steady_clock::now() + patience;
    while (gauge.most() < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    gauge.Leave();
  });
  Execute({op}, spec, Quiet());
  return gauge.most();
}

// Touches `bytes` of memory the accounting allocator does not see, as a user kernel's
// own scratch does, and frees it.
void TouchOwnMemory(std::int64_t bytes) {
  std::vector<char> scratch(static_cast<std::size_t>(bytes));
  std::memset(scratch.data(), 1, scratch.size());
  EXPECT_EQ(scratch.back(), 1);
}

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

TEST_P(ExecutorTest, MeasuresWhatTheAllocatorCannotSee) {
  // Tasks hold 3 MiB and 9 MiB Buffers (new at first: on small pages and on huge pages,
  // then reused from the pool) and touch 40 MiB of their own: unaccounted_mem is the
  // 40 MiB, whatever the pool and the page size did.
  ReleaseBufferPool();
  auto op = std::make_shared<FakeOp>("own-scratch", 4);
  op->set_buffers({3 * kMiB, 9 * kMiB});
  op->set_body([](std::int64_t) { TouchOwnMemory(40 * kMiB); });
  auto plain = std::make_shared<FakeOp>("buffers-only", 4);
  plain->set_buffers({3 * kMiB, 9 * kMiB});
  // Both project their Buffers exactly (reserved_mem 500 included).
  op->mutable_info().projected_mem = 12 * kMiB + 500;
  plain->mutable_info().projected_mem = 12 * kMiB + 500;
  std::vector<std::string> warnings;
  ScopedWarningHandler capture([&](const std::string& w) { warnings.push_back(w); });
  const ExecutionReport report = Execute({op, plain}, MakeSpec(GetParam()), Quiet());
  for (const TaskRecord& record : report.tasks) {
    if (record.op == 0) {
      EXPECT_GE(record.unaccounted_mem, 39 * kMiB) << "task " << record.task;
      EXPECT_LE(record.unaccounted_mem, 42 * kMiB * testing::kFreshPageFactor)
          << "task " << record.task;
    } else if (!testing::kAddressSanitizer) {
      // Under ASan a thread's first allocations fault in its allocator caches and shadow,
      // by amounts that vary from run to run (tests/support/task_bounds.hpp).
      EXPECT_LE(record.unaccounted_mem, kMiB) << "task " << record.task;
    }
  }
  ASSERT_EQ(report.ops.size(), 2u);
  EXPECT_GE(report.ops[0].unaccounted_mem_p95, 39 * kMiB);
  EXPECT_EQ(report.ops[0].footprint_mem_max,
            report.ops[0].measured_mem_max + report.ops[0].unaccounted_mem_max);
  // One warning, for the op that went over what the plan counted (its projection).
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(report.warnings, warnings);
  EXPECT_NE(warnings[0].find("op \"own-scratch\" (elementwise) measured"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("above the " + format_bytes(12 * kMiB + 500) +
                             " the plan counted for it (its projection)"),
            std::string::npos)
      << warnings[0];
}

TEST_P(ExecutorTest, RecordsStartTimesDurationsAndWorkers) {
  auto op = std::make_shared<FakeOp>("timed", 6);
  op->set_body([](std::int64_t) { std::this_thread::sleep_for(std::chrono::milliseconds(20)); });
  const ExecutionReport report = Execute({op}, MakeSpec(GetParam(), 2), Quiet());
  std::set<int> workers;
  for (const TaskRecord& record : report.tasks) {
    EXPECT_GE(record.seconds, 0.015);
    EXPECT_GE(record.start_seconds, 0.0);
    EXPECT_LE(record.start_seconds + record.seconds, report.seconds + 1e-6);
    workers.insert(record.worker);
  }
  EXPECT_EQ(*workers.begin(), 0);
  EXPECT_EQ(static_cast<int>(workers.size()), GetParam() == "sync" ? 1 : 2);
  EXPECT_GE(report.ops[0].task_seconds_median, 0.015);
  EXPECT_GE(report.ops[0].task_seconds_p95, report.ops[0].task_seconds_median);
  EXPECT_GE(report.ops[0].task_seconds_max, report.ops[0].task_seconds_p95);
}

TEST_P(ExecutorTest, RecordsTheRunInHistory) {
  testing::TempDir dir("history");
  Spec spec = MakeSpec(GetParam());
  spec.history = (dir.path() / "history.sqlite").string();
  auto first = std::make_shared<FakeOp>("first", 3);
  first->mutable_info().fingerprint = "00000000000000aa";
  first->set_buffers({4000});
  auto second = std::make_shared<FakeOp>("second", 2);
  second->mutable_info().inputs = {0};
  ExecuteOptions options = Quiet();
  options.label = "unit test";
  const ExecutionReport report = Execute({first, second}, spec, options);
  ASSERT_GT(report.history_run, 0);
  const auto history = HistoryDatabase::Open(spec.history);
  const std::optional<RunHistory> run = history->LoadRun(report.history_run);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->label, "unit test");
  EXPECT_EQ(run->status, "ok");
  EXPECT_EQ(run->executor, GetParam());
  EXPECT_EQ(run->reserved_mem, 500);
  ASSERT_EQ(run->ops.size(), 2u);
  EXPECT_EQ(run->ops[0].name, "first");
  EXPECT_EQ(run->ops[0].fingerprint, "00000000000000aa");
  EXPECT_EQ(run->ops[0].tasks, 3);
  EXPECT_EQ(run->ops[0].measured_mem_max, 4500);
  EXPECT_EQ(run->ops[0].measured_mem_max, report.ops[0].measured_mem_max);
  EXPECT_EQ(run->ops[1].index, 1);
  EXPECT_EQ(run->tasks.size(), 5u);
  const std::optional<LearnedFootprint> learned = history->Learned("00000000000000aa");
  ASSERT_TRUE(learned.has_value());
  EXPECT_EQ(learned->task_bytes, report.ops[0].footprint_mem_max - 500);
  EXPECT_EQ(learned->run_id, report.history_run);
}

TEST_P(ExecutorTest, AFailedRunIsRecordedAsFailed) {
  testing::TempDir dir("history");
  Spec spec = MakeSpec(GetParam());
  spec.history = (dir.path() / "history.sqlite").string();
  auto op = std::make_shared<FakeOp>("breaks", 2);
  op->FailTask(1, 5, [] { throw StorageError("disk full"); });
  EXPECT_THROW(Execute({op}, spec, Quiet()), StorageError);
  const std::optional<RunHistory> run = HistoryDatabase::Open(spec.history)->LoadRun(0);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->status.rfind("failed: ", 0), 0u) << run->status;
  EXPECT_NE(run->status.find("disk full"), std::string::npos) << run->status;
}

// A task body that waits (at most 5 s) until two tasks sharing it have run together.
std::function<void(std::int64_t)> UntilTwoRanTogether() {
  auto running = std::make_shared<std::atomic<int>>(0);
  auto paired = std::make_shared<std::atomic<bool>>(false);
  return [running, paired](std::int64_t) {
    if (++*running >= 2) *paired = true;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!*paired && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    --*running;
  };
}

// An op of `tasks` tasks, each projecting `bytes` beyond reserved_mem (MakeSpec's 500 B).
std::shared_ptr<FakeOp> OpOfTasks(const std::string& name, int tasks, std::int64_t bytes) {
  auto op = std::make_shared<FakeOp>(name, tasks);
  op->mutable_info().projected_mem = bytes + 500;
  return op;
}

TEST(ThreadsExecutor, RunsTasksConcurrently) {
  auto op = std::make_shared<FakeOp>("parallel", 8);
  EXPECT_EQ(MostConcurrentTasks(op, MakeSpec("threads", 2), std::chrono::seconds(5)), 2);
}

TEST(ThreadsExecutor, AdmitsTasksByMemory) {
  // total_mem 1 GB less reserved_mem 500 B: tasks of 400 MB (beyond reserved_mem) run
  // two at once whatever the plan's concurrency says; tasks of 600 MB one at a time.
  Spec spec = MakeSpec("threads", 4);
  spec.total_mem = 1'000'000'000;
  auto op = OpOfTasks("400MB", 6, 400'000'000);
  op->mutable_info().concurrency = 1;  // informational: admission decides
  EXPECT_EQ(MostConcurrentTasks(op, spec, std::chrono::seconds(5)), 2);
  auto larger = OpOfTasks("600MB", 3, 600'000'000);
  EXPECT_EQ(MostConcurrentTasks(larger, spec, std::chrono::milliseconds(100)), 1);
}

TEST(ThreadsExecutor, ReportsWhatAdmissionLetRunAtOnce) {
  Spec spec = MakeSpec("threads", 4);
  spec.total_mem = 1'000'000'000;
  auto op = OpOfTasks("400MB", 6, 400'000'000);
  op->set_body(UntilTwoRanTogether());
  const ExecutionReport report = Execute({op}, spec, Quiet());
  EXPECT_EQ(report.admission_capacity, 1'000'000'000 - 500);
  EXPECT_EQ(report.max_tasks_at_once, 2);
  EXPECT_EQ(report.max_admitted_mem, 800'000'000);
  const ExecutionReport sync = Execute({op}, MakeSpec("sync", 4), Quiet());
  EXPECT_EQ(sync.max_tasks_at_once, 1);
  EXPECT_EQ(sync.max_admitted_mem, 400'000'000);
}

TEST(ThreadsExecutor, ReportsPerOpHowManyOfItsTasksRanAtOnce) {
  // Under 1 GB: the 400 MB op's tasks run two at once, then the 600 MB op's one at a time.
  Spec spec = MakeSpec("threads", 4);
  spec.total_mem = 1'000'000'000;
  auto small = OpOfTasks("small", 4, 400'000'000);
  small->set_body(UntilTwoRanTogether());
  auto large = OpOfTasks("large", 3, 600'000'000);
  large->mutable_info().inputs = {0};
  large->set_body([](std::int64_t) { std::this_thread::sleep_for(std::chrono::milliseconds(5)); });
  const ExecutionReport report = Execute({small, large}, spec, Quiet());
  ASSERT_EQ(report.ops.size(), 2u);
  EXPECT_EQ(report.ops[0].max_tasks_at_once, 2);
  EXPECT_EQ(report.ops[1].max_tasks_at_once, 1);
  const ExecutionReport sync = Execute({small, large}, MakeSpec("sync", 4), Quiet());
  EXPECT_EQ(sync.ops[0].max_tasks_at_once, 1);
  EXPECT_EQ(sync.ops[1].max_tasks_at_once, 1);
}

TEST(ThreadsExecutor, ReportsOpsInPlanOrderWhenTheyCommitOutOfOrder) {
  EventLog log;
  auto slow = std::make_shared<FakeOp>("slow", 1, &log);
  auto fast = std::make_shared<FakeOp>("fast", 1, &log);
  std::atomic<bool> slow_started{false};
  const auto wait_for = [](const std::function<bool()>& ready) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!ready() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
  slow->set_body([&](std::int64_t) {  // runs until fast has run beside it and committed
    slow_started = true;
    wait_for([&log] {
      const std::vector<std::string> events = log.events();
      return std::find(events.begin(), events.end(), "commit fast") != events.end();
    });
  });
  fast->set_body([&](std::int64_t) { wait_for([&] { return slow_started.load(); }); });
  const ExecutionReport report = Execute({slow, fast}, MakeSpec("threads", 2), Quiet());
  const std::vector<std::string> events = log.events();
  EXPECT_LT(std::find(events.begin(), events.end(), "commit fast"),
            std::find(events.begin(), events.end(), "commit slow"));
  ASSERT_EQ(report.ops.size(), 2u);
  EXPECT_EQ(report.ops[0].name, "slow");
  EXPECT_EQ(report.ops[1].name, "fast");
  ASSERT_EQ(report.tasks.size(), 2u);
  EXPECT_EQ(report.tasks[0].op, 1);  // completion order
  EXPECT_EQ(report.tasks[1].op, 0);
  EXPECT_EQ(report.max_tasks_at_once, 2);
}

TEST(ThreadsExecutor, ReleasesAnOutputOnceAllItsReadersHaveCommitted) {
  // a and b run side by side; c reads both, d reads b only.
  EventLog log;
  auto a = std::make_shared<FakeOp>("a", 3, &log);
  auto b = std::make_shared<FakeOp>("b", 3, &log);
  auto c = std::make_shared<FakeOp>("c", 3, &log);
  auto d = std::make_shared<FakeOp>("d", 3, &log);
  c->mutable_info().inputs = {0, 1};
  d->mutable_info().inputs = {1};
  for (const auto& op : {a, b, c, d}) {
    op->set_body([](std::int64_t) { std::this_thread::sleep_for(std::chrono::milliseconds(2)); });
  }
  Execute({a, b, c, d}, MakeSpec("threads", 4), Quiet());
  const std::vector<std::string> events = log.events();
  const auto at = [&](const std::string& event) {
    const auto found = std::find(events.begin(), events.end(), event);
    EXPECT_NE(found, events.end()) << event;
    return found - events.begin();
  };
  EXPECT_LT(at("commit a"), at("prepare c"));
  EXPECT_LT(at("commit b"), at("prepare c"));
  EXPECT_LT(at("commit b"), at("prepare d"));
  EXPECT_LT(at("commit c"), at("release a"));
  EXPECT_LT(at("commit c"), at("release b"));
  EXPECT_LT(at("commit d"), at("release b"));
  EXPECT_EQ(std::count(events.begin(), events.end(), "release a"), 1);
  EXPECT_EQ(std::count(events.begin(), events.end(), "release b"), 1);
  EXPECT_EQ(events.size(), 8u + 2u);  // nobody reads c and d: never released
}

TEST(SyncExecutor, RunsEveryTaskOnTheCallingThreadInOrder) {
  auto op = std::make_shared<FakeOp>("sync", 10);
  std::vector<std::int64_t> order;
  std::set<std::thread::id> threads;
  op->set_body([&](std::int64_t task) {
    order.push_back(task);
    threads.insert(std::this_thread::get_id());
  });
  Execute({op}, MakeSpec("sync", 8), Quiet());
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
  EXPECT_EQ(order, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(Executor, RejectsUnknownExecutors) {
  auto op = std::make_shared<FakeOp>("x", 1);
  try {
    Execute({op}, MakeSpec("gpu"), Quiet());
    FAIL() << "accepted executor gpu";
  } catch (const InvalidArgument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("\"gpu\""), std::string::npos) << message;
    EXPECT_NE(message.find("\"sync\", \"threads\""), std::string::npos) << message;
  }
#ifndef TESSERA_WITH_MPI
  // Without MPI in the build, "mpi" says how to get it (with it, src/exec/mpi's tests).
  try {
    Execute({op}, MakeSpec("mpi"), Quiet());
    FAIL() << "accepted executor mpi";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("was not built"), std::string::npos);
  }
#endif
  EXPECT_EQ(op->runs(0), 0);
}

TEST(Executor, RejectsInputsThatAreNotEarlierOps) {
  auto a = std::make_shared<FakeOp>("a", 1);
  auto b = std::make_shared<FakeOp>("b", 1);
  a->mutable_info().inputs = {1};
  EXPECT_THROW(Execute({a, b}, MakeSpec("sync"), Quiet()), InvalidArgument);
  a->mutable_info().inputs = {0};
  EXPECT_THROW(Execute({a, b}, MakeSpec("sync"), Quiet()), InvalidArgument);
  EXPECT_THROW(Execute({a, nullptr}, MakeSpec("sync"), Quiet()), InvalidArgument);
  EXPECT_EQ(a->runs(0), 0);
}

TEST(Executor, PrepareAndCommitFailuresNameTheOp) {
  class FailingPrepare : public FakeOp {
   public:
    using FakeOp::FakeOp;
    void Prepare() override { throw StorageError("cannot create array"); }
  };
  auto op = std::make_shared<FailingPrepare>("target", 1);
  try {
    Execute({op}, MakeSpec("sync"), Quiet());
    FAIL() << "Execute succeeded";
  } catch (const StorageError& error) {
    EXPECT_STREQ(error.what(), "op \"target\" failed to prepare its output: cannot create array");
  }
}

}  // namespace
}  // namespace tessera
