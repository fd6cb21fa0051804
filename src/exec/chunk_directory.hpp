// ChunkDirectory: the MPI executor's memory manager for the chunks its ranks hold in
// RAM. A plain data structure, no MPI: the executor reports events, the directory keeps
// who holds what and hands back decisions (copy, drop, spill) that the executor carries
// out and confirms.
//
// Typical usage (one directory, on the leader):
//   1. exec::ChunkDirectory directory({.capacity = bytes_per_rank, .min_replicas = 1});
//   2. A task wrote a chunk:  directory.Produced({op, block}, rank, bytes, readers);
//   3. A task reads it:       const auto plan = directory.PlanRead({op, block}, rank);
//      rank plan.from sends it; with plan.keep_replica, once it is there ReplicaKept
//      (or ReplicaAbandoned); when the task is done, ReadDone({op, block}, rank).
//   4. Now and then:          directory.Rebalance();
//   5. After each call:       for (const DirectoryDecision& d : directory.TakeDecisions())
//      carry d out: kCopy, then CopyArrived(d.chunk, d.to) or CopyFailed; kDrop;
//      kSpill, then Spilled(d.chunk).
//
// Fill: a rank's projected bytes over its capacity, where projected = held (confirmed
// replicas) + pending (copies and kept read replicas on their way to it) - leaving (what
// it holds that a planned move or spill takes away). "Least filled" and "fullest" order
// ranks by fill, ties by rank. The mean fill is the total projected bytes over the total
// capacity: what every rank would hold when balanced (with equal capacities, the mean of
// the fills).
//
// Policies:
//  - Replicas: Produced copies a chunk to the least-filled other ranks until it has
//    min(min_replicas, ranks) copies. A rank reading a chunk it does not hold keeps a
//    replica once replicate_after distinct non-holding ranks (it included) have read
//    it, when the chunk's replicas + copies on their way + reserved read slots stay
//    within max_replicas and the rank stays under its high watermark with it.
//  - max_replicas counts every copy on its way, a move's too: a chunk already at
//    max_replicas copies is not moved (with max_replicas == min_replicas nothing moves).
//  - Watermark: when Produced takes a rank past high_watermark, the rank sheds: first
//    surplus replicas (of chunks with more than min_replicas copies: dropped), then
//    moves of its least recently used chunks to the least-filled rank, while that rank
//    stays under the watermark and the move lowers the imbalance (sum of held^2/capacity).
//  - Moves are copy-then-drop: the original is dropped (kRebalance) only when its copy
//    is confirmed (CopyArrived), and kept instead when it is pinned there or dropping it
//    would leave fewer than min_replicas copies; it is then a surplus replica, which a
//    later Rebalance() may drop.
//  - Spill: when the cluster's projected bytes pass its total capacity, the fullest rank
//    drops a surplus replica if it has one, else spills its least recently used chunk,
//    until the total fits.
//  - Least recently used: each rank keeps its idle replicas in the order they were last
//    produced, arrived, read, pinned or released (from a pin, copy or reservation).
//  - Busy chunks (pinned anywhere, a copy or kept read replica on its way, a spill under
//    way) are not moved, dropped as surplus or spilled until they settle.
//  - Free (or readers reaching 0) drops every replica (kDrop kFreed) except pinned ones,
//    each dropped when its last pin goes. A chunk freed with copies, read replicas, pins
//    or a spill outstanding is forgotten once they settle (copies arriving meanwhile are
//    dropped at once); knows() is false from the free on.
//
// Cost: an event costs O(1) per chunk and replica it changes (a few replicas, marks and
// pins per chunk) plus O(log ranks) per rank whose fill changes; nothing scans all chunks
// or ranks. Rebalance() costs O(log ranks) per decision it takes (and per chunk it skips,
// at most 8 in a row per rank). work() counts the elements visited, for tests.
//
// Not thread-safe: one caller at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tessera::exec {

struct ChunkKey {
  int op = 0;
  std::int64_t block = 0;
  bool operator==(const ChunkKey&) const = default;
};

struct ChunkKeyHash {
  std::size_t operator()(const ChunkKey& key) const;
};

struct DirectoryOptions {
  std::vector<std::int64_t> capacity;  // bytes each rank may hold; size() = ranks (>= 1, each > 0)
  double high_watermark = 0.8;         // a rank whose fill passes this sheds chunks (> 0)
  double balance_tolerance = 0.1;      // Rebalance(): |fill - mean| <= tolerance * mean (>= 0)
  int max_replicas = 3;                // most copies of one chunk (>= min_replicas)
  int min_replicas = 1;                // copies kept of every live chunk (>= 1)
  int replicate_after = 2;  // distinct non-holding readers before reads keep a copy (>= 1)
};

