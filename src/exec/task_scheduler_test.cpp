#include "task_scheduler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tessera/core/errors.hpp"
#include "tessera/plan/internal/node.hpp"

namespace tessera::exec {

using planner::ExecutableOp;
namespace {

using std::chrono::milliseconds;
constexpr std::int64_t kMB = 1'000'000;

// What the tasks of one test do, seen from outside: events in order ("prepare a",
// "start a 3", "end a 3", "commit a"), and how many tasks run at once, in all and per op.
class Tracker {
 public:
  void Add(std::string event) {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(std::move(event));
  }
  void Start(const std::string& op, std::int64_t task) {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back("start " + op + " " + std::to_string(task));
    most_ = std::max(most_, ++running_);
    ++running_by_op_[op];
    ++started_by_op_[op];
    for (const auto& [other, count] : running_by_op_) {
      if (other != op && count > 0)
        overlapped_.push_back(std::min(op, other) + "+" + std::max(op, other));
    }
    changed_.notify_all();
  }
  void End(const std::string& op, std::int64_t task) {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back("end " + op + " " + std::to_string(task));
    --running_;
    --running_by_op_[op];
    changed_.notify_all();
  }
  // Waits (at most `patience`) until `tasks` run at once.
  void WaitForRunning(int tasks, milliseconds patience) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, patience, [&] { return running_ >= tasks; });
  }
  // Waits (at most `patience`) until `tasks` have run at once (now or before).
  void WaitForMost(int tasks, milliseconds patience) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, patience, [&] { return most_ >= tasks; });
  }
  // Waits (at most `patience`) until a task of `op` has started.
  void WaitForOp(const std::string& op, milliseconds patience) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, patience, [&] { return started_by_op_[op] > 0; });
  }

  std::vector<std::string> events() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_;
  }
  int most() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return most_;
  }
  // Whether tasks of `a` and `b` (a < b) ever ran at the same time.
  bool Overlapped(const std::string& a, const std::string& b) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::find(overlapped_.begin(), overlapped_.end(), a + "+" + b) != overlapped_.end();
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> events_;
  int running_ = 0;
  int most_ = 0;
  std::map<std::string, int> running_by_op_;
  std::map<std::string, int> started_by_op_;
  std::vector<std::string> overlapped_;
};

// A fake op whose task t projects projection(t) and runs body(t) between a start and an
// end event.
class ProbeOp : public ExecutableOp {
 public:
  ProbeOp(std::string name, std::int64_t num_tasks, std::int64_t projected, Tracker& tracker)
      : tracker_(tracker) {
    info_.name = std::move(name);
    info_.kind = OpKind::kElementwise;
    info_.num_tasks = num_tasks;
    info_.projected_mem = projected;
    projection_ = [projected](std::int64_t) { return projected; };
  }

  OpInfo& mutable_info() { return info_; }
  void set_body(std::function<void(std::int64_t)> body) { body_ = std::move(body); }
  void set_projection(std::function<std::int64_t(std::int64_t)> projection) {
    projection_ = std::move(projection);
  }

  const OpInfo& info() const override { return info_; }
  std::int64_t projected_mem(std::int64_t task) const override { return projection_(task); }
  std::string DescribeTask(std::int64_t task) const override {
    return "block (" + std::to_string(task) + ")";
  }
  void Prepare() override { tracker_.Add("prepare " + info_.name); }
  bool IsTaskDone(std::int64_t) const override { return false; }
  void RunTask(std::int64_t task) const override {
    tracker_.Start(info_.name, task);
    try {
      if (body_) body_(task);
    } catch (...) {
      tracker_.End(info_.name, task);
      throw;
    }
    tracker_.End(info_.name, task);
  }
  void Commit() override { tracker_.Add("commit " + info_.name); }
  void Release() override {}

 private:
  OpInfo info_;
  Tracker& tracker_;
  std::function<std::int64_t(std::int64_t)> projection_;
  std::function<void(std::int64_t)> body_;
};

using Plan = std::vector<std::shared_ptr<ExecutableOp>>;

struct Outcome {
  std::vector<TaskRecord> records;  // in completion order
  int max_tasks_at_once = 0;
  std::int64_t max_admitted_mem = 0;
};

ExecuteOptions NoRetries() {
  ExecuteOptions options;
  options.retries = 0;
  options.progress = ProgressMode::kNever;
  return options;
}

