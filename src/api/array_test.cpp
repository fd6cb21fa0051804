#include "tessera/api/array.hpp"

#include <gtest/gtest.h>
#include <iostream>

#include "tessera/api/creation.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

Spec SpecWith(std::int64_t allowed_mem) {
  Spec spec;
  spec.allowed_mem = allowed_mem;
  return spec;
}

TEST(ArrayTest, AsTypeChainFitsOnlyWhenFused) {
  const Spec spec = SpecWith(800);
  const Array chain = ones({100}, int8, {100}, spec).astype(int32).astype(int8);
  const NDArray values = chain.compute();
  ASSERT_EQ(values.size(), 100);
  for (const std::int8_t v : values.data<std::int8_t>()) EXPECT_EQ(v, 1);
  PlanOptions unfused;
  unfused.fuse = false;
  unfused.intermediate_tier = Tier::kDisk;
  std::cerr << chain.plan().summary();
  try { std::cerr << chain.plan(unfused).summary(); } catch (const std::exception& e) { std::cerr << e.what() << "\n"; }
  EXPECT_THROW(chain.plan(unfused), MemoryBudgetError);
}

TEST(ArrayTest, AddOfTwoBlocksAboveBudgetFailsAtPlanTime) {
  const Spec spec = SpecWith(60);
  const Array a = asarray<std::int64_t>({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, {2, 2}, spec);
  const Array b = asarray<std::int64_t>({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, {2, 2}, spec);
  const Array c = add(a, b);  // building never throws for memory
  try {
    c.plan();
    FAIL() << "expected MemoryBudgetError";
  } catch (const MemoryBudgetError& error) {
    const std::string text = error.what();
    EXPECT_EQ(text.rfind("Projected blockwise memory (", 0), 0u) << text;
    EXPECT_NE(text.find("exceeds allowed_mem (60), including reserved_mem (0)"), std::string::npos)
        << text;
  }
  EXPECT_THROW(c.compute(), MemoryBudgetError);
}

TEST(ArrayTest, ComputesElementwiseWithBroadcasting) {
  const Spec spec = SpecWith(1 << 20);
  const Array a = asarray<double>({{1, 2, 3}, {4, 5, 6}}, {1, 2}, spec);
  const Array b = asarray<double>({10, 20, 30}, {2}, spec);
  const NDArray values = (a * b + 1.0).compute();
  const std::vector<double> expected{11, 41, 91, 41, 101, 181};
  ASSERT_EQ(values.shape(), (Shape{2, 3}));
  for (Index i = 0; i < 6; ++i) EXPECT_EQ(values.data<double>()[static_cast<std::size_t>(i)], expected[static_cast<std::size_t>(i)]);
}

}  // namespace
}  // namespace tessera
