#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "history_schema.hpp"
#include "sqlite_connection.hpp"
#include "temp_dir.hpp"
#include "tessera/core/warning.hpp"
#include "tessera/memory/history.hpp"

namespace tessera {
namespace {

using std::chrono::milliseconds;
using testing::TempDir;

// Collects the warnings emitted during its lifetime.
class CapturedWarnings {
 public:
  CapturedWarnings() : scope_([this](const std::string& warning) { seen_.push_back(warning); }) {}
  const std::vector<std::string>& seen() const { return seen_; }

 private:
  std::vector<std::string> seen_;
  ScopedWarningHandler scope_;
};

std::string ReadBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteBytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

RunHistory SampleRun(const std::string& label, std::int64_t reserved_mem = 1000) {
  RunHistory run;
  run.label = label;
  run.executor = "threads";
  run.workers = 4;
  run.allowed_mem = 2'000'000;
  run.reserved_mem = reserved_mem;
  run.total_mem = 8'000'000;
  return run;
}

// An op whose every field differs from the defaults and from the other fields.
OpHistory SampleOp(int index, const std::string& fingerprint) {
  return OpHistory{.index = index,
                   .name = "add-" + std::to_string(index),
                   .kind = "elementwise",
                   .fingerprint = fingerprint,
                   .tasks = 3,
                   .projected_mem = 5001 + index,
                   .estimated_mem = 6002 + index,
                   .estimate_from_history = index % 2 == 1,
                   .measured_mem_max = 4003,
                   .measured_mem_median = 3004,
                   .measured_mem_p95 = 4005,
                   .unaccounted_mem_max = 206,
                   .unaccounted_mem_median = 107,
                   .unaccounted_mem_p95 = 198,
                   .footprint_mem_max = 4209,
                   .seconds = 1.25,
                   .task_seconds_max = 0.5,
                   .task_seconds_median = 0.25,
                   .task_seconds_p95 = 0.375,
                   .rss_growth_bytes = 65536};
}

std::vector<TaskHistory> SampleTasks(int op, int count) {
  std::vector<TaskHistory> tasks;
  for (int task = 0; task < count; ++task) {
    tasks.push_back(TaskHistory{.op = op,
                                .task = task,
                                .worker = task % 2,
                                .start_seconds = 0.125 * task,
                                .seconds = 0.0625 + task,
                                .projected_mem = 5001 + task,
                                .measured_mem = 4001 + task,
                                .unaccounted_mem = 101 + task});
  }
  return tasks;
}

void ExpectSameOp(const OpHistory& actual, const OpHistory& expected) {
  EXPECT_EQ(actual.index, expected.index);
  EXPECT_EQ(actual.name, expected.name);
  EXPECT_EQ(actual.kind, expected.kind);
  EXPECT_EQ(actual.fingerprint, expected.fingerprint);
  EXPECT_EQ(actual.tasks, expected.tasks);
  EXPECT_EQ(actual.projected_mem, expected.projected_mem);
  EXPECT_EQ(actual.estimated_mem, expected.estimated_mem);
  EXPECT_EQ(actual.estimate_from_history, expected.estimate_from_history);
  EXPECT_EQ(actual.measured_mem_max, expected.measured_mem_max);
  EXPECT_EQ(actual.measured_mem_median, expected.measured_mem_median);
  EXPECT_EQ(actual.measured_mem_p95, expected.measured_mem_p95);
  EXPECT_EQ(actual.unaccounted_mem_max, expected.unaccounted_mem_max);
  EXPECT_EQ(actual.unaccounted_mem_median, expected.unaccounted_mem_median);
  EXPECT_EQ(actual.unaccounted_mem_p95, expected.unaccounted_mem_p95);
  EXPECT_EQ(actual.footprint_mem_max, expected.footprint_mem_max);
  EXPECT_EQ(actual.seconds, expected.seconds);
  EXPECT_EQ(actual.task_seconds_max, expected.task_seconds_max);
  EXPECT_EQ(actual.task_seconds_median, expected.task_seconds_median);
  EXPECT_EQ(actual.task_seconds_p95, expected.task_seconds_p95);
  EXPECT_EQ(actual.rss_growth_bytes, expected.rss_growth_bytes);
}

void ExpectSameTask(const TaskHistory& actual, const TaskHistory& expected) {
  EXPECT_EQ(actual.op, expected.op);
  EXPECT_EQ(actual.task, expected.task);
  EXPECT_EQ(actual.worker, expected.worker);
  EXPECT_EQ(actual.start_seconds, expected.start_seconds);
  EXPECT_EQ(actual.seconds, expected.seconds);
  EXPECT_EQ(actual.projected_mem, expected.projected_mem);
  EXPECT_EQ(actual.measured_mem, expected.measured_mem);
  EXPECT_EQ(actual.unaccounted_mem, expected.unaccounted_mem);
}

void ExpectSameRunFields(const RunHistory& actual, const RunHistory& expected) {
  EXPECT_EQ(actual.id, expected.id);
  EXPECT_EQ(actual.started_at, expected.started_at);
  EXPECT_EQ(actual.label, expected.label);
  EXPECT_EQ(actual.executor, expected.executor);
  EXPECT_EQ(actual.workers, expected.workers);
  EXPECT_EQ(actual.allowed_mem, expected.allowed_mem);
  EXPECT_EQ(actual.reserved_mem, expected.reserved_mem);
  EXPECT_EQ(actual.total_mem, expected.total_mem);
}

// Records a finished run of `ops` (each with `tasks_per_op` tasks); returns its id.
std::int64_t RecordRun(HistoryDatabase& history, RunHistory run, const std::vector<OpHistory>& ops,
                       int tasks_per_op) {
  const std::int64_t id = history.BeginRun(run);
  for (const OpHistory& op : ops) history.RecordOp(id, op, SampleTasks(op.index, tasks_per_op));
  history.FinishRun(id, "ok", 2.5, 123'456'789);
  return id;
}

TEST(HistoryDatabase, RoundTripsRunsOpsAndTasks) {
  TempDir dir("history");
  const std::filesystem::path path = dir.path() / "cache" / "tessera" / "history.sqlite";
  CapturedWarnings warnings;
  auto history = HistoryDatabase::Open(path);
  ASSERT_TRUE(history->ok());
  EXPECT_EQ(history->path(), path);
  EXPECT_TRUE(std::filesystem::is_regular_file(path));  // the folders were created

  RunHistory first = SampleRun("compute");
  const std::int64_t first_id = history->BeginRun(first);
  EXPECT_GT(first_id, 0);
  EXPECT_EQ(first.id, first_id);
  EXPECT_EQ(first.status, "running");
  ASSERT_EQ(first.started_at.size(), std::string("2026-11-29T21:10:38Z").size());
  EXPECT_EQ(first.started_at[10], 'T');
  EXPECT_EQ(first.started_at.back(), 'Z');

  const std::vector<OpHistory> ops = {SampleOp(0, "fp-a"), SampleOp(1, "fp-b")};
  const std::vector<TaskHistory> tasks0 = SampleTasks(0, 3);
  const std::vector<TaskHistory> tasks1 = SampleTasks(1, 2);
  history->RecordOp(first_id, ops[0], tasks0);
  history->RecordOp(first_id, ops[1], tasks1);
  // Still running: LoadRun shows it so.
  EXPECT_EQ(history->LoadRun(first_id)->status, "running");
  history->FinishRun(first_id, "ok", 2.5, 123'456'789);

  RunHistory second = SampleRun("to_zarr");
  second.started_at = "2026-01-02T03:04:05Z";  // kept as given
  const std::int64_t second_id = history->BeginRun(second);
  EXPECT_GT(second_id, first_id);
  EXPECT_EQ(second.started_at, "2026-01-02T03:04:05Z");
  history->FinishRun(second_id, "failed: out of disk", 0.75, 42);

  // A second connection sees everything the first wrote.
  auto reopened = HistoryDatabase::Open(path);
  const std::optional<RunHistory> loaded = reopened->LoadRun(first_id);
  ASSERT_TRUE(loaded.has_value());
  ExpectSameRunFields(*loaded, first);
  EXPECT_EQ(loaded->status, "ok");
  EXPECT_EQ(loaded->seconds, 2.5);
  EXPECT_EQ(loaded->peak_rss_bytes, 123'456'789);
  ASSERT_EQ(loaded->ops.size(), 2u);
  ExpectSameOp(loaded->ops[0], ops[0]);
  ExpectSameOp(loaded->ops[1], ops[1]);
  ASSERT_EQ(loaded->tasks.size(), 5u);
  for (std::size_t task = 0; task < 3; ++task) ExpectSameTask(loaded->tasks[task], tasks0[task]);
  for (std::size_t task = 0; task < 2; ++task) {
    ExpectSameTask(loaded->tasks[3 + task], tasks1[task]);
  }

  const std::optional<RunHistory> latest = reopened->LoadRun(0);
  ASSERT_TRUE(latest.has_value());
  ExpectSameRunFields(*latest, second);
  EXPECT_EQ(latest->status, "failed: out of disk");
  EXPECT_EQ(latest->peak_rss_bytes, 42);
  EXPECT_TRUE(latest->ops.empty());
  EXPECT_EQ(reopened->LoadRun(-1)->id, second_id);
  EXPECT_FALSE(reopened->LoadRun(second_id + 100).has_value());

  const std::vector<RunHistory> recent = reopened->RecentRuns(10);
  ASSERT_EQ(recent.size(), 2u);
  EXPECT_EQ(recent[0].id, second_id);  // newest first
  EXPECT_EQ(recent[1].id, first_id);
  ASSERT_EQ(recent[1].ops.size(), 2u);
  ExpectSameOp(recent[1].ops[1], ops[1]);
  EXPECT_TRUE(recent[1].tasks.empty());  // RecentRuns leaves tasks out
  ASSERT_EQ(reopened->RecentRuns(1).size(), 1u);
  EXPECT_EQ(reopened->RecentRuns(1)[0].id, second_id);
  EXPECT_TRUE(reopened->RecentRuns(0).empty());
  EXPECT_TRUE(warnings.seen().empty());
}

TEST(HistoryDatabase, KeepsAnMpiRunsMemoryManagerAndRanks) {
  TempDir dir("history");
  auto history = HistoryDatabase::Open(dir.path() / "history.sqlite");
  ASSERT_TRUE(history->ok());
  RunHistory plain = SampleRun("compute");
  const std::int64_t plain_id = history->BeginRun(plain);
  RunHistory run = SampleRun("compute");
  run.executor = "mpi";
  const std::int64_t id = history->BeginRun(run);
  ClusterHistory cluster{2, 100, 200, 300, 400, 500, 600, 7, 1, {}};
  cluster.per_rank = {RankHistory{0, 5, 1000, 90, 5000, 250},
                      RankHistory{1, 3, 1000, 80, 4000, 150}};
  history->RecordCluster(id, cluster);
  history->RecordCluster(0, cluster);  // nothing: no run
  const std::optional<RunHistory> loaded = history->LoadRun(id);
  ASSERT_TRUE(loaded && loaded->cluster);
  const ClusterHistory& got = *loaded->cluster;
  EXPECT_EQ(got.ranks, 2);
  EXPECT_EQ(got.bytes_fetched, 100);
  EXPECT_EQ(got.bytes_replicated, 200);
  EXPECT_EQ(got.bytes_rebalanced, 300);
  EXPECT_EQ(got.bytes_dropped, 400);
  EXPECT_EQ(got.bytes_spilled, 500);
  EXPECT_EQ(got.bytes_gathered, 600);
  EXPECT_EQ(got.decisions, 7);
  EXPECT_EQ(got.tasks_moved, 1);
  ASSERT_EQ(got.per_rank.size(), 2u);
  EXPECT_EQ(got.per_rank[1].rank, 1);
  EXPECT_EQ(got.per_rank[1].tasks, 3);
  EXPECT_EQ(got.per_rank[1].capacity, 1000);
  EXPECT_EQ(got.per_rank[1].measured_mem_max, 80);
  EXPECT_EQ(got.per_rank[1].peak_rss_bytes, 4000);
  EXPECT_EQ(got.per_rank[1].held_bytes_max, 150);
  EXPECT_FALSE(history->LoadRun(plain_id)->cluster.has_value());
}

TEST(HistoryDatabase, RecordingAnOpAgainReplacesItAndItsTasks) {
  TempDir dir("history");
  auto history = HistoryDatabase::Open(dir.path() / "h.sqlite");
  RunHistory run = SampleRun("compute");
  const std::int64_t id = history->BeginRun(run);
  history->RecordOp(id, SampleOp(0, "fp"), SampleTasks(0, 4));
  OpHistory again = SampleOp(0, "fp");
  again.tasks = 1;
  history->RecordOp(id, again, SampleTasks(0, 1));
  const std::optional<RunHistory> loaded = history->LoadRun(id);
  ASSERT_EQ(loaded->ops.size(), 1u);
  EXPECT_EQ(loaded->ops[0].tasks, 1);
  EXPECT_EQ(loaded->tasks.size(), 1u);
}

TEST(HistoryDatabase, KeepsTasksOfTheMostRecentRunsOnly) {
  TempDir dir("history");
  auto history = HistoryDatabase::Open(dir.path() / "h.sqlite");
  std::vector<std::int64_t> ids;
  for (int i = 0; i < HistoryDatabase::kRunsWithTasks + 2; ++i) {
    ids.push_back(RecordRun(*history, SampleRun("compute"), {SampleOp(0, "fp")}, 2));
  }
  // The two oldest runs lost their tasks, not their ops; the others keep both.
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::optional<RunHistory> run = history->LoadRun(ids[i]);
    ASSERT_TRUE(run.has_value());
    EXPECT_EQ(run->ops.size(), 1u);
    EXPECT_EQ(run->tasks.size(), i < 2 ? 0u : 2u) << "run " << i;
  }
  EXPECT_EQ(history->Learned("fp")->records, HistoryDatabase::kLearnedRecords);
}

TEST(HistoryDatabase, LearnedIsTheLargestOfTheThreeMostRecentRecordsLessReservedMem) {
  TempDir dir("history");
  auto history = HistoryDatabase::Open(dir.path() / "h.sqlite");
  // Oldest first: {reserved_mem, footprint_mem_max, projected_mem, tasks}.
  struct Record {
    std::int64_t reserved, footprint, projected, tasks;
  };
  const std::vector<Record> records = {
      {100, 90'100, 1'100, 2},   // the largest, but a 4th most recent record: left out
      {100, 2'100, 3'100, 2},    // 2'000 measured, 3'000 projected
      {1'000, 6'000, 5'000, 2},  // 5'000 measured, 4'000 projected: the answer
      {0, 4'000, 4'500, 2},      // 4'000 measured
      {0, 99'999, 9'999, 0},     // no task ran: not a record
  };
  std::vector<std::int64_t> ids;
  for (const Record& record : records) {
    OpHistory op = SampleOp(0, "fp-learned");
    op.footprint_mem_max = record.footprint;
    op.projected_mem = record.projected;
    op.tasks = record.tasks;
    op.task_seconds_median = static_cast<double>(record.footprint) / 1000;
    // Another step in the same runs, larger still, must not count.
    OpHistory other = SampleOp(1, "fp-other");
    other.footprint_mem_max = 1'000'000;
    ids.push_back(RecordRun(*history, SampleRun("compute", record.reserved), {op, other}, 1));
  }

  const std::optional<LearnedFootprint> learned = history->Learned("fp-learned");
  ASSERT_TRUE(learned.has_value());
  EXPECT_EQ(learned->task_bytes, 5'000);
  EXPECT_EQ(learned->projected_task_bytes, 4'000);
  EXPECT_EQ(learned->run_id, ids[2]);
  EXPECT_EQ(learned->records, 3);
  // Durations come from the most recent record that ran tasks, the largest or not.
  EXPECT_DOUBLE_EQ(learned->task_seconds, 4.0);
  EXPECT_EQ(learned->seconds_run_id, ids[3]);

  EXPECT_FALSE(history->Learned("fp-unknown").has_value());

  // One record: records == 1 and that record's numbers.
  OpHistory single = SampleOp(0, "fp-single");
  single.footprint_mem_max = 7'000;
  single.projected_mem = 6'000;
  const std::int64_t single_id = RecordRun(*history, SampleRun("compute", 500), {single}, 1);
  const std::optional<LearnedFootprint> one = history->Learned("fp-single");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->task_bytes, 6'500);
  EXPECT_EQ(one->projected_task_bytes, 5'500);
  EXPECT_EQ(one->run_id, single_id);
  EXPECT_EQ(one->records, 1);
}

TEST(HistoryDatabase, ThreadsShareOneDatabase) {
  TempDir dir("history");
  auto history = HistoryDatabase::Open(dir.path() / "h.sqlite");
  constexpr int kThreads = 4;
  constexpr int kRunsPerThread = 10;
  std::vector<std::thread> threads;
  for (int thread = 0; thread < kThreads; ++thread) {
    threads.emplace_back([&history] {
      for (int run = 0; run < kRunsPerThread; ++run) {
        RecordRun(*history, SampleRun("threaded"), {SampleOp(0, "fp-t")}, 2);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::vector<RunHistory> runs = history->RecentRuns(1000);
  ASSERT_EQ(runs.size(), static_cast<std::size_t>(kThreads * kRunsPerThread));
  for (const RunHistory& run : runs) EXPECT_EQ(run.ops.size(), 1u);
}

// Writes `runs` runs of two ops as one child process would; true when all were recorded.
bool WriteRunsAsOneProcess(const std::filesystem::path& path, int writer, int runs) {
  auto history = HistoryDatabase::Open(path);
  bool recorded = history->ok();
  for (int run = 0; run < runs; ++run) {
    const std::int64_t id = RecordRun(
        *history, SampleRun("writer " + std::to_string(writer) + " run " + std::to_string(run)),
        {SampleOp(0, "fp-a"), SampleOp(1, "fp-b")}, 3);
    recorded = recorded && id > 0;
  }
  return recorded && history->ok();
}

TEST(HistoryDatabase, TwoProcessesWritingAtOnceLoseNothing) {
  TempDir dir("history");
  const std::filesystem::path path = dir.path() / "shared.sqlite";  // neither creates it first
  constexpr int kWriters = 2;
  constexpr int kRuns = 20;
  std::vector<pid_t> children;
  for (int writer = 0; writer < kWriters; ++writer) {
    const pid_t child = fork();
    ASSERT_GE(child, 0) << "fork failed";
    if (child == 0) {
      // The child only writes and leaves: no gtest, no destructors of the parent's state.
      _exit(WriteRunsAsOneProcess(path, writer, kRuns) ? 0 : 1);
    }
    children.push_back(child);
  }
  for (const pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "a writer lost a run or warned (see stderr)";
  }

  auto history = HistoryDatabase::Open(path);
  const std::vector<RunHistory> runs = history->RecentRuns(1000);
  ASSERT_EQ(runs.size(), static_cast<std::size_t>(kWriters * kRuns));
  std::set<std::int64_t> ids;
  std::map<std::string, int> labels;
  for (const RunHistory& run : runs) {
    ids.insert(run.id);
    ++labels[run.label];
    EXPECT_EQ(run.status, "ok");
    ASSERT_EQ(run.ops.size(), 2u);
    EXPECT_EQ(run.ops[1].fingerprint, "fp-b");
    EXPECT_EQ(history->LoadRun(run.id)->tasks.size(), 6u);
  }
  EXPECT_EQ(ids.size(), runs.size());
  EXPECT_EQ(labels.size(), runs.size());  // every writer's every run, once
}

TEST(HistoryDatabase, DamagedFileWarnsOnceAndIsLeftAsItIs) {
  TempDir dir("history");
  const std::filesystem::path path = dir.path() / "h.sqlite";
  std::mt19937 random(6);
  std::uniform_int_distribution<int> letter('a', 'z');
  std::string garbage(4096, ' ');
  for (char& byte : garbage) byte = static_cast<char>(letter(random));
  WriteBytes(path, garbage);

  CapturedWarnings warnings;
  auto history = HistoryDatabase::Open(path);
  EXPECT_FALSE(history->ok());
  RunHistory run = SampleRun("compute");
  EXPECT_EQ(history->BeginRun(run), 0);
  EXPECT_EQ(run.id, 0);
  history->RecordOp(1, SampleOp(0, "fp"), SampleTasks(0, 1));
  history->FinishRun(1, "ok", 1.0, 1);
  EXPECT_FALSE(history->Learned("fp").has_value());
  EXPECT_TRUE(history->RecentRuns(10).empty());
  EXPECT_FALSE(history->LoadRun(0).has_value());
  // Opened again (the next plan, the next run) it says nothing more.
  EXPECT_FALSE(HistoryDatabase::Open(path)->ok());
  EXPECT_FALSE(HistoryDatabase::OpenToRead(path)->ok());

  ASSERT_EQ(warnings.seen().size(), 1u);
  const std::string& warning = warnings.seen()[0];
  EXPECT_NE(warning.find(path.string()), std::string::npos) << warning;
  EXPECT_NE(warning.find("damaged"), std::string::npos) << warning;
  EXPECT_NE(warning.find("TESSERA_HISTORY=off"), std::string::npos) << warning;
  EXPECT_EQ(ReadBytes(path), garbage);
}

TEST(HistoryDatabase, OpenToReadNeverCreatesMigratesOrWrites) {
  TempDir dir("history");
  CapturedWarnings warnings;
  // A missing file: nothing to read, nothing created, nothing said.
  const std::filesystem::path missing = dir.path() / "none" / "h.sqlite";
  EXPECT_FALSE(HistoryDatabase::OpenToRead(missing)->ok());
  EXPECT_FALSE(std::filesystem::exists(missing.parent_path()));
  // A database of this version reads what a writer recorded.
  const std::filesystem::path path = dir.path() / "h.sqlite";
  RecordRun(*HistoryDatabase::Open(path), SampleRun("compute"), {SampleOp(0, "fp")}, 1);
  auto reader = HistoryDatabase::OpenToRead(path);
  ASSERT_TRUE(reader->ok());
  EXPECT_TRUE(reader->Learned("fp").has_value());
  EXPECT_EQ(reader->RecentRuns(5).size(), 1u);
  // An empty file (another process about to create the schema) is left empty.
  const std::filesystem::path empty = dir.path() / "empty.sqlite";
  WriteBytes(empty, "");
  EXPECT_FALSE(HistoryDatabase::OpenToRead(empty)->ok());
  EXPECT_EQ(std::filesystem::file_size(empty), 0u);
  EXPECT_TRUE(warnings.seen().empty()) << warnings.seen().front();
}

TEST(HistoryDatabase, LockedPastTheBusyTimeoutWarnsAndDisables) {
  TempDir dir("history");
  const std::filesystem::path path = dir.path() / "h.sqlite";
  auto writer = HistoryDatabase::Open(path);
  ASSERT_TRUE(writer->ok());
  SqliteConnection holder(path, milliseconds(0));
  holder.Execute("BEGIN EXCLUSIVE");

  CapturedWarnings warnings;
  const auto start = std::chrono::steady_clock::now();
  auto blocked = HistoryDatabase::Open(path, milliseconds(200));
  RunHistory run = SampleRun("compute");
  EXPECT_EQ(blocked->BeginRun(run), 0);
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(200));  // it did wait
  EXPECT_FALSE(blocked->ok());
  ASSERT_EQ(warnings.seen().size(), 1u);
  EXPECT_NE(warnings.seen()[0].find("locked"), std::string::npos) << warnings.seen()[0];
  EXPECT_NE(warnings.seen()[0].find(path.string()), std::string::npos);
  EXPECT_EQ(blocked->BeginRun(run), 0);  // disabled: no second wait, no second warning
  EXPECT_EQ(warnings.seen().size(), 1u);

  holder.Execute("COMMIT");
  EXPECT_GT(writer->BeginRun(run), 0);  // the lock is gone: others write again
}

TEST(HistoryDatabase, UnwritableLocationWarns) {
  TempDir dir("history");
  const std::filesystem::path blocker = dir.path() / "a-file";
  WriteBytes(blocker, "not a folder");
  {
    // Tests run as root, so permissions stop nothing; a file where a folder should be
    // does.
    const std::filesystem::path path = blocker / "tessera" / "history.sqlite";
    CapturedWarnings warnings;
    auto history = HistoryDatabase::Open(path);
    EXPECT_FALSE(history->ok());
    ASSERT_EQ(warnings.seen().size(), 1u);
    EXPECT_NE(warnings.seen()[0].find(path.string()), std::string::npos) << warnings.seen()[0];
    RunHistory run = SampleRun("compute");
    EXPECT_EQ(history->BeginRun(run), 0);
    EXPECT_EQ(warnings.seen().size(), 1u);
  }
  {
    // A folder where the file should be.
    const std::filesystem::path path = dir.path() / "a-folder";
    std::filesystem::create_directory(path);
    CapturedWarnings warnings;
    auto history = HistoryDatabase::Open(path);
    EXPECT_FALSE(history->ok());
    ASSERT_EQ(warnings.seen().size(), 1u);
    EXPECT_NE(warnings.seen()[0].find("cannot be opened or written"), std::string::npos)
        << warnings.seen()[0];
  }
  EXPECT_EQ(ReadBytes(blocker), "not a folder");
}

TEST(HistoryDatabase, MigratesAVersion1DatabaseKeepingItsRows) {
  TempDir dir("history");
  const std::filesystem::path path = dir.path() / "h.sqlite";
  {
    // A database as the first release wrote it: migration 1 only.
    SqliteConnection old(path, milliseconds(0));
    old.Execute(kHistoryMigrations[0]);
    old.Execute(
        "INSERT INTO runs VALUES (7, '2025-05-05T05:05:05Z', 'compute', 'sync', 1, 1000, 100,"
        " 4000, 'ok', 1.5, 9999);"
        "INSERT INTO ops VALUES (7, 0, 'add-1', 'elementwise', 'fp-old', 2, 600, 650, 500,"
        " 400, 480, 0.5, 0.25, 0.125, 0.25, 4096);"
        "PRAGMA user_version = 1;");
  }
  CapturedWarnings warnings;
  auto history = HistoryDatabase::Open(path);
  ASSERT_TRUE(history->ok());
  EXPECT_TRUE(warnings.seen().empty());
  EXPECT_EQ(SqliteConnection(path, milliseconds(0)).PragmaInt("user_version"), 3);

  const std::optional<RunHistory> old_run = history->LoadRun(7);
  ASSERT_TRUE(old_run.has_value());
  EXPECT_EQ(old_run->started_at, "2025-05-05T05:05:05Z");
  EXPECT_EQ(old_run->reserved_mem, 100);
  EXPECT_EQ(old_run->peak_rss_bytes, 9999);
  ASSERT_EQ(old_run->ops.size(), 1u);
  const OpHistory& old_op = old_run->ops[0];
  EXPECT_EQ(old_op.name, "add-1");
  EXPECT_EQ(old_op.projected_mem, 600);
  EXPECT_EQ(old_op.measured_mem_p95, 480);
  EXPECT_EQ(old_op.rss_growth_bytes, 4096);
  EXPECT_EQ(old_op.footprint_mem_max, 500);  // version 1's footprint: what it measured
  EXPECT_EQ(old_op.unaccounted_mem_max, 0);
  EXPECT_FALSE(old_op.estimate_from_history);
  EXPECT_TRUE(old_run->tasks.empty());
  ASSERT_EQ(history->RecentRuns(10).size(), 1u);
  EXPECT_EQ(history->Learned("fp-old")->task_bytes, 400);

  RunHistory run = SampleRun("compute");
  const std::int64_t id = RecordRun(*history, run, {SampleOp(0, "fp-old")}, 2);
  EXPECT_GT(id, 7);
  EXPECT_EQ(history->LoadRun(id)->tasks.size(), 2u);
  EXPECT_EQ(history->RecentRuns(10).size(), 2u);
}

TEST(HistoryDatabase, NewerSchemaWarnsAndLeavesTheFileAlone) {
  TempDir dir("history");
  const std::filesystem::path path = dir.path() / "h.sqlite";
  {
    SqliteConnection newer(path, milliseconds(0));
    newer.Execute("CREATE TABLE future (x INTEGER); PRAGMA user_version = 99;");
  }
  const std::string before = ReadBytes(path);
  CapturedWarnings warnings;
  auto history = HistoryDatabase::Open(path);
  EXPECT_FALSE(history->ok());
  ASSERT_EQ(warnings.seen().size(), 1u);
  EXPECT_NE(warnings.seen()[0].find("newer Tessera"), std::string::npos) << warnings.seen()[0];
  EXPECT_NE(warnings.seen()[0].find(path.string()), std::string::npos);
  RunHistory run = SampleRun("compute");
  EXPECT_EQ(history->BeginRun(run), 0);
  EXPECT_EQ(ReadBytes(path), before);
}

// Sets or unsets environment variables for its lifetime, restoring them after.
class ScopedEnvironment {
 public:
  ~ScopedEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }
  void Set(const std::string& name, const char* value) {
    if (!saved_.contains(name)) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value) {
      setenv(name.c_str(), value, 1);
    } else {
      unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(ResolveHistoryPath, FollowsSettingThenEnvironmentThenCacheFolders) {
  ScopedEnvironment environment;
  environment.Set("TESSERA_HISTORY", nullptr);
  environment.Set("XDG_CACHE_HOME", "/xdg");
  environment.Set("HOME", "/home/user");

  for (const char* off : {"off", "OFF", "0", "none", "None"}) {
    EXPECT_FALSE(ResolveHistoryPath(off).has_value()) << off;
  }
  EXPECT_EQ(ResolveHistoryPath("/data/h.sqlite"), std::filesystem::path("/data/h.sqlite"));
  EXPECT_EQ(ResolveHistoryPath("relative.sqlite"), std::filesystem::path("relative.sqlite"));
  EXPECT_EQ(ResolveHistoryPath(""), std::filesystem::path("/xdg/tessera/history.sqlite"));

  environment.Set("TESSERA_HISTORY", "/env/h.sqlite");
  EXPECT_EQ(ResolveHistoryPath(""), std::filesystem::path("/env/h.sqlite"));
  EXPECT_EQ(ResolveHistoryPath("/data/h.sqlite"), std::filesystem::path("/data/h.sqlite"));
  environment.Set("TESSERA_HISTORY", "Off");
  EXPECT_FALSE(ResolveHistoryPath("").has_value());
  EXPECT_EQ(ResolveHistoryPath("/data/h.sqlite"), std::filesystem::path("/data/h.sqlite"));
  environment.Set("TESSERA_HISTORY", "");  // empty: as if unset
  EXPECT_EQ(ResolveHistoryPath(""), std::filesystem::path("/xdg/tessera/history.sqlite"));

  environment.Set("XDG_CACHE_HOME", "");
  EXPECT_EQ(ResolveHistoryPath(""),
            std::filesystem::path("/home/user/.cache/tessera/history.sqlite"));
  environment.Set("XDG_CACHE_HOME", nullptr);
  EXPECT_EQ(ResolveHistoryPath(""),
            std::filesystem::path("/home/user/.cache/tessera/history.sqlite"));
  environment.Set("HOME", nullptr);
  EXPECT_FALSE(ResolveHistoryPath("").has_value());
}

}  // namespace
}  // namespace tessera
