// HistoryDatabase on SQLite (memory/history.hpp): the schema lives in history_schema.hpp,
// the C API behind sqlite_connection.hpp. Every SQLite failure becomes one warning and
// disables the object; nothing here throws to the caller.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "history_schema.hpp"
#include "sqlite_connection.hpp"
#include "tessera/core/warning.hpp"
#include "tessera/memory/history.hpp"

namespace tessera {
namespace {

static_assert(HistoryDatabase::kSchemaVersion == kHistorySchemaVersion,
              "history.hpp's schema version and the migrations disagree");

// What the user reads after "the run goes on without history. ".
constexpr const char* kOffAdvice = "set TESSERA_HISTORY to another file, or to off";

// Between two tries to open a file another process is setting up: short next to the
// busy timeout, long enough not to spin.
constexpr std::chrono::milliseconds kOpenRetryPause{10};

// The warning for a SQLite failure while `doing` something with the database at `path`.
std::string FailureWarning(const std::filesystem::path& path, const std::string& doing,
                           const SqliteError& error, std::chrono::milliseconds busy_timeout) {
  const std::string file = "history database " + path.string();
  const std::string cause = " (" + std::string(error.what()) + ", while trying to " + doing + ")";
  const std::string goes_on = "; the run goes on without history. ";
  switch (error.code()) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return file + " is damaged" + cause + goes_on +
             "Delete the file to start a new history, or set TESSERA_HISTORY=off";
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return file + " stayed locked by another process for more than " +
             std::to_string(busy_timeout.count()) + " ms" + cause + goes_on +
             "Retry when the other process is done, or " + kOffAdvice;
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
    case SQLITE_IOERR:
    case SQLITE_FULL:
      return file + " cannot be opened or written" + cause + goes_on +
             "Make the file and its folder writable (and the disk not full), or " + kOffAdvice;
    default:
      return file + " failed" + cause + goes_on + "Delete the file to start a new history, or " +
             kOffAdvice;
  }
}

// Sends `warning` about the database at `path` unless one about that file was sent
// already in this process: a broken file is reported once, not at every plan and run.
void WarnOncePerFile(const std::filesystem::path& path, const std::string& warning) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  {
    const std::lock_guard lock(mutex);
    if (!warned.insert(std::filesystem::absolute(path).lexically_normal().string()).second) {
      return;
    }
  }
  Warn(warning);
}

// Now in UTC, "2026-11-29T21:10:38Z".
std::string UtcNow() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  const std::size_t length = std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(text, length);
}

constexpr const char* kRunColumns =
    "id, started_at, label, executor, workers, allowed_mem, reserved_mem, total_mem, status, "
    "seconds, peak_rss_bytes";

RunHistory ReadRun(const SqliteStatement& row) {
  RunHistory run;
  run.id = row.Int(0);
  run.started_at = row.Text(1);
  run.label = row.Text(2);
  run.executor = row.Text(3);
  run.workers = static_cast<int>(row.Int(4));
  run.allowed_mem = row.Int(5);
  run.reserved_mem = row.Int(6);
  run.total_mem = row.Int(7);
  run.status = row.Text(8);
  run.seconds = row.Double(9);
  run.peak_rss_bytes = row.Int(10);
  return run;
}

// Every column of an op but its run_id, in the order ReadOp and RecordOp use.
constexpr const char* kOpColumns =
    "op_index, name, kind, fingerprint, tasks, projected_mem, estimated_mem, "
    "estimate_from_history, measured_mem_max, measured_mem_median, measured_mem_p95, "
    "unaccounted_mem_max, unaccounted_mem_median, unaccounted_mem_p95, footprint_mem_max, "
    "seconds, task_seconds_max, task_seconds_median, task_seconds_p95, rss_growth_bytes";

OpHistory ReadOp(const SqliteStatement& row) {
  OpHistory op;
  op.index = static_cast<int>(row.Int(0));
  op.name = row.Text(1);
  op.kind = row.Text(2);
  op.fingerprint = row.Text(3);
  op.tasks = row.Int(4);
  op.projected_mem = row.Int(5);
  op.estimated_mem = row.Int(6);
  op.estimate_from_history = row.Int(7) != 0;
  op.measured_mem_max = row.Int(8);
  op.measured_mem_median = row.Int(9);
  op.measured_mem_p95 = row.Int(10);
  op.unaccounted_mem_max = row.Int(11);
  op.unaccounted_mem_median = row.Int(12);
  op.unaccounted_mem_p95 = row.Int(13);
  op.footprint_mem_max = row.Int(14);
  op.seconds = row.Double(15);
  op.task_seconds_max = row.Double(16);
  op.task_seconds_median = row.Double(17);
  op.task_seconds_p95 = row.Double(18);
  op.rss_growth_bytes = row.Int(19);
  return op;
}

