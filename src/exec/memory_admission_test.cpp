#include "memory_admission.hpp"

#include <gtest/gtest.h>

#include <string>

namespace tessera::exec {

using planner::ExecutableOp;
namespace {

constexpr std::int64_t kMB = 1'000'000;

TEST(MemoryAdmission, AdmitsTasksWhileTheirCostsFit) {
  MemoryAdmission pool(1000 * kMB);
  EXPECT_TRUE(pool.Fits(400 * kMB));
  pool.Admit(400 * kMB);
  EXPECT_TRUE(pool.Fits(400 * kMB));
  pool.Admit(400 * kMB);
  EXPECT_FALSE(pool.Fits(400 * kMB));  // 1200 MB > 1000 MB
  EXPECT_TRUE(pool.Fits(200 * kMB));   // exactly what is left
  EXPECT_EQ(pool.admitted(), 800 * kMB);
  EXPECT_EQ(pool.running(), 2);
  pool.Release(400 * kMB);
  EXPECT_TRUE(pool.Fits(400 * kMB));
  pool.Admit(400 * kMB);
  pool.Release(400 * kMB);
  pool.Release(400 * kMB);
  EXPECT_EQ(pool.admitted(), 0);
  EXPECT_EQ(pool.running(), 0);
  EXPECT_EQ(pool.max_running(), 2);
  EXPECT_EQ(pool.max_admitted(), 800 * kMB);
}

TEST(MemoryAdmission, ATaskLargerThanThePoolRunsAlone) {
  MemoryAdmission pool(1000 * kMB);
  EXPECT_TRUE(pool.Fits(3000 * kMB));  // nothing runs: it may start rather than never
  pool.Admit(3000 * kMB);
  EXPECT_FALSE(pool.Fits(1));  // nothing joins it
  pool.Release(3000 * kMB);
  pool.Admit(1);
  EXPECT_FALSE(pool.Fits(3000 * kMB));  // and it waits for the pool to empty
  EXPECT_EQ(pool.max_admitted(), 3000 * kMB);
  EXPECT_EQ(pool.max_running(), 1);
}

TEST(MemoryAdmission, AnEmptyPoolRunsOneTaskAtATime) {
  MemoryAdmission pool(0);
  EXPECT_TRUE(pool.Fits(1));
  pool.Admit(1);
  EXPECT_FALSE(pool.Fits(1));
}

class SizedOp : public ExecutableOp {
 public:
  explicit SizedOp(std::int64_t projected) { info_.projected_mem = projected; }
  OpInfo& mutable_info() { return info_; }
  const OpInfo& info() const override { return info_; }
  std::int64_t projected_mem(std::int64_t task) const override {
    return info_.projected_mem - task;  // later tasks project a little less
  }
  std::string DescribeTask(std::int64_t) const override { return "block"; }
  void Prepare() override {}
  bool IsTaskDone(std::int64_t) const override { return false; }
  void RunTask(std::int64_t) const override {}
  void Commit() override {}
  void Release() override {}

 private:
  OpInfo info_;
};

TEST(TaskCost, IsTheTasksProjectionBeyondReservedMem) {
  SizedOp op(400 * kMB + 100);
  EXPECT_EQ(TaskCost(op.info(), op.projected_mem(0), 100), 400 * kMB);
  EXPECT_EQ(TaskCost(op.info(), op.projected_mem(7), 100),
            400 * kMB - 7);  // per task, not the op's largest
  EXPECT_EQ(TaskCost(op.info(), op.projected_mem(0), 0), 400 * kMB + 100);
}

TEST(TaskCost, CountsWhatHistoryLearnedWhenLarger) {
  SizedOp op(100 * kMB);
  op.mutable_info().estimated_mem = 250 * kMB;
  EXPECT_EQ(TaskCost(op.info(), op.projected_mem(0), 0),
            100 * kMB);  // an estimate not from history is ignored
  op.mutable_info().estimate_from_history = true;
  EXPECT_EQ(TaskCost(op.info(), op.projected_mem(0), 10 * kMB), 240 * kMB);
  op.mutable_info().estimated_mem = 50 * kMB;  // the projection is larger: it counts
  EXPECT_EQ(TaskCost(op.info(), op.projected_mem(0), 10 * kMB), 90 * kMB);
}

TEST(TaskCost, IsAtLeastOneByte) {
  SizedOp op(100);
  EXPECT_EQ(TaskCost(op.info(), op.projected_mem(0), 100), 1);
  EXPECT_EQ(TaskCost(op.info(), op.projected_mem(0), 500), 1);
}

}  // namespace
}  // namespace tessera::exec
