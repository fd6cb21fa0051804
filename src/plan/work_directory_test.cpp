// Work directories: named after their process, created with a marker; a killed
// process's marked ones are removed, while a live one's, a user's folder or symlink named
// like one, and anything not named like ours are left byte for byte (issue 14).
#include "work_directory.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include "temp_dir.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::planner {
namespace {

namespace fs = std::filesystem;

void WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Every entry under `root` (not following links) with its content or link target: what
// must be the same, byte for byte, after Tessera looked at it.
std::map<std::string, std::string> Snapshot(const fs::path& root) {
  std::map<std::string, std::string> entries;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = fs::relative(it->path(), root).string();
    if (it->is_symlink()) {
      entries[name] = "link to " + fs::read_symlink(it->path()).string();
    } else if (it->is_regular_file()) {
      std::ifstream file(it->path(), std::ios::binary);
      std::ostringstream text;
      text << file.rdbuf();
      entries[name] = "file " + text.str();
    } else {
      entries[name] = "folder";
    }
  }
  return entries;
}

// A work directory under `base` left by a process that is gone: a child creates it (with
// a file inside, as an intermediate) and exits without cleaning up, as a killed run does.
fs::path LeftByAKilledRun(const fs::path& base) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) throw std::runtime_error("pipe failed");
  const pid_t child = fork();
  if (child == 0) {
    close(pipe_ends[0]);
    Spec spec;
    spec.work_dir = base.string();
    const fs::path directory = NewWorkDirectory(spec);
    try {
      CreateWorkDirectory(directory);
      WriteFile(directory / "0.0", "an intermediate chunk");
    } catch (...) {
      _exit(1);
    }
    const std::string name = directory.filename().string();
    if (write(pipe_ends[1], name.data(), name.size()) != static_cast<ssize_t>(name.size()))
      _exit(1);
    _exit(0);
  }
  close(pipe_ends[1]);
  char name[256] = {};
  const ssize_t length = read(pipe_ends[0], name, sizeof(name) - 1);
  close(pipe_ends[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || length <= 0) {
    throw std::runtime_error("the child could not create its work directory");
  }
  return base / std::string(name, static_cast<std::size_t>(length));
}

TEST(WorkDirectoryTest, NamesCarryThisProcess) {
  testing::TempDir base;
  Spec spec;
  spec.work_dir = base.path().string();
  const fs::path mine = NewWorkDirectory(spec);
  EXPECT_EQ(mine.parent_path(), base.path());
  EXPECT_EQ(mine.filename().string().rfind("tessera-" + std::to_string(getpid()) + "-", 0), 0u);
  EXPECT_NE(NewWorkDirectory(spec), mine);
  EXPECT_FALSE(fs::exists(mine));  // only a name
}

TEST(WorkDirectoryTest, RemovesOnlyMarkedDirectoriesOfGoneProcesses) {
  testing::TempDir base;
  Spec spec;
  spec.work_dir = base.path().string();
  const fs::path stale = LeftByAKilledRun(base.path());
  ASSERT_TRUE(fs::exists(stale / kWorkDirectoryMarker));
  ASSERT_TRUE(fs::exists(stale / "0.0"));
  const fs::path mine = NewWorkDirectory(spec);  // a live process's: kept
  CreateWorkDirectory(mine);
  const fs::path gone_unmarked = base.path() / "tessera-999999999-5-1";
  fs::create_directories(gone_unmarked / "a.zarr");
  WriteFile(gone_unmarked / "a.zarr" / "0.0", "user data");
  const fs::path forged = base.path() / "tessera-999999999-5-3";  // a marker of another text
  fs::create_directories(forged);
  WriteFile(fs::path(forged) / kWorkDirectoryMarker, "mine, not Tessera's");
  WriteFile(base.path() / "tessera-999999999-5-2", "not a directory");
  fs::create_directories(base.path() / "tessera-results");
  std::map<std::string, std::string> expected = Snapshot(base.path());
  for (auto it = expected.begin(); it != expected.end();) {
    it = it->first.rfind(stale.filename().string(), 0) == 0 ? expected.erase(it) : ++it;
  }

  const std::vector<fs::path> removed = RemoveStaleWorkDirectories(base.path());
  EXPECT_EQ(removed, std::vector<fs::path>{stale});
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_EQ(Snapshot(base.path()), expected);  // everything else, byte for byte
  EXPECT_TRUE(RemoveStaleWorkDirectories(base.path() / "missing").empty());
}