// Runs `plan` with `workers` threads and an admission pool of `capacity` bytes (no
// reserved_mem): the hooks call Prepare() and Commit() and keep the records.
Outcome RunPlan(const Plan& plan, int workers, std::int64_t capacity,
                const ExecuteOptions& options = NoRetries()) {
  Outcome outcome;
  TaskScheduler::Hooks hooks;
  hooks.prepare = [&](int op) { plan[static_cast<std::size_t>(op)]->Prepare(); };
  hooks.task_done = [&](int, const TaskRecord& record) { outcome.records.push_back(record); };
  hooks.commit = [&](int op) { plan[static_cast<std::size_t>(op)]->Commit(); };
  TaskScheduler scheduler(plan, {.workers = workers, .capacity = capacity, .reserved_mem = 0},
                          options, std::chrono::steady_clock::now(), std::move(hooks));
  scheduler.Run();
  outcome.max_tasks_at_once = scheduler.max_tasks_at_once();
  outcome.max_admitted_mem = scheduler.max_admitted_mem();
  return outcome;
}

// How many events of [first, last) in `events` start with `prefix`.
std::ptrdiff_t CountEvents(const std::vector<std::string>& events, std::size_t first,
                           std::size_t last, const std::string& prefix) {
  return std::count_if(events.begin() + static_cast<std::ptrdiff_t>(first),
                       events.begin() + static_cast<std::ptrdiff_t>(last),
                       [&](const std::string& event) { return event.rfind(prefix, 0) == 0; });
}

// Where `event` is in `events`; events.size() when absent.
std::size_t Position(const std::vector<std::string>& events, const std::string& event) {
  return static_cast<std::size_t>(std::find(events.begin(), events.end(), event) - events.begin());
}

TEST(TaskScheduler, FourHundredMegabyteTasksRunTwoAtATimeInOneGigabyte) {
  Tracker tracker;
  auto op = std::make_shared<ProbeOp>("big", 8, 400 * kMB, tracker);
  // Two run together at least once; each gives a third every chance to join it.
  op->set_body([&](std::int64_t) {
    tracker.WaitForMost(2, milliseconds(5000));
    tracker.WaitForRunning(3, milliseconds(60));
  });
  const Outcome outcome = RunPlan({op}, 4, 1000 * kMB);
  EXPECT_EQ(tracker.most(), 2);
  EXPECT_EQ(outcome.max_tasks_at_once, 2);
  EXPECT_EQ(outcome.max_admitted_mem, 800 * kMB);
  EXPECT_EQ(outcome.records.size(), 8u);
}

TEST(TaskScheduler, HundredMegabyteTasksRunFourAtATime) {
  Tracker tracker;
  auto op = std::make_shared<ProbeOp>("small", 8, 100 * kMB, tracker);
  op->set_body([&](std::int64_t) { tracker.WaitForMost(4, milliseconds(5000)); });
  const Outcome outcome = RunPlan({op}, 4, 1000 * kMB);
  EXPECT_EQ(tracker.most(), 4);  // the threads, not the memory, are the limit
  EXPECT_EQ(outcome.max_tasks_at_once, 4);
  EXPECT_EQ(outcome.max_admitted_mem, 400 * kMB);
}

TEST(TaskScheduler, ATaskLargerThanThePoolRunsAlone) {
  Tracker tracker;
  auto small = std::make_shared<ProbeOp>("small", 6, 100 * kMB, tracker);
  auto huge = std::make_shared<ProbeOp>("huge", 1, 1500 * kMB, tracker);
  small->set_body([&](std::int64_t) { tracker.WaitForRunning(2, milliseconds(20)); });
  huge->set_body([&](std::int64_t) { tracker.WaitForRunning(2, milliseconds(100)); });
  const Outcome outcome = RunPlan({small, huge}, 4, 1000 * kMB);
  const std::vector<std::string> events = tracker.events();
  const std::size_t start = Position(events, "start huge 0");
  const std::size_t end = Position(events, "end huge 0");
  ASSERT_LT(start, end);
  EXPECT_EQ(CountEvents(events, start + 1, end, "start"), 0);  // nothing started while it ran
  // Nothing ran when it started either: every small task started had ended.
  int running = 0;
  for (std::size_t index = 0; index < start; ++index) {
    if (events[index].rfind("start", 0) == 0) ++running;
    if (events[index].rfind("end", 0) == 0) --running;
  }
  EXPECT_EQ(running, 0);
  EXPECT_EQ(outcome.max_admitted_mem, 1500 * kMB);  // above the pool: alone
  EXPECT_EQ(outcome.records.size(), 7u);
}

