// The mpi executor on the ranks of this mpirun (1 to 4, CMakeLists.txt): every plan gives
// the threads executor's result on every rank, no rank's tasks measure more than their
// budget, in-memory intermediates move between ranks, a skewed output ends balanced, a
// block read everywhere is replicated within bounds, a failing task moves to another
// rank, and an interrupted to_zarr resumes without redoing finished chunks. Every rank
// runs every test in the same order (the tests are collective).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "tessera/core/cluster.hpp"
#include "tessera/tessera.hpp"

namespace tessera {
namespace {

int Rank() { return JoinCluster().rank; }
int Ranks() { return JoinCluster().ranks; }

// A folder every rank reaches: rank 0's temporary directory, its path sent to the others.
class SharedDir {
 public:
  SharedDir() {
    std::string path;
    if (Rank() == 0) {
      own_ = std::make_unique<testing::TempDir>("mpi");
      path = own_->path().string();
    }
    int size = static_cast<int>(path.size());
    MPI_Bcast(&size, 1, MPI_INT, 0, MPI_COMM_WORLD);
    path.resize(static_cast<std::size_t>(size));
    MPI_Bcast(path.data(), size, MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = path;
  }
  ~SharedDir() { MPI_Barrier(MPI_COMM_WORLD); }  // no rank still uses it when rank 0 removes it
  const std::filesystem::path& path() const { return path_; }

 private:
  std::unique_ptr<testing::TempDir> own_;
  std::filesystem::path path_;
};

Spec ThreadsSpec(const std::string& allowed = "8MB");

// A compressed Zarr array of 1000 x 1000 random values in (1000, 100) chunks under `dir`,
// written by rank 0 alone: rechunking it to rows needs an intermediate (whole chunks are
// read), as the seed rechunk does.
std::string StoredColumns(const SharedDir& dir) {
  const std::string path = (dir.path() / "columns.zarr").string();
  if (Rank() == 0) random::random({1000, 1000}, {1000, 100}, ThreadsSpec(), 17).to_zarr(path);
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

// As many threads as the MPI runs' ranks have together: plans (reduction trees, and so
// the rounding of sums) count the run's workers, so that both make the same plan.
Spec ThreadsSpec(const std::string& allowed) {
  Spec spec = Spec::from({{"allowed_mem", allowed}, {"history", "off"}});
  spec.max_workers = 2 * Ranks();
  return spec;
}

Spec MpiSpec(const std::string& allowed = "8MB") {
  Spec spec = ThreadsSpec(allowed);
  spec.executor = "mpi";
  spec.max_workers = 2;  // on each rank
  return spec;
}

// What every MPI run must show: every task within its projection and the allowed_mem,
// every rank's figures reported, and each rank's tasks within its memory.
void ExpectWithinBudgets(const ExecutionReport& report, const Spec& spec) {
  if (Rank() != 0) return;  // the leader's report has the cluster's figures
  ASSERT_EQ(report.cluster.ranks, Ranks());
  ASSERT_EQ(report.cluster.per_rank.size(), static_cast<std::size_t>(Ranks()));
  std::int64_t tasks = 0;
  for (const RankReport& rank : report.cluster.per_rank) {
    tasks += rank.tasks;
    EXPECT_LE(rank.measured_mem_max, spec.allowed_mem) << "rank " << rank.rank;
    EXPECT_LE(rank.max_admitted_mem, rank.capacity) << "rank " << rank.rank;
    EXPECT_GT(rank.peak_rss_bytes, 0) << "rank " << rank.rank;
  }
  std::int64_t ran = 0;
  for (const TaskRecord& record : report.tasks) {
    EXPECT_LE(record.measured_mem, record.projected_mem) << record.op_name << " " << record.task;
    EXPECT_GE(record.worker, 0);
    EXPECT_LT(record.worker, Ranks());
    if (!record.skipped) ++ran;
  }
  EXPECT_EQ(tasks, static_cast<std::int64_t>(report.tasks.size()));
  EXPECT_GE(tasks, ran);
}

TEST(MpiExecutor, ElementwiseAndReductionsGiveTheThreadsResultOnEveryRank) {
  const auto make = [](const Spec& spec) {
    const Array x = random::random({300, 200}, {50, 40}, spec, 7);
    const Array y = sqrt(x * x + 1.0) - x / 3.0;
    return std::vector<Array>{y, sum(y, 0), mean(y)};
  };
  const std::vector<Array> expected = make(ThreadsSpec());
  const std::vector<Array> actual = make(MpiSpec());
  for (std::size_t index = 0; index < expected.size(); ++index) {
    ExecutionReport report;
    ComputeOptions options;
    options.report = &report;
    const NDArray want = expected[index].compute();
    const NDArray got = actual[index].compute(options);
    EXPECT_TRUE(got == want) << "output " << index << " on rank " << Rank();
    ExpectWithinBudgets(report, actual[index].spec());
  }
}

TEST(MpiExecutor, RechunkThroughTheRanksMemoryGivesTheSourceAndMovesBlocks) {
  SharedDir dir;
  const std::string source = StoredColumns(dir);
  const NDArray want = from_zarr(source, ThreadsSpec("4MB")).rechunk({100, 1000}).compute();
  const Array actual = from_zarr(source, MpiSpec("4MB")).rechunk({100, 1000});
  ExecutionReport report;
  ComputeOptions options;
  options.report = &report;
  EXPECT_TRUE(actual.compute(options) == want) << "rank " << Rank();
  ExpectWithinBudgets(report, actual.spec());
  if (Rank() == 0) {
    // The rechunk's intermediate was held in the ranks' memory: each measured its share.
    std::int64_t held = 0;
    for (const std::vector<std::int64_t>& ranks : report.cluster.held_at_commit) {
      held = std::accumulate(ranks.begin(), ranks.end(), held);
    }
    EXPECT_GE(held, 1000 * 1000 * 8);
    if (Ranks() > 1) {
      EXPECT_GT(report.cluster.bytes_fetched, 0);
      EXPECT_GT(report.cluster.bytes_gathered, 0);
    }
  }
}

TEST(MpiExecutor, RechunkThroughTheSharedDiskGivesTheSource) {
  SharedDir dir;
  const std::string source = StoredColumns(dir);
  const NDArray want = from_zarr(source, ThreadsSpec("4MB")).rechunk({100, 1000}).compute();
  Spec spec = MpiSpec("4MB");
  spec.work_dir = dir.path().string();
  spec.total_mem = 17'000'000;  // the cluster's: too little RAM for the 8 MB intermediate
  const Array actual = from_zarr(source, spec).rechunk({100, 1000});
  ExecutionReport report;
  ComputeOptions options;
  options.report = &report;
  EXPECT_TRUE(actual.compute(options) == want) << "rank " << Rank();
  ExpectWithinBudgets(report, actual.spec());
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() == 0) {  // the intermediate's folder is gone
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
      EXPECT_EQ(entry.path().filename().string().rfind("tessera-", 0), std::string::npos)
          << entry.path();
    }
  }
}

TEST(MpiExecutor, ToZarrWritesOnceForAllRanksAndZarrReadsIt) {
  SharedDir dir;
  const std::string path = (dir.path() / "out.zarr").string();
  const Array x = random::random({256, 300}, {64, 50}, MpiSpec(), 11) * 2.0;
  ExecutionReport report;
  ToZarrOptions options;
  options.compute.report = &report;
  x.to_zarr(path, options);
  ExpectWithinBudgets(report, x.spec());
  MPI_Barrier(MPI_COMM_WORLD);
  const NDArray written = from_zarr(path, ThreadsSpec()).compute();
  const NDArray expected =
      (random::random({256, 300}, {64, 50}, ThreadsSpec(), 11) * 2.0).compute();
  EXPECT_TRUE(written == expected) << "rank " << Rank();
}

TEST(MpiExecutor, AnInterruptedToZarrResumesWithoutRedoingFinishedChunks) {
  SharedDir dir;
  const std::string path = (dir.path() / "resumed.zarr").string();
  const auto make = [](const Spec& spec) {
    return random::random({400, 400}, {50, 50}, spec, 13) + 1.0;
  };
  // The leader stops the run after 20 tasks, as a killed run stops.
  ToZarrOptions first;
  int seen = 0;
  first.compute.execute.on_task = [&seen](const TaskRecord&) {
    if (++seen == 20) throw std::runtime_error("interrupted after 20 tasks");
  };
  EXPECT_ANY_THROW(make(MpiSpec()).to_zarr(path, first)) << "rank " << Rank();
  ExecutionReport report;
  ToZarrOptions again;
  again.resume = true;
  again.compute.report = &report;
  make(MpiSpec()).to_zarr(path, again);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_TRUE(from_zarr(path, ThreadsSpec()).compute() == make(ThreadsSpec()).compute());
  if (Rank() == 0) {
    std::int64_t skipped = 0;
    for (const OpReport& op : report.ops) skipped += op.tasks_skipped;
    EXPECT_GE(skipped, 20 - 1);  // those that finished before the stop (one may be the 20th)
    EXPECT_LT(skipped, 64);
  }
}

TEST(MpiExecutor, AChunkProducedOnOneRankEndsBalanced) {
  SharedDir dir;
  const std::string source = StoredColumns(dir);
  const NDArray want = from_zarr(source, ThreadsSpec("4MB")).rechunk({100, 1000}).compute();
  Spec spec = MpiSpec("4MB");
  spec.executor_options = {{"place_on_rank", "0"}, {"high_watermark", "0.5"}};
  ExecutionReport report;
  ComputeOptions options;
  options.report = &report;
  EXPECT_TRUE(from_zarr(source, spec).rechunk({100, 1000}).compute(options) == want);
  if (Rank() != 0 || Ranks() == 1) return;
  bool checked = false;
  for (std::size_t op = 0; op < report.cluster.held_at_commit.size(); ++op) {
    const std::vector<std::int64_t>& held = report.cluster.held_at_commit[op];
    if (held.empty()) continue;
    const std::int64_t total = std::accumulate(held.begin(), held.end(), std::int64_t{0});
    EXPECT_EQ(total, 1000 * 1000 * 8) << "every block kept once";
    const double mean = static_cast<double>(total) / static_cast<double>(held.size());
    const std::int64_t block = 1000 * 100 * 8;  // blocks move whole
    for (std::size_t rank = 0; rank < held.size(); ++rank) {
      EXPECT_NEAR(static_cast<double>(held[rank]), mean, std::max(0.1 * mean, 1.0 * block))
          << "rank " << rank << " of " << held.size();
    }
    checked = true;
  }
  EXPECT_TRUE(checked);
  EXPECT_GT(report.cluster.bytes_rebalanced, 0);
}

TEST(MpiExecutor, ABlockReadOnEveryRankIsReplicatedWithinBounds) {
  SharedDir dir;
  Spec spec = MpiSpec("4MB");
  spec.history = (dir.path() / "history.sqlite").string();  // the leader records the run
  spec.executor_options = {{"min_replicas", "2"}, {"max_replicas", "3"}};
  // mean(x, 0) is one small block every task of the subtraction reads.
  const auto make = [](const Spec& chosen) {
    const Array x = random::random({400, 400}, {25, 400}, chosen, 9);
    return x - mean(x, 0);
  };
  ExecutionReport report;
  ComputeOptions options;
  options.report = &report;
  const NDArray got = make(spec).compute(options);
  EXPECT_TRUE(got == make(ThreadsSpec("4MB")).compute()) << "rank " << Rank();
  if (Rank() != 0 || Ranks() == 1) return;
  EXPECT_GT(report.cluster.bytes_replicated, 0);
  bool seen = false;
  for (std::size_t op = 0; op < report.cluster.held_at_commit.size(); ++op) {
    const std::vector<std::int64_t>& held = report.cluster.held_at_commit[op];
    if (held.empty()) continue;
    // When it commits, before its readers run: every block twice, on two ranks.
    const std::int64_t total = std::accumulate(held.begin(), held.end(), std::int64_t{0});
    EXPECT_EQ(total, 2 * report.cluster.block_bytes[op]) << report.ops[op].name;
    seen = true;
  }
  EXPECT_TRUE(seen);
  EXPECT_GE(report.cluster.bytes_dropped, report.cluster.bytes_replicated)
      << "every replica is dropped once its op's readers are done";
  // The memory manager's figures are in history too.
  const std::optional<RunHistory> recorded =
      OpenRecordedHistory(spec.history)->LoadRun(report.history_run);
  ASSERT_TRUE(recorded && recorded->cluster);
  EXPECT_EQ(recorded->executor, "mpi");
  EXPECT_EQ(recorded->cluster->ranks, Ranks());
  EXPECT_EQ(recorded->cluster->bytes_replicated, report.cluster.bytes_replicated);
  EXPECT_EQ(recorded->cluster->per_rank.size(), static_cast<std::size_t>(Ranks()));
}

TEST(MpiExecutor, BlocksBeyondTheRanksMemorySpillToTheSharedDiskAndReadBack) {
  SharedDir dir;
  const std::string source = StoredColumns(dir);
  const NDArray want = from_zarr(source, ThreadsSpec("4MB")).rechunk({100, 1000}).compute();
  // Each rank: 6 MB for one task at a time and the blocks it holds. The 8 MB intermediate,
  // held in RAM (forced) on every rank, cannot fit there: some blocks go to files.
  Spec spec = MpiSpec("4MB");
  spec.max_workers = 1;
  spec.work_dir = dir.path().string();
  spec.total_mem = static_cast<std::int64_t>(Ranks()) * 6'000'000;
  spec.executor_options = {{"min_replicas", std::to_string(Ranks())},
                           {"max_replicas", std::to_string(std::max(3, Ranks()))}};
  ExecutionReport report;
  ComputeOptions options;
  options.report = &report;
  options.plan.intermediate_tier = Tier::kMemory;
  options.plan.allow_over_total_mem = true;
  EXPECT_TRUE(from_zarr(source, spec).rechunk({100, 1000}).compute(options) == want)
      << "rank " << Rank();
  ExpectWithinBudgets(report, spec);
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() != 0) return;
  EXPECT_GT(report.cluster.bytes_spilled, 0)
      << "replicated " << report.cluster.bytes_replicated << ", dropped "
      << report.cluster.bytes_dropped << ", decisions " << report.cluster.decisions << ", capacity "
      << report.cluster.per_rank[0].capacity << ", held max "
      << report.cluster.per_rank[0].held_bytes_max;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename().string().rfind("tessera-", 0), std::string::npos)
        << "left behind: " << entry.path();
  }
}

