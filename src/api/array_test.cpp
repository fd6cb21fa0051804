#include "tessera/api/array.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "temp_dir.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/api/map_blocks.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/plan/target_files.hpp"
#include "tessera/storage/directory_store.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera {
namespace {

Spec SpecWith(std::int64_t allowed_mem) {
  Spec spec;
  spec.allowed_mem = allowed_mem;
  return spec;
}

template <class T>
std::vector<T> Values(const NDArray& array) {
  const auto data = array.data<T>();
  return {data.begin(), data.end()};
}

TEST(ArrayTest, AsTypeChainFitsOnlyWhenFused) {
  // docs/memory-model.md, "Fusion": fused, the task holds the int8 tile of ones (100 B),
  // the int32 tile (400 B) and the int8 output (100 B) = 600 B <= 800. Unfused, with its
  // intermediates in compressed Zarr on disk as Cubed keeps them, the int32 op holds its
  // 400 B block and the 416 B blosc buffer it encodes into = 816 > 800.
  const Spec spec = SpecWith(800);
  const Array chain = ones({100}, int8, {100}, spec).astype(int32).astype(int8);
  EXPECT_EQ(chain.plan().max_projected_mem(), 600);
  const NDArray values = chain.compute();
  EXPECT_EQ(Values<std::int8_t>(values), std::vector<std::int8_t>(100, 1));
  PlanOptions unfused;
  unfused.fuse = false;
  unfused.intermediate_tier = Tier::kDisk;
  EXPECT_THROW(chain.plan(unfused), MemoryBudgetError);
}

TEST(ArrayTest, AddOfTwoBlocksAboveBudgetFailsAtPlanTime) {
  // Each add task holds two 2x2 int64 input blocks (32 B each) = 64 > 60 before anything
  // else; Tessera projects 32 + 32 + 32 (output) = 96 (no tiles: the root writes into its
  // output). Cubed projects 192 for the same task.
  const Spec spec = SpecWith(60);
  const Array a = asarray<std::int64_t>({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, {2, 2}, spec);
  const Array b = asarray<std::int64_t>({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, {2, 2}, spec);
  const Array c = add(a, b);  // building never throws for memory
  try {
    c.plan();
    FAIL() << "expected MemoryBudgetError";
  } catch (const MemoryBudgetError& error) {
    const std::string text = error.what();
    EXPECT_EQ(text.rfind("Projected blockwise memory (96) exceeds allowed_mem (60), including "
                         "reserved_mem (0)",
                         0),
              0u)
        << text;
    EXPECT_NE(text.find(c.name()), std::string::npos) << text;
  }
  EXPECT_THROW(c.compute(), MemoryBudgetError);
}

TEST(ArrayTest, ComputesElementwiseWithBroadcasting) {
  const Spec spec = SpecWith(1 << 20);
  const Array a = asarray<double>({{1, 2, 3}, {4, 5, 6}}, {1, 2}, spec);
  const Array b = asarray<double>({10, 20, 30}, {2}, spec);
  const NDArray values = (a * b + 1.0).compute();
  ASSERT_EQ(values.shape(), (Shape{2, 3}));
  EXPECT_EQ(Values<double>(values), (std::vector<double>{11, 41, 91, 41, 101, 181}));
}

TEST(ArrayTest, ZarrGroupWithAHugeVariableOnlyFailsWhenItIsUsed) {
  // A group with t2m (small chunks) and big (one 8 MB chunk). allowed_mem 1 MB.
  testing::TempDir dir("group");
  auto store = DirectoryStore::Open(dir.path() / "data.zarr");
  CreateZarrGroup(*store, "");
  ZarrMetadata small;
  small.shape = {100, 100};
  small.chunks = {10, 100};
  small.dtype = float32;
  ZarrMetadata big = small;
  big.shape = {1000, 1000};
  big.chunks = {1000, 1000};
  big.dtype = float64;
  const ZarrArray t2m = ZarrArray::Create(store, "t2m", small);
  NDArray values({100, 100}, float32);
  for (Index i = 0; i < values.size(); ++i)
    values.mutable_data<float>()[static_cast<std::size_t>(i)] = static_cast<float>(i);
  t2m.Write(values, 1);
  ZarrArray::Create(store, "big", big);

  const Spec spec = SpecWith(1 << 20);
  const Array t = from_zarr(store, "t2m", spec);
  const Array huge = from_zarr(store, "big", spec);  // lazy: no error here
  const NDArray celsius = (t - 273.15).compute();
  EXPECT_FLOAT_EQ(celsius.data<float>()[5], 5.0f - 273.15f);
  const Array uses_big = huge * 2.0;  // still fine: building never checks memory
  EXPECT_THROW(uses_big.plan(), MemoryBudgetError);
  EXPECT_THROW(uses_big.compute(), MemoryBudgetError);
}

TEST(ArrayTest, ToZarrWritesAtomicallyAndZarrReadsItBack) {
  testing::TempDir dir("to_zarr");
  const Spec spec = SpecWith(1 << 20);
  const auto path = (dir.path() / "out.zarr").string();
  const Array x = arange(0, 100, 1, float64, 30, spec) * 2.0;
  x.to_zarr(path);
  EXPECT_FALSE(std::filesystem::exists(path + ".tessera-partial"));
  const NDArray back = ZarrArray::Open(DirectoryStore::Open(path)).Read();
  ASSERT_EQ(back.size(), 100);
  for (Index i = 0; i < 100; ++i)
    EXPECT_EQ(back.data<double>()[static_cast<std::size_t>(i)], 2.0 * static_cast<double>(i));
  // Overwriting replaces it whole.
  (x + 1.0).to_zarr(path);
  EXPECT_EQ(ZarrArray::Open(DirectoryStore::Open(path)).Read().data<double>()[3], 7.0);
}

// A fill_value of 0 would make xarray read every real zero as missing: floats get NaN,
// other dtypes null, unless the caller says otherwise; attributes go to .zattrs, and bad
// ones are refused before anything is written.
TEST(ArrayTest, ToZarrFillValueAndAttributes) {
  testing::TempDir dir("to_zarr_fill");
  const Spec spec = SpecWith(1 << 20);
  const auto floats = (dir.path() / "f.zarr").string();
  const auto ints = (dir.path() / "i.zarr").string();
  const auto given = (dir.path() / "g.zarr").string();
  const Array x = arange(0, 10, 1, float32, 4, spec);
  x.to_zarr(floats);
  x.astype(int16).to_zarr(ints);
  ToZarrOptions options;
  options.fill_value = FillValue{std::int64_t{-1}};
  options.attributes_json = R"({"units": "K"})";
  x.astype(int16).to_zarr(given, options);
  const FillValue float_fill = ZarrArray::Open(DirectoryStore::Open(floats)).metadata().fill_value;
  ASSERT_TRUE(std::holds_alternative<double>(float_fill));
  EXPECT_TRUE(std::isnan(std::get<double>(float_fill)));
  // An array read from no stored source is written as Zarr v3, whose fill value is never
  // null: zero for integers (xarray does not mask v3's fill value); v2 keeps null.
  const ZarrArray int_array = ZarrArray::Open(DirectoryStore::Open(ints));
  EXPECT_EQ(int_array.metadata().zarr_format, 3);
  EXPECT_EQ(int_array.metadata().fill_value, FillValue{std::int64_t{0}});
  ToZarrOptions v2;
  v2.zarr_format = 2;
  const auto ints_v2 = (dir.path() / "i2.zarr").string();
  x.astype(int16).to_zarr(ints_v2, v2);
  const ZarrArray int_v2 = ZarrArray::Open(DirectoryStore::Open(ints_v2));
  EXPECT_EQ(int_v2.metadata().zarr_format, 2);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(int_v2.metadata().fill_value));
  const ZarrArray with_options = ZarrArray::Open(DirectoryStore::Open(given));
  EXPECT_EQ(with_options.metadata().fill_value, FillValue{std::int64_t{-1}});
  EXPECT_NE(with_options.attributes().other_json.find("\"units\""), std::string::npos);
  options.attributes_json = "[1, 2]";
  const auto refused = (dir.path() / "refused.zarr").string();
  EXPECT_THROW(x.to_zarr(refused, options), InvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(refused + ".tessera-partial"));
  EXPECT_FALSE(std::filesystem::exists(refused));
}

TEST(ArrayTest, ToZarrNeverReplacesSomethingElse) {
  testing::TempDir dir("guard");
  const Spec spec = SpecWith(1 << 20);
  const Array x = ones({10}, float32, {5}, spec);
  const auto folder = dir.path() / "notes";
  std::filesystem::create_directories(folder);
  { std::ofstream(folder / "keep.txt") << "precious"; }
  EXPECT_THROW(x.to_zarr(folder.string()), InvalidArgument);
  EXPECT_TRUE(std::filesystem::exists(folder / "keep.txt"));
  const auto path = (dir.path() / "a.zarr").string();
  x.to_zarr(path);
  ToZarrOptions keep;
  keep.overwrite = false;
  EXPECT_THROW(x.to_zarr(path, keep), InvalidArgument);
}

TEST(ArrayTest, FailedTaskLeavesNoTargetAndResumeSkipsWrittenChunks) {
  testing::TempDir dir("resume");
  const Spec spec = SpecWith(1 << 20);
  const auto path = (dir.path() / "out.zarr").string();
  const Array x = arange(0, 100, 1, float64, 10, spec);
  std::atomic<int> calls{0};
  std::atomic<bool> fail{true};
  const Array y = map_blocks(
      [&](std::span<const NDArray> in, const BlockInfo& info) {
        ++calls;
        if (fail && info.block_index[0] == 7) throw StorageError("disk full (simulated)");
        NDArray out = in[0];
        for (double& v : out.mutable_data<double>()) v += 1;
        return out;
      },
      {x}, float64);
  ToZarrOptions options;
  options.compute.execute.retries = 0;
  options.compute.execute.progress = ProgressMode::kNever;
  EXPECT_THROW(y.to_zarr(path, options), Error);
  EXPECT_FALSE(std::filesystem::exists(path)) << "a failed run must not leave a target";
  const std::filesystem::path partial = PartialOutputPath(path);
  try {
    y.to_zarr(path, options);
    ADD_FAILURE() << "the failing run succeeded";
  } catch (const StorageError& error) {
    // The failure says where its partial output is kept and how to continue or drop it.
    const std::string message = error.what();
    EXPECT_NE(message.find("disk full (simulated)"), std::string::npos) << message;
    EXPECT_NE(message.find("kept in " + partial.string()), std::string::npos) << message;
    EXPECT_NE(message.find("resume = true"), std::string::npos) << message;
    EXPECT_NE(message.find("delete " + partial.string()), std::string::npos) << message;
  }
  EXPECT_TRUE(std::filesystem::is_regular_file(partial / ".tessera-owner"));
  // Another computation into the same target is not the same work.
  const Array other = y + 1.0;
  options.resume = true;
  try {
    other.to_zarr(path, options);
    ADD_FAILURE() << "resumed another computation's partial output";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("cannot resume into"), std::string::npos)
        << error.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  fail = false;
  calls = 0;
  y.to_zarr(path, options);
  EXPECT_LT(calls.load(), 10) << "resume must skip the chunks already written";
  const NDArray back = ZarrArray::Open(DirectoryStore::Open(path)).Read();
  for (Index i = 0; i < 100; ++i)
    EXPECT_EQ(back.data<double>()[static_cast<std::size_t>(i)], static_cast<double>(i) + 1);
}

TEST(ArrayTest, FailingTaskIsRetriedThenReportedWithOpAndBlock) {
  const Spec spec = SpecWith(1 << 20);
  std::atomic<int> attempts{0};
  const Array x = ones({4}, float64, {2}, spec);
  const Array flaky = map_blocks(
      [&](std::span<const NDArray> in, const BlockInfo& info) {
        if (info.block_index[0] == 1 && attempts++ < 2) throw StorageError("transient");
        return in[0];
      },
      {x}, float64);
  EXPECT_EQ(Values<double>(flaky.compute()), std::vector<double>(4, 1.0));
  EXPECT_EQ(attempts.load(), 3);  // two failures, then success (default: 2 retries)

  const Array broken = map_blocks(
      [](std::span<const NDArray>, const BlockInfo&) -> NDArray { throw StorageError("always"); },
      {x}, float64);
  try {
    broken.compute();
    FAIL() << "expected an error";
  } catch (const Error& error) {
    const std::string text = error.what();
    EXPECT_NE(text.find(broken.name()), std::string::npos) << text;
    // Both blocks fail; whichever the threads reach first is reported.
    EXPECT_TRUE(text.find("block (0,)") != std::string::npos ||
                text.find("block (1,)") != std::string::npos)
        << text;
    EXPECT_NE(text.find("after 3 attempts"), std::string::npos) << text;
    EXPECT_NE(text.find("always"), std::string::npos) << text;
  }
}

TEST(ArrayTest, RandomIsReproducibleAndIndependentOfChunking) {
  const Spec spec = SpecWith(1 << 20);
  const NDArray a = random::random({30, 40}, {7, 9}, spec, 42).compute();
  const NDArray b = random::random({30, 40}, {30, 40}, spec, 42).compute();
  const NDArray c = random::random({30, 40}, {7, 9}, spec, 43).compute();
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a == c);
  for (const double v : a.data<double>()) {
    EXPECT_GE(v, 0.0);
    EXPECT_LT(v, 1.0);
  }
}

TEST(ArrayTest, SeveralOutputsShareOnePlan) {
  const Spec spec = SpecWith(1 << 20);
  const Array x = arange(0, 10, 1, float64, 4, spec);
  const Array y = x * x;
  const std::vector<NDArray> results = compute({y, y + 1.0, x});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].data<double>()[3], 9.0);
  EXPECT_EQ(results[1].data<double>()[3], 10.0);
  EXPECT_EQ(results[2].data<double>()[3], 3.0);
}

