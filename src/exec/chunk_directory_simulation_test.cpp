// Simulations of the chunk directory at cluster scale (1,000 ranks, 1,000,000 chunks):
// a model executor carries out every decision and checks the invariants on each one.
// The seed comes from TESSERA_TEST_SEED (printed), so any failure can be replayed.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "chunk_directory.hpp"

namespace tessera::exec {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif
// Under AddressSanitizer the large simulations use a quarter of the chunks, to stay under a
// minute; everything else (ranks, checks) is the same.
constexpr std::int64_t kScale = kSanitized ? 4 : 1;
constexpr std::int64_t kMiB = 1 << 20;
constexpr int kBlocks = 1024;  // chunk i is (op i / kBlocks, block i % kBlocks)

using Kind = DirectoryDecision::Kind;
using Reason = DirectoryDecision::Reason;
using Clock = std::chrono::steady_clock;

std::uint64_t Seed() {
  static const std::uint64_t seed = [] {
    const char* text = std::getenv("TESSERA_TEST_SEED");
    const std::uint64_t value = text != nullptr ? std::strtoull(text, nullptr, 10) : 20240611;
    std::printf("chunk directory simulation: TESSERA_TEST_SEED=%llu\n",
                static_cast<unsigned long long>(value));
    return value;
  }();
  return seed;
}

ChunkKey Key(std::int64_t chunk) { return {static_cast<int>(chunk / kBlocks), chunk % kBlocks}; }
std::int64_t IndexOf(ChunkKey key) { return std::int64_t{key.op} * kBlocks + key.block; }

std::uint64_t Mix(std::int64_t chunk, std::int64_t bytes) {
  std::uint64_t x =
      static_cast<std::uint64_t>(chunk) * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(bytes);
  x = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull;
  return x ^ (x >> 29);
}

double Seconds(Clock::duration duration) { return std::chrono::duration<double>(duration).count(); }

// The executor's side: carries out the directory's decisions, keeps who really holds
// what, and checks every decision against the invariants. Failures are counted (and the
// first few described) rather than asserted one by one, so a million chunks stay fast.
class ModelExecutor {
 public:
  struct Chunk {
    std::int64_t bytes = 0;
    std::array<std::int32_t, 6> on{};  // ranks holding it
    std::int8_t holders = 0;
    std::int8_t copies = 0;    // kCopy on their way
    std::int8_t reserved = 0;  // kept read replicas on their way
    bool spilled = false;
    bool freed = false;
    std::int32_t confirmed_move_from = -1;  // during CopyArrived of a rebalance copy
  };
  struct Transfer {
    ChunkKey chunk;
    int from = -1;
    int to = -1;
    Reason reason = Reason::kSpill;
  };

  ModelExecutor(ChunkDirectory& directory, int min_copies, int max_copies)
      : directory_(directory), min_copies_(min_copies), max_copies_(max_copies) {}

  Chunk& At(ChunkKey key) {
    const auto index = static_cast<std::size_t>(IndexOf(key));
    if (index >= chunks_.size()) chunks_.resize(index + 1);
    return chunks_[index];
  }
  bool Holds(const Chunk& chunk, int rank) const {
    return std::find(chunk.on.begin(), chunk.on.begin() + chunk.holders, rank) !=
           chunk.on.begin() + chunk.holders;
  }
  void Check(bool ok, ChunkKey key, int from, int to, const char* what) {
    if (ok) return;
    if (++violations_ <= 5) {
      ADD_FAILURE() << what << ": chunk (" << key.op << ", " << key.block << ") from " << from
                    << " to " << to;
    }
  }
  void Check(bool ok, const DirectoryDecision& d, const char* what) {
    Check(ok, d.chunk, d.from, d.to, what);
  }
  void AddHolder(ChunkKey key, int rank) {
    Chunk& chunk = At(key);
    Check(!Holds(chunk, rank) && chunk.holders < 6, key, -1, rank, "a replica arrives twice");
    if (chunk.holders < 6) chunk.on[static_cast<std::size_t>(chunk.holders++)] = rank;
  }
  int Pins(ChunkKey key, int rank) const {
    const auto found = pins_.find(IndexOf(key) * 100000 + rank);
    return found == pins_.end() ? 0 : found->second;
  }

