// Work directories: named after their process; a killed process's are removed, live
// ones and anything not named like ours are kept.
#include "work_directory.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "temp_dir.hpp"

namespace tessera {
namespace {

TEST(WorkDirectoryTest, RemovesOnlyDirectoriesOfGoneProcesses) {
  testing::TempDir base;
  Spec spec;
  spec.work_dir = base.path().string();
  const std::filesystem::path mine = NewWorkDirectory(spec);
  EXPECT_EQ(mine.parent_path(), base.path());
  EXPECT_EQ(mine.filename().string().rfind("tessera-" + std::to_string(getpid()) + "-", 0), 0u);
  const std::filesystem::path gone = base.path() / "tessera-999999999-5-1";
  const std::filesystem::path reused_pid =  // our pid, another start time: a killed run
      base.path() / ("tessera-" + std::to_string(getpid()) + "-1-3");
  const std::filesystem::path other = base.path() / "tessera-results";
  const std::filesystem::path file = base.path() / "tessera-999999999-5-2";
  for (const auto& directory : {mine, gone, reused_pid, other}) {
    std::filesystem::create_directories(directory / "a.zarr");
  }
  std::ofstream(file) << "not a directory";
  const std::vector<std::filesystem::path> removed = RemoveStaleWorkDirectories(base.path());
  EXPECT_EQ(removed.size(), 2u);
  EXPECT_TRUE(std::filesystem::exists(mine));
  EXPECT_FALSE(std::filesystem::exists(gone));
  EXPECT_FALSE(std::filesystem::exists(reused_pid));
  EXPECT_TRUE(std::filesystem::exists(other));
  EXPECT_TRUE(std::filesystem::exists(file));
  EXPECT_TRUE(RemoveStaleWorkDirectories(base.path() / "missing").empty());
}

}  // namespace
}  // namespace tessera
