#include "temp_dir.hpp"

#include <stdlib.h>

#include <stdexcept>
#include <string>
#include <system_error>

namespace tessera::testing {

TempDir::TempDir(std::string_view tag) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / ("tessera-" + std::string(tag) + "-XXXXXX"))
          .string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed for " + pattern);
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace tessera::testing