  void Produce(ChunkKey key, int rank, std::int64_t bytes, std::int64_t readers = -1) {
    Chunk& chunk = At(key);
    chunk = Chunk{};
    chunk.bytes = bytes;
    chunk.on[0] = rank;
    chunk.holders = 1;
    directory_.Produced(key, rank, bytes, readers);
    ApplyAll();
  }

  // A task on `rank` reads the chunk: checks the plan, reserves a kept replica.
  ChunkDirectory::ReadPlan Read(ChunkKey key, int rank) {
    const ChunkDirectory::ReadPlan plan = directory_.PlanRead(key, rank);
    Chunk& chunk = At(key);
    Check(plan.spilled ? chunk.spilled && plan.from < 0 : Holds(chunk, plan.from), key, plan.from,
          rank, "a read from a rank that does not hold it");
    if (plan.keep_replica) {
      ++chunk.reserved;
      Check(chunk.holders + chunk.copies + chunk.reserved <= max_copies_, key, plan.from, rank,
            "a kept read replica past max_replicas");
    }
    ApplyAll();
    return plan;
  }
  // The replica a read kept arrives on `rank` (keep), or is not kept.
  void Kept(ChunkKey key, int rank, bool keep) {
    --At(key).reserved;
    if (keep) {
      AddHolder(key, rank);
      directory_.ReplicaKept(key, rank);
    } else {
      directory_.ReplicaAbandoned(key, rank);
    }
    ApplyAll();
  }

  void Apply(const DirectoryDecision& d) {
    ++decisions_;
    Chunk& chunk = At(d.chunk);
    Check(d.bytes == chunk.bytes, d, "decision with the wrong size");
    switch (d.kind) {
      case Kind::kCopy:
        Check(Holds(chunk, d.from) && !Holds(chunk, d.to), d,
              "copy from a non-holder or to a holder");
        ++chunk.copies;
        Check(chunk.holders + chunk.copies + chunk.reserved <= max_copies_, d,
              "max_replicas exceeded");
        copies_.push_back({d.chunk, d.from, d.to, d.reason});
        break;
      case Kind::kDrop: {
        Check(Holds(chunk, d.from), d, "drop on a rank that does not hold it");
        Check(Pins(d.chunk, d.from) == 0, d, "a pinned replica dropped");
        if (d.reason != Reason::kFreed) {
          Check(!chunk.freed && chunk.holders - 1 >= std::max(1, min_copies_), d,
                "drop of the last replica or below min_replicas");
        }
        if (d.reason == Reason::kRebalance) {
          Check(chunk.confirmed_move_from == d.from, d, "a drop before its copy was confirmed");
        }
        auto* end = chunk.on.begin() + chunk.holders;
        std::iter_swap(std::find(chunk.on.begin(), end, d.from), end - 1);
        --chunk.holders;
        bytes_dropped_ += d.bytes;
        break;
      }
      case Kind::kSpill:
        Check(Holds(chunk, d.from), d, "spill from a rank that does not hold it");
        spills_.push_back({d.chunk, d.from, -1, Reason::kSpill});
        break;
    }
  }
  void ApplyAll() {
    for (const DirectoryDecision& d : directory_.TakeDecisions()) Apply(d);
  }

  // Completes the copy at copies_[at]: it arrives, or fails.
  void FinishCopy(std::size_t at, bool fail) {
    const Transfer copy = copies_[at];
    copies_[at] = copies_.back();
    copies_.pop_back();
    Chunk& chunk = At(copy.chunk);
    --chunk.copies;
    if (fail) {
      directory_.CopyFailed(copy.chunk, copy.to);
      ApplyAll();
      return;
    }
    AddHolder(copy.chunk, copy.to);
    if (copy.reason == Reason::kRebalance) {
      chunk.confirmed_move_from = copy.from;
      bytes_moved_ += chunk.bytes;
    }
    directory_.CopyArrived(copy.chunk, copy.to);
    ApplyAll();
    At(copy.chunk).confirmed_move_from = -1;
  }
  // Completes the spill at spills_[at]: written, then freed on every rank.
  void FinishSpill(std::size_t at) {
    const Transfer spill = spills_[at];
    spills_[at] = spills_.back();
    spills_.pop_back();
    Chunk& chunk = At(spill.chunk);
    chunk.holders = 0;
    chunk.spilled = true;
    directory_.Spilled(spill.chunk);
    ApplyAll();
  }
  // Carries out everything outstanding; returns the decisions taken meanwhile.
  std::int64_t Settle() {
    const std::int64_t before = decisions_;
    ApplyAll();
    while (!copies_.empty() || !spills_.empty()) {
      if (!copies_.empty()) FinishCopy(copies_.size() - 1, false);
      if (!spills_.empty()) FinishSpill(spills_.size() - 1);
    }
    return decisions_ - before;
  }

