#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/warning.hpp"
#include "tessera/memory/history.hpp"

namespace tessera {
namespace {

using testing::TempDir;

std::string MessageOf(const std::function<void()>& call) {
  try {
    call();
  } catch (const StorageError& error) {
    return error.what();
  }
  return "(no StorageError)";
}

OpHistory Op(int index, std::string name, std::string kind, std::string fingerprint) {
  OpHistory op;
  op.index = index;
  op.name = std::move(name);
  op.kind = std::move(kind);
  op.fingerprint = std::move(fingerprint);
  return op;
}

TEST(RecordedHistory, ReadsWhatARunRecorded) {
  TempDir directory;
  const std::filesystem::path path = directory.path() / "history.sqlite";
  {
    const std::shared_ptr<HistoryDatabase> writer = HistoryDatabase::Open(path);
    RunHistory run;
    run.label = "compute";
    const std::int64_t id = writer->BeginRun(run);
    writer->RecordOp(id, Op(0, "add-1", "elementwise", "abc123"), {});
    writer->FinishRun(id, "ok", 1.5, 1000);
  }
  const std::shared_ptr<HistoryDatabase> history = OpenRecordedHistory(path);
  const std::vector<RunHistory> runs = history->RecentRuns(10);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].label, "compute");
  ASSERT_EQ(runs[0].ops.size(), 1u);
  EXPECT_EQ(runs[0].ops[0].name, "add-1");
  EXPECT_NO_THROW(CheckStillReadable(*history));
}

TEST(RecordedHistory, MissingFileIsNeverCreated) {
  TempDir directory;
  const std::filesystem::path path = directory.path() / "none.sqlite";
  const std::string message = MessageOf([&] { OpenRecordedHistory(path, "--db PATH"); });
  EXPECT_EQ(message, "no history yet at " + path.string() +
                         ": run a computation first (runs are recorded unless TESSERA_HISTORY "
                         "is off), or name another database with --db PATH");
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(RecordedHistory, FolderAndDamagedFileSayWhatToDo) {
  TempDir directory;
  EXPECT_EQ(MessageOf([&] { OpenRecordedHistory(directory.path()); }),
            directory.path().string() +
                " is a folder, not a history database: name the database file with " +
                std::string(kNameHistoryInSpec) + " or TESSERA_HISTORY");
  const std::filesystem::path damaged = directory.path() / "damaged.sqlite";
  std::ofstream(damaged) << std::string(4096, 'x');  // no SQLite header
  std::vector<std::string> warnings;
  ScopedWarningHandler capture([&](const std::string& warning) { warnings.push_back(warning); });
  EXPECT_NE(
      MessageOf([&] {
        OpenRecordedHistory(damaged, "--db PATH");
      }).find("cannot read the history database " + damaged.string() + " (see the warning above)"),
      std::string::npos);
  EXPECT_FALSE(warnings.empty());
}

TEST(RecordedHistory, OpsMatchNameKindOrFingerprintPrefix) {
  RunHistory run;
  run.ops = {Op(0, "add-1", "elementwise", "abc123"), Op(1, "rechunk-2", "rechunk", "def456"),
             Op(2, "mul-3", "elementwise", "abd789")};
  const auto names = [&run](std::string_view filter) {
    std::vector<std::string> matched;
    for (const OpHistory& op : OpsMatching(run, filter)) matched.push_back(op.name);
    return matched;
  };
  EXPECT_EQ(names(""), (std::vector<std::string>{"add-1", "rechunk-2", "mul-3"}));
  EXPECT_EQ(names("elementwise"), (std::vector<std::string>{"add-1", "mul-3"}));
  EXPECT_EQ(names("rechunk-2"), std::vector<std::string>{"rechunk-2"});
  EXPECT_EQ(names("ab"), (std::vector<std::string>{"add-1", "mul-3"}));
  EXPECT_TRUE(names("zzz").empty());
}

}  // namespace
}  // namespace tessera
