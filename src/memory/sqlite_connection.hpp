// A thin RAII face of the SQLite C API for the history database: a connection, its
// prepared statements and transactions. Every failure throws SqliteError carrying
// SQLite's result code and message; the caller (HistoryDatabase) turns it into one
// warning, so nothing here decides what a failure means to the user.
//
//   SqliteConnection db(path, std::chrono::seconds(5));   // opens or creates the file
//   db.Execute("PRAGMA journal_mode=WAL");
//   SqliteStatement insert = db.Prepare("INSERT INTO runs(label) VALUES (?)");
//   insert.Bind(1, "compute");
//   insert.Step();
//
// Not thread-safe: one thread at a time per connection (HistoryDatabase holds a mutex).
// A statement must not outlive its connection.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tessera {

// A failed SQLite call: `code` is the primary result code (SQLITE_BUSY, SQLITE_NOTADB,
// ...), what() is SQLite's message ("file is not a database").
class SqliteError : public std::runtime_error {
 public:
  SqliteError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, sqlite3_stmt* statement) : db_(db), statement_(statement) {}
  ~SqliteStatement() { sqlite3_finalize(statement_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  // Parameters are numbered from 1, as in SQLite.
  void Bind(int parameter, std::int64_t value);
  void Bind(int parameter, int value) { Bind(parameter, std::int64_t{value}); }
  void Bind(int parameter, double value);
  void Bind(int parameter, std::string_view value);
  // Binds `values` to parameters 1, 2, ... in order.
  template <typename... Values>
  void BindAll(const Values&... values) {
    int parameter = 0;
    (Bind(++parameter, values), ...);
  }
  // Runs one step: true when a row is ready, false when done.
  bool Step();
  // Readies the statement to run again with new bindings.
  void Reset();

  // Columns of the current row, numbered from 0.
  std::int64_t Int(int column) const { return sqlite3_column_int64(statement_, column); }
  double Double(int column) const { return sqlite3_column_double(statement_, column); }
  std::string Text(int column) const;

 private:
  sqlite3* db_;  // owned by the connection
  sqlite3_stmt* statement_;
};

// How a connection opens its file.
enum class SqliteOpen {
  kCreate,     // read and write, creating a missing file
  kReadWrite,  // read and write an existing file
  kReadOnly,   // read an existing file, never write it
  // Read an existing file that nobody can be writing, without SQLite's shared-memory
  // index or locks (URI immutable=1): for a WAL database in a folder this process cannot
  // write, where SQLite cannot create the index a plain read-only open needs.
  kReadOnlyImmutable,
};

class SqliteConnection {
 public:
  // Opens `path` as `mode` says. Waits up to `busy_timeout` for another connection's lock
  // before failing with SQLITE_BUSY.
  SqliteConnection(const std::filesystem::path& path, std::chrono::milliseconds busy_timeout,
                   SqliteOpen mode = SqliteOpen::kCreate);
  ~SqliteConnection();
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  // Runs one or more statements that return no rows needed by the caller.
  void Execute(const std::string& sql);
  SqliteStatement Prepare(std::string_view sql);
  // The value of a pragma that returns one integer ("user_version").
  std::int64_t PragmaInt(const std::string& pragma);
  std::int64_t LastInsertRowid() const { return sqlite3_last_insert_rowid(db_); }

  // Throws SqliteError for `result` when it is not SQLITE_OK/ROW/DONE; `db` (may be
  // null) gives the message.
  static void Check(sqlite3* db, int result);

 private:
  sqlite3* db_ = nullptr;
};

// BEGIN IMMEDIATE (takes the write lock now, waiting up to the busy timeout) ... COMMIT;
// destroyed without Commit() it rolls back.
class SqliteTransaction {
 public:
  explicit SqliteTransaction(SqliteConnection& connection);
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;
  void Commit();

 private:
  SqliteConnection& connection_;
  bool open_ = true;
};

}  // namespace tessera
