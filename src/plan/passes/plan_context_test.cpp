// PlanSession: the plans one Finalize tries share their sources' readers and history's
// answers, so history is asked once per step, not once per budget tried.
#include "plan_context.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "pass_manager.hpp"
#include "scoped_environment.hpp"

namespace tessera::planner {
namespace {

// A history that counts the questions it is asked and knows every step: each has run
// in 1,000 bytes per task.
class CountingHistory final : public HistoryDatabase {
 public:
  const std::filesystem::path& path() const override { return path_; }
  bool ok() const override { return true; }
  std::int64_t BeginRun(RunHistory&) override { return 0; }
  void RecordOp(std::int64_t, const OpHistory&, const std::vector<TaskHistory>&) override {}
  void FinishRun(std::int64_t, const std::string&, double, std::int64_t) override {}
  void RecordCluster(std::int64_t, const ClusterHistory&) override {}
  std::optional<LearnedFootprint> Learned(const std::string& fingerprint) const override {
    ++asked[fingerprint];
    return LearnedFootprint{
        .task_bytes = 1'000, .projected_task_bytes = 1'000, .run_id = 1, .records = 1};
  }
  std::vector<RunHistory> RecentRuns(int) const override { return {}; }
  std::optional<RunHistory> LoadRun(std::int64_t) const override { return std::nullopt; }

  mutable std::map<std::string, int> asked;

 private:
  std::filesystem::path path_ = "counting";
};

TEST(PlanContextTest, PlansOfOneSessionAskHistoryOncePerStep) {
  // The history pass on, whatever the configuration rerun switched off.
  const testing::ScopedEnvironment passes("TESSERA_DISABLE_PASSES", std::nullopt);
  NDArray values({4, 4}, float64);
  const NodePtr x = MakeInMemory(values, {2, 2});
  const NodePtr doubled = MakeBinaryWithScalar("multiply", x, 2.0, false);
  const auto history = std::make_shared<CountingHistory>();
  const auto session = std::make_shared<PlanSession>();
  Spec spec;
  spec.total_mem = std::int64_t{1} << 30;
  for (const std::int64_t budget : {1 << 20, 1 << 16, 1 << 12}) {  // as auto tries them
    spec.allowed_mem = budget;
    PlanContext context({PlanOutput{doubled, std::nullopt}}, spec, {}, history, 0, session);
    PassManager().Run(context);
    ASSERT_FALSE(context.learned.empty());
    EXPECT_EQ(context.learned.begin()->second.task_bytes, 1'000);
  }
  ASSERT_EQ(history->asked.size(), 1u);  // one step, the same at every budget
  for (const auto& [fingerprint, times] : history->asked) EXPECT_EQ(times, 1) << fingerprint;

  // A context of its own asks again.
  PlanContext alone({PlanOutput{doubled, std::nullopt}}, spec, {}, history);
  PassManager().Run(alone);
  EXPECT_EQ(history->asked.begin()->second, 2);
}

}  // namespace
}  // namespace tessera::planner