struct DirectoryDecision {
  // kCopy: send `chunk` from rank `from` to rank `to`, then call CopyArrived(chunk, to)
  //        (or CopyFailed(chunk, to)).
  // kDrop: free the replica on rank `from`.
  // kSpill: write the chunk (from rank `from`) to shared storage, free it on every rank,
  //        then call Spilled(chunk).
  enum class Kind { kCopy, kDrop, kSpill };
  enum class Reason { kMinReplicas, kRebalance, kFreed, kSurplusReplica, kSpill };
  Kind kind = Kind::kCopy;
  ChunkKey chunk;
  int from = -1;
  int to = -1;  // kCopy only
  std::int64_t bytes = 0;
  Reason reason = Reason::kMinReplicas;
  bool operator==(const DirectoryDecision&) const = default;
};

struct DirectoryTotals {
  std::int64_t bytes_produced = 0;
  std::int64_t bytes_copied = 0;      // every confirmed kCopy
  std::int64_t bytes_replicated = 0;  // replicas kept by reads + confirmed min-replica copies
  std::int64_t bytes_rebalanced = 0;  // confirmed rebalance copies
  std::int64_t bytes_dropped = 0;     // every kDrop decision
  std::int64_t bytes_spilled = 0;     // confirmed spills (Spilled), once per chunk
  std::int64_t bytes_freed = 0;       // chunks freed (Free, FreeOp, readers reaching 0), once each
  std::int64_t copies = 0;            // confirmed kCopy
  std::int64_t drops = 0;             // kDrop decisions
  std::int64_t spills = 0;            // confirmed spills
  std::int64_t frees = 0;             // chunks freed
  std::int64_t decisions = 0;         // decisions taken
};

class ChunkDirectory {
 public:
  // Throws InvalidArgument when an option is out of range.
  explicit ChunkDirectory(DirectoryOptions options);
  ChunkDirectory(const ChunkDirectory&) = delete;  // it files iterators into its own sets
  ChunkDirectory& operator=(const ChunkDirectory&) = delete;
  ChunkDirectory(ChunkDirectory&&) = default;
  ChunkDirectory& operator=(ChunkDirectory&&) = default;

  int ranks() const { return static_cast<int>(ranks_.size()); }

  // A task on `rank` wrote the chunk; it is held there. `readers`: the reads it gets
  // before it is freed (0 frees it at once); -1 = unknown (freed only by Free/FreeOp).
  // May emit min-replica copies, watermark moves of `rank`'s chunks and spills.
  // REQUIRES: the chunk is not known, nor freed with settlements outstanding;
  // 0 <= rank < ranks(); bytes >= 0; readers >= -1.
  void Produced(ChunkKey chunk, int rank, std::int64_t bytes, std::int64_t readers = -1);

  struct ReadPlan {
    int from = -1;              // the rank to read from; -1 when spilled
    bool keep_replica = false;  // keep the copy: call ReplicaKept or ReplicaAbandoned
    bool spilled = false;       // read it from shared storage
  };
  // Where a task on `rank` reads the chunk: `rank` itself when it holds it, else the
  // least-filled holder. keep_replica reserves the replica slot (see Policies).
  // REQUIRES: knows(chunk); 0 <= rank < ranks().
  ReadPlan PlanRead(ChunkKey chunk, int rank);

  // The copy a ReadPlan said to keep has arrived on `rank` (it holds it now), or it was
  // not kept: the reserved slot is released. REQUIRES: PlanRead(chunk, rank) said
  // keep_replica, not yet settled (also after the chunk was freed: then it is dropped).
  void ReplicaKept(ChunkKey chunk, int rank);
  void ReplicaAbandoned(ChunkKey chunk, int rank);

  // One read of the chunk finished; the last of its `readers` frees it (a spilled chunk
  // is just forgotten). No-op when readers is -1, or when the chunk was freed but its
  // record waits for settlements. REQUIRES: knows(chunk) or such a record; valid rank.
  void ReadDone(ChunkKey chunk, int rank);

  // Frees the chunk now, or every known chunk of op `op` (cost: that op's chunks).
  // REQUIRES (Free): knows(chunk).
  void Free(ChunkKey chunk);
  void FreeOp(int op);

