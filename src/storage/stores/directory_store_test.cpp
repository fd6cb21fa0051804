// DirectoryStore-specific behaviour: on-disk layout, atomic writes, temporaries,
// opening, and keys that try to leave the root. The Store contract itself is tested
// by store_conformance_test.cpp.
#include "tessera/storage/directory_store.hpp"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <future>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;

using testing::TempDir;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteFile(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

std::string Text(const Buffer& buffer) {
  return std::string(reinterpret_cast<const char*>(buffer.data()),
                     static_cast<std::size_t>(buffer.size()));
}

// Every file under `root`, relative, sorted (hidden and temporary ones included).
std::vector<std::string> FilesUnder(const fs::path& root) {
  std::vector<std::string> files;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) files.push_back(entry.path().lexically_relative(root).string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class DirectoryStoreTest : public ::testing::Test {
 protected:
  fs::path root() const { return temp_.path() / "array.zarr"; }
  std::shared_ptr<DirectoryStore> Open() { return DirectoryStore::Open(root()); }

  TempDir temp_;
};

TEST_F(DirectoryStoreTest, OneFilePerKeyInZarrLayout) {
  auto store = Open();
  store->Set(".zarray", std::string_view("{}"));
  store->Set("0.0", std::string_view("chunk"));
  store->Set("sub/1/2", std::string_view("nested"));
  EXPECT_EQ(FilesUnder(root()), (std::vector<std::string>{".zarray", "0.0", "sub/1/2"}));
  EXPECT_EQ(ReadFile(root() / "sub/1/2"), "nested");
  EXPECT_EQ(store->DescribeKey("0.0"), (root() / "0.0").string());
  EXPECT_EQ(store->Describe(), root().string());
}

TEST_F(DirectoryStoreTest, ReadsFilesWrittenByOthersAndPersistsAcrossOpens) {
  fs::create_directories(root() / "g");
  WriteFile(root() / "g" / ".zattrs", "{\"a\": 1}");
  auto store = Open();
  EXPECT_EQ(Text(*store->Get("g/.zattrs")), "{\"a\": 1}");
  store->Set("x", std::string_view("kept"));
  auto reopened = DirectoryStore::Open(root(), {.create = false});
  EXPECT_EQ(Text(*reopened->Get("x")), "kept");
  EXPECT_EQ(reopened->List(""), (std::vector<std::string>{"g/.zattrs", "x"}));
}

TEST_F(DirectoryStoreTest, NoTemporaryRemainsAfterSet) {
  auto store = DirectoryStore::Open(root(), {.create = true, .fsync = true});
  for (int round = 0; round < 5; ++round) {
    store->Set("a/0.0", std::string_view("value " + std::to_string(round)));
    store->Set(".zarray", std::string_view("meta"));
  }
  EXPECT_EQ(FilesUnder(root()), (std::vector<std::string>{".zarray", "a/0.0"}));
}

TEST_F(DirectoryStoreTest, TemporariesAreNeverListedAndRemovedWhenStale) {
  auto store = Open();
  store->Set("0.0", std::string_view("good"));
  store->Set("g/0.0", std::string_view("good too"));
  // What writers killed mid-write (another process, pid 999999) leave behind.
  WriteFile(root() / ".0.0.tessera-tmp-999999-0", "torn");
  WriteFile(root() / "g" / ".0.0.tessera-tmp-999999-7", "torn");
  WriteFile(root() / "g" / "..zarray.tessera-tmp-999999-8", "torn");
  EXPECT_EQ(store->List(""), (std::vector<std::string>{"0.0", "g/0.0"}));
  EXPECT_EQ(store->List("."), std::vector<std::string>{});
  EXPECT_EQ(store->List("g/."), std::vector<std::string>{});
  EXPECT_EQ(store->RemoveStaleTemporaries(), 3);
  EXPECT_EQ(FilesUnder(root()), (std::vector<std::string>{"0.0", "g/0.0"}));
  EXPECT_EQ(store->RemoveStaleTemporaries(), 0);
}

TEST_F(DirectoryStoreTest, TemporariesOfThisProcessAreLeftForTheirWriters) {
  auto store = Open();
  std::string own = ".k.tessera-tmp-" + std::to_string(::getpid()) + "-123456";
  WriteFile(root() / own, "in flight");
  EXPECT_EQ(store->RemoveStaleTemporaries(), 0);
  EXPECT_TRUE(fs::exists(root() / own));
  EXPECT_TRUE(store->List("").empty());
  // A killed run may have had this pid (pids are reused): when no Set of this process
  // runs, they go too.
  EXPECT_EQ(store->RemoveStaleTemporaries(/*including_this_process=*/true), 1);
  EXPECT_FALSE(fs::exists(root() / own));
}

// Every file change goes through Options::file_ops: a failing write, fsync or rename
// leaves the old value and no temporary; a failing removal keeps the key.
TEST_F(DirectoryStoreTest, FailingFileOpsLeaveTheOldValueAndNoTemporary) {
  class Failing : public FileOps {
   public:
    std::string failing;
    int Write(int fd, const std::byte* data, std::size_t size, std::size_t* written) override {
      return failing == "write" ? ENOSPC : FileOps::Write(fd, data, size, written);
    }
    int Sync(int fd) override { return failing == "fsync" ? EIO : FileOps::Sync(fd); }
    int Rename(const fs::path& from, const fs::path& to) override {
      return failing == "rename" ? EIO : FileOps::Rename(from, to);
    }
    int Unlink(const fs::path& path) override {
      return failing == "unlink" ? EACCES : FileOps::Unlink(path);
    }
  };
  auto ops = std::make_shared<Failing>();
  auto store = DirectoryStore::Open(root(), {.create = true, .fsync = true, .file_ops = ops});
  store->Set("0.0", std::string_view("old"));
  for (const char* failing : {"write", "fsync", "rename"}) {
    ops->failing = failing;
    try {
      store->Set("0.0", std::string_view("new"));
      ADD_FAILURE() << failing << " failing: Set succeeded";
    } catch (const StorageError& error) {
      EXPECT_NE(std::string(error.what()).find("0.0"), std::string::npos) << error.what();
    }
    EXPECT_EQ(Text(*store->Get("0.0")), "old") << failing;
    EXPECT_EQ(FilesUnder(root()), std::vector<std::string>{"0.0"}) << failing;
  }
  ops->failing = "unlink";
  EXPECT_THROW(store->Erase("0.0"), StorageError);
  EXPECT_EQ(Text(*store->Get("0.0")), "old");
}

TEST_F(DirectoryStoreTest, TornWriteDoesNotAffectGet) {
  auto store = Open();
  store->Set("0.0", std::string_view("the complete value"));
  // A crashed writer got halfway through replacing the value.
  WriteFile(root() / ".0.0.tessera-tmp-424242-3", "the comp");
  EXPECT_EQ(Text(*store->Get("0.0")), "the complete value");
  EXPECT_EQ(store->SizeOf("0.0"), 18);
  EXPECT_EQ(store->List(""), std::vector<std::string>{"0.0"});
  // The next write goes through regardless.
  store->Set("0.0", std::string_view("new"));
  EXPECT_EQ(Text(*store->Get("0.0")), "new");
}

TEST_F(DirectoryStoreTest, KeysNamedLikeTemporariesAreRejected) {
  auto store = Open();
  EXPECT_THROW(store->Set(".0.0.tessera-tmp-1-2", std::string_view("x")), InvalidArgument);
  EXPECT_THROW(store->Get("a/.b.tessera-tmp-1-2"), InvalidArgument);
}

TEST_F(DirectoryStoreTest, OpenWithoutCreateOnMissingRootThrows) {
  try {
    DirectoryStore::Open(root(), {.create = false});
    FAIL() << "opened a missing root";
  } catch (const StorageError& error) {
    EXPECT_NE(std::string(error.what()).find(root().string()), std::string::npos) << error.what();
  }
  EXPECT_FALSE(fs::exists(root()));
}

TEST_F(DirectoryStoreTest, OpenCreatesMissingParents) {
  auto store = DirectoryStore::Open(temp_.path() / "a" / "b" / "c.zarr");
  EXPECT_TRUE(fs::is_directory(temp_.path() / "a" / "b" / "c.zarr"));
  EXPECT_EQ(store->root(), temp_.path() / "a" / "b" / "c.zarr");
}

TEST_F(DirectoryStoreTest, RootWithTrailingSlashIsNormalized) {
  auto store = DirectoryStore::Open(root().string() + "/");
  EXPECT_EQ(store->root(), root());
  EXPECT_EQ(store->DescribeKey(".zarray"), root().string() + "/.zarray");
}

TEST_F(DirectoryStoreTest, RootThatIsAFileThrows) {
  WriteFile(root(), "not a directory");
  EXPECT_THROW(DirectoryStore::Open(root()), StorageError);
  EXPECT_THROW(DirectoryStore::Open(root(), {.create = false}), StorageError);
}

TEST_F(DirectoryStoreTest, KeysCannotLeaveTheRoot) {
  auto store = Open();
  for (const std::string& key :
       std::vector<std::string>{"../x", "/etc/passwd", "a/../../x", "..", "../array.zarr/x",
                                "..\\x", std::string("../x\0", 5)}) {
    SCOPED_TRACE(key);
    EXPECT_THROW(store->Set(key, std::string_view("escaped")), InvalidArgument);
    EXPECT_THROW(store->Get(key), InvalidArgument);
    EXPECT_THROW(store->Erase(key), InvalidArgument);
    EXPECT_THROW(store->SizeOf(key), InvalidArgument);
  }
  // Nothing was created beside or inside the root.
  EXPECT_EQ(FilesUnder(temp_.path()), std::vector<std::string>{});
  EXPECT_FALSE(fs::exists(temp_.path() / "x"));
}

TEST_F(DirectoryStoreTest, SymlinkedComponentInsideRootIsFollowed) {
  auto store = Open();
  fs::create_directories(temp_.path() / "elsewhere");
  fs::create_directory_symlink(temp_.path() / "elsewhere", root() / "linked");
  store->Set("linked/0.0", std::string_view("through the link"));
  EXPECT_EQ(ReadFile(temp_.path() / "elsewhere" / "0.0"), "through the link");
  EXPECT_EQ(Text(*store->Get("linked/0.0")), "through the link");
  // Links to directories are not walked by List (a cycle would never end).
  fs::create_directory_symlink(root(), root() / "cycle");
  EXPECT_TRUE(store->List("").empty());
}

TEST_F(DirectoryStoreTest, SymlinkedFileIsListed) {
  auto store = Open();
  WriteFile(temp_.path() / "target", "linked value");
  fs::create_symlink(temp_.path() / "target", root() / "0.0");
  fs::create_symlink(temp_.path() / "missing", root() / "dangling");
  EXPECT_EQ(store->List(""), std::vector<std::string>{"0.0"});
  EXPECT_EQ(Text(*store->Get("0.0")), "linked value");
  EXPECT_FALSE(store->Get("dangling").has_value());
}

TEST_F(DirectoryStoreTest, DirectoryIsNotAKey) {
  auto store = Open();
  store->Set("a/b", std::string_view("x"));
  EXPECT_FALSE(store->Get("a").has_value());
  EXPECT_FALSE(store->SizeOf("a").has_value());
  EXPECT_FALSE(store->Erase("a"));
  // Writing a key where a directory stands fails as an I/O error naming the path.
  try {
    store->Set("a", std::string_view("y"));
    FAIL();
  } catch (const StorageError& error) {
    EXPECT_NE(std::string(error.what()).find((root() / "a").string()), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(FilesUnder(root()), std::vector<std::string>{"a/b"});
}

// A pinned value is its file as opened: a value renamed over it later is not mixed in
// (a shard's index and inner chunks come from one version), while the store itself
// reads the new one.
TEST_F(DirectoryStoreTest, PinnedValueKeepsReadingTheVersionItOpened) {
  auto store = Open();
  store->Set("shard", std::string_view("old-value!"));
  const PinnedValueStore pinned(*store, "shard");
  store->Set("shard", std::string_view("NEW"));
  std::string out(3, '?');
  const auto bytes = std::as_writable_bytes(std::span<char>(out.data(), out.size()));
  EXPECT_EQ(pinned.ReadRange("shard", -3, bytes), 10);
  EXPECT_EQ(out, "ue!");
  EXPECT_EQ(pinned.SizeOf("shard"), 10);
  EXPECT_EQ(store->ReadRange("shard", 0, bytes), 3);
  EXPECT_EQ(out, "NEW");
  // A directory is not a value: nothing is opened, and it reads as absent.
  store->Set("a/b", std::string_view("x"));
  EXPECT_EQ(store->OpenForReads("a"), nullptr);
  EXPECT_FALSE(PinnedValueStore(*store, "a").SizeOf("a").has_value());
}

TEST_F(DirectoryStoreTest, FifoAtAKeyIsAStorageErrorAndNeverBlocks) {
  auto store = Open();
  const fs::path fifo = root() / "0.0";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  // Get runs on another thread so that a Get blocked in open() fails the test instead
  // of hanging it: opening the FIFO for writing then releases it.
  auto get = std::async(std::launch::async, [&store]() -> std::string {
    try {
      store->Get("0.0");
    } catch (const StorageError& error) {
      return error.what();
    }
    return "(no StorageError)";
  });
  if (get.wait_for(std::chrono::seconds(10)) == std::future_status::timeout) {
    ADD_FAILURE() << "Get blocked on a FIFO";
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    get.wait();
    if (writer >= 0) ::close(writer);
  }
  const std::string message = get.get();
  EXPECT_NE(message.find(fifo.string()), std::string::npos) << message;
  EXPECT_NE(message.find("FIFO"), std::string::npos) << message;
  EXPECT_NE(message.find("regular file"), std::string::npos) << message;
  // SizeOf (and so Contains) agrees: the key is neither a value nor absent.
  EXPECT_THROW(store->SizeOf("0.0"), StorageError);
  // It is no key for List, and Erase removes it.
  EXPECT_TRUE(store->List("").empty());
  EXPECT_TRUE(store->Erase("0.0"));
  EXPECT_FALSE(store->Get("0.0").has_value());
}

TEST_F(DirectoryStoreTest, KeyBelowAFileFailsWithStorageError) {
  auto store = Open();
  store->Set("a", std::string_view("file"));
  EXPECT_THROW(store->Set("a/b", std::string_view("x")), StorageError);
  EXPECT_FALSE(store->Get("a/b").has_value());
  EXPECT_FALSE(store->SizeOf("a/b").has_value());
  EXPECT_FALSE(store->Erase("a/b"));
}

TEST_F(DirectoryStoreTest, IoErrorsNameThePathAndTheReason) {
  auto store = Open();
  // Longer than NAME_MAX (255 on Linux), so the system refuses the name.
  const std::string key(300, 'k');
  try {
    store->Set(key, std::string_view("x"));
    FAIL();
  } catch (const StorageError& error) {
    std::string message = error.what();
    EXPECT_NE(message.find(root().string()), std::string::npos) << message;
    EXPECT_NE(message.find("too long"), std::string::npos) << message;
  }
  EXPECT_THROW(store->Get(key), StorageError);
  EXPECT_THROW(store->SizeOf(key), StorageError);
}

// A file whose mode forbids reading: the error names the file and the cause. Root
// reads files whatever their mode, and CI runs as root, so the reads run in a child
// process that drops to nobody (65534) first; a readable file beside it is the control
// that shows the mode, not the folder, is what stops the read.
TEST_F(DirectoryStoreTest, UnreadableFileIsAStorageError) {
  auto store = Open();
  store->Set("secret", std::string_view("x"));
  store->Set("open", std::string_view("y"));
  fs::permissions(root() / "secret", fs::perms::none);
  fs::permissions(root() / "open",
                  fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  // nobody must reach the folder: mkdtemp made the temporary one 0700.
  for (const fs::path& folder : {temp_.path(), root()}) {
    fs::permissions(folder, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
  }
  const std::string path = (root() / "secret").string();
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0) << std::strerror(errno);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0) << std::strerror(errno);
  if (child == 0) {
    // Exit codes: 0 the read failed as it should, 10 privileges could not be dropped,
    // 11 the control could not be read, 12 the secret was read, 13 a wrong error type.
    // The error's message goes back through the pipe.
    ::close(pipe_fds[0]);
    int code = 0;
    std::string message;
    if (::geteuid() == 0 &&
        (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)) {
      ::_exit(10);
    }
    try {
      const std::optional<Buffer> control = store->Get("open");
      if (!control || Text(*control) != "y") ::_exit(11);
    } catch (const std::exception& error) {
      message = error.what();
      code = 11;
    }
    if (code == 0) {
      try {
        store->Get("secret");
        code = 12;
      } catch (const StorageError& error) {
        message = error.what();
      } catch (const std::exception& error) {
        message = error.what();
        code = 13;
      }
    }
    const ssize_t written = ::write(pipe_fds[1], message.data(), message.size());
    ::_exit(written == static_cast<ssize_t>(message.size()) ? code : 14);
  }
  ::close(pipe_fds[1]);
  std::string message;
  char chunk[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], chunk, sizeof chunk)) > 0;)
    message.append(chunk, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child did not exit: status " << status;
  ASSERT_EQ(WEXITSTATUS(status), 0) << "child message: " << message;
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find(std::strerror(EACCES)), std::string::npos) << message;
  // The file is as it was: the failed read changed nothing.
  fs::permissions(root() / "secret", fs::perms::owner_read);
  EXPECT_EQ(ReadFile(root() / "secret"), "x");
}

}  // namespace
}  // namespace tessera