TEST(TaskScheduler, IndependentOpsOverlapAndAReaderWaitsForItsInputToCommit) {
  Tracker tracker;
  auto a = std::make_shared<ProbeOp>("a", 2, 100 * kMB, tracker);
  auto b = std::make_shared<ProbeOp>("b", 2, 100 * kMB, tracker);
  auto c = std::make_shared<ProbeOp>("c", 2, 100 * kMB, tracker);
  c->mutable_info().inputs = {0};
  a->set_body([&](std::int64_t) { tracker.WaitForOp("b", milliseconds(5000)); });
  b->set_body([&](std::int64_t) { tracker.WaitForOp("a", milliseconds(5000)); });
  const Outcome outcome = RunPlan({a, b, c}, 4, 1000 * kMB);
  EXPECT_TRUE(tracker.Overlapped("a", "b"));  // independent ops share the machine
  EXPECT_GE(outcome.max_tasks_at_once, 2);
  const std::vector<std::string> events = tracker.events();
  EXPECT_LT(Position(events, "end a 0"), Position(events, "commit a"));
  EXPECT_LT(Position(events, "end a 1"), Position(events, "commit a"));
  EXPECT_LT(Position(events, "commit a"), Position(events, "prepare c"));
  EXPECT_LT(Position(events, "prepare c"), Position(events, "start c 0"));
  EXPECT_LT(Position(events, "prepare c"), Position(events, "start c 1"));
  EXPECT_LT(Position(events, "prepare b"), Position(events, "start b 0"));
  EXPECT_LT(Position(events, "commit c"), events.size());
}

TEST(TaskScheduler, ALargeTaskIsNotStarvedBySmallTasksOfLaterOps) {
  // Op "first": four 100 MB tasks, then one that needs the whole pool. Op "later": 200
  // 100 MB tasks, ready from the start. Once the large task heads the queue, at most
  // `workers` (4) small tasks start ahead of it; then the pool drains and it runs. Without
  // that bound the small tasks would keep the pool from ever draining, and nearly all
  // 200 would run first. (A few more may start before the large task heads the queue,
  // while "first" is being prepared.)
  Tracker tracker;
  auto first = std::make_shared<ProbeOp>("first", 5, 100 * kMB, tracker);
  first->set_projection([](std::int64_t task) { return task < 4 ? 100 * kMB : 1000 * kMB; });
  first->set_body([](std::int64_t) { std::this_thread::sleep_for(milliseconds(5)); });
  auto later = std::make_shared<ProbeOp>("later", 200, 100 * kMB, tracker);
  later->set_body([](std::int64_t) { std::this_thread::sleep_for(milliseconds(2)); });
  const Outcome outcome = RunPlan({first, later}, 4, 1000 * kMB);
  const std::vector<std::string> events = tracker.events();
  const std::size_t large = Position(events, "start first 4");
  ASSERT_LT(large, events.size());
  EXPECT_LE(CountEvents(events, 0, large, "start later"), 4 + 8);
  const std::size_t end = Position(events, "end first 4");
  ASSERT_LT(large, end);
  EXPECT_EQ(CountEvents(events, large + 1, end, "start"), 0);  // it ran alone
  EXPECT_EQ(outcome.records.size(), 205u);
  EXPECT_LE(outcome.max_admitted_mem, 1000 * kMB);
}

