#include "tessera/api/reserved_mem.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "tessera/core/errors.hpp"
#include "tessera/memory/process_memory.hpp"

namespace tessera {
namespace {

TEST(ReservedMemTest, IsTheProcessBaselineInWholeMiB) {
  Spec spec;
  spec.executor = "threads";
  spec.max_workers = 2;
  const std::int64_t reserved = measure_reserved_mem(spec);
  EXPECT_EQ(reserved % (1 << 20), 0);
  // At least what the process holds now (it ran inside this process), and far below the
  // peak of a process that touched 256 MiB more: it does not count old peaks.
  EXPECT_GE(reserved, CurrentRssBytes() / 2);
  {
    std::vector<char> big(std::size_t{256} << 20, 1);
    EXPECT_EQ(big.back(), 1);
  }
  const std::int64_t again = measure_reserved_mem(spec);
  if (ResetPeakRss()) {
    EXPECT_LT(again, reserved + (std::int64_t{128} << 20));
  }
}

TEST(ReservedMemTest, RejectsAnUnknownExecutor) {
  Spec spec;
  spec.executor = "cluster";
  EXPECT_THROW(measure_reserved_mem(spec), InvalidArgument);
}

}  // namespace
}  // namespace tessera