constexpr const char* kTaskColumns =
    "op_index, task, worker, start_seconds, seconds, projected_mem, measured_mem, "
    "unaccounted_mem";

TaskHistory ReadTask(const SqliteStatement& row) {
  TaskHistory task;
  task.op = static_cast<int>(row.Int(0));
  task.task = row.Int(1);
  task.worker = static_cast<int>(row.Int(2));
  task.start_seconds = row.Double(3);
  task.seconds = row.Double(4);
  task.projected_mem = row.Int(5);
  task.measured_mem = row.Int(6);
  task.unaccounted_mem = row.Int(7);
  return task;
}

// Fills run.ops (in plan order) and, when `with_tasks`, run.tasks (in recorded order).
void LoadOpsOf(SqliteConnection& db, RunHistory& run, bool with_tasks) {
  SqliteStatement ops = db.Prepare(std::string("SELECT ") + kOpColumns +
                                   " FROM ops WHERE run_id = ? ORDER BY op_index");
  ops.BindAll(run.id);
  while (ops.Step()) run.ops.push_back(ReadOp(ops));
  if (!with_tasks) return;
  SqliteStatement tasks = db.Prepare(std::string("SELECT ") + kTaskColumns +
                                     " FROM tasks WHERE run_id = ? ORDER BY rowid");
  tasks.BindAll(run.id);
  while (tasks.Step()) run.tasks.push_back(ReadTask(tasks));
}

class SqliteHistoryDatabase final : public HistoryDatabase {
 public:
  SqliteHistoryDatabase(std::filesystem::path path, std::chrono::milliseconds busy_timeout,
                        bool read_only)
      : path_(std::move(path)), busy_timeout_(busy_timeout), read_only_(read_only) {}

  // Creates the folder, opens the file, checks and migrates the schema; read-only: opens
  // an existing file of this schema and nothing else.
  void Open() {
    const std::lock_guard lock(mutex_);
    if (read_only_) {
      std::error_code missing;
      if (!std::filesystem::is_regular_file(path_, missing)) return;
      try {
        OpenConnection();
      } catch (const std::exception& failure) {
        Disable("open it for reading", failure);
      }
      return;
    }
    const std::filesystem::path folder = path_.parent_path();
    std::error_code error;
    if (!folder.empty()) std::filesystem::create_directories(folder, error);
    if (error) {
      WarnOncePerFile(path_,
                      "history database " + path_.string() + " cannot be created: its folder " +
                          folder.string() + " cannot be made (" + error.message() +
                          "); the run goes on without history. Make the folder creatable, or " +
                          kOffAdvice);
      return;
    }
    // Opening a new file races with other processes opening it too (switching to WAL,
    // creating the schema), and some of those steps fail with SQLITE_BUSY at once rather
    // than wait for the busy handler: retry the whole (idempotent) sequence until the
    // busy timeout has passed.
    const auto deadline = std::chrono::steady_clock::now() + busy_timeout_;
    while (true) {
      try {
        OpenConnection();
        return;
      } catch (const SqliteError& failure) {
        connection_.reset();
        if (failure.code() != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline) {
          Disable("open it", failure);
          return;
        }
      } catch (const std::exception& failure) {
        Disable("open it", failure);
        return;
      }
      std::this_thread::sleep_for(kOpenRetryPause);
    }
  }

  const std::filesystem::path& path() const override { return path_; }

  bool ok() const override {
    const std::lock_guard lock(mutex_);
    return connection_ != nullptr;
  }

