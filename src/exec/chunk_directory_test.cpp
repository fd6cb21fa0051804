#include "chunk_directory.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "tessera/core/errors.hpp"

namespace tessera::exec {

void PrintTo(const DirectoryDecision& d, std::ostream* out) {
  static const char* const kKinds[] = {"copy", "drop", "spill"};
  static const char* const kReasons[] = {"min-replicas", "rebalance", "freed", "surplus", "spill"};
  *out << kKinds[static_cast<int>(d.kind)] << " (op " << d.chunk.op << ", block " << d.chunk.block
       << ") " << d.from << "->" << d.to << " " << d.bytes << "B "
       << kReasons[static_cast<int>(d.reason)];
}

namespace {

using Kind = DirectoryDecision::Kind;
using Reason = DirectoryDecision::Reason;
using Decisions = std::vector<DirectoryDecision>;

const ChunkKey kA{1, 0};
const ChunkKey kB{1, 1};
const ChunkKey kC{1, 2};
const ChunkKey kD{2, 0};

DirectoryDecision Copy(ChunkKey chunk, int from, int to, std::int64_t bytes, Reason reason) {
  return {.kind = Kind::kCopy,
          .chunk = chunk,
          .from = from,
          .to = to,
          .bytes = bytes,
          .reason = reason};
}
DirectoryDecision Drop(ChunkKey chunk, int from, std::int64_t bytes, Reason reason) {
  return {.kind = Kind::kDrop,
          .chunk = chunk,
          .from = from,
          .to = -1,
          .bytes = bytes,
          .reason = reason};
}
DirectoryDecision Spill(ChunkKey chunk, int from, std::int64_t bytes) {
  return {.kind = Kind::kSpill,
          .chunk = chunk,
          .from = from,
          .to = -1,
          .bytes = bytes,
          .reason = Reason::kSpill};
}

// `ranks` ranks of 1000 bytes each; `tune` adjusts the rest.
DirectoryOptions Options(int ranks, const std::function<void(DirectoryOptions&)>& tune = {}) {
  DirectoryOptions options;
  options.capacity.assign(static_cast<std::size_t>(ranks), 1000);
  if (tune) tune(options);
  return options;
}

// Decisions in a fixed order (by kind, chunk, from, to) where their order is not part of
// the contract.
Decisions Sorted(Decisions decisions) {
  std::sort(decisions.begin(), decisions.end(), [](const auto& a, const auto& b) {
    return std::tie(a.kind, a.chunk.op, a.chunk.block, a.from, a.to) <
           std::tie(b.kind, b.chunk.op, b.chunk.block, b.from, b.to);
  });
  return decisions;
}

// The message of the InvalidArgument `call` throws ("" when it throws none).
std::string ErrorOf(const std::function<void()>& call) {
  try {
    call();
  } catch (const InvalidArgument& error) {
    return error.what();
  }
  return "";
}

TEST(ChunkDirectoryTest, RejectsBadOptionsSayingWhich) {
  const auto message = [](const std::function<void(DirectoryOptions&)>& tune) {
    return ErrorOf([&] { ChunkDirectory directory(Options(2, tune)); });
  };
  EXPECT_NE(message([](auto& o) { o.capacity.clear(); }).find("capacity"), std::string::npos);
  EXPECT_NE(message([](auto& o) { o.capacity[1] = 0; }).find("capacity[1] is 0"),
            std::string::npos);
  EXPECT_NE(message([](auto& o) { o.high_watermark = 0; }).find("high_watermark"),
            std::string::npos);
  EXPECT_NE(message([](auto& o) { o.balance_tolerance = -1; }).find("balance_tolerance"),
            std::string::npos);
  EXPECT_NE(message([](auto& o) { o.min_replicas = 0; }).find("min_replicas 0"), std::string::npos);
  EXPECT_NE(message([](auto& o) { o.max_replicas = 0; }).find("max_replicas 0"), std::string::npos);
  EXPECT_NE(message([](auto& o) { o.replicate_after = 0; }).find("replicate_after 0"),
            std::string::npos);
  EXPECT_EQ(message([](auto&) {}), "");
}

TEST(ChunkDirectoryTest, ProducedHoldsTheChunkOnItsRank) {
  ChunkDirectory directory(Options(4));
  directory.Produced(kA, 2, 100);
  EXPECT_EQ(directory.holders(kA), std::vector<int>{2});
  EXPECT_EQ(directory.held_bytes(2), 100);
  EXPECT_DOUBLE_EQ(directory.fill(2), 0.1);
  EXPECT_TRUE(directory.knows(kA));
  EXPECT_FALSE(directory.spilled(kA));
  EXPECT_EQ(directory.live_chunks(), 1);
  EXPECT_EQ(directory.totals().bytes_produced, 100);
  EXPECT_TRUE(directory.TakeDecisions().empty());
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, RejectsBadArgumentsAndUnknownChunks) {
  ChunkDirectory directory(Options(4));
  directory.Produced(kA, 0, 100);
  EXPECT_NE(ErrorOf([&] { directory.Produced(kB, 4, 1); }).find("rank 4 is out of range"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { directory.Produced(kB, 0, -1); }).find("-1 bytes"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { directory.Produced(kB, 0, 1, -2); }).find("readers -2"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { directory.Produced(kA, 1, 1); }).find("already known"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { directory.PlanRead(kB, 0); }).find("(op 1, block 1) is not known"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { directory.CopyArrived(kA, 1); }).find("no copy"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { directory.ReplicaKept(kA, 1); }).find("no kept read replica"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { directory.Unpin(kA, 0); }).find("not pinned"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { directory.Spilled(kA); }).find("no spill"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { directory.Free(kB); }).find("not known"), std::string::npos);
  const std::vector<int> bad{7};
  EXPECT_NE(ErrorOf([&] { directory.PlaceTask({}, bad); }).find("rank 7"), std::string::npos);
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, MinReplicasCopiesToTheLeastFilledOtherRanks) {
  ChunkDirectory directory(Options(4, [](auto& o) { o.min_replicas = 2; }));
  directory.Produced(kA, 1, 300);  // every rank empty: the lowest other rank, 0
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Copy(kA, 1, 0, 300, Reason::kMinReplicas)});
  EXPECT_EQ(directory.pending_bytes(0), 300);
  EXPECT_EQ(directory.holders(kA), std::vector<int>{1});
  directory.CheckConsistency();
  directory.CopyArrived(kA, 0);
  EXPECT_TRUE(directory.TakeDecisions().empty());  // a min-replica copy drops nothing
  EXPECT_EQ(directory.holders(kA), (std::vector<int>{0, 1}));
  EXPECT_EQ(directory.pending_bytes(0), 0);
  // Fills now 0.3, 0.3, 0, 0: B (on 0) goes to rank 2; C (on 2, 2 pending there) to 3.
  directory.Produced(kB, 0, 100);
  directory.Produced(kC, 2, 50);
  EXPECT_EQ(directory.TakeDecisions(), (Decisions{Copy(kB, 0, 2, 100, Reason::kMinReplicas),
                                                  Copy(kC, 2, 3, 50, Reason::kMinReplicas)}));
  directory.CopyArrived(kB, 2);
  directory.CopyArrived(kC, 3);
  EXPECT_EQ(directory.totals().bytes_replicated, 450);
  EXPECT_EQ(directory.totals().bytes_copied, 450);
  EXPECT_EQ(directory.totals().copies, 3);
  // A free drops both copies.
  directory.Free(kA);
  EXPECT_EQ(Sorted(directory.TakeDecisions()),
            (Decisions{Drop(kA, 0, 300, Reason::kFreed), Drop(kA, 1, 300, Reason::kFreed)}));
  EXPECT_EQ(directory.held_bytes(0), 100);
  EXPECT_EQ(directory.held_bytes(1), 0);
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, MinReplicaCopiesCountThoseOnTheirWay) {
  ChunkDirectory directory(Options(4, [](auto& o) { o.min_replicas = 3; }));
  directory.Produced(kA, 1, 100);  // rank 0 (0 -> 0.1 pending), then rank 2
  EXPECT_EQ(directory.TakeDecisions(), (Decisions{Copy(kA, 1, 0, 100, Reason::kMinReplicas),
                                                  Copy(kA, 1, 2, 100, Reason::kMinReplicas)}));
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, FailedMinReplicaCopyIsPlannedAgainElsewhere) {
  ChunkDirectory directory(Options(3, [](auto& o) { o.min_replicas = 2; }));
  directory.Produced(kA, 0, 100);
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Copy(kA, 0, 1, 100, Reason::kMinReplicas)});
  directory.CopyFailed(kA, 1);
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Copy(kA, 0, 2, 100, Reason::kMinReplicas)});
  EXPECT_EQ(directory.pending_bytes(1), 0);
  EXPECT_EQ(directory.pending_bytes(2), 100);
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, MinReplicasIsCappedByTheRanks) {
  ChunkDirectory directory(Options(2, [](auto& o) {
    o.min_replicas = 3;
    o.max_replicas = 3;
  }));
  directory.Produced(kA, 1, 10);
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Copy(kA, 1, 0, 10, Reason::kMinReplicas)});
}