TEST(MpiExecutor, ATaskFailingOnOneRankIsRetriedOnAnother) {
  std::atomic<int> failures{0};
  const auto make = [&](const Spec& spec, bool fail) {
    const Array x = random::random({200, 200}, {50, 50}, spec, 2);
    return map_blocks(
        [&failures, fail](std::span<const NDArray> in, const BlockInfo&) {
          if (fail && Ranks() > 1 && Rank() == 1 && failures.fetch_add(1) < 1000) {
            throw std::runtime_error("a flaky node");
          }
          NDArray out = in[0];
          return out;
        },
        {x}, float64);
  };
  ExecutionReport report;
  ComputeOptions options;
  options.report = &report;
  options.execute.retries = 2;
  EXPECT_TRUE(make(MpiSpec(), true).compute(options) == make(ThreadsSpec(), false).compute());
  if (Rank() == 0 && Ranks() > 1) {
    EXPECT_GT(report.cluster.tasks_moved_after_failure, 0);
    for (const TaskRecord& record : report.tasks) EXPECT_NE(record.worker, 1);
  }
}

TEST(MpiExecutor, ATaskFailingOnTheOnlyRankItMayRunOnIsRetriedThere) {
  std::atomic<int> failures{0};
  const auto make = [&](const Spec& spec, bool fail) {
    const Array x = random::random({100, 100}, {50, 50}, spec, 3);
    return map_blocks(
        [&failures, fail](std::span<const NDArray> in, const BlockInfo& info) {
          if (fail && info.block_index == Shape{1, 1} && failures.fetch_add(1) < 1) {
            throw std::runtime_error("a flaky disk");
          }
          NDArray out = in[0];
          return out;
        },
        {x}, float64);
  };
  Spec spec = MpiSpec();
  spec.executor_options = {{"place_on_rank", "0"}};
  ComputeOptions options;
  options.execute.retries = 2;
  EXPECT_TRUE(make(spec, true).compute(options) == make(ThreadsSpec(), false).compute());
  EXPECT_EQ(failures.load(), Rank() == 0 ? 2 : 0);  // failed once, then ran again on rank 0
}

