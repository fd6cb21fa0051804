#include "tessera/core/spec.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

TEST(Spec, FromStrings) {
  Spec spec = Spec::from({{"allowed_mem", "400MB"},
                          {"reserved_mem", "100MB"},
                          {"total_mem", "8GB"},
                          {"executor", "sync"},
                          {"max_workers", "3"},
                          {"work_dir", "/tmp/x"}});
  EXPECT_EQ(spec.allowed_mem, 400'000'000);
  EXPECT_EQ(spec.reserved_mem, 100'000'000);
  EXPECT_EQ(spec.total_mem, 8'000'000'000);
  EXPECT_EQ(spec.executor, "sync");
  EXPECT_EQ(spec.max_workers, 3);
  EXPECT_EQ(spec.work_dir, "/tmp/x");
  EXPECT_EQ(spec.effective_total_mem(), 8'000'000'000);
  EXPECT_EQ(spec.effective_max_workers(), 3);
}

TEST(Spec, SettersTakeSizeStrings) {
  Spec spec;
  spec.set_allowed_mem("2GiB").set_reserved_mem("1KiB");
  EXPECT_EQ(spec.allowed_mem, 2LL << 30);
  EXPECT_EQ(spec.reserved_mem, 1024);
  EXPECT_NO_THROW(spec.validate());
}

TEST(Spec, ValidationErrors) {
  EXPECT_THROW(Spec::from({{"allowed_mem", "100MB"}, {"reserved_mem", "100MB"}}), InvalidArgument);
  EXPECT_THROW(Spec::from({{"allowed_mem", "100MB"}, {"reserved_mem", "200MB"}}), InvalidArgument);
  EXPECT_THROW(Spec::from({{"reserved_mem", "1MB"}}), InvalidArgument);  // allowed_mem unset
  EXPECT_THROW(Spec::from({{"allowed_mem", "1GB"}, {"total_mem", "500MB"}}), InvalidArgument);
  EXPECT_THROW(Spec::from({{"allowed_mem", "1GB"}, {"executor", "dask"}}), InvalidArgument);
  EXPECT_THROW(Spec::from({{"allowed_mem", "1GB"}, {"max_workers", "-2"}}), InvalidArgument);
  EXPECT_THROW(Spec::from({{"allowed_mem", "1GB"}, {"max_workers", "2x"}}), InvalidArgument);
  EXPECT_THROW(Spec::from({{"allowed_memory", "1GB"}}), InvalidArgument);
  EXPECT_THROW(Spec::from({{"allowed_mem", "-1MB"}}), InvalidArgument);
  try {
    Spec::from({{"allowed_mem", "100MB"}, {"reserved_mem", "200MB"}});
  } catch (const InvalidArgument& error) {
    EXPECT_STREQ(error.what(),
                 "Spec allowed_mem (100.0 MB) must exceed reserved_mem (200.0 MB): reserved_mem "
                 "is part of every task's budget");
  }
}

TEST(Spec, DetectsTotalMemFromCgroupOrPhysicalRam) {
  const std::int64_t physical =
      static_cast<std::int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  const std::int64_t detected = detect_total_mem();
  EXPECT_GT(detected, 0);
  EXPECT_LE(detected, physical);
  Spec spec;
  EXPECT_EQ(spec.effective_total_mem(), detected);
}

}  // namespace
}  // namespace tessera
