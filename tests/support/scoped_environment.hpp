// ScopedEnvironment: sets (or unsets) one environment variable for a scope and puts back
// what was there. Tests that check what a setting does pin it with one, so that a suite
// rerun under a configuration (TESSERA_DISABLE_PASSES=fusion, ...) does not change what
// they compare. Not thread-safe (setenv): use it where no other thread reads the
// environment. Header-only.
//
//   const testing::ScopedEnvironment passes("TESSERA_DISABLE_PASSES", std::nullopt);
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace tessera::testing {

class ScopedEnvironment {
 public:
  ScopedEnvironment(std::string name, const std::optional<std::string>& value)
      : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str()); old != nullptr) old_ = old;
    Set(value);
  }
  ~ScopedEnvironment() { Set(old_); }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  void Set(const std::optional<std::string>& value) const {
    if (value) {
      setenv(name_.c_str(), value->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace tessera::testing