TEST(WorkDirectoryTest, KeepsADirectoryAnotherMachineMadeInASharedWorkDir) {
  testing::TempDir base;
  const fs::path stale = LeftByAKilledRun(base.path());
  // The same directory as another machine sharing work_dir leaves it: its marker names
  // that machine, whose processes this one cannot see (the pid may well be free here).
  std::ifstream marker_file(stale / kWorkDirectoryMarker, std::ios::binary);
  std::string marker((std::istreambuf_iterator<char>(marker_file)), {});
  marker_file.close();
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  const std::string here = std::string(" on host ") + host + ".";
  const std::size_t at = marker.find(here);
  ASSERT_NE(at, std::string::npos) << marker;
  marker.replace(at, here.size(), " on host another-node-of-the-cluster.");
  WriteFile(stale / kWorkDirectoryMarker, marker);
  const std::map<std::string, std::string> before = Snapshot(base.path());

  EXPECT_TRUE(RemoveStaleWorkDirectories(base.path()).empty());
  EXPECT_EQ(Snapshot(base.path()), before);
}

TEST(WorkDirectoryTest, NeverFollowsNorRemovesASymlinkNamedLikeAStaleDirectory) {
  testing::TempDir base;
  testing::TempDir elsewhere;
  const fs::path user = elsewhere.path() / "results";
  fs::create_directories(user / "sub");
  WriteFile(user / "0.0", "user chunk");
  WriteFile(user / "sub" / "notes.txt", "user notes");
  // A killed run's real, marked directory elsewhere, and a link to it named as it is:
  // the link is not a directory of this base, so neither it nor its target goes.
  const fs::path marked = LeftByAKilledRun(elsewhere.path());
  fs::create_directory_symlink(user, base.path() / "tessera-999999999-7-1");
  fs::create_directory_symlink(marked, base.path() / marked.filename());
  const std::map<std::string, std::string> base_before = Snapshot(base.path());
  const std::map<std::string, std::string> elsewhere_before = Snapshot(elsewhere.path());

  EXPECT_TRUE(RemoveStaleWorkDirectories(base.path()).empty());
  EXPECT_EQ(Snapshot(base.path()), base_before);
  EXPECT_EQ(Snapshot(elsewhere.path()), elsewhere_before);
  // Removing "this process's" directory through such a link does nothing either.
  RemoveWorkDirectory(base.path() / "tessera-999999999-7-1");
  RemoveInsideWorkDirectory(base.path() / "tessera-999999999-7-1" / "sub");
  EXPECT_EQ(Snapshot(elsewhere.path()), elsewhere_before);
}

TEST(WorkDirectoryTest, ATakenNameIsRefusedAndLeftAlone) {
  testing::TempDir base;
  testing::TempDir elsewhere;
  Spec spec;
  spec.work_dir = base.path().string();
  WriteFile(elsewhere.path() / "keep.txt", "user file");
  const fs::path folder = NewWorkDirectory(spec);  // our very name, taken by the user
  fs::create_directories(folder / "a.zarr");
  WriteFile(folder / "a.zarr" / "0.0", "user chunk");
  const fs::path link = NewWorkDirectory(spec);
  fs::create_directory_symlink(elsewhere.path(), link);
  const fs::path file = NewWorkDirectory(spec);
  WriteFile(file, "user file");
  const std::map<std::string, std::string> base_before = Snapshot(base.path());
  const std::map<std::string, std::string> elsewhere_before = Snapshot(elsewhere.path());
  for (const fs::path& taken : {folder, link, file}) {
    SCOPED_TRACE(taken.string());
    try {
      CreateWorkDirectory(taken);
      ADD_FAILURE() << "a taken name was accepted";
    } catch (const StorageError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("the work directory name " + taken.string() + " is taken by"),
                std::string::npos)
          << message;
      EXPECT_NE(message.find("move or delete it"), std::string::npos) << message;
    }
    // Neither an intermediate inside it nor the removals at the end touch it.
    EXPECT_THROW(PrepareInsideWorkDirectory(taken / "x.zarr"), StorageError);
    RemoveInsideWorkDirectory(taken / "a.zarr");
    RemoveWorkDirectory(taken);
  }
  EXPECT_EQ(Snapshot(base.path()), base_before);
  EXPECT_EQ(Snapshot(elsewhere.path()), elsewhere_before);
}