TEST(ArrayTest, DewPointFormulaMatchesScalarArithmetic) {
  const Spec spec = SpecWith(1 << 20);
  NDArray t2_values({6, 5}, float32);
  NDArray rh_values({6, 5}, float32);
  for (Index i = 0; i < 30; ++i) {
    t2_values.mutable_data<float>()[static_cast<std::size_t>(i)] = 250.0f + static_cast<float>(i);
    rh_values.mutable_data<float>()[static_cast<std::size_t>(i)] =
        10.0f + 3.0f * static_cast<float>(i);
  }
  const Array t2 = asarray(t2_values, {4, 3}, spec);
  const Array rh = asarray(rh_values, {4, 3}, spec);
  const Array es = 0.611 * exp(5423.0 * ((1.0 / 273) - (1.0 / t2)));
  const Array td = pow((1.0 / 273) - 0.0001844 * log(es * rh / 100.0 / 0.611), -1.0);
  EXPECT_EQ(td.dtype(), float32);         // weak scalars keep float32
  EXPECT_EQ(td.plan().ops().size(), 1u);  // one fused op
  const NDArray values = td.compute();
  for (Index i = 0; i < 30; ++i) {
    const double t = 250.0 + static_cast<double>(i);
    const double h = 10.0 + 3.0 * static_cast<double>(i);
    const double e = 0.611 * std::exp(5423.0 * (1.0 / 273 - 1.0 / t)) * h / 100.0;
    const double expected = 1.0 / (1.0 / 273 - 0.0001844 * std::log(e / 0.611));
    EXPECT_NEAR(values.data<float>()[static_cast<std::size_t>(i)], expected, expected * 1e-5);
  }
}

TEST(ArrayTest, BadInputsGiveClearErrors) {
  const Spec spec = SpecWith(1 << 20);
  const Array a = ones({3, 4}, float32, {2, 2}, spec);
  const Array b = ones({5}, float32, {5}, spec);
  EXPECT_THROW(a + b, InvalidArgument);              // shapes do not broadcast
  EXPECT_THROW(bitwise_and(a, a), InvalidArgument);  // bitwise on floats
  EXPECT_THROW(elementwise("no_such_function", a), InvalidArgument);
  EXPECT_THROW(ones({3}, float32, {0}, spec), InvalidArgument);
  Spec no_budget;
  EXPECT_THROW(ones({3}, float32, {3}, no_budget).compute(), InvalidArgument);
}

}  // namespace
}  // namespace tessera