TEST(ChunkDirectoryTest, ReadsFromItsOwnRankOrTheLeastFilledHolder) {
  ChunkDirectory directory(Options(3, [](auto& o) { o.min_replicas = 2; }));
  directory.Produced(kA, 0, 100);  // copy to rank 1
  directory.CopyArrived(kA, 1);
  EXPECT_EQ(directory.PlanRead(kA, 2).from, 0);  // fills 0.1 and 0.1: the lower rank
  directory.Produced(kB, 1, 200, -1);            // copy to rank 2 (fills 0.1, 0.1, 0)
  directory.CopyArrived(kB, 2);
  EXPECT_EQ(directory.PlanRead(kA, 1).from, 1);
  EXPECT_EQ(directory.PlanRead(kA, 0).from, 0);
  // Rank 2 reads A: holders 0 (fill 0.1) and 1 (0.3): rank 0.
  const ChunkDirectory::ReadPlan plan = directory.PlanRead(kA, 2);
  EXPECT_EQ(plan.from, 0);
  EXPECT_FALSE(plan.keep_replica);  // one distinct non-holding reader so far
  EXPECT_FALSE(plan.spilled);
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, KeepsReadReplicasAfterDistinctReadersUpToMaxReplicas) {
  ChunkDirectory directory(Options(5));  // replicate_after 2, max_replicas 3
  directory.Produced(kA, 0, 100);
  EXPECT_FALSE(directory.PlanRead(kA, 1).keep_replica);  // 1 distinct reader
  EXPECT_FALSE(directory.PlanRead(kA, 1).keep_replica);  // still 1
  EXPECT_TRUE(directory.PlanRead(kA, 2).keep_replica);   // 2: 1 holder + 1 reserved
  EXPECT_EQ(directory.pending_bytes(2), 100);
  EXPECT_TRUE(directory.PlanRead(kA, 3).keep_replica);   // 1 holder + 2 reserved = 3
  EXPECT_FALSE(directory.PlanRead(kA, 4).keep_replica);  // would be 4
  EXPECT_FALSE(directory.PlanRead(kA, 2).keep_replica);  // already on its way there
  directory.CheckConsistency();
  directory.ReplicaKept(kA, 2);
  directory.ReplicaAbandoned(kA, 3);
  EXPECT_EQ(directory.holders(kA), (std::vector<int>{0, 2}));
  EXPECT_EQ(directory.pending_bytes(3), 0);
  EXPECT_EQ(directory.totals().bytes_replicated, 100);
  EXPECT_TRUE(directory.PlanRead(kA, 1).keep_replica);   // 2 holders + 1 reserved
  EXPECT_FALSE(directory.PlanRead(kA, 3).keep_replica);  // full again
  EXPECT_EQ(directory.PlanRead(kA, 2).from, 2);          // a holder reads its own
  directory.ReplicaKept(kA, 1);
  EXPECT_EQ(directory.holders(kA), (std::vector<int>{0, 1, 2}));
  directory.Free(kA);
  EXPECT_EQ(directory.TakeDecisions().size(), 3u);
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, KeepsNoReadReplicaOnARankPastItsWatermark) {
  ChunkDirectory directory(Options(3, [](auto& o) { o.replicate_after = 1; }));
  directory.Produced(kA, 0, 100);
  directory.Produced(kB, 1, 750);  // rank 1: 0.75; with A 0.85 > 0.8
  EXPECT_FALSE(directory.PlanRead(kA, 1).keep_replica);
  EXPECT_TRUE(directory.PlanRead(kA, 2).keep_replica);
}