TEST(TaskScheduler, OneWorkerRunsEverythingInPlanOrderOnTheCallingThread) {
  Tracker tracker;
  auto a = std::make_shared<ProbeOp>("a", 2, 100 * kMB, tracker);
  auto b = std::make_shared<ProbeOp>("b", 2, 3000 * kMB, tracker);  // larger than the pool
  auto c = std::make_shared<ProbeOp>("c", 1, 100 * kMB, tracker);
  const std::thread::id caller = std::this_thread::get_id();
  bool elsewhere = false;
  for (const auto& op : {a, b, c}) {
    op->set_body([&](std::int64_t) {
      if (std::this_thread::get_id() != caller) elsewhere = true;
    });
  }
  const Outcome outcome = RunPlan({a, b, c}, 1, 1000 * kMB);
  EXPECT_FALSE(elsewhere);
  const std::vector<std::string> expected = {"prepare a", "start a 0", "end a 0",   "start a 1",
                                             "end a 1",   "commit a",  "prepare b", "start b 0",
                                             "end b 0",   "start b 1", "end b 1",   "commit b",
                                             "prepare c", "start c 0", "end c 0",   "commit c"};
  EXPECT_EQ(tracker.events(), expected);
  EXPECT_EQ(outcome.max_tasks_at_once, 1);
  for (const TaskRecord& record : outcome.records) EXPECT_EQ(record.worker, 0);
}

TEST(TaskScheduler, RecordsRunWideThreadLanes) {
  Tracker tracker;
  auto a = std::make_shared<ProbeOp>("a", 6, 100 * kMB, tracker);
  auto b = std::make_shared<ProbeOp>("b", 6, 100 * kMB, tracker);
  for (const auto& op : {a, b}) {
    op->set_body([&](std::int64_t) { tracker.WaitForRunning(3, milliseconds(50)); });
  }
  const Outcome outcome = RunPlan({a, b}, 3, 1000 * kMB);
  std::vector<int> lanes;
  for (const TaskRecord& record : outcome.records) {
    EXPECT_GE(record.worker, 0);
    EXPECT_LT(record.worker, 3);
    lanes.push_back(record.worker);
  }
  std::sort(lanes.begin(), lanes.end());
  lanes.erase(std::unique(lanes.begin(), lanes.end()), lanes.end());
  EXPECT_EQ(lanes, (std::vector<int>{0, 1, 2}));
}

TEST(TaskScheduler, AFailureStopsEveryOp) {
  Tracker tracker;
  auto a = std::make_shared<ProbeOp>("a", 1, 100 * kMB, tracker);
  auto b = std::make_shared<ProbeOp>("b", 100, 100 * kMB, tracker);
  auto c = std::make_shared<ProbeOp>("c", 1, 100 * kMB, tracker);
  c->mutable_info().inputs = {1};
  a->set_body([&](std::int64_t) {
    tracker.WaitForOp("b", milliseconds(5000));
    throw StorageError("disk on fire");
  });
  b->set_body([](std::int64_t) { std::this_thread::sleep_for(milliseconds(2)); });
  try {
    RunPlan({a, b, c}, 4, 1000 * kMB);
    FAIL() << "Run succeeded";
  } catch (const StorageError& error) {
    EXPECT_STREQ(error.what(), "op \"a\" failed at block (0) after 1 attempt: disk on fire");
  }
  const std::vector<std::string> events = tracker.events();
  EXPECT_LT(CountEvents(events, 0, events.size(), "start b"), 50);
  EXPECT_EQ(Position(events, "commit a"), events.size());
  EXPECT_EQ(Position(events, "commit b"), events.size());
  EXPECT_EQ(Position(events, "prepare c"), events.size());
}

TEST(TaskScheduler, AnOpWhoseProjectionThrowsFailsTheRunInsteadOfTheProcess) {
  // projected_mem runs on the scheduler's threads (to admit the task): what it throws
  // ends the run as a failed task would, on whichever thread picked the task.
  for (const int workers : {1, 4}) {
    Tracker tracker;
    auto a = std::make_shared<ProbeOp>("a", 8, 100 * kMB, tracker);
    auto b = std::make_shared<ProbeOp>("b", 2, 100 * kMB, tracker);
    b->mutable_info().inputs = {0};
    a->set_projection([](std::int64_t task) -> std::int64_t {
      if (task == 5) throw InvalidArgument("no projection for block 5");
      return 100 * kMB;
    });
    EXPECT_THROW(RunPlan({a, b}, workers, 1000 * kMB), InvalidArgument) << workers;
    const std::vector<std::string> events = tracker.events();
    EXPECT_EQ(Position(events, "commit a"), events.size());
    EXPECT_EQ(Position(events, "prepare b"), events.size());
  }
}

TEST(TaskScheduler, RunsAPlanWithoutOps) {
  EXPECT_EQ(RunPlan({}, 4, 1000 * kMB).max_tasks_at_once, 0);
}

}  // namespace
}  // namespace tessera::exec