  std::vector<int> HoldersOf(ChunkKey key) {
    const Chunk& chunk = At(key);
    std::vector<int> ranks(chunk.on.begin(), chunk.on.begin() + chunk.holders);
    std::sort(ranks.begin(), ranks.end());
    return ranks;
  }

  ChunkDirectory& directory_;
  int min_copies_;
  int max_copies_;
  std::vector<Chunk> chunks_;
  std::vector<Transfer> copies_;
  std::vector<Transfer> spills_;
  std::unordered_map<std::int64_t, int> pins_;  // chunk * 100000 + rank -> pins
  std::int64_t decisions_ = 0;
  std::int64_t violations_ = 0;
  std::int64_t bytes_moved_ = 0;
  std::int64_t bytes_dropped_ = 0;
};

// 1,000 ranks, 1,000,000 chunks of 1-4 MiB (half the cluster's capacity), 90% of them
// written on ranks 0-9: the watermark sheds them as they come, Rebalance() finishes.
TEST(ChunkDirectorySimulation, SkewedProductionEndsBalancedWithoutLosingAChunk) {
  SCOPED_TRACE("TESSERA_TEST_SEED=" + std::to_string(Seed()));
  std::mt19937_64 random(Seed());
  constexpr int kRanks = 1000;
  const std::int64_t count = 1'000'000 / kScale;
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(count));
  std::int64_t total = 0;
  std::uint64_t checksum = 0;
  for (std::int64_t chunk = 0; chunk < count; ++chunk) {
    sizes[static_cast<std::size_t>(chunk)] =
        std::uniform_int_distribution<std::int64_t>(kMiB, 4 * kMiB)(random);
    total += sizes[static_cast<std::size_t>(chunk)];
    checksum += Mix(chunk, sizes[static_cast<std::size_t>(chunk)]);
  }
  DirectoryOptions options;
  options.capacity.assign(kRanks, 2 * total / kRanks + 1);
  ChunkDirectory directory(options);
  ModelExecutor executor(directory, 1, 3);
  const auto start = Clock::now();
  for (std::int64_t chunk = 0; chunk < count; ++chunk) {
    const int rank =
        random() % 10 < 9 ? static_cast<int>(chunk % 10) : static_cast<int>(random() % kRanks);
    executor.Produce(Key(chunk), rank, sizes[static_cast<std::size_t>(chunk)]);
    if (chunk % 1024 == 1023) executor.Settle();  // the copies of the last 1,024 arrive
  }
  executor.Settle();
  const std::int64_t produce_decisions = executor.decisions_;
  const auto produced = Clock::now();
  int rounds = 0;
  for (; rounds < 20; ++rounds) {
    directory.Rebalance();
    if (executor.Settle() == 0) break;
  }
  const auto balanced = Clock::now();
  EXPECT_LT(rounds, 20) << "Rebalance() did not come to rest";

  EXPECT_EQ(executor.violations_, 0);
  const double mean =
      static_cast<double>(total) / static_cast<double>(kRanks * options.capacity[0]);
  double lowest = 1e9, highest = 0;
  std::vector<std::int64_t> model_held(kRanks, 0);
  std::uint64_t held_checksum = 0;
  std::int64_t lost = 0, mismatched = 0;
  for (std::int64_t chunk = 0; chunk < count; ++chunk) {
    const std::vector<int> holders = directory.holders(Key(chunk));
    lost += holders.empty() ? 1 : 0;
    mismatched += holders != executor.HoldersOf(Key(chunk)) ? 1 : 0;
    if (!holders.empty()) held_checksum += Mix(chunk, sizes[static_cast<std::size_t>(chunk)]);
    for (const int rank : holders) {
      model_held[static_cast<std::size_t>(rank)] += sizes[static_cast<std::size_t>(chunk)];
    }
  }
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_EQ(directory.held_bytes(rank), model_held[static_cast<std::size_t>(rank)]);
    EXPECT_EQ(directory.pending_bytes(rank), 0);
    lowest = std::min(lowest, directory.fill(rank));
    highest = std::max(highest, directory.fill(rank));
  }
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(mismatched, 0);
  EXPECT_EQ(held_checksum, checksum);
  EXPECT_LE(highest, mean * 1.1 + 1e-12);
  EXPECT_GE(lowest, mean * 0.9 - 1e-12);
  directory.CheckConsistency();
  const DirectoryTotals& totals = directory.totals();
  EXPECT_EQ(totals.bytes_dropped, executor.bytes_dropped_);
  EXPECT_EQ(totals.bytes_rebalanced, executor.bytes_moved_);
  std::printf(
      "skewed: %lld chunks, %.1f GiB on %d ranks (mean fill %.3f, now %.3f..%.3f); "
      "%lld decisions while producing, %lld in %d Rebalance() rounds; moved %.1f GiB, "
      "dropped %.1f GiB; produce %.2f s, rebalance %.2f s\n",
      static_cast<long long>(count), static_cast<double>(total) / (1 << 30), kRanks, mean, lowest,
      highest, static_cast<long long>(produce_decisions),
      static_cast<long long>(executor.decisions_ - produce_decisions), rounds + 1,
      static_cast<double>(totals.bytes_rebalanced) / (1 << 30),
      static_cast<double>(totals.bytes_dropped) / (1 << 30), Seconds(produced - start),
      Seconds(balanced - produced));
}

