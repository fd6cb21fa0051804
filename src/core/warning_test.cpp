#include "tessera/core/warning.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace tessera {
namespace {

TEST(WarningTest, HandlerSeesWarningsAndIsRestored) {
  std::vector<std::string> seen;
  {
    ScopedWarningHandler scope([&](const std::string& w) { seen.push_back(w); });
    Warn("first");
    {
      std::vector<std::string> inner;
      ScopedWarningHandler nested([&](const std::string& w) { inner.push_back(w); });
      Warn("second");
      EXPECT_EQ(inner, std::vector<std::string>{"second"});
    }
    Warn("third");
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"first", "third"}));
  const WarningHandler after = SetWarningHandler(nullptr);
  EXPECT_FALSE(after);  // the default is back
}

TEST(WarningTest, DefaultPrintsToStderr) {
  testing::internal::CaptureStderr();
  Warn("the database is locked");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "tessera: warning: the database is locked\n");
}

TEST(WarningTest, ThrowingHandlerDoesNotStopTheCaller) {
  ScopedWarningHandler scope([](const std::string&) { throw std::runtime_error("boom"); });
  EXPECT_NO_THROW(Warn("ignored"));
}

}  // namespace
}  // namespace tessera
