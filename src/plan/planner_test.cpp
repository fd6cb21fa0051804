// Finalize: pruning, fusion decisions and memory projections, checked against figures
// computed by hand from docs/memory-model.md (each test says how).
#include <gtest/gtest.h>

#include <bit>

#include "temp_dir.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/plan/finalized_plan.hpp"
#include "tessera/plan/internal/executable_op.hpp"
#include "tessera/plan/internal/node.hpp"
#include "tessera/storage/directory_store.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera::planner {
namespace {

Spec SpecWith(std::int64_t allowed_mem, std::int64_t reserved_mem = 0) {
  Spec spec;
  spec.allowed_mem = allowed_mem;
  spec.reserved_mem = reserved_mem;
  spec.total_mem = std::int64_t{1} << 30;
  return spec;
}

// A float64 Zarr array in memory with every chunk written: values i * 0.5, or
// incompressible ones.
NodePtr StoredArray(Shape shape, Shape chunks, std::optional<CodecConfig> compressor,
                    std::shared_ptr<MemoryStore> store = std::make_shared<MemoryStore>(),
                    bool random_bits = false) {
  const std::string path;
  ZarrMetadata metadata;
  metadata.shape = shape;
  metadata.chunks = chunks;
  metadata.dtype = float64;
  metadata.compressor = compressor;
  const ZarrArray array = ZarrArray::Create(store, path, metadata);
  NDArray values(shape, float64);
  auto data = values.mutable_data<double>();
  std::uint64_t state = 12345;
  for (std::size_t i = 0; i < data.size(); ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    data[i] = random_bits ? std::bit_cast<double>(state) : static_cast<double>(i) * 0.5;
  }
  array.Write(values, 1);
  return MakeZarrSource(store, path);
}

FinalizedPlan PlanOf(const NodePtr& node, const Spec& spec, PlanOptions options = {}) {
  return Finalize({PlanOutput{node, std::nullopt}}, spec, options);
}

TEST(PlannerTest, UncompressedSourceDecodesInPlace) {
  // x: 10 x 10 float64 chunks = 800 B, stored raw: read straight into the block (800).
  // x + 1.0: the scalar is a constant leaf holding one tile: min(4096, 100) x 8 = 800.
  // The output block: 800. Into compute()'s result: no write buffer.
  // 800 + 800 + 800 = 2400.
  const NodePtr x = StoredArray({20, 20}, {10, 10}, std::nullopt);
  const FinalizedPlan plan = PlanOf(MakeBinaryWithScalar("add", x, 1.0, false), SpecWith(1 << 20));
  ASSERT_EQ(plan.ops().size(), 1u);
  EXPECT_EQ(plan.ops()[0].projected_mem, 2400);
  EXPECT_EQ(plan.ops()[0].num_tasks, 4);
  EXPECT_EQ(plan.ops()[0].kind, OpKind::kElementwise);
}

TEST(PlannerTest, EdgeBlocksOfRawSourceReadThroughAChunkBuffer) {
  // 15 x 15 in 10 x 10 chunks: the edge block (1, 1) is 5 x 5 (200 B) but its chunk is
  // stored full size: read into an 800 B chunk buffer, then copied out. The interior
  // block (0, 0) is the worst task: 800 read + 800 tile + 800 out = 2400; block (1, 1):
  // 200 + 800 (chunk) read, then 200 tile (25 elements) + 200 out: peak 1000 while
  // reading, 600 after.
  const NodePtr x = StoredArray({15, 15}, {10, 10}, std::nullopt);
  const FinalizedPlan plan = PlanOf(MakeBinaryWithScalar("add", x, 1.0, false), SpecWith(1 << 20));
  EXPECT_EQ(plan.ops()[0].projected_mem, 2400);
  const auto& op = plan.executable_ops()[0];
  EXPECT_EQ(op->projected_mem(3), 1000);
}

TEST(PlannerTest, CompressedSourceCountsItsLargestStoredChunk) {
  // blosc-lz4 over incompressible values: a chunk is read into a buffer of its stored
  // size S (the largest stored chunk), then decoded into the 800 B block: 800 + S while
  // reading. negative(x) then needs only the output block (the root writes there):
  // 800 + 800. The task projects max(800 + S, 1600).
  auto store = std::make_shared<MemoryStore>();
  const NodePtr x = StoredArray({20, 20}, {10, 10}, ParseCodecSpec("blosc-lz4"), store,
                                /*random_bits=*/true);
  const std::int64_t largest = ZarrArray::Open(store).CountStoredChunks().largest;
  ASSERT_GT(largest, 800);  // incompressible: blosc stores the bytes plus its header
  const FinalizedPlan plan = PlanOf(MakeUnary("negative", x), SpecWith(1 << 20));
  // Decoding also holds the codec's working memory for an 800 B chunk of 8-byte items
  // and the 16 KiB of stack chunk I/O allows a codec call: on an AVX2 CPU, Tessera's
  // decoder of shuffled LZ4 frames holds one 800 B block (plus 64 B of allocation
  // slack); elsewhere libblosc holds two 800 B blocks, 32 B of offsets and 4,352 B of
  // small buffers (lz4 decodes in place).
  const std::int64_t decoding =
      (__builtin_cpu_supports("avx2") ? 800 + 64 : 2 * 800 + 32 + 4352) + (16 << 10);
  EXPECT_EQ(MakeCodec(ParseCodecSpec("blosc-lz4"))->DecodeWorkingBytes(800, 8) + (16 << 10),
            decoding);
  EXPECT_EQ(plan.ops()[0].projected_mem, 800 + largest + decoding);
}

TEST(PlannerTest, ZarrTargetCountsTheEncodeBuffer) {
  // Writing a block to a blosc-lz4 target encodes it into a buffer of the codec's bound:
  // 800 + 16 (blosc's header). negative(x) into it: 800 (read) + 800 (out), then the out
  // block and the encode buffer: 800 + 816 = 1616.
  const NodePtr x = StoredArray({20, 20}, {10, 10}, std::nullopt);
  testing::TempDir dir("target");
  ZarrTarget target;
  target.store = DirectoryStore::Open(dir.path() / "out.zarr");
  const FinalizedPlan plan =
      Finalize({PlanOutput{MakeUnary("negative", x), target}}, SpecWith(1 << 20));
  // Encoding also holds blosc's working memory (two 800 B blocks, 32 B of offsets, 4,352 B
  // of small buffers, lz4's 16,416 B state) and 16 KiB of stack.
  const std::int64_t encoding = 2 * 800 + 32 + 4352 + 16416 + (16 << 10);
  EXPECT_EQ(MakeCodec(ParseCodecSpec("blosc-lz4"))->EncodeWorkingBytes(800, 8) + (16 << 10),
            encoding);
  EXPECT_EQ(plan.ops()[0].projected_mem, 1616 + encoding);
  EXPECT_EQ(plan.ops()[0].tier, Tier::kTarget);
  // A memory store also keeps the encoded chunk: 800 + 816 + 816.
  target.store = std::make_shared<MemoryStore>();
  EXPECT_EQ(Finalize({PlanOutput{MakeUnary("negative", x), target}}, SpecWith(1 << 20))
                .ops()[0]
                .projected_mem,
            2432 + encoding);
}

TEST(PlannerTest, ReservedMemIsAddedToEveryTask) {
  const NodePtr x = StoredArray({20, 20}, {10, 10}, std::nullopt);
  const FinalizedPlan plan = PlanOf(MakeUnary("negative", x), SpecWith(1 << 20, 1000));
  EXPECT_EQ(plan.ops()[0].projected_mem, 1000 + 1600);
  EXPECT_EQ(plan.required_allowed_mem(), 2600);
}

TEST(PlannerTest, ChainOfElementwiseOpsHoldsOneTilePerNode) {
  // exp(log(x) * 2.0) - 1.0 on 100-element blocks: leaf x (800), tiles of 100 float64
  // for log, the constant 2.0, multiply, exp and the constant 1.0 (5 x 800), out 800.
  const NodePtr x = StoredArray({20, 20}, {10, 10}, std::nullopt);
  const NodePtr y = MakeBinaryWithScalar(
      "subtract",
      MakeUnary("exp", MakeBinaryWithScalar("multiply", MakeUnary("log", x), 2.0, false)), 1.0,
      false);
  const FinalizedPlan plan = PlanOf(y, SpecWith(1 << 20));
  ASSERT_EQ(plan.ops().size(), 1u);
  EXPECT_EQ(plan.ops()[0].projected_mem, 800 + 5 * 800 + 800);
  EXPECT_EQ(plan.ops()[0].fused.size(), 6u);  // log, 2.0, multiply, exp, 1.0, subtract
}

TEST(PlannerTest, TilesAreCappedAtTileElements) {
  // Blocks of 100 x 100 = 10000 elements: each tile holds 4096 elements (32768 B).
  const NodePtr x = StoredArray({100, 100}, {100, 100}, std::nullopt);
  const FinalizedPlan plan = PlanOf(MakeUnary("exp", MakeUnary("log", x)), SpecWith(1 << 20));
  EXPECT_EQ(plan.ops()[0].projected_mem, 80000 + 4096 * 8 + 80000);
}

TEST(PlannerTest, FusionIsRefusedWhenTheFusedTaskWouldNotFit) {
  // a + b + c + d over four raw 800 B sources, fused: 4 x 800 read + 3 tiles... Each
  // add's tile is 800 (the root writes into the output): 3200 + 2 x 800 + 800 = 5600.
  // With allowed_mem 4000 the planner stores the root's largest fused input instead.
  const NodePtr a = StoredArray({10, 10}, {10, 10}, std::nullopt);
  const NodePtr b = StoredArray({10, 10}, {10, 10}, std::nullopt);
  const NodePtr c = StoredArray({10, 10}, {10, 10}, std::nullopt);
  const NodePtr d = StoredArray({10, 10}, {10, 10}, std::nullopt);
  const NodePtr sum = MakeBinary("add", MakeBinary("add", MakeBinary("add", a, b), c), d);
  const FinalizedPlan fused = PlanOf(sum, SpecWith(1 << 20));
  ASSERT_EQ(fused.ops().size(), 1u);
  EXPECT_EQ(fused.ops()[0].projected_mem, 5600);
  const FinalizedPlan split = PlanOf(sum, SpecWith(4000));
  EXPECT_GT(split.ops().size(), 1u);
  EXPECT_LE(split.max_projected_mem(), 4000);
}

TEST(PlannerTest, MultiInputFusionKeepsOneOp) {
  const NodePtr a = StoredArray({20, 20}, {10, 10}, std::nullopt);
  const NodePtr b = StoredArray({20, 20}, {10, 10}, std::nullopt);
  const NodePtr y = MakeWhere(MakeBinary("less", a, b), MakeUnary("exp", a), MakeUnary("log", b));
  const FinalizedPlan plan = PlanOf(y, SpecWith(1 << 20));
  ASSERT_EQ(plan.ops().size(), 1u);
  EXPECT_EQ(plan.ops()[0].fused.size(), 4u);  // less, exp, log, where
}

TEST(PlannerTest, SourceLimitSplitsWideTrees) {
  std::vector<NodePtr> sources;
  for (int i = 0; i < 5; ++i) sources.push_back(StoredArray({10, 10}, {10, 10}, std::nullopt));
  NodePtr sum = sources[0];
  for (int i = 1; i < 5; ++i) sum = MakeBinary("add", sum, sources[static_cast<std::size_t>(i)]);
  PlanOptions options;
  options.max_fused_sources = 3;
  const FinalizedPlan plan = PlanOf(sum, SpecWith(1 << 20), options);
  EXPECT_GT(plan.ops().size(), 1u);
}

TEST(PlannerTest, FusionOffMakesAnOpPerNode) {
  const NodePtr x = StoredArray({20, 20}, {10, 10}, std::nullopt);
  PlanOptions options;
  options.fuse = false;
  const FinalizedPlan plan =
      PlanOf(MakeUnary("exp", MakeUnary("log", x)), SpecWith(1 << 20), options);
  ASSERT_EQ(plan.ops().size(), 2u);
  EXPECT_EQ(plan.ops()[0].tier, Tier::kMemory);
  EXPECT_EQ(plan.ops()[1].inputs, std::vector<int>{0});
}

TEST(PlannerTest, MisalignedChunksAreStoredAndReadByRegion) {
  const NodePtr x = StoredArray({20, 20}, {10, 10}, std::nullopt);
  const NodePtr y = StoredArray({20, 20}, {5, 20}, std::nullopt);
  // exp(y) has y's chunks; adding it to x (x's chunks) reads exp(y) by region.
  const FinalizedPlan plan = PlanOf(MakeBinary("add", x, MakeUnary("exp", y)), SpecWith(1 << 20));
  ASSERT_EQ(plan.ops().size(), 2u);
  EXPECT_EQ(plan.ops()[1].chunks, (Shape{10, 10}));
}

TEST(PlannerTest, ErrorNamesOpAndSmallestBudget) {
  const NodePtr x = StoredArray({20, 20}, {10, 10}, std::nullopt);
  try {
    PlanOf(MakeUnary("negative", x), SpecWith(1000, 100));
    FAIL() << "expected MemoryBudgetError";
  } catch (const MemoryBudgetError& error) {
    const std::string text = error.what();
    EXPECT_EQ(text.rfind("Projected blockwise memory (1700) exceeds allowed_mem (1000), including "
                         "reserved_mem (100)",
                         0),
              0u)
        << text;
    EXPECT_NE(text.find("\"negative-"), std::string::npos) << text;
    EXPECT_NE(text.find("smallest allowed_mem that would run it is 1700"), std::string::npos)
        << text;
  }
}

TEST(PlannerTest, SummaryAndDotNameEveryOp) {
  const NodePtr x = StoredArray({20, 20}, {10, 10}, std::nullopt);
  PlanOptions options;
  options.fuse = false;
  const FinalizedPlan plan =
      PlanOf(MakeUnary("exp", MakeUnary("log", x)), SpecWith(1 << 20), options);
  const std::string summary = plan.summary();
  const std::string dot = plan.to_dot();
  for (const OpInfo& op : plan.ops()) {
    EXPECT_NE(summary.find(op.name), std::string::npos) << summary;
    EXPECT_NE(dot.find(op.name), std::string::npos) << dot;
  }
  EXPECT_EQ(dot.rfind("digraph", 0), 0u);
  EXPECT_NE(dot.find("op0 -> op1"), std::string::npos) << dot;
}

}  // namespace
}  // namespace tessera::planner