// Rebalance() alone, at scale: every chunk on rank 0 (no watermark), one call plans the
// whole spread.
TEST(ChunkDirectorySimulation, OneRebalanceSpreadsAHotRank) {
  SCOPED_TRACE("TESSERA_TEST_SEED=" + std::to_string(Seed()));
  std::mt19937_64 random(Seed() + 1);
  constexpr int kRanks = 1000;
  const std::int64_t count = 1'000'000 / kScale;
  DirectoryOptions options;
  options.capacity.assign(kRanks, count * 5 * kMiB / kRanks);  // mean fill about 0.5
  options.high_watermark = std::numeric_limits<double>::infinity();
  ChunkDirectory directory(options);
  ModelExecutor executor(directory, 1, 3);
  for (std::int64_t chunk = 0; chunk < count; ++chunk) {
    executor.Produce(Key(chunk), 0,
                     std::uniform_int_distribution<std::int64_t>(kMiB, 4 * kMiB)(random));
  }
  const std::int64_t work_before = directory.work();
  const auto start = Clock::now();
  directory.Rebalance();
  const auto planned = Clock::now();
  const std::vector<DirectoryDecision> moves = directory.TakeDecisions();
  const std::int64_t work = directory.work() - work_before;
  directory.Rebalance();  // pending copies count: nothing more
  EXPECT_TRUE(directory.TakeDecisions().empty());
  for (const DirectoryDecision& move : moves) executor.Apply(move);
  executor.Settle();
  directory.Rebalance();
  EXPECT_EQ(executor.Settle(), 0);
  EXPECT_EQ(executor.violations_, 0);
  const double mean = static_cast<double>(directory.totals().bytes_produced) /
                      static_cast<double>(kRanks * options.capacity[0]);
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_NEAR(directory.fill(rank), mean, mean * 0.1 + 1e-12) << "rank " << rank;
  }
  EXPECT_LT(work, 100 * static_cast<std::int64_t>(moves.size()));  // cost follows the moves
  directory.CheckConsistency();
  std::printf("one rebalance: %zu moves of %lld chunks planned in %.2f s (%.1f elements each)\n",
              moves.size(), static_cast<long long>(count), Seconds(planned - start),
              static_cast<double>(work) / static_cast<double>(moves.size()));
}

