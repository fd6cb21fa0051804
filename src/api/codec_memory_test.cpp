// Codec working memory at the plan and executor level: a rechunk written with zstd 19 or
// blosc's zstd projects the codec's contexts, every task's measured plus unaccounted
// memory stays within its projection, and a forced RAM tier that cannot fit total_mem is
// refused unless allow_over_total_mem, which the plan then reports.
#include <gtest/gtest.h>

#include <string>

#include "task_bounds.hpp"
#include "temp_dir.hpp"
#include "tessera/api/array.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/codec.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera {
namespace {

constexpr std::int64_t kMB = 1'000'000;

Spec TestSpec() {
  Spec spec;
  spec.allowed_mem = Spec::kAutoAllowedMem;
  spec.reserved_mem = 1 << 20;
  spec.total_mem = 400 * kMB;
  spec.max_workers = 2;
  return spec;
}

// A (200, 2000) float32 array in (10, 2000) chunks, blosc-lz4.
Array Source(const Spec& spec) {
  auto store = std::make_shared<MemoryStore>();
  ZarrMetadata metadata;
  metadata.shape = {200, 2000};
  metadata.chunks = {10, 2000};
  metadata.dtype = float32;
  metadata.compressor = ParseCodecSpec("blosc-lz4");
  const ZarrArray array = ZarrArray::Create(store, "", metadata);
  NDArray values(metadata.shape, float32);
  auto data = values.mutable_data<float>();
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = 280.0F + static_cast<float>((i * 2654435761U) % 997) * 0.01F;
  }
  array.Write(values, 1);
  return from_zarr(store, "", spec);
}

class CodecMemoryPlan : public ::testing::TestWithParam<std::string> {};

TEST_P(CodecMemoryPlan, TasksStayWithinProjectionsThatCountTheCodec) {
  const Spec spec = TestSpec();
  const Array rechunked = Source(spec).rechunk({200, 500});  // 400 kB target chunks
  ToZarrOptions options;
  options.compressor = ParseCodecSpec(GetParam());
  options.compute.plan.intermediate_tier = Tier::kDisk;
  const std::unique_ptr<Codec> codec = MakeCodec(*options.compressor);
  const std::int64_t chunk_bytes = 200 * 500 * 4;
  const std::int64_t working = codec->EncodeWorkingBytes(chunk_bytes, 4);

  testing::TempDir dir("codec-memory");
  const std::string target = (dir.path() / "out.zarr").string();
  const FinalizedPlan plan = rechunked.plan_to_zarr(target, options);
  // The op writing the target holds the chunk, its encoding and the codec's contexts.
  EXPECT_GE(plan.max_projected_mem(), spec.reserved_mem + chunk_bytes + working);

  ExecutionReport report;
  options.compute.report = &report;
  rechunked.to_zarr(std::make_shared<MemoryStore>(), "", options);
  ASSERT_FALSE(report.tasks.empty());
  SCOPED_TRACE(GetParam());
  testing::ExpectFootprintsWithinProjection(report);
}

INSTANTIATE_TEST_SUITE_P(ZstdLevels, CodecMemoryPlan,
                         ::testing::Values("blosc:zstd:1", "blosc:zstd:5", "blosc:zstd:9",
                                           "zstd:19"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name;
                           for (const char c : param.param) name += (c == ':' ? '_' : c);
                           return name;
                         });

TEST(CodecMemoryPlan, ForcedMemoryTierBeyondTotalMemIsRefusedUnlessAllowed) {
  Spec spec = TestSpec();
  spec.allowed_mem = 1200 * 1000;
  spec.reserved_mem = 100 * 1000;
  spec.total_mem = 1500 * 1000;  // less reserved_mem, under the 1.6 MB array
  spec.max_workers = 2;
  const Array rechunked = Source(spec).rechunk({200, 50});
  ToZarrOptions options;
  options.compute.plan.intermediate_tier = Tier::kMemory;
  testing::TempDir dir("forced-tier");
  const std::string target = (dir.path() / "out.zarr").string();
  try {
    (void)rechunked.plan_to_zarr(target, options);
    FAIL() << "a forced memory tier beyond total_mem was planned";
  } catch (const MemoryBudgetError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("intermediates forced into memory hold 1.6 MB"), std::string::npos)
        << message;
    EXPECT_NE(message.find("allow_over_total_mem"), std::string::npos) << message;
  }
  options.compute.plan.allow_over_total_mem = true;
  const FinalizedPlan plan = rechunked.plan_to_zarr(target, options);
  ASSERT_EQ(plan.warnings().size(), 1U);
  EXPECT_NE(plan.warnings()[0].find("allowed by allow_over_total_mem"), std::string::npos);
  EXPECT_NE(plan.summary().find("warning: intermediates forced into memory"), std::string::npos);
  // The automatic tier plans within total_mem without a warning.
  options.compute.plan.intermediate_tier = Tier::kNone;
  options.compute.plan.allow_over_total_mem = false;
  EXPECT_TRUE(rechunked.plan_to_zarr(target, options).warnings().empty());
}

}  // namespace
}  // namespace tessera
