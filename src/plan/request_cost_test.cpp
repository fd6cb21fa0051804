#include "request_cost.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace tessera::planner {
namespace {

// A two-copy rechunk of a 1000 x 1000 float64 array (8 MB) through an intermediate on
// disk in (100, 10) chunks (8 kB), the target in (1000, 10): 1000 source chunks read, 1000
// intermediate chunks written and read, 100 target chunks written.
std::vector<OpInfo> TwoCopies(Tier intermediate_tier, std::int64_t bytes_in_memory) {
  OpInfo first;
  first.shape = {1000, 1000};
  first.chunks = {100, 10};
  first.dtype = float64;
  first.tier = intermediate_tier;
  first.bytes_in_memory = bytes_in_memory;
  first.input_chunks = {10, 1000};
  first.stage = 1;
  first.chunk_reads = 100;  // the source's (10, 1000) chunks
  first.chunk_writes = 1000;
  first.bytes_read = 8'000'000;
  first.bytes_written = 8'000'000;
  OpInfo second = first;
  second.chunks = {1000, 10};
  second.tier = Tier::kTarget;
  second.bytes_in_memory = 0;
  second.input_chunks = {100, 10};
  second.stage = 2;
  second.chunk_reads = 1000;
  second.chunk_writes = 100;
  second.inputs = {0};
  return {first, second};
}

TEST(RequestCost, IntermediateRequestsOnDiskArePricedAndOthersAreNot) {
  const RequestCost cost{1000.0, 1 << 20};
  // 32 MB moved; the intermediate's 1000 writes and 1000 reads at 1000 bytes each.
  EXPECT_DOUBLE_EQ(PlanIoCost(TwoCopies(Tier::kDisk, 0), cost), 32e6 + 2000 * 1000.0);
  // Held in RAM, its requests cost nothing; half in RAM, half of them.
  EXPECT_DOUBLE_EQ(PlanIoCost(TwoCopies(Tier::kMemory, 8'000'000), cost), 32e6);
  EXPECT_DOUBLE_EQ(PlanIoCost(TwoCopies(Tier::kMixed, 4'000'000), cost), 32e6 + 1000 * 1000.0);
  EXPECT_EQ(PlanRequests(TwoCopies(Tier::kDisk, 0)), 2200);
}

TEST(RequestCost, SmallestChunksOnDiskAndOfTheUsersArrays) {
  std::vector<OpInfo> ops = TwoCopies(Tier::kDisk, 0);
  EXPECT_EQ(SmallestDiskChunkBytes(ops), 100 * 10 * 8);
  // Disk chunks, when given, are what is stored; chunks past the edge are clipped.
  ops[0].disk_chunks = {50, 2000};
  EXPECT_EQ(SmallestDiskChunkBytes(ops), 50 * 1000 * 8);
  // The source's (10, 1000) chunks and the target's (1000, 10): 80 kB each.
  EXPECT_EQ(SmallestUserChunkBytes(ops), 80'000);
  ops[1].chunks = {1000, 1};
  EXPECT_EQ(SmallestUserChunkBytes(ops), 8'000);
  EXPECT_EQ(SmallestDiskChunkBytes(TwoCopies(Tier::kMemory, 8'000'000)), 0);
  EXPECT_EQ(kDirectoryRequestCost.chunk_floor, 2 << 20);
}

}  // namespace
}  // namespace tessera::planner