  std::int64_t BeginRun(RunHistory& run) override {
    if (run.started_at.empty()) run.started_at = UtcNow();
    run.id = 0;
    run.id = Guarded("record the start of a run", std::int64_t{0}, [&](SqliteConnection& db) {
      SqliteStatement insert = db.Prepare(std::string("INSERT INTO runs (") + kRunColumns +
                                          ") VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
      insert.BindAll(run.started_at, run.label, run.executor, run.workers, run.allowed_mem,
                     run.reserved_mem, run.total_mem, std::string("running"), 0.0, std::int64_t{0});
      insert.Step();
      const std::int64_t id = db.LastInsertRowid();
      // Ids only grow (AUTOINCREMENT): runs below id - kRunsWithTasks + 1 are older.
      SqliteStatement forget = db.Prepare("DELETE FROM tasks WHERE run_id <= ?");
      forget.BindAll(id - kRunsWithTasks);
      forget.Step();
      return id;
    });
    if (run.id != 0) run.status = "running";
    return run.id;
  }

  void RecordOp(std::int64_t run_id, const OpHistory& op,
                const std::vector<TaskHistory>& tasks) override {
    if (run_id == 0) return;
    Guarded("record an op", 0, [&](SqliteConnection& db) {
      SqliteTransaction transaction(db);
      // Recording an op again replaces it and its tasks.
      SqliteStatement insert =
          db.Prepare(std::string("INSERT OR REPLACE INTO ops (run_id, ") + kOpColumns +
                     ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
      insert.BindAll(run_id, op.index, op.name, op.kind, op.fingerprint, op.tasks, op.projected_mem,
                     op.estimated_mem, std::int64_t{op.estimate_from_history ? 1 : 0},
                     op.measured_mem_max, op.measured_mem_median, op.measured_mem_p95,
                     op.unaccounted_mem_max, op.unaccounted_mem_median, op.unaccounted_mem_p95,
                     op.footprint_mem_max, op.seconds, op.task_seconds_max, op.task_seconds_median,
                     op.task_seconds_p95, op.rss_growth_bytes);
      insert.Step();
      SqliteStatement forget = db.Prepare("DELETE FROM tasks WHERE run_id = ? AND op_index = ?");
      forget.BindAll(run_id, op.index);
      forget.Step();
      SqliteStatement insert_task =
          db.Prepare(std::string("INSERT INTO tasks (run_id, ") + kTaskColumns +
                     ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
      for (const TaskHistory& task : tasks) {
        insert_task.BindAll(run_id, op.index, task.task, task.worker, task.start_seconds,
                            task.seconds, task.projected_mem, task.measured_mem,
                            task.unaccounted_mem);
        insert_task.Step();
        insert_task.Reset();
      }
      transaction.Commit();
      return 0;
    });
  }

  void FinishRun(std::int64_t run_id, const std::string& status, double seconds,
                 std::int64_t peak_rss_bytes) override {
    if (run_id == 0) return;
    Guarded("record the end of a run", 0, [&](SqliteConnection& db) {
      SqliteStatement update =
          db.Prepare("UPDATE runs SET status = ?, seconds = ?, peak_rss_bytes = ? WHERE id = ?");
      update.BindAll(status, seconds, peak_rss_bytes, run_id);
      update.Step();
      return 0;
    });
  }

  void RecordCluster(std::int64_t run_id, const ClusterHistory& cluster) override {
    if (run_id == 0) return;
    Guarded("record an MPI run's ranks", 0, [&](SqliteConnection& db) {
      SqliteTransaction transaction(db);
      SqliteStatement insert = db.Prepare(
          "INSERT OR REPLACE INTO clusters (run_id, ranks, bytes_fetched, bytes_replicated,"
          " bytes_rebalanced, bytes_dropped, bytes_spilled, bytes_gathered, decisions,"
          " tasks_moved) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
      insert.BindAll(run_id, cluster.ranks, cluster.bytes_fetched, cluster.bytes_replicated,
                     cluster.bytes_rebalanced, cluster.bytes_dropped, cluster.bytes_spilled,
                     cluster.bytes_gathered, cluster.decisions, cluster.tasks_moved);
      insert.Step();
      SqliteStatement rank = db.Prepare(
          "INSERT OR REPLACE INTO cluster_ranks (run_id, rank, tasks, capacity,"
          " measured_mem_max, peak_rss_bytes, held_bytes_max) VALUES (?, ?, ?, ?, ?, ?, ?)");
      for (const RankHistory& each : cluster.per_rank) {
        rank.BindAll(run_id, each.rank, each.tasks, each.capacity, each.measured_mem_max,
                     each.peak_rss_bytes, each.held_bytes_max);
        rank.Step();
        rank.Reset();
      }
      transaction.Commit();
      return 0;
    });
  }

  std::optional<LearnedFootprint> Learned(const std::string& fingerprint) const override {
    return Guarded("read what earlier runs measured", std::optional<LearnedFootprint>(),
                   [&](SqliteConnection& db) -> std::optional<LearnedFootprint> {
                     SqliteStatement recent = db.Prepare(
                         "SELECT ops.footprint_mem_max - runs.reserved_mem,"
                         "       ops.projected_mem - runs.reserved_mem, ops.run_id,"
                         "       ops.task_seconds_median"
                         " FROM ops JOIN runs ON runs.id = ops.run_id"
                         " WHERE ops.fingerprint = ? AND ops.tasks > 0"
                         " ORDER BY ops.run_id DESC, ops.op_index DESC LIMIT ?");
                     recent.BindAll(fingerprint, kLearnedRecords);
                     std::optional<LearnedFootprint> learned;
                     double task_seconds = 0;
                     std::int64_t seconds_run_id = 0;
                     while (recent.Step()) {
                       if (seconds_run_id == 0) {  // the most recent record
                         task_seconds = recent.Double(3);
                         seconds_run_id = recent.Int(2);
                       }
                       const std::int64_t task_bytes = recent.Int(0);
                       // Ties keep the more recent record (rows come newest first).
                       if (!learned || task_bytes > learned->task_bytes) {
                         const int records = learned ? learned->records : 0;
                         learned = LearnedFootprint{.task_bytes = task_bytes,
                                                    .projected_task_bytes = recent.Int(1),
                                                    .run_id = recent.Int(2),
                                                    .records = records};
                       }
                       ++learned->records;
                     }
                     if (learned) {
                       learned->task_seconds = task_seconds;
                       learned->seconds_run_id = seconds_run_id;
                     }
                     return learned;
                   });
  }

  std::vector<RunHistory> RecentRuns(int limit) const override {
    if (limit <= 0) return {};
    return Guarded("read recent runs", std::vector<RunHistory>(), [&](SqliteConnection& db) {
      SqliteStatement select =
          db.Prepare(std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id DESC LIMIT ?");
      select.BindAll(limit);
      std::vector<RunHistory> runs;
      while (select.Step()) runs.push_back(ReadRun(select));
      for (RunHistory& run : runs) LoadOpsOf(db, run, /*with_tasks=*/false);
      return runs;
    });
  }

  std::optional<RunHistory> LoadRun(std::int64_t id) const override {
    return Guarded("read a run", std::optional<RunHistory>(),
                   [&](SqliteConnection& db) -> std::optional<RunHistory> {
                     SqliteStatement select =
                         db.Prepare(std::string("SELECT ") + kRunColumns + " FROM runs" +
                                    (id > 0 ? " WHERE id = ?" : " ORDER BY id DESC LIMIT 1"));
                     if (id > 0) select.BindAll(id);
                     if (!select.Step()) return std::nullopt;
                     RunHistory run = ReadRun(select);
                     LoadOpsOf(db, run, /*with_tasks=*/true);
                     LoadClusterOf(db, run);
                     return run;
                   });
  }

 private:
  // The run's MPI figures, when it was an MPI run.
  static void LoadClusterOf(SqliteConnection& db, RunHistory& run) {
    SqliteStatement select = db.Prepare(
        "SELECT ranks, bytes_fetched, bytes_replicated, bytes_rebalanced, bytes_dropped,"
        " bytes_spilled, bytes_gathered, decisions, tasks_moved FROM clusters WHERE run_id = ?");
    select.BindAll(run.id);
    if (!select.Step()) return;
    ClusterHistory cluster;
    cluster.ranks = static_cast<int>(select.Int(0));
    cluster.bytes_fetched = select.Int(1);
    cluster.bytes_replicated = select.Int(2);
    cluster.bytes_rebalanced = select.Int(3);
    cluster.bytes_dropped = select.Int(4);
    cluster.bytes_spilled = select.Int(5);
    cluster.bytes_gathered = select.Int(6);
    cluster.decisions = select.Int(7);
    cluster.tasks_moved = select.Int(8);
    SqliteStatement ranks = db.Prepare(
        "SELECT rank, tasks, capacity, measured_mem_max, peak_rss_bytes, held_bytes_max"
        " FROM cluster_ranks WHERE run_id = ? ORDER BY rank");
    ranks.BindAll(run.id);
    while (ranks.Step()) {
      cluster.per_rank.push_back(RankHistory{static_cast<int>(ranks.Int(0)), ranks.Int(1),
                                             ranks.Int(2), ranks.Int(3), ranks.Int(4),
                                             ranks.Int(5)});
    }
    run.cluster = std::move(cluster);
  }

  // REQUIRES: mutex_ held. Opens the file and brings its schema up to date; leaves
  // connection_ null for a newer schema (after warning). Throws SqliteError.
  void OpenConnection() {
    connection_ = std::make_unique<SqliteConnection>(
        path_, busy_timeout_, read_only_ ? SqliteOpen::kReadOnly : SqliteOpen::kCreate);
    // Read before anything writes: a newer schema is left exactly as it is.
    std::int64_t version = 0;
    try {
      version = connection_->PragmaInt("user_version");
    } catch (const SqliteError& failure) {
      // A WAL database in a folder this process cannot write: SQLite cannot create the
      // shared-memory index even to read. Nobody can be writing it then (a writer needs
      // that folder too), so read it as immutable.
      if (!read_only_ || failure.code() != SQLITE_READONLY) throw;
      connection_ =
          std::make_unique<SqliteConnection>(path_, busy_timeout_, SqliteOpen::kReadOnlyImmutable);
      version = connection_->PragmaInt("user_version");
    }
    if (version > kHistorySchemaVersion) {
      WarnOncePerFile(
          path_,
          "history database " + path_.string() + " was written by a newer Tessera (schema " +
              std::to_string(version) + "; this one knows up to " +
              std::to_string(kHistorySchemaVersion) +
              "); the run goes on without history and leaves the file as it is. Use the newer "
              "Tessera, or " +
              kOffAdvice);
      connection_.reset();
      return;
    }
    if (read_only_) {
      // An older schema is migrated by the next writer; until then there is nothing to
      // read that this version understands.
      if (version < kHistorySchemaVersion) connection_.reset();
      return;
    }
    // WAL lets readers and one writer work at once across processes; NORMAL syncs at
    // checkpoints only, which can lose the last runs on power loss but never corrupts.
    connection_->Execute("PRAGMA journal_mode=WAL");
    connection_->Execute("PRAGMA synchronous=NORMAL");
    if (version < kHistorySchemaVersion) MigrateHistorySchema(*connection_);
  }

  // Runs `body` on the connection under the mutex; returns `fallback` when disabled or
  // when `body` fails (which disables the object after one warning).
  template <typename Result, typename Body>
  Result Guarded(const std::string& doing, Result fallback, Body body) const {
    const std::lock_guard lock(mutex_);
    if (connection_ == nullptr) return fallback;
    try {
      return body(*connection_);
    } catch (const std::exception& failure) {
      Disable(doing, failure);
      return fallback;
    }
  }

  // REQUIRES: mutex_ held. Warns once about `failure` and drops the connection.
  void Disable(const std::string& doing, const std::exception& failure) const {
    connection_.reset();
    if (const auto* sqlite = dynamic_cast<const SqliteError*>(&failure)) {
      WarnOncePerFile(path_, FailureWarning(path_, doing, *sqlite, busy_timeout_));
    } else {
      WarnOncePerFile(path_, FailureWarning(path_, doing, SqliteError(SQLITE_ERROR, failure.what()),
                                            busy_timeout_));
    }
  }

  const std::filesystem::path path_;
  const std::chrono::milliseconds busy_timeout_;
  const bool read_only_;
  mutable std::mutex mutex_;
  // Null once disabled (or never opened). GUARDED_BY(mutex_).
  mutable std::unique_ptr<SqliteConnection> connection_;
};

}  // namespace

std::shared_ptr<HistoryDatabase> HistoryDatabase::Open(const std::filesystem::path& path,
                                                       std::chrono::milliseconds busy_timeout) {
  auto database = std::make_shared<SqliteHistoryDatabase>(path, busy_timeout, false);
  database->Open();
  return database;
}

std::shared_ptr<HistoryDatabase> HistoryDatabase::OpenToRead(
    const std::filesystem::path& path, std::chrono::milliseconds busy_timeout) {
  auto database = std::make_shared<SqliteHistoryDatabase>(path, busy_timeout, true);
  database->Open();
  return database;
}

}  // namespace tessera
