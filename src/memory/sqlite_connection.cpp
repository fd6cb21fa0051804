#include "sqlite_connection.hpp"

#include <limits>

namespace tessera {

void SqliteConnection::Check(sqlite3* db, int result) {
  if (result == SQLITE_OK || result == SQLITE_ROW || result == SQLITE_DONE) return;
  // sqlite3_errmsg describes the connection's last error; without a connection (open
  // failed to allocate one) sqlite3_errstr names the code.
  const char* message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(result);
  throw SqliteError(result & 0xff, message);  // the primary code: extended codes add bits above 8
}

void SqliteStatement::Bind(int parameter, std::int64_t value) {
  SqliteConnection::Check(db_, sqlite3_bind_int64(statement_, parameter, value));
}

void SqliteStatement::Bind(int parameter, double value) {
  SqliteConnection::Check(db_, sqlite3_bind_double(statement_, parameter, value));
}

void SqliteStatement::Bind(int parameter, std::string_view value) {
  if (value.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw SqliteError(SQLITE_TOOBIG, "text too long to store");
  }
  SqliteConnection::Check(db_, sqlite3_bind_text(statement_, parameter, value.data(),
                                                 static_cast<int>(value.size()), SQLITE_TRANSIENT));
}

bool SqliteStatement::Step() {
  const int result = sqlite3_step(statement_);
  SqliteConnection::Check(db_, result);
  return result == SQLITE_ROW;
}

void SqliteStatement::Reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

std::string SqliteStatement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(statement_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)));
}

namespace {

// "file:<path>?immutable=1", the path percent-encoded where a URI gives characters a
// meaning of their own (RFC 3986; SQLite decodes %HH in the path).
std::string ImmutableUri(const std::filesystem::path& path) {
  std::string uri = "file:";
  for (const char c : std::filesystem::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#') {
      constexpr char kHex[] = "0123456789ABCDEF";
      const auto byte = static_cast<unsigned char>(c);
      uri += '%';
      uri += kHex[byte >> 4];
      uri += kHex[byte & 0xf];
    } else {
      uri += c;
    }
  }
  return uri + "?immutable=1";
}

}  // namespace

SqliteConnection::SqliteConnection(const std::filesystem::path& path,
                                   std::chrono::milliseconds busy_timeout, SqliteOpen mode) {
  int flags = mode == SqliteOpen::kCreate      ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
              : mode == SqliteOpen::kReadWrite ? SQLITE_OPEN_READWRITE
                                               : SQLITE_OPEN_READONLY;
  std::string name = path.string();
  if (mode == SqliteOpen::kReadOnlyImmutable) {
    flags |= SQLITE_OPEN_URI;
    name = ImmutableUri(path);
  }
  const int result = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
  if (result != SQLITE_OK) {
    // A failed open still allocates a handle (for its message) that must be closed.
    try {
      Check(db_, result);
    } catch (...) {
      sqlite3_close_v2(db_);
      db_ = nullptr;
      throw;
    }
  }
  sqlite3_extended_result_codes(db_, 1);
  const auto timeout_ms = busy_timeout.count();
  const int timeout = timeout_ms > std::numeric_limits<int>::max()
                          ? std::numeric_limits<int>::max()
                          : static_cast<int>(timeout_ms < 0 ? 0 : timeout_ms);
  sqlite3_busy_timeout(db_, timeout);
}

SqliteConnection::~SqliteConnection() { sqlite3_close_v2(db_); }

void SqliteConnection::Execute(const std::string& sql) {
  Check(db_, sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr));
}

SqliteStatement SqliteConnection::Prepare(std::string_view sql) {
  sqlite3_stmt* statement = nullptr;
  Check(db_,
        sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &statement, nullptr));
  return SqliteStatement(db_, statement);
}

std::int64_t SqliteConnection::PragmaInt(const std::string& pragma) {
  SqliteStatement statement = Prepare("PRAGMA " + pragma);
  return statement.Step() ? statement.Int(0) : 0;
}

SqliteTransaction::SqliteTransaction(SqliteConnection& connection) : connection_(connection) {
  connection_.Execute("BEGIN IMMEDIATE");
}

SqliteTransaction::~SqliteTransaction() {
  if (!open_) return;
  try {
    connection_.Execute("ROLLBACK");
  } catch (const SqliteError&) {
    // The transaction may already be gone (SQLite rolls back on some errors itself).
  }
}

void SqliteTransaction::Commit() {
  connection_.Execute("COMMIT");
  open_ = false;
}

}  // namespace tessera
