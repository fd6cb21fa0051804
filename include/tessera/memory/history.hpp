// History: what every op of every run projected and measured, kept in an embedded
// SQLite database so later plans can use it (DESIGN.md "Measured memory").
//
//   auto history = tessera::HistoryDatabase::Open(*tessera::ResolveHistoryPath(""));
//   tessera::RunHistory run{.label = "compute", ...};
//   std::int64_t id = history->BeginRun(run);                // status "running"
//   history->RecordOp(id, op, tasks);                        // after each op
//   history->FinishRun(id, "ok", seconds, peak_rss);
//   auto learned = history->Learned(op_info.fingerprint);    // feeds the estimator
//
// History is advice, never a reason to fail: no function here throws for a database
// that is damaged, locked past the busy timeout, unwritable or of a newer schema. The
// first such failure is reported once through tessera::Warn (naming the file, the cause
// and what to do) and the database then does nothing (ok() false): writes are dropped
// and reads find nothing. Several processes and threads may write one database at once
// (WAL journal, busy timeout); each run is its own rows, so none is lost. The schema is
// versioned (PRAGMA user_version) and older versions are migrated when opened.
//
// Memory figures are bytes and, as in ExecutionReport, include the run's reserved_mem;
// LearnedFootprint excludes it so that a later run with another reserved_mem can add its
// own.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

// One op of a recorded run.
struct OpHistory {
  int index = 0;                       // its position in the plan's ops
  std::string name;                    // "add-7": differs from run to run
  std::string kind;                    // "elementwise", "map_blocks", "rechunk", ...
  std::string fingerprint;             // identifies the step across runs (OpInfo::fingerprint)
  std::int64_t tasks = 0;              // tasks that ran (skipped ones not counted)
  std::int64_t projected_mem = 0;      // largest task projection
  std::int64_t estimated_mem = 0;      // what the plan counted: projection or learned
  bool estimate_from_history = false;  // estimated_mem came from history
  // Per task: the accounting allocator's exact peak (measured), what the task's thread
  // touched beyond it (unaccounted: a user kernel's own allocations), and duration.
  std::int64_t measured_mem_max = 0;
  std::int64_t measured_mem_median = 0;
  std::int64_t measured_mem_p95 = 0;
  std::int64_t unaccounted_mem_max = 0;
  std::int64_t unaccounted_mem_median = 0;
  std::int64_t unaccounted_mem_p95 = 0;
  std::int64_t footprint_mem_max = 0;  // the largest measured + unaccounted of one task
  double seconds = 0;                  // the op's wall time
  double task_seconds_max = 0;
  double task_seconds_median = 0;
  double task_seconds_p95 = 0;
  std::int64_t rss_growth_bytes = 0;  // process RSS high-water rise during the op
};

// One task of a recorded run (for the report's timeline).
struct TaskHistory {
  int op = 0;  // OpHistory::index
  std::int64_t task = 0;
  int worker = 0;            // the thread that ran it, 0 .. workers - 1
  double start_seconds = 0;  // since the run started
  double seconds = 0;
  std::int64_t projected_mem = 0;
  std::int64_t measured_mem = 0;
  std::int64_t unaccounted_mem = 0;
};

// One rank of a recorded MPI run.
struct RankHistory {
  int rank = 0;
  std::int64_t tasks = 0;
  std::int64_t capacity = 0;  // the memory its tasks were admitted against
  std::int64_t measured_mem_max = 0;
  std::int64_t peak_rss_bytes = 0;
  std::int64_t held_bytes_max = 0;  // most bytes of in-memory blocks it held
};

// What an MPI run's memory manager did (ExecutionReport::cluster), and its ranks.
struct ClusterHistory {
  int ranks = 0;
  std::int64_t bytes_fetched = 0;
  std::int64_t bytes_replicated = 0;
  std::int64_t bytes_rebalanced = 0;
  std::int64_t bytes_dropped = 0;
  std::int64_t bytes_spilled = 0;
  std::int64_t bytes_gathered = 0;
  std::int64_t decisions = 0;
  std::int64_t tasks_moved = 0;  // retried on another rank
  std::vector<RankHistory> per_rank;
};

struct RunHistory {
  std::int64_t id = 0;     // given by BeginRun
  std::string started_at;  // UTC "2026-11-29T21:10:38Z"; BeginRun sets it when empty
  std::string label;       // what ran: "compute", "to_zarr", "tessera rechunk", ...
  std::string executor;    // "sync", "threads"
  int workers = 1;
  std::int64_t allowed_mem = 0;
  std::int64_t reserved_mem = 0;
  std::int64_t total_mem = 0;
  std::string status;  // "running" (never finished: e.g. killed), "ok", "failed: <cause>"
  double seconds = 0;
  std::int64_t peak_rss_bytes = 0;
  std::vector<OpHistory> ops;             // in plan order
  std::vector<TaskHistory> tasks;         // filled by LoadRun only
  std::optional<ClusterHistory> cluster;  // an MPI run's; filled by LoadRun only
};