  // A queued or running task on `rank` needs the chunk: its replica on `rank` is never
  // dropped while pinned (pins are counted; `rank` need not hold it yet), and the chunk
  // is not moved or spilled. REQUIRES (Pin): knows(chunk); valid rank. REQUIRES (Unpin):
  // a Pin(chunk, rank) not yet unpinned (also after the chunk was freed).
  void Pin(ChunkKey chunk, int rank);
  void Unpin(ChunkKey chunk, int rank);

  // Among `candidates`, the rank holding the most bytes of `inputs` (each listed input
  // counts; unknown or spilled inputs count 0; confirmed replicas only), ties: lowest
  // fill, then lowest rank. -1 when candidates is empty. REQUIRES: valid candidates.
  int PlaceTask(std::span<const ChunkKey> inputs, std::span<const int> candidates) const;

  // A kCopy to `rank` arrived (the replica there counts now) or failed (nothing is
  // dropped; a failed min-replica copy is planned again, to another rank when one is
  // left). After a move's copy arrives the original is dropped (kDrop kRebalance),
  // unless pinned or needed for min_replicas (see Policies). REQUIRES: that kCopy is
  // outstanding (also after the chunk was freed: the arrived copy is then dropped).
  void CopyArrived(ChunkKey chunk, int rank);
  void CopyFailed(ChunkKey chunk, int rank);

  // A kSpill's write finished: the chunk is on no rank; PlanRead says spilled.
  // REQUIRES: a kSpill of the chunk is outstanding.
  void Spilled(ChunkKey chunk);

  // Plans copy-then-drop moves of least recently used chunks from the fullest ranks to
  // the least filled (a surplus replica on the fullest rank is dropped instead), until
  // every rank is within balance_tolerance of the mean fill or no move lowers the
  // imbalance. Copies on their way count, so calling it again before they are
  // confirmed plans nothing more.
  void Rebalance();

  // Decisions taken since the last call, in order.
  std::vector<DirectoryDecision> TakeDecisions();

  // Queries; a `rank` must be valid.
  std::int64_t held_bytes(int rank) const;            // confirmed replicas
  std::int64_t pending_bytes(int rank) const;         // copies and kept read replicas on their way
  double fill(int rank) const;                        // projected / capacity (see Fill above)
  std::vector<int> holders(ChunkKey chunk) const;     // sorted; a freed chunk's: pinned ones
  bool knows(ChunkKey chunk) const;                   // produced, not freed (spilled included)
  bool spilled(ChunkKey chunk) const;                 // false when unknown
  std::int64_t live_chunks() const { return live_; }  // known chunks
  const DirectoryTotals& totals() const { return totals_; }
  std::int64_t work() const { return work_; }  // elements visited so far (for tests)

  // Verifies every internal invariant by a full scan (tests only): held bytes per rank,
  // replica counts within [min, max], lists and fill orderings. Throws std::logic_error.
  void CheckConsistency() const;

 private:
  enum class State : std::uint8_t { kHeld, kSpilling, kSpilled };  // where its data is
  enum class MarkKind : std::uint8_t { kCopy, kReserve, kPin, kReader };
  struct Mark {  // what a chunk has outstanding on one rank
    int rank = 0;
    int from = -1;  // kCopy: the source
    int count = 0;  // kPin: pins
    MarkKind kind = MarkKind::kCopy;
    DirectoryDecision::Reason reason = DirectoryDecision::Reason::kMinReplicas;  // kCopy
  };
  struct Chunk {
    ChunkKey key;
    std::int64_t bytes = 0;
    std::int64_t readers = -1;
    std::int32_t first = -1;   // first confirmed replica (list through Replica::next_of_chunk)
    std::int32_t op_pos = -1;  // index in ops_[key.op]; -1 once freed
    int holders = 0;           // confirmed replicas
    int copies = 0;            // kCopy marks
    int reserved = 0;          // kReserve marks
    int pins = 0;              // sum of kPin counts
    State state = State::kHeld;
    bool freed = false;      // freed; the record waits for outstanding settlements
    bool replicate = false;  // replicate_after distinct non-holding ranks have read it
    std::vector<Mark> marks;
  };
  struct Replica {            // a confirmed copy of a chunk on a rank
    std::int32_t chunk = -1;  // index in chunks_
    std::int32_t rank = -1;
    std::int32_t prev = -1, next = -1;  // in the rank's list `list`
    std::int32_t next_of_chunk = -1;
    std::int8_t list = -1;  // -1 none (busy chunk); 0 movable; 1 surplus (chunk > min copies)
  };
  using FillOrder = std::set<std::pair<double, int>>;  // (fill, rank)
  struct Rank {
    std::int64_t capacity = 0;
    std::int64_t held = 0;
    std::int64_t pending = 0;
    std::int64_t leaving = 0;
    double key = 0;  // its fill as filed in by_fill_ / movable_
    FillOrder::iterator by_fill;
    FillOrder::iterator movable;  // valid when filed_movable
    bool filed_movable = false;
    bool excluded = false;            // left out of movable_ for the rest of one Rebalance()
    std::int32_t head[2] = {-1, -1};  // least recently used first
    std::int32_t tail[2] = {-1, -1};
  };
  using Reason = DirectoryDecision::Reason;