TEST(WorkDirectoryTest, OwnDirectoryIsCreatedOnceMarkedAndRemoved) {
  testing::TempDir base;
  Spec spec;
  spec.work_dir = base.path().string();
  const fs::path mine = NewWorkDirectory(spec);
  CreateWorkDirectory(mine);
  CreateWorkDirectory(mine);  // a second op of the same plan
  EXPECT_TRUE(fs::is_regular_file(mine / kWorkDirectoryMarker));
  EXPECT_EQ(fs::status(mine).permissions() & fs::perms::all, fs::perms::owner_all);
  PrepareInsideWorkDirectory(mine / "rechunk-1.zarr");
  WriteFile(mine / "rechunk-1.zarr" / "0.0", "stale intermediate");
  PrepareInsideWorkDirectory(mine / "rechunk-1.zarr");  // the plan runs again: emptied
  EXPECT_TRUE(fs::is_empty(mine / "rechunk-1.zarr"));
  RemoveInsideWorkDirectory(mine / "rechunk-1.zarr");
  EXPECT_FALSE(fs::exists(mine / "rechunk-1.zarr"));
  RemoveWorkDirectory(mine);
  EXPECT_FALSE(fs::exists(mine));
  EXPECT_TRUE(fs::is_empty(base.path()));
}

// Runs `body` in a child process as the user nobody (tests run as root, which ignores
// permission bits); returns what it wrote to its pipe, "" on success.
std::string AsNobody(const std::function<std::string()>& body) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) throw std::runtime_error("pipe failed");
  const pid_t child = fork();
  if (child == 0) {
    close(pipe_ends[0]);
    std::string result;
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) {
      result = "could not drop privileges";
    } else {
      result = body();
    }
    if (!result.empty() &&
        write(pipe_ends[1], result.data(), result.size()) != static_cast<ssize_t>(result.size())) {
      _exit(2);
    }
    _exit(0);
  }
  close(pipe_ends[1]);
  std::string output;
  char buffer[512];
  for (ssize_t got; (got = read(pipe_ends[0], buffer, sizeof(buffer))) > 0;) {
    output.append(buffer, static_cast<std::size_t>(got));
  }
  close(pipe_ends[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "the child failed";
  return output;
}

TEST(WorkDirectoryTest, BaseMustBeAnExistingWritableFolder) {
  testing::TempDir scratch;
  Spec spec;
  CheckWorkDirectoryBase(spec);  // the system temp dir
  spec.work_dir = scratch.path().string();
  CheckWorkDirectoryBase(spec);
  auto message = [&](const fs::path& base) -> std::string {
    Spec with = spec;
    with.work_dir = base.string();
    try {
      CheckWorkDirectoryBase(with);
    } catch (const InvalidArgument& error) {
      return std::string("InvalidArgument: ") + error.what();
    } catch (const StorageError& error) {
      return std::string("StorageError: ") + error.what();
    }
    return "accepted";
  };
  const fs::path missing = scratch.path() / "missing";
  EXPECT_EQ(message(missing),
            "InvalidArgument: work_dir " + missing.string() +
                " does not exist: create it (mkdir -p " + missing.string() +
                ") or name an existing folder (--work-dir, Spec::work_dir); Tessera does not "
                "create it, so that nothing it made is left behind");
  EXPECT_FALSE(fs::exists(missing));
  const fs::path file = scratch.path() / "file";
  WriteFile(file, "a file");
  EXPECT_EQ(message(file).rfind("InvalidArgument: work_dir " + file.string() +
                                    " is a file, not a folder: name a folder",
                                0),
            0u)
      << message(file);

  // Not writable by an unprivileged user: root-owned 0755 under a 0755 scratch folder.
  const fs::path locked = scratch.path() / "locked";
  fs::create_directory(locked);
  fs::permissions(scratch.path(), fs::perms::owner_all | fs::perms::group_read |
                                      fs::perms::group_exec | fs::perms::others_read |
                                      fs::perms::others_exec);
  fs::permissions(locked, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
  const std::string as_nobody = AsNobody([&] {
    const std::string got = message(locked);
    const std::string expected = "StorageError: work_dir " + locked.string() +
                                 " cannot be written by this user (Permission denied): make it "
                                 "writable (chmod u+wx), or name another folder with --work-dir "
                                 "(Spec::work_dir)";
    return got == expected ? std::string() : got;
  });
  EXPECT_EQ(as_nobody, "");
}

}  // namespace
}  // namespace tessera::planner