// What history measured for one op fingerprint.
struct LearnedFootprint {
  // The largest footprint_mem_max - reserved_mem over the fingerprint's most recent
  // kLearnedRecords records, and that record's projection (reserved_mem excluded too).
  std::int64_t task_bytes = 0;
  std::int64_t projected_task_bytes = 0;
  std::int64_t run_id = 0;  // the run that measured task_bytes
  int records = 0;          // records considered (1 .. kLearnedRecords)
  // The median task seconds of the most recent record, and its run: what the plan's
  // cost estimate (OpInfo::task_seconds) counts per task of this step.
  double task_seconds = 0;
  std::int64_t seconds_run_id = 0;
};

class HistoryDatabase {
 public:
  static constexpr int kSchemaVersion = 3;
  static constexpr int kLearnedRecords = 3;
  // Tasks (the report's timeline) are kept for this many most recent runs; older runs
  // keep their ops' figures, which is all the estimator reads.
  static constexpr int kRunsWithTasks = 100;

  // How long a write waits for another process's lock before history gives up.
  static constexpr std::chrono::milliseconds kBusyTimeout{5000};

  // Opens the database at `path`, creating it (and its folder) or migrating it as
  // needed; a write waits up to `busy_timeout` for another writer. Never throws: on
  // failure the result is !ok() and a warning was emitted, once per file and process (a
  // file that failed once is not reported again).
  static std::shared_ptr<HistoryDatabase> Open(
      const std::filesystem::path& path, std::chrono::milliseconds busy_timeout = kBusyTimeout);
  // Opens an existing database of this schema version for reading only: never creates,
  // migrates or writes the file (planning reads history this way). A missing file or one
  // of an older schema (migrated by the next run's Open) is !ok() without a warning:
  // there is nothing to read yet. A damaged, locked or newer one warns as Open does.
  static std::shared_ptr<HistoryDatabase> OpenToRead(
      const std::filesystem::path& path, std::chrono::milliseconds busy_timeout = kBusyTimeout);

  virtual ~HistoryDatabase() = default;
  virtual const std::filesystem::path& path() const = 0;
  virtual bool ok() const = 0;

  // Records the start of `run` (its ops and tasks are ignored) with status "running";
  // sets run.id and, when empty, run.started_at. Returns the id, 0 when not recorded.
  virtual std::int64_t BeginRun(RunHistory& run) = 0;
  // Adds a finished op of run `run_id` and its tasks (one transaction). Does nothing
  // for run_id 0.
  virtual void RecordOp(std::int64_t run_id, const OpHistory& op,
                        const std::vector<TaskHistory>& tasks) = 0;
  virtual void FinishRun(std::int64_t run_id, const std::string& status, double seconds,
                         std::int64_t peak_rss_bytes) = 0;
  // Adds what an MPI run's memory manager did and its ranks (one transaction). Does
  // nothing for run_id 0.
  virtual void RecordCluster(std::int64_t run_id, const ClusterHistory& cluster) = 0;

  // nullopt when history has no record of `fingerprint`.
  virtual std::optional<LearnedFootprint> Learned(const std::string& fingerprint) const = 0;
  // The `limit` most recent runs, newest first, with their ops (not their tasks).
  virtual std::vector<RunHistory> RecentRuns(int limit) const = 0;
  // Run `id` with its ops, tasks and cluster; id <= 0 means the most recent run.
  virtual std::optional<RunHistory> LoadRun(std::int64_t id) const = 0;
};

// Where history lives, from a Spec's `history` setting: "off" (or "0", "none") means no
// history (nullopt); any other non-empty text is the database's path; "" defers to the
// environment variable TESSERA_HISTORY (same rules), and then to
// $XDG_CACHE_HOME/tessera/history.sqlite, else $HOME/.cache/tessera/history.sqlite
// (nullopt when neither variable is set).
std::optional<std::filesystem::path> ResolveHistoryPath(std::string_view setting);

// Reading what runs recorded (`tessera history`, `tessera report`, a user's own tools):
//
//   auto history = tessera::OpenRecordedHistory(*tessera::ResolveHistoryPath(""));
//   for (const tessera::RunHistory& run : history->RecentRuns(10)) {
//     for (const tessera::OpHistory& op : tessera::OpsMatching(run, "rechunk")) ...
//   }
//   tessera::CheckStillReadable(*history);   // the file may break while it is read
//
// Unlike the rest of history, these throw: a reader asked for this database. Messages
// say what to do and end with `how_to_name`, how the caller names another database
// ("--db PATH" on the command line).
constexpr std::string_view kNameHistoryInSpec = "Spec::history";

// Opens the existing database at `path` to read it; never creates a file. Reads through
// OpenToRead, so a file the caller may not write is still read; only a database of an
// older schema (or an empty file) is opened with Open, which migrates it. Throws
// StorageError when nothing is at `path` ("no history yet at PATH: run a computation
// first ..."), when it is a folder, or when it cannot be read (after its own warning).
std::shared_ptr<HistoryDatabase> OpenRecordedHistory(
    const std::filesystem::path& path, std::string_view how_to_name = kNameHistoryInSpec);

// Throws StorageError when `history` stopped working during the reads just made.
void CheckStillReadable(const HistoryDatabase& history,
                        std::string_view how_to_name = kNameHistoryInSpec);

// The ops of `run` whose name or kind is `filter` or whose fingerprint starts with it
// (all of them for an empty filter), in plan order.
std::vector<OpHistory> OpsMatching(const RunHistory& run, std::string_view filter);

}  // namespace tessera