TEST(MpiExecutor, ARankFailingBeforeTheRunStartsFailsEveryRank) {
  // on_start runs on the leader alone, before the ranks meet: it throws there; the other
  // ranks learn of it rather than wait.
  ComputeOptions options;
  options.execute.on_start = [](std::int64_t) { throw std::runtime_error("no room for the log"); };
  const Array x = ones({40, 40}, float64, {10, 10}, MpiSpec());
  try {
    (x * 2).compute(options);
    ADD_FAILURE() << "rank " << Rank() << " computed";
  } catch (const std::exception& error) {
    const std::string text = error.what();
    if (Rank() == 0) {
      EXPECT_NE(text.find("no room for the log"), std::string::npos) << text;
    } else {
      EXPECT_NE(text.find("rank 0 failed before the run started"), std::string::npos) << text;
    }
  }
  // The ranks go on together: the next run works.
  EXPECT_TRUE((x * 2).compute() ==
              (ones({40, 40}, float64, {10, 10}, ThreadsSpec()) * 2).compute());
}

TEST(MpiExecutor, RanksThatPlanDifferentComputationsAreRefused) {
  if (Ranks() == 1) return;
  const Array x = random::random({100, 100 + static_cast<Index>(Rank())}, {10, 10}, MpiSpec(), 1);
  EXPECT_THROW(sum(x).compute(), InvalidArgument) << "rank " << Rank();
}

TEST(MpiExecutor, UnknownExecutorOptionsAreRefused) {
  Spec spec = MpiSpec();
  spec.executor_options = {{"replicas", "2"}};
  EXPECT_THROW(sum(ones({10, 10}, float64, {5, 5}, spec)).compute(), InvalidArgument);
}

}  // namespace
}  // namespace tessera