  Rank& R(int rank) { return ranks_[static_cast<std::size_t>(rank)]; }
  const Rank& R(int rank) const { return ranks_[static_cast<std::size_t>(rank)]; }
  Chunk& C(std::int32_t id) { return chunks_[static_cast<std::size_t>(id)]; }
  const Chunk& C(std::int32_t id) const { return chunks_[static_cast<std::size_t>(id)]; }
  Replica& P(std::int32_t at) { return replicas_[static_cast<std::size_t>(at)]; }
  const Replica& P(std::int32_t at) const { return replicas_[static_cast<std::size_t>(at)]; }
  std::int32_t Find(ChunkKey chunk, const char* caller) const;  // any record; throws
  std::int32_t FindKnown(ChunkKey chunk, const char* caller) const;
  void CheckRank(int rank, const char* caller) const;
  std::int64_t Projected(int rank) const;
  double FillOf(int rank) const;
  void Add(int rank, std::int64_t held, std::int64_t pending, std::int64_t leaving);
  void Touch(int rank);  // refiles the rank after its bytes or lists changed
  bool Busy(const Chunk& chunk) const;
  void Relink(std::int32_t id, bool refresh);  // files its replicas in their lists
  void Unlink(std::int32_t replica);
  void Link(std::int32_t replica, int list);                    // at the tail (most recently used)
  void AddReplica(std::int32_t id, int rank, bool arrived);     // arrived: was pending
  void RemoveReplica(std::int32_t id, int rank, bool leaving);  // leaving: was counted so
  std::int32_t ReplicaOn(const Chunk& chunk, int rank) const;
  Mark* MarkOn(Chunk& chunk, int rank, MarkKind kind);
  void EraseMark(Chunk& chunk, Mark* mark);
  // Settles the chunk's copy or kept read replica on its way to `rank`: removes its mark
  // and returns it. Throws when there is none.
  Mark TakeTransfer(std::int32_t id, int rank, MarkKind kind, const char* caller);
  void Released(std::int32_t id, bool used);  // after an event: Settle or Relink
  int PinsOn(const Chunk& chunk, int rank) const;
  bool Involves(const Chunk& chunk, int rank) const;  // replica, copy or reservation there
  int LeastFilledTarget(const Chunk& chunk, int exclude) const;
  bool Improves(int from, int to, std::int64_t bytes) const;
  void Emit(DirectoryDecision::Kind kind, const Chunk& chunk, int from, int to, Reason reason);
  void EmitCopy(std::int32_t id, int from, int to, Reason reason);
  void DropSurplus(int rank);  // REQUIRES: the rank's surplus list is not empty
  void Shed(int rank);
  void SpillWhileOver();
  void FreeChunk(std::int32_t id);
  void Settle(std::int32_t id);  // a freed chunk: drop unpinned replicas, forget when done

  DirectoryOptions options_;
  int min_copies_ = 1;  // min(min_replicas, ranks)
  int max_copies_ = 1;  // min(max_replicas, ranks)
  std::vector<Rank> ranks_;
  FillOrder by_fill_;  // every rank
  FillOrder movable_;  // ranks with a movable or surplus replica
  std::int64_t total_capacity_ = 0;
  std::int64_t total_projected_ = 0;
  std::unordered_map<ChunkKey, std::int32_t, ChunkKeyHash> index_;
  std::vector<Chunk> chunks_;
  std::vector<std::int32_t> free_chunks_;
  std::vector<Replica> replicas_;
  std::vector<std::int32_t> free_replicas_;
  std::unordered_map<int, std::vector<std::int32_t>> ops_;  // live chunks of each op
  std::vector<DirectoryDecision> decisions_;
  DirectoryTotals totals_;
  std::int64_t live_ = 0;
  mutable std::int64_t work_ = 0;
};

}  // namespace tessera::exec