// The cost of an event does not grow with the chunks the directory holds: the elements it
// visits (deterministic) and, loosely, its time.
TEST(ChunkDirectorySimulation, EventCostDoesNotGrowWithTheChunksHeld) {
  SCOPED_TRACE("TESSERA_TEST_SEED=" + std::to_string(Seed()));
  constexpr int kRanks = 1000;
  constexpr int kEvents = 10'000;
  struct Cost {
    double work = 0;     // elements visited per event
    double seconds = 0;  // per event, best of 3
  };
  const auto measure = [&](std::int64_t held) {
    std::mt19937_64 random(Seed() + 2);
    DirectoryOptions options;
    options.capacity.assign(kRanks, std::int64_t{1} << 50);
    ChunkDirectory directory(options);
    for (std::int64_t chunk = 0; chunk < held; ++chunk) {
      directory.Produced(Key(chunk), static_cast<int>(random() % kRanks), kMiB);
    }
    Cost cost{0, 1e9};
    for (int rep = 0; rep < 3; ++rep) {
      const std::int64_t work = directory.work();
      const auto start = Clock::now();
      for (int event = 0; event < kEvents; ++event) {
        const ChunkKey key{1'000'000 + rep, event};  // op past the held chunks'
        const int rank = static_cast<int>(random() % kRanks);
        directory.Produced(key, rank, 2 * kMiB, 1);
        directory.PlanRead(key, (rank + 1) % kRanks);
        directory.ReadDone(key, (rank + 1) % kRanks);
        if (event % 256 == 0) directory.TakeDecisions();
      }
      const double seconds = Seconds(Clock::now() - start) / (3 * kEvents);
      cost.seconds = std::min(cost.seconds, seconds);
      cost.work = static_cast<double>(directory.work() - work) / (3 * kEvents);
    }
    EXPECT_EQ(directory.live_chunks(), held);
    return cost;
  };
  const Cost small = measure(10'000);
  const Cost large = measure(1'000'000 / kScale);
  std::printf("per event: %.1f elements, %.0f ns at 10^4 chunks; %.1f elements, %.0f ns at %lld\n",
              small.work, small.seconds * 1e9, large.work, large.seconds * 1e9,
              static_cast<long long>(1'000'000 / kScale));
  EXPECT_LE(large.work, small.work * 1.25);
  EXPECT_LE(large.seconds, small.seconds * 5) << "loose timing bound (a loaded machine?)";
}

// A chunk read from every rank of 8 gets replicas up to max_replicas, never more; with
// min_replicas 2 both copies exist and a free drops both.
TEST(ChunkDirectorySimulation, ReplicasGrowWithReadsUpToMaxAndGoWithTheChunk) {
  SCOPED_TRACE("TESSERA_TEST_SEED=" + std::to_string(Seed()));
  DirectoryOptions options;
  options.capacity.assign(8, 1 << 30);
  {
    ChunkDirectory directory(options);  // max_replicas 3, replicate_after 2
    ModelExecutor executor(directory, 1, 3);
    const ChunkKey key = Key(0);
    executor.Produce(key, 0, kMiB, 7);
    std::vector<ChunkDirectory::ReadPlan> plans;  // every rank asks before any copy lands
    for (int rank = 1; rank < 8; ++rank) {
      plans.push_back(executor.Read(key, rank));
      EXPECT_EQ(plans.back().from, 0);
    }
    for (int rank = 1; rank < 8; ++rank) {
      EXPECT_EQ(plans[static_cast<std::size_t>(rank - 1)].keep_replica, rank == 2 || rank == 3)
          << "rank " << rank;
    }
    executor.Kept(key, 2, true);
    executor.Kept(key, 3, true);
    EXPECT_EQ(directory.holders(key), (std::vector<int>{0, 2, 3}));
    for (int rank = 1; rank < 8; ++rank) {  // reads again: all ranks now count, none kept
      EXPECT_FALSE(executor.Read(key, rank).keep_replica);
    }
    for (int rank = 1; rank < 8; ++rank) directory.ReadDone(key, rank);
    executor.ApplyAll();
    EXPECT_FALSE(directory.knows(key));
    EXPECT_EQ(executor.At(key).holders, 0);  // the free dropped all three
    EXPECT_EQ(directory.totals().bytes_replicated, 2 * kMiB);
    EXPECT_EQ(executor.violations_, 0);
  }
  {
    options.min_replicas = 2;
    ChunkDirectory directory(options);
    ModelExecutor executor(directory, 2, 3);
    std::mt19937_64 random(Seed() + 3);
    for (std::int64_t chunk = 0; chunk < 1000; ++chunk) {
      executor.Produce(Key(chunk), static_cast<int>(random() % 8), kMiB);
    }
    executor.Settle();
    for (std::int64_t chunk = 0; chunk < 1000; ++chunk) {
      EXPECT_EQ(directory.holders(Key(chunk)).size(), 2u);
    }
    for (int read = 0; read < 20'000; ++read) {  // reads from random ranks, some replicas kept
      const ChunkKey key = Key(static_cast<std::int64_t>(random() % 1000));
      const int rank = static_cast<int>(random() % 8);
      if (executor.Read(key, rank).keep_replica) executor.Kept(key, rank, random() % 4 != 0);
    }
    std::int64_t replicas = 0;
    for (std::int64_t chunk = 0; chunk < 1000; ++chunk) {
      const std::vector<int> holders = directory.holders(Key(chunk));
      EXPECT_GE(holders.size(), 2u);
      EXPECT_LE(holders.size(), 3u);
      EXPECT_EQ(holders, executor.HoldersOf(Key(chunk)));
      replicas += static_cast<std::int64_t>(holders.size());
    }
    EXPECT_GT(replicas, 2000);  // some reads kept a third copy
    const std::int64_t drops = directory.totals().drops;
    directory.FreeOp(0);  // every chunk: each of its copies dropped
    executor.ApplyAll();
    EXPECT_EQ(directory.totals().drops - drops, replicas);
    for (std::int64_t chunk = 0; chunk < 1000; ++chunk) {
      EXPECT_EQ(executor.At(Key(chunk)).holders, 0);
    }
    for (int rank = 0; rank < 8; ++rank) EXPECT_EQ(directory.held_bytes(rank), 0);
    EXPECT_EQ(executor.violations_, 0);
    directory.CheckConsistency();
  }
}

// Past the cluster's capacity the directory spills; spilled chunks read as spilled and
// no chunk is lost.
TEST(ChunkDirectorySimulation, PastCapacityChunksAreSpilledAndReadFromStorage) {
  SCOPED_TRACE("TESSERA_TEST_SEED=" + std::to_string(Seed()));
  std::mt19937_64 random(Seed() + 4);
  constexpr int kRanks = 100;
  constexpr std::int64_t kChunks = 20'000;
  DirectoryOptions options;
  options.capacity.assign(kRanks, 256 * kMiB);  // 25 GiB in all, for about 50 GiB
  ChunkDirectory directory(options);
  ModelExecutor executor(directory, 1, 3);
  std::int64_t total = 0;
  std::uint64_t checksum = 0;
  for (std::int64_t chunk = 0; chunk < kChunks; ++chunk) {
    const std::int64_t bytes = std::uniform_int_distribution<std::int64_t>(kMiB, 4 * kMiB)(random);
    total += bytes;
    checksum += Mix(chunk, bytes);
    executor.Produce(Key(chunk), static_cast<int>(random() % 10), bytes);
    if (chunk % 64 == 63) executor.Settle();
  }
  executor.Settle();
  EXPECT_EQ(executor.violations_, 0);
  std::int64_t held = 0, spilled = 0;
  std::uint64_t found = 0;
  for (int rank = 0; rank < kRanks; ++rank) held += directory.held_bytes(rank);
  for (std::int64_t chunk = 0; chunk < kChunks; ++chunk) {
    const ChunkKey key = Key(chunk);
    const ChunkDirectory::ReadPlan plan = directory.PlanRead(key, 0);
    EXPECT_EQ(plan.spilled, directory.spilled(key));
    EXPECT_EQ(plan.spilled, directory.holders(key).empty());
    EXPECT_EQ(plan.spilled, executor.At(key).spilled);
    if (plan.spilled) spilled += executor.At(key).bytes;
    found += Mix(chunk, executor.At(key).bytes);
  }
  EXPECT_EQ(found, checksum);
  EXPECT_LE(held, kRanks * options.capacity[0]);
  EXPECT_GE(spilled, total - kRanks * options.capacity[0]);
  EXPECT_EQ(directory.totals().bytes_spilled, spilled);
  directory.CheckConsistency();
  std::printf("spill: %.1f GiB produced into %.1f GiB: %lld spills, %.1f GiB spilled\n",
              static_cast<double>(total) / (1 << 30),
              static_cast<double>(kRanks * options.capacity[0]) / (1 << 30),
              static_cast<long long>(directory.totals().spills),
              static_cast<double>(spilled) / (1 << 30));
}

// Random interleavings of every event, copies that fail, pins, frees and spills on a
// small cluster, with a full consistency check every few events.
TEST(ChunkDirectorySimulation, RandomEventsKeepEveryInvariant) {
  SCOPED_TRACE("TESSERA_TEST_SEED=" + std::to_string(Seed()));
  for (int config = 0; config < 4; ++config) {
    std::mt19937_64 random(Seed() + 10 + static_cast<std::uint64_t>(config));
    const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(random() % n); };
    DirectoryOptions options;
    constexpr int kRanks = 16;
    options.capacity.assign(kRanks, 1000 + 200 * config);
    options.min_replicas = 1 + config % 2;
    options.max_replicas = 2 + config / 2;
    options.replicate_after = 1 + config / 2;
    ChunkDirectory directory(options);
    ModelExecutor executor(directory, options.min_replicas, options.max_replicas);
    struct Read {
      ChunkKey chunk;
      int rank;
    };
    std::vector<ChunkKey> known;
    std::vector<Read> reads, kept, pins;
    std::int64_t next = 0;
    for (int step = 0; step < 20'000; ++step) {
      const int rank = static_cast<int>(random() % kRanks);
      const std::size_t what = pick(100);
      std::erase_if(known, [&](ChunkKey key) { return !directory.knows(key); });
      if (what < 25 || known.empty()) {
        const ChunkKey key = Key(next++);
        executor.Produce(key, rank, 1 + static_cast<std::int64_t>(pick(100)),
                         static_cast<std::int64_t>(pick(5)) - 1);
        if (directory.knows(key)) known.push_back(key);
      } else if (what < 45) {
        const ChunkKey key = known[pick(known.size())];
        if (executor.Read(key, rank).keep_replica) kept.push_back({key, rank});
        reads.push_back({key, rank});
      } else if (what < 55 && !reads.empty()) {
        const std::size_t at = pick(reads.size());
        if (directory.knows(reads[at].chunk)) directory.ReadDone(reads[at].chunk, reads[at].rank);
        reads.erase(reads.begin() + static_cast<std::ptrdiff_t>(at));
      } else if (what < 62 && !kept.empty()) {
        const std::size_t at = pick(kept.size());
        const Read replica = kept[at];
        kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(at));
        executor.Kept(replica.chunk, replica.rank, pick(4) != 0);
      } else if (what < 68) {
        const ChunkKey key = known[pick(known.size())];
        directory.Pin(key, rank);
        ++executor.pins_[IndexOf(key) * 100000 + rank];
        pins.push_back({key, rank});
      } else if (what < 75 && !pins.empty()) {
        const std::size_t at = pick(pins.size());
        const Read pin = pins[at];
        pins.erase(pins.begin() + static_cast<std::ptrdiff_t>(at));
        --executor.pins_[IndexOf(pin.chunk) * 100000 + pin.rank];
        directory.Unpin(pin.chunk, pin.rank);
      } else if (what < 78) {
        const ChunkKey key = known[pick(known.size())];
        executor.At(key).freed = true;
        directory.Free(key);
      } else if (what < 79) {
        const int op = known[pick(known.size())].op;
        for (const ChunkKey key : known) executor.At(key).freed |= key.op == op;
        directory.FreeOp(op);
      } else if (what < 83) {
        directory.Rebalance();
      } else if (what < 97 && !executor.copies_.empty()) {
        executor.FinishCopy(pick(executor.copies_.size()), pick(5) == 0);
      } else if (!executor.spills_.empty()) {
        executor.FinishSpill(pick(executor.spills_.size()));
      }
      executor.ApplyAll();
      if (step % 97 == 0) {
        ASSERT_NO_THROW(directory.CheckConsistency()) << "config " << config << " step " << step;
        for (const ChunkKey key : known) {
          ASSERT_EQ(directory.holders(key), executor.HoldersOf(key)) << "config " << config;
        }
      }
      ASSERT_EQ(executor.violations_, 0) << "config " << config << " step " << step;
    }
    // Wind down: every read, replica, pin and transfer settles, then everything is freed.
    for (const Read& replica : kept) executor.Kept(replica.chunk, replica.rank, false);
    for (const Read& pin : pins) {
      --executor.pins_[IndexOf(pin.chunk) * 100000 + pin.rank];
      directory.Unpin(pin.chunk, pin.rank);
    }
    executor.Settle();
    for (std::int64_t chunk = 0; chunk < next; ++chunk) {
      if (directory.knows(Key(chunk))) directory.Free(Key(chunk));
    }
    executor.Settle();
    directory.CheckConsistency();
    EXPECT_EQ(directory.live_chunks(), 0);
    for (int r = 0; r < kRanks; ++r) EXPECT_EQ(directory.held_bytes(r), 0) << "rank " << r;
    EXPECT_EQ(executor.violations_, 0);
    std::printf("random config %d: %lld chunks, %lld decisions, %lld spills\n", config,
                static_cast<long long>(next), static_cast<long long>(executor.decisions_),
                static_cast<long long>(directory.totals().spills));
  }
}

}  // namespace
}  // namespace tessera::exec