TEST(ChunkDirectoryTest, LastReadFreesTheChunk) {
  ChunkDirectory directory(Options(2));
  directory.Produced(kA, 0, 100, 2);
  directory.ReadDone(kA, 1);
  EXPECT_TRUE(directory.knows(kA));
  directory.ReadDone(kA, 0);
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Drop(kA, 0, 100, Reason::kFreed)});
  EXPECT_FALSE(directory.knows(kA));
  EXPECT_EQ(directory.held_bytes(0), 0);
  EXPECT_EQ(directory.live_chunks(), 0);
  EXPECT_EQ(directory.totals().frees, 1);
  EXPECT_EQ(directory.totals().bytes_freed, 100);
  EXPECT_EQ(directory.totals().bytes_dropped, 100);
  EXPECT_NE(ErrorOf([&] { directory.ReadDone(kA, 0); }).find("not known"), std::string::npos);
  // Unknown readers: reads never free it; readers 0 frees it at once.
  directory.Produced(kB, 1, 10);
  directory.ReadDone(kB, 1);
  EXPECT_TRUE(directory.knows(kB));
  directory.Produced(kC, 1, 20, 0);
  EXPECT_FALSE(directory.knows(kC));
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Drop(kC, 1, 20, Reason::kFreed)});
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, FreeOpFreesOnlyThatOpsChunksInTimeOfItsChunks) {
  ChunkDirectory directory(Options(2, [](auto& o) { o.capacity.assign(2, 1'000'000); }));
  for (int block = 0; block < 1000; ++block) directory.Produced({3, block}, block % 2, 10);
  directory.Produced(kA, 0, 1);
  directory.Produced(kB, 1, 2);
  directory.Produced(kD, 1, 4);
  const std::int64_t before = directory.work();
  directory.FreeOp(1);
  EXPECT_LT(directory.work() - before, 100);  // 2 chunks, not 1003
  EXPECT_EQ(Sorted(directory.TakeDecisions()),
            (Decisions{Drop(kA, 0, 1, Reason::kFreed), Drop(kB, 1, 2, Reason::kFreed)}));
  EXPECT_TRUE(directory.knows(kD));
  EXPECT_EQ(directory.live_chunks(), 1001);
  directory.FreeOp(1);  // nothing left of op 1
  directory.FreeOp(99);
  EXPECT_TRUE(directory.TakeDecisions().empty());
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, PinnedReplicaOutlivesAFreeUntilUnpinned) {
  ChunkDirectory directory(Options(2, [](auto& o) { o.min_replicas = 2; }));
  directory.Produced(kA, 0, 100);
  directory.CopyArrived(kA, 1);
  directory.TakeDecisions();
  directory.Pin(kA, 1);
  directory.Pin(kA, 1);
  directory.Free(kA);
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Drop(kA, 0, 100, Reason::kFreed)});
  EXPECT_FALSE(directory.knows(kA));
  EXPECT_EQ(directory.held_bytes(1), 100);
  directory.Unpin(kA, 1);
  EXPECT_TRUE(directory.TakeDecisions().empty());
  directory.Unpin(kA, 1);
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Drop(kA, 1, 100, Reason::kFreed)});
  EXPECT_EQ(directory.held_bytes(1), 0);
  EXPECT_NE(ErrorOf([&] { directory.Unpin(kA, 1); }).find("not known"), std::string::npos);
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, CopyArrivingAfterAFreeIsDropped) {
  ChunkDirectory directory(Options(2, [](auto& o) { o.min_replicas = 2; }));
  directory.Produced(kA, 0, 100);
  directory.Free(kA);
  EXPECT_EQ(directory.TakeDecisions(), (Decisions{Copy(kA, 0, 1, 100, Reason::kMinReplicas),
                                                  Drop(kA, 0, 100, Reason::kFreed)}));
  EXPECT_NE(ErrorOf([&] { directory.Produced(kA, 0, 1); }).find("still outstanding"),
            std::string::npos);
  directory.CopyArrived(kA, 1);
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Drop(kA, 1, 100, Reason::kFreed)});
  EXPECT_EQ(directory.held_bytes(1), 0);
  directory.Produced(kA, 0, 1);  // forgotten: may be produced again
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, RankPastTheWatermarkShedsItsLeastRecentlyUsedChunks) {
  ChunkDirectory directory(Options(3, [](auto& o) { o.high_watermark = 0.5; }));
  directory.Produced(kA, 0, 300);
  directory.Produced(kB, 0, 200);  // fill 0.5: not past
  EXPECT_TRUE(directory.TakeDecisions().empty());
  directory.Produced(kC, 0, 100);  // 0.6: A (oldest) goes to rank 1; 0.3 left
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Copy(kA, 0, 1, 300, Reason::kRebalance)});
  EXPECT_DOUBLE_EQ(directory.fill(0), 0.3);
  EXPECT_DOUBLE_EQ(directory.fill(1), 0.3);
  EXPECT_EQ(directory.held_bytes(0), 600);  // nothing dropped before the copy is confirmed
  directory.CheckConsistency();
  directory.CopyArrived(kA, 1);
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Drop(kA, 0, 300, Reason::kRebalance)});
  EXPECT_EQ(directory.held_bytes(0), 300);
  EXPECT_EQ(directory.held_bytes(1), 300);
  EXPECT_EQ(directory.holders(kA), std::vector<int>{1});
  EXPECT_EQ(directory.totals().bytes_rebalanced, 300);
  EXPECT_EQ(directory.totals().bytes_replicated, 0);
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, ReadMakesAChunkRecentlyUsed) {
  ChunkDirectory directory(Options(3, [](auto& o) { o.high_watermark = 0.5; }));
  directory.Produced(kA, 0, 300);
  directory.Produced(kB, 0, 200);
  directory.PlanRead(kA, 0);       // A was used after B
  directory.Produced(kC, 0, 100);  // 0.6: B (least recently used) goes; 0.4 left
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Copy(kB, 0, 1, 200, Reason::kRebalance)});
}

