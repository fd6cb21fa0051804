// TempDir: a fresh directory under the system temp dir, removed with its contents when
// the object is destroyed. For tests that need a real filesystem.
//
//   tessera::testing::TempDir dir("zarr");   // /tmp/tessera-zarr-XXXXXX
//   auto store = DirectoryStore::Open(dir.path() / "a.zarr");
#pragma once

#include <filesystem>
#include <string_view>

namespace tessera::testing {

class TempDir {
 public:
  // Throws std::runtime_error when the directory cannot be created.
  explicit TempDir(std::string_view tag = "test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace tessera::testing
