#include "history_schema.hpp"

#include <string>

namespace tessera {

std::int64_t MigrateHistorySchema(SqliteConnection& connection, std::int64_t target) {
  SqliteTransaction transaction(connection);
  const std::int64_t found = connection.PragmaInt("user_version");
  for (std::int64_t version = found; version < target; ++version) {
    connection.Execute(kHistoryMigrations[static_cast<std::size_t>(version)]);
  }
  if (found < target) {
    connection.Execute("PRAGMA user_version = " + std::to_string(target));
  }
  transaction.Commit();
  return found;
}

}  // namespace tessera