TEST(ChunkDirectoryTest, FailedMoveDropsNothingAndPinnedOriginalIsKept) {
  ChunkDirectory directory(Options(3, [](auto& o) { o.high_watermark = 0.5; }));
  directory.Produced(kA, 0, 300);
  directory.Produced(kB, 0, 300);  // 0.6: A to rank 1
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Copy(kA, 0, 1, 300, Reason::kRebalance)});
  directory.CopyFailed(kA, 1);
  EXPECT_TRUE(directory.TakeDecisions().empty());
  EXPECT_DOUBLE_EQ(directory.fill(0), 0.6);  // A counts on rank 0 again
  EXPECT_DOUBLE_EQ(directory.fill(1), 0.0);
  directory.CheckConsistency();
  // Rebalance (mean 0.2): A was released last, so B (least recently used) goes to
  // rank 1; pinned meanwhile, its original stays.
  directory.Rebalance();
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Copy(kB, 0, 1, 300, Reason::kRebalance)});
  directory.Pin(kB, 0);
  directory.CopyArrived(kB, 1);
  EXPECT_TRUE(directory.TakeDecisions().empty());
  EXPECT_EQ(directory.holders(kB), (std::vector<int>{0, 1}));
  // Fills 0.6, 0.3, 0 (mean 0.3): B is pinned, so A goes to rank 2.
  directory.Rebalance();
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Copy(kA, 0, 2, 300, Reason::kRebalance)});
  directory.CopyArrived(kA, 2);
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Drop(kA, 0, 300, Reason::kRebalance)});
  directory.Unpin(kB, 0);  // B keeps its surplus copy; every rank is at the mean
  directory.Rebalance();
  EXPECT_TRUE(directory.TakeDecisions().empty());
  EXPECT_EQ(directory.holders(kB), (std::vector<int>{0, 1}));
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, RebalanceMovesToTheMeanAndCountsPendingCopies) {
  ChunkDirectory directory(Options(4, [](auto& o) { o.high_watermark = 10; }));
  std::vector<ChunkKey> chunks;
  for (int block = 0; block < 8; ++block) {
    chunks.push_back({5, block});
    directory.Produced(chunks.back(), 0, 100);
  }
  EXPECT_TRUE(directory.TakeDecisions().empty());
  // Mean 0.2: rank 0 (0.8) gives its oldest chunks to the least filled, round robin,
  // until it is at the mean.
  directory.Rebalance();
  const auto move = [&](int block, int to) {
    return Copy(chunks[static_cast<std::size_t>(block)], 0, to, 100, Reason::kRebalance);
  };
  const Decisions moves{move(0, 1), move(1, 2), move(2, 3), move(3, 1), move(4, 2), move(5, 3)};
  EXPECT_EQ(directory.TakeDecisions(), moves);
  directory.Rebalance();  // the pending copies count: nothing more
  EXPECT_TRUE(directory.TakeDecisions().empty());
  directory.CheckConsistency();
  for (const DirectoryDecision& copy : moves) directory.CopyArrived(copy.chunk, copy.to);
  const Decisions drops = directory.TakeDecisions();
  ASSERT_EQ(drops.size(), 6u);
  for (std::size_t at = 0; at < drops.size(); ++at) {
    EXPECT_EQ(drops[at], Drop(moves[at].chunk, 0, 100, Reason::kRebalance));
  }
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(directory.held_bytes(rank), 200);
  directory.Rebalance();
  EXPECT_TRUE(directory.TakeDecisions().empty());
  EXPECT_EQ(directory.totals().bytes_rebalanced, 600);
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, RebalanceWeighsRanksByCapacity) {
  ChunkDirectory directory(Options(2, [](auto& o) {
    o.capacity = {1000, 3000};
    o.high_watermark = 10;
  }));
  for (int block = 0; block < 4; ++block) directory.Produced({5, block}, 0, 200);
  // Mean 800 / 4000 = 0.2: three chunks go, leaving 200 / 1000 and 600 / 3000.
  directory.Rebalance();
  EXPECT_EQ(directory.TakeDecisions(), (Decisions{Copy({5, 0}, 0, 1, 200, Reason::kRebalance),
                                                  Copy({5, 1}, 0, 1, 200, Reason::kRebalance),
                                                  Copy({5, 2}, 0, 1, 200, Reason::kRebalance)}));
  EXPECT_DOUBLE_EQ(directory.fill(0), 0.2);
  EXPECT_DOUBLE_EQ(directory.fill(1), 0.2);
  EXPECT_EQ(directory.pending_bytes(1), 600);
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, RebalancePrefersDroppingSurplusReplicas) {
  ChunkDirectory directory(Options(3, [](auto& o) {
    o.high_watermark = 10;
    o.replicate_after = 1;
  }));
  directory.Produced(kA, 1, 300);
  ASSERT_TRUE(directory.PlanRead(kA, 0).keep_replica);
  directory.ReplicaKept(kA, 0);
  directory.Produced(kB, 0, 300);
  directory.Produced(kC, 0, 300);  // fills 0.9, 0.3, 0; mean 0.4
  directory.Rebalance();
  // A's copy on rank 0 is surplus: dropped (mean now 0.3); then B (oldest) to rank 2.
  EXPECT_EQ(directory.TakeDecisions(), (Decisions{Drop(kA, 0, 300, Reason::kSurplusReplica),
                                                  Copy(kB, 0, 2, 300, Reason::kRebalance)}));
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, RebalanceLeavesPinnedChunksAndStopsWhenNothingMoves) {
  ChunkDirectory directory(Options(2, [](auto& o) { o.high_watermark = 10; }));
  directory.Produced(kA, 0, 500);
  directory.Produced(kB, 0, 300);
  directory.Pin(kA, 1);   // a pin anywhere keeps the chunk where it is
  directory.Rebalance();  // mean 0.4: B moves (0.5 vs 0.3 after)
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Copy(kB, 0, 1, 300, Reason::kRebalance)});
  directory.CopyArrived(kB, 1);
  directory.TakeDecisions();
  directory.Rebalance();  // 0.5 vs 0.3: only A could go, and it is pinned
  EXPECT_TRUE(directory.TakeDecisions().empty());
  directory.Unpin(kA, 1);
  directory.Rebalance();  // moving A (0.5) would not lower the imbalance
  EXPECT_TRUE(directory.TakeDecisions().empty());
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, SpillsTheFullestRanksLeastRecentlyUsedChunkPastCapacity) {
  ChunkDirectory directory(Options(2, [](auto& o) { o.high_watermark = 10; }));
  directory.Produced(kA, 0, 800);
  directory.Produced(kB, 1, 800);
  EXPECT_TRUE(directory.TakeDecisions().empty());
  directory.Produced(kC, 0, 600);  // 2200 > 2000: rank 0 (1.4) spills A
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Spill(kA, 0, 800)});
  EXPECT_DOUBLE_EQ(directory.fill(0), 0.6);
  EXPECT_EQ(directory.PlanRead(kA, 1).from, 0);  // still there until written
  directory.Spilled(kA);
  EXPECT_TRUE(directory.spilled(kA));
  EXPECT_TRUE(directory.knows(kA));
  EXPECT_EQ(directory.held_bytes(0), 600);
  EXPECT_TRUE(directory.holders(kA).empty());
  const ChunkDirectory::ReadPlan plan = directory.PlanRead(kA, 1);
  EXPECT_TRUE(plan.spilled);
  EXPECT_EQ(plan.from, -1);
  EXPECT_FALSE(plan.keep_replica);
  EXPECT_EQ(directory.totals().bytes_spilled, 800);
  EXPECT_EQ(directory.totals().spills, 1);
  directory.Free(kA);
  EXPECT_TRUE(directory.TakeDecisions().empty());  // on no rank: nothing to drop
  EXPECT_FALSE(directory.knows(kA));
  EXPECT_EQ(directory.totals().bytes_freed, 800);
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, SpillDropsSurplusReplicasFirst) {
  ChunkDirectory directory(Options(2, [](auto& o) {
    o.high_watermark = 10;
    o.replicate_after = 1;
  }));
  directory.Produced(kA, 0, 500);
  ASSERT_TRUE(directory.PlanRead(kA, 1).keep_replica);
  directory.ReplicaKept(kA, 1);
  directory.Produced(kB, 1, 700);  // 1700
  directory.Produced(kC, 1, 400);  // 2100: rank 1 (1.6) drops its copy of A
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Drop(kA, 1, 500, Reason::kSurplusReplica)});
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, FreeWhileSpillingWaitsForTheSpill) {
  ChunkDirectory directory(Options(1, [](auto& o) { o.high_watermark = 10; }));
  directory.Produced(kA, 0, 600);
  directory.Produced(kB, 0, 600);
  EXPECT_EQ(directory.TakeDecisions(), Decisions{Spill(kA, 0, 600)});
  directory.Free(kA);
  EXPECT_TRUE(directory.TakeDecisions().empty());
  EXPECT_EQ(directory.held_bytes(0), 1200);
  directory.Spilled(kA);
  EXPECT_EQ(directory.held_bytes(0), 600);
  EXPECT_TRUE(directory.holders(kA).empty());
  directory.CheckConsistency();
}

TEST(ChunkDirectoryTest, PlaceTaskPicksTheRankHoldingMostInputBytes) {
  ChunkDirectory directory(Options(4));
  directory.Produced(kA, 1, 100);
  directory.Produced(kB, 2, 300);
  directory.Produced(kC, 1, 200);
  directory.Produced(kD, 2, 50);  // not an input: rank 2 fills more
  const std::vector<ChunkKey> inputs{kA, kB, kC, {9, 9}};
  // Ranks 1 and 2 hold 300 bytes each: rank 1 fills less.
  EXPECT_EQ(directory.PlaceTask(inputs, std::vector<int>{3, 2, 1, 0}), 1);
  EXPECT_EQ(directory.PlaceTask(inputs, std::vector<int>{0, 2, 3}), 2);
  EXPECT_EQ(directory.PlaceTask(inputs, std::vector<int>{3, 0}), 0);  // none: lowest rank
  EXPECT_EQ(directory.PlaceTask(inputs, std::vector<int>{}), -1);
}

}  // namespace
}  // namespace tessera::exec
