// The history database's schema and its migrations (PRAGMA user_version).
//
// Migration N (kHistoryMigrations[N - 1]) turns a version N - 1 database into version N;
// a new file runs them all from 0. A migration is never edited once released: a change
// of schema is a new migration, so every older database can be brought up to date.
//   1: runs and ops (ops indexed by fingerprint)
//   2: tasks (one row per task), and the ops columns for unaccounted memory, the task
//      footprint and whether the estimate came from history
//   3: clusters and cluster_ranks: an MPI run's memory manager and its ranks
#pragma once

#include <array>
#include <cstdint>

#include "sqlite_connection.hpp"

namespace tessera {

inline constexpr std::array<const char*, 3> kHistoryMigrations = {
    // 1
    "CREATE TABLE runs ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"  // never reused, even after deletes
    "  started_at TEXT NOT NULL, label TEXT NOT NULL, executor TEXT NOT NULL,"
    "  workers INTEGER NOT NULL, allowed_mem INTEGER NOT NULL,"
    "  reserved_mem INTEGER NOT NULL, total_mem INTEGER NOT NULL,"
    "  status TEXT NOT NULL, seconds REAL NOT NULL, peak_rss_bytes INTEGER NOT NULL);"
    "CREATE TABLE ops ("
    "  run_id INTEGER NOT NULL, op_index INTEGER NOT NULL,"
    "  name TEXT NOT NULL, kind TEXT NOT NULL, fingerprint TEXT NOT NULL,"
    "  tasks INTEGER NOT NULL, projected_mem INTEGER NOT NULL, estimated_mem INTEGER NOT NULL,"
    "  measured_mem_max INTEGER NOT NULL, measured_mem_median INTEGER NOT NULL,"
    "  measured_mem_p95 INTEGER NOT NULL, seconds REAL NOT NULL,"
    "  task_seconds_max REAL NOT NULL, task_seconds_median REAL NOT NULL,"
    "  task_seconds_p95 REAL NOT NULL, rss_growth_bytes INTEGER NOT NULL,"
    "  PRIMARY KEY (run_id, op_index));"
    "CREATE INDEX ops_by_fingerprint ON ops(fingerprint, run_id);",
    // 2
    "CREATE TABLE tasks ("
    "  run_id INTEGER NOT NULL, op_index INTEGER NOT NULL, task INTEGER NOT NULL,"
    "  worker INTEGER NOT NULL, start_seconds REAL NOT NULL, seconds REAL NOT NULL,"
    "  projected_mem INTEGER NOT NULL, measured_mem INTEGER NOT NULL,"
    "  unaccounted_mem INTEGER NOT NULL);"
    "CREATE INDEX tasks_by_op ON tasks(run_id, op_index);"
    "ALTER TABLE ops ADD COLUMN estimate_from_history INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE ops ADD COLUMN unaccounted_mem_max INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE ops ADD COLUMN unaccounted_mem_median INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE ops ADD COLUMN unaccounted_mem_p95 INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE ops ADD COLUMN footprint_mem_max INTEGER NOT NULL DEFAULT 0;"
    // Version 1 knew no unaccounted memory: a task's footprint was what it measured.
    "UPDATE ops SET footprint_mem_max = measured_mem_max;",
    // 3
    "CREATE TABLE clusters ("
    "  run_id INTEGER PRIMARY KEY, ranks INTEGER NOT NULL,"
    "  bytes_fetched INTEGER NOT NULL, bytes_replicated INTEGER NOT NULL,"
    "  bytes_rebalanced INTEGER NOT NULL, bytes_dropped INTEGER NOT NULL,"
    "  bytes_spilled INTEGER NOT NULL, bytes_gathered INTEGER NOT NULL,"
    "  decisions INTEGER NOT NULL, tasks_moved INTEGER NOT NULL);"
    "CREATE TABLE cluster_ranks ("
    "  run_id INTEGER NOT NULL, rank INTEGER NOT NULL, tasks INTEGER NOT NULL,"
    "  capacity INTEGER NOT NULL, measured_mem_max INTEGER NOT NULL,"
    "  peak_rss_bytes INTEGER NOT NULL, held_bytes_max INTEGER NOT NULL,"
    "  PRIMARY KEY (run_id, rank));",
};

// The schema version this build writes.
inline constexpr std::int64_t kHistorySchemaVersion =
    static_cast<std::int64_t>(kHistoryMigrations.size());

// Brings the database of `connection` from its version up to `target` (at most
// kHistorySchemaVersion) in one write transaction, re-reading the version inside it so
// that two processes opening one file at once migrate it once. Returns the version found
// before migrating. A version above kHistorySchemaVersion is left alone (the caller
// checks for it first). Throws SqliteError.
std::int64_t MigrateHistorySchema(SqliteConnection& connection,
                                  std::int64_t target = kHistorySchemaVersion);

}  // namespace tessera
