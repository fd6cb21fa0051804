#include "chunk_directory.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "tessera/core/errors.hpp"

namespace tessera::exec {
namespace {

using Kind = DirectoryDecision::Kind;
using Reason = DirectoryDecision::Reason;

// Rebalance(): chunks of one rank that may not move (too large, no target) skipped in a
// row before the rank is left alone for the rest of the call.
constexpr int kMaxSkips = 8;

std::string Name(ChunkKey key) {
  return "chunk (op " + std::to_string(key.op) + ", block " + std::to_string(key.block) + ")";
}

[[noreturn]] void Bad(const char* caller, const std::string& what) {
  throw InvalidArgument(std::string("ChunkDirectory::") + caller + ": " + what);
}

}  // namespace

// Ops spread apart; the blocks of one op land in neighbouring buckets, so walking an op's
// blocks in order (as tasks and FreeOp do) stays in cache.
std::size_t ChunkKeyHash::operator()(const ChunkKey& key) const {
  return static_cast<std::size_t>(static_cast<std::uint64_t>(key.block) +
                                  0x9E3779B97F4A7C15ull * static_cast<std::uint32_t>(key.op));
}

ChunkDirectory::ChunkDirectory(DirectoryOptions options) : options_(std::move(options)) {
  const DirectoryOptions& o = options_;
  const char* self = "ChunkDirectory";
  if (o.capacity.empty() || o.capacity.size() > static_cast<std::size_t>(1) << 30) {
    Bad(self, "options.capacity has " + std::to_string(o.capacity.size()) +
                  " entries; give one capacity (bytes) per rank, at least one rank");
  }
  for (std::size_t rank = 0; rank < o.capacity.size(); ++rank) {
    if (o.capacity[rank] <= 0 ||
        total_capacity_ > std::numeric_limits<std::int64_t>::max() - o.capacity[rank]) {
      Bad(self, "options.capacity[" + std::to_string(rank) + "] is " +
                    std::to_string(o.capacity[rank]) +
                    "; every rank's capacity must be > 0 bytes (and their sum fit in 63 bits)");
    }
    total_capacity_ += o.capacity[rank];
  }
  if (!(o.high_watermark > 0)) {
    Bad(self, "options.high_watermark is " + std::to_string(o.high_watermark) +
                  "; it must be a fraction of capacity > 0 (e.g. 0.8)");
  }
  if (!(o.balance_tolerance >= 0)) {
    Bad(self, "options.balance_tolerance is " + std::to_string(o.balance_tolerance) +
                  "; it must be >= 0 (e.g. 0.1)");
  }
  if (o.min_replicas < 1 || o.max_replicas < o.min_replicas || o.replicate_after < 1) {
    Bad(self, "options give min_replicas " + std::to_string(o.min_replicas) + ", max_replicas " +
                  std::to_string(o.max_replicas) + ", replicate_after " +
                  std::to_string(o.replicate_after) +
                  "; they must be 1 <= min_replicas <= max_replicas and replicate_after >= 1");
  }
  ranks_.resize(o.capacity.size());
  for (int rank = 0; rank < ranks(); ++rank) {
    R(rank).capacity = o.capacity[static_cast<std::size_t>(rank)];
    R(rank).by_fill = by_fill_.insert({0.0, rank}).first;
  }
  min_copies_ = std::min(o.min_replicas, ranks());
  max_copies_ = std::min(o.max_replicas, ranks());
}

// ---- Lookups and bookkeeping ------------------------------------------------------------

std::int32_t ChunkDirectory::Find(ChunkKey chunk, const char* caller) const {
  ++work_;
  const auto found = index_.find(chunk);
  if (found == index_.end()) Bad(caller, Name(chunk) + " is not known (never produced, or freed)");
  return found->second;
}

std::int32_t ChunkDirectory::FindKnown(ChunkKey chunk, const char* caller) const {
  const std::int32_t id = Find(chunk, caller);
  if (C(id).freed) Bad(caller, Name(chunk) + " was freed");
  return id;
}

void ChunkDirectory::CheckRank(int rank, const char* caller) const {
  if (rank < 0 || rank >= ranks()) {
    Bad(caller, "rank " + std::to_string(rank) + " is out of range; the directory has " +
                    std::to_string(ranks()) + " ranks (0.." + std::to_string(ranks() - 1) + ")");
  }
}

std::int64_t ChunkDirectory::Projected(int rank) const {
  const Rank& r = R(rank);
  return r.held + r.pending - r.leaving;
}

double ChunkDirectory::FillOf(int rank) const {
  return static_cast<double>(Projected(rank)) / static_cast<double>(R(rank).capacity);
}

void ChunkDirectory::Add(int rank, std::int64_t held, std::int64_t pending, std::int64_t leaving) {
  Rank& r = R(rank);
  r.held += held;
  r.pending += pending;
  r.leaving += leaving;
  total_projected_ += held + pending - leaving;
  Touch(rank);
}

void ChunkDirectory::Touch(int rank) {
  ++work_;
  Rank& r = R(rank);
  const double key = FillOf(rank);
  const bool movable = !r.excluded && (r.head[0] >= 0 || r.head[1] >= 0);
  if (key != r.key) {  // refiled without reallocating its node
    auto node = by_fill_.extract(r.by_fill);
    node.value().first = key;
    r.by_fill = by_fill_.insert(std::move(node)).position;
  }
  if (r.filed_movable && (!movable || key != r.key)) {
    auto node = movable_.extract(r.movable);
    r.filed_movable = false;
    if (movable) {
      node.value().first = key;
      r.movable = movable_.insert(std::move(node)).position;
      r.filed_movable = true;
    }
  }
  if (movable && !r.filed_movable) {
    r.movable = movable_.insert({key, rank}).first;
    r.filed_movable = true;
  }
  r.key = key;
}

bool ChunkDirectory::Busy(const Chunk& chunk) const {
  return chunk.freed || chunk.state != State::kHeld || chunk.pins > 0 || chunk.copies > 0 ||
         chunk.reserved > 0;
}

void ChunkDirectory::Unlink(std::int32_t replica) {
  Replica& p = P(replica);
  if (p.list < 0) return;
  Rank& r = R(p.rank);
  (p.prev >= 0 ? P(p.prev).next : r.head[p.list]) = p.next;
  (p.next >= 0 ? P(p.next).prev : r.tail[p.list]) = p.prev;
  p.prev = p.next = -1;
  p.list = -1;
}

void ChunkDirectory::Link(std::int32_t replica, int list) {
  Replica& p = P(replica);
  Rank& r = R(p.rank);
  p.list = static_cast<std::int8_t>(list);
  p.prev = r.tail[list];
  p.next = -1;
  (p.prev >= 0 ? P(p.prev).next : r.head[list]) = replica;
  r.tail[list] = replica;
}

void ChunkDirectory::Relink(std::int32_t id, bool refresh) {
  const Chunk& c = C(id);
  const int list = Busy(c) ? -1 : (c.holders > min_copies_ ? 1 : 0);
  for (std::int32_t replica = c.first; replica >= 0; replica = P(replica).next_of_chunk) {
    ++work_;
    if (P(replica).list == list && !(refresh && list >= 0)) continue;
    Unlink(replica);
    if (list >= 0) Link(replica, list);
    Touch(P(replica).rank);
  }
}

void ChunkDirectory::AddReplica(std::int32_t id, int rank, bool arrived) {
  std::int32_t replica;
  if (free_replicas_.empty()) {
    replica = static_cast<std::int32_t>(replicas_.size());
    replicas_.emplace_back();
  } else {
    replica = free_replicas_.back();
    free_replicas_.pop_back();
  }
  Chunk& c = C(id);
  P(replica) = Replica{.chunk = id, .rank = rank, .next_of_chunk = c.first};
  c.first = replica;
  ++c.holders;
  Add(rank, c.bytes, arrived ? -c.bytes : 0, 0);
}

void ChunkDirectory::RemoveReplica(std::int32_t id, int rank, bool leaving) {
  Chunk& c = C(id);
  std::int32_t* link = &c.first;
  while (P(*link).rank != rank) link = &P(*link).next_of_chunk;
  const std::int32_t replica = *link;
  *link = P(replica).next_of_chunk;
  Unlink(replica);
  P(replica).chunk = -1;
  free_replicas_.push_back(replica);
  --c.holders;
  Add(rank, -c.bytes, 0, leaving ? -c.bytes : 0);
}

std::int32_t ChunkDirectory::ReplicaOn(const Chunk& chunk, int rank) const {
  for (std::int32_t replica = chunk.first; replica >= 0; replica = P(replica).next_of_chunk) {
    ++work_;
    if (P(replica).rank == rank) return replica;
  }
  return -1;
}

ChunkDirectory::Mark* ChunkDirectory::MarkOn(Chunk& chunk, int rank, MarkKind kind) {
  for (Mark& mark : chunk.marks) {
    ++work_;
    if (mark.rank == rank && mark.kind == kind) return &mark;
  }
  return nullptr;
}

void ChunkDirectory::EraseMark(Chunk& chunk, Mark* mark) {
  *mark = chunk.marks.back();
  chunk.marks.pop_back();
}

ChunkDirectory::Mark ChunkDirectory::TakeTransfer(std::int32_t id, int rank, MarkKind kind,
                                                  const char* caller) {
  Chunk& c = C(id);
  Mark* found = MarkOn(c, rank, kind);
  if (found == nullptr) {
    Bad(caller, std::string(kind == MarkKind::kCopy ? "no copy of " : "no kept read replica of ") +
                    Name(c.key) + " to rank " + std::to_string(rank) + " is outstanding");
  }
  const Mark mark = *found;
  EraseMark(c, found);
  --(kind == MarkKind::kCopy ? c.copies : c.reserved);
  return mark;
}

void ChunkDirectory::Released(std::int32_t id, bool used) {
  if (C(id).freed) {
    Settle(id);
  } else {
    Relink(id, used);
  }
}

int ChunkDirectory::PinsOn(const Chunk& chunk, int rank) const {
  for (const Mark& mark : chunk.marks) {
    if (mark.rank == rank && mark.kind == MarkKind::kPin) return mark.count;
  }
  return 0;
}

bool ChunkDirectory::Involves(const Chunk& chunk, int rank) const {
  for (const Mark& mark : chunk.marks) {
    ++work_;
    if (mark.rank == rank && (mark.kind == MarkKind::kCopy || mark.kind == MarkKind::kReserve)) {
      return true;
    }
  }
  return ReplicaOn(chunk, rank) >= 0;
}

int ChunkDirectory::LeastFilledTarget(const Chunk& chunk, int exclude) const {
  for (const auto& [fill, rank] : by_fill_) {  // visits at most the chunk's ranks + 2
    ++work_;
    if (rank != exclude && !Involves(chunk, rank)) return rank;
  }
  return -1;
}

// Whether moving `bytes` lowers sum(held^2 / capacity), the imbalance potential.
bool ChunkDirectory::Improves(int from, int to, std::int64_t bytes) const {
  const double b = static_cast<double>(bytes);
  return b / static_cast<double>(R(from).capacity) + b / static_cast<double>(R(to).capacity) <
         2 * (FillOf(from) - FillOf(to));
}

// ---- Decisions --------------------------------------------------------------------------

void ChunkDirectory::Emit(Kind kind, const Chunk& chunk, int from, int to, Reason reason) {
  decisions_.push_back({.kind = kind,
                        .chunk = chunk.key,
                        .from = from,
                        .to = to,
                        .bytes = chunk.bytes,
                        .reason = reason});
  ++totals_.decisions;
  if (kind == Kind::kDrop) {
    ++totals_.drops;
    totals_.bytes_dropped += chunk.bytes;
  }
}

void ChunkDirectory::EmitCopy(std::int32_t id, int from, int to, Reason reason) {
  Chunk& c = C(id);
  c.marks.push_back({.rank = to, .from = from, .kind = MarkKind::kCopy, .reason = reason});
  ++c.copies;
  Add(to, 0, c.bytes, 0);
  if (reason == Reason::kRebalance) Add(from, 0, 0, c.bytes);
  Emit(Kind::kCopy, c, from, to, reason);
  Relink(id, false);
}

void ChunkDirectory::DropSurplus(int rank) {
  const std::int32_t id = P(R(rank).head[1]).chunk;
  Emit(Kind::kDrop, C(id), rank, -1, Reason::kSurplusReplica);
  RemoveReplica(id, rank, false);
  Relink(id, false);
}

void ChunkDirectory::Shed(int rank) {
  const double watermark = options_.high_watermark;
  while (FillOf(rank) > watermark) {
    if (R(rank).head[1] >= 0) {
      DropSurplus(rank);
      continue;
    }
    if (R(rank).head[0] < 0) return;
    const std::int32_t id = P(R(rank).head[0]).chunk;
    const Chunk& c = C(id);
    if (c.holders >= max_copies_) return;
    const int to = LeastFilledTarget(c, -1);
    if (to < 0 || !Improves(rank, to, c.bytes) ||
        static_cast<double>(Projected(to) + c.bytes) >
            watermark * static_cast<double>(R(to).capacity)) {
      return;
    }
    EmitCopy(id, rank, to, Reason::kRebalance);
  }
}

void ChunkDirectory::SpillWhileOver() {
  while (total_projected_ > total_capacity_ && !movable_.empty()) {
    const int rank = movable_.rbegin()->second;
    if (R(rank).head[1] >= 0) {
      DropSurplus(rank);
      continue;
    }
    const std::int32_t id = P(R(rank).head[0]).chunk;
    Chunk& c = C(id);
    Emit(Kind::kSpill, c, rank, -1, Reason::kSpill);
    c.state = State::kSpilling;
    for (std::int32_t replica = c.first; replica >= 0; replica = P(replica).next_of_chunk) {
      Add(P(replica).rank, 0, 0, c.bytes);
    }
    Relink(id, false);
  }
}

void ChunkDirectory::FreeChunk(std::int32_t id) {
  Chunk& c = C(id);
  c.freed = true;
  --live_;
  ++totals_.frees;
  totals_.bytes_freed += c.bytes;
  if (c.op_pos >= 0) {  // swap-remove from its op's list
    std::vector<std::int32_t>& list = ops_[c.key.op];
    const std::int32_t moved = list.back();
    list[static_cast<std::size_t>(c.op_pos)] = moved;
    C(moved).op_pos = c.op_pos;
    list.pop_back();
    if (list.empty()) ops_.erase(c.key.op);
  }
  c.op_pos = -1;
  std::erase_if(c.marks, [](const Mark& mark) { return mark.kind == MarkKind::kReader; });
  Settle(id);
}

void ChunkDirectory::Settle(std::int32_t id) {
  Chunk& c = C(id);
  if (c.state != State::kSpilling) {  // a spill under way frees every replica itself
    for (std::int32_t replica = c.first; replica >= 0;) {
      const std::int32_t next = P(replica).next_of_chunk;
      const int rank = P(replica).rank;
      if (PinsOn(c, rank) == 0) {
        Emit(Kind::kDrop, c, rank, -1, Reason::kFreed);
        RemoveReplica(id, rank, false);
      }
      replica = next;
    }
  }
  Relink(id, false);
  if (c.first < 0 && c.marks.empty() && c.state != State::kSpilling) {
    index_.erase(c.key);
    c = Chunk{};
    free_chunks_.push_back(id);
  }
}

// ---- Events -----------------------------------------------------------------------------

void ChunkDirectory::Produced(ChunkKey chunk, int rank, std::int64_t bytes, std::int64_t readers) {
  const char* self = "Produced";
  CheckRank(rank, self);
  if (bytes < 0) Bad(self, Name(chunk) + " has " + std::to_string(bytes) + " bytes; need >= 0");
  if (readers < -1) {
    Bad(self, Name(chunk) + " has readers " + std::to_string(readers) +
                  "; give the reads it will get, or -1 when unknown");
  }
  if (const auto found = index_.find(chunk); found != index_.end()) {
    Bad(self, Name(chunk) + (C(found->second).freed
                                 ? " was freed, but copies, pins or a spill of it are still "
                                   "outstanding; settle them before producing it again"
                                 : " is already known; a chunk is produced once"));
  }
  std::int32_t id;
  if (free_chunks_.empty()) {
    id = static_cast<std::int32_t>(chunks_.size());
    chunks_.emplace_back();
  } else {
    id = free_chunks_.back();
    free_chunks_.pop_back();
  }
  std::vector<std::int32_t>& list = ops_[chunk.op];
  Chunk& c = C(id);
  c = Chunk{};
  c.key = chunk;
  c.bytes = bytes;
  c.readers = readers;
  c.op_pos = static_cast<std::int32_t>(list.size());
  list.push_back(id);
  index_.emplace(chunk, id);
  ++live_;
  totals_.bytes_produced += bytes;
  AddReplica(id, rank, false);
  if (readers == 0) {
    FreeChunk(id);
    return;
  }
  for (int copy = 1; copy < min_copies_; ++copy) {
    const int to = LeastFilledTarget(c, -1);
    if (to < 0) break;
    EmitCopy(id, rank, to, Reason::kMinReplicas);
  }
  Relink(id, false);
  Shed(rank);
  SpillWhileOver();
}

ChunkDirectory::ReadPlan ChunkDirectory::PlanRead(ChunkKey chunk, int rank) {
  const std::int32_t id = FindKnown(chunk, "PlanRead");
  CheckRank(rank, "PlanRead");
  Chunk& c = C(id);
  if (c.state == State::kSpilled) return {.from = -1, .spilled = true};
  ReadPlan plan;
  double best = 0;
  for (std::int32_t replica = c.first; replica >= 0; replica = P(replica).next_of_chunk) {
    const int holder = P(replica).rank;
    const double fill = FillOf(holder);
    if (holder == rank) {
      plan.from = rank;
      break;
    }
    if (plan.from < 0 || fill < best || (fill == best && holder < plan.from)) {
      plan.from = holder;
      best = fill;
    }
  }
  if (plan.from != rank && c.state == State::kHeld && !Involves(c, rank)) {
    if (!c.replicate && !MarkOn(c, rank, MarkKind::kReader)) {
      c.marks.push_back({.rank = rank, .kind = MarkKind::kReader});
      const auto seen = std::count_if(c.marks.begin(), c.marks.end(), [](const Mark& mark) {
        return mark.kind == MarkKind::kReader;
      });
      if (seen >= options_.replicate_after) {  // from now on a count, not a list
        c.replicate = true;
        std::erase_if(c.marks, [](const Mark& mark) { return mark.kind == MarkKind::kReader; });
      }
    }
    const double room = options_.high_watermark * static_cast<double>(R(rank).capacity);
    if (c.replicate && c.holders + c.copies + c.reserved < max_copies_ &&
        static_cast<double>(Projected(rank) + c.bytes) <= room &&
        total_projected_ + c.bytes <= total_capacity_) {
      c.marks.push_back({.rank = rank, .kind = MarkKind::kReserve});
      ++c.reserved;
      Add(rank, 0, c.bytes, 0);
      plan.keep_replica = true;
    }
  }
  Relink(id, true);  // a read is a use: least recently used last
  return plan;
}

void ChunkDirectory::ReplicaKept(ChunkKey chunk, int rank) {
  const std::int32_t id = Find(chunk, "ReplicaKept");
  TakeTransfer(id, rank, MarkKind::kReserve, "ReplicaKept");
  AddReplica(id, rank, true);
  totals_.bytes_replicated += C(id).bytes;
  Released(id, true);
  SpillWhileOver();  // as in CopyArrived
}

void ChunkDirectory::ReplicaAbandoned(ChunkKey chunk, int rank) {
  const std::int32_t id = Find(chunk, "ReplicaAbandoned");
  TakeTransfer(id, rank, MarkKind::kReserve, "ReplicaAbandoned");
  Add(rank, 0, -C(id).bytes, 0);
  Released(id, false);
}

void ChunkDirectory::ReadDone(ChunkKey chunk, int rank) {
  const std::int32_t id = Find(chunk, "ReadDone");
  CheckRank(rank, "ReadDone");
  Chunk& c = C(id);
  if (c.freed || c.readers < 0) return;
  if (--c.readers == 0) FreeChunk(id);
}

void ChunkDirectory::Free(ChunkKey chunk) { FreeChunk(FindKnown(chunk, "Free")); }

void ChunkDirectory::FreeOp(int op) {
  const auto found = ops_.find(op);
  if (found == ops_.end()) return;
  const std::vector<std::int32_t> ids = std::move(found->second);
  ops_.erase(found);
  for (const std::int32_t id : ids) {
    ++work_;
    C(id).op_pos = -1;
    FreeChunk(id);
  }
}

void ChunkDirectory::Pin(ChunkKey chunk, int rank) {
  const std::int32_t id = FindKnown(chunk, "Pin");
  CheckRank(rank, "Pin");
  Chunk& c = C(id);
  if (Mark* mark = MarkOn(c, rank, MarkKind::kPin)) {
    ++mark->count;
  } else {
    c.marks.push_back({.rank = rank, .count = 1, .kind = MarkKind::kPin});
  }
  ++c.pins;
  Relink(id, true);
}

void ChunkDirectory::Unpin(ChunkKey chunk, int rank) {
  const std::int32_t id = Find(chunk, "Unpin");
  Chunk& c = C(id);
  Mark* mark = MarkOn(c, rank, MarkKind::kPin);
  if (mark == nullptr) Bad("Unpin", Name(chunk) + " is not pinned on rank " + std::to_string(rank));
  if (--mark->count == 0) EraseMark(c, mark);
  --c.pins;
  Released(id, true);
}

int ChunkDirectory::PlaceTask(std::span<const ChunkKey> inputs,
                              std::span<const int> candidates) const {
  for (const int rank : candidates) CheckRank(rank, "PlaceTask");
  if (candidates.empty()) return -1;
  std::vector<std::pair<int, std::int64_t>> held;  // (rank, bytes) of the inputs' replicas
  for (const ChunkKey& input : inputs) {
    ++work_;
    const auto found = index_.find(input);
    if (found == index_.end()) continue;
    const Chunk& c = C(found->second);
    if (c.freed) continue;
    for (std::int32_t replica = c.first; replica >= 0; replica = P(replica).next_of_chunk) {
      held.emplace_back(P(replica).rank, c.bytes);
    }
  }
  std::sort(held.begin(), held.end());
  int best = -1;
  std::int64_t best_bytes = 0;
  double best_fill = 0;
  for (const int rank : candidates) {
    ++work_;
    std::int64_t bytes = 0;
    auto at = std::lower_bound(held.begin(), held.end(), std::make_pair(rank, std::int64_t{0}));
    for (; at != held.end() && at->first == rank; ++at) bytes += at->second;
    const double fill = FillOf(rank);
    if (best < 0 || bytes > best_bytes ||
        (bytes == best_bytes && (fill < best_fill || (fill == best_fill && rank < best)))) {
      best = rank;
      best_bytes = bytes;
      best_fill = fill;
    }
  }
  return best;
}

void ChunkDirectory::CopyArrived(ChunkKey chunk, int rank) {
  const std::int32_t id = Find(chunk, "CopyArrived");
  const Mark mark = TakeTransfer(id, rank, MarkKind::kCopy, "CopyArrived");
  Chunk& c = C(id);
  AddReplica(id, rank, true);
  ++totals_.copies;
  totals_.bytes_copied += c.bytes;
  if (mark.reason == Reason::kMinReplicas) totals_.bytes_replicated += c.bytes;
  if (mark.reason == Reason::kRebalance) {
    totals_.bytes_rebalanced += c.bytes;
    // Confirm-before-drop: the original goes now, unless pinned or needed for min_replicas.
    if (!c.freed && ReplicaOn(c, mark.from) >= 0 && PinsOn(c, mark.from) == 0 &&
        c.holders - 1 >= min_copies_) {
      Emit(Kind::kDrop, c, mark.from, -1, Reason::kRebalance);
      RemoveReplica(id, mark.from, true);
    } else {
      Add(mark.from, 0, 0, -c.bytes);
    }
  }
  Released(id, true);
  SpillWhileOver();  // a chunk settled: spillable now, should the cluster be over capacity
}

void ChunkDirectory::CopyFailed(ChunkKey chunk, int rank) {
  const std::int32_t id = Find(chunk, "CopyFailed");
  const Mark mark = TakeTransfer(id, rank, MarkKind::kCopy, "CopyFailed");
  Chunk& c = C(id);
  Add(rank, 0, -c.bytes, 0);
  if (mark.reason == Reason::kRebalance) Add(mark.from, 0, 0, -c.bytes);
  if (c.freed) return Settle(id);
  if (mark.reason == Reason::kMinReplicas && c.holders + c.copies < min_copies_) {
    const int to = LeastFilledTarget(c, rank);
    const int from = ReplicaOn(c, mark.from) >= 0 ? mark.from : P(c.first).rank;
    if (to >= 0) EmitCopy(id, from, to, Reason::kMinReplicas);
  }
  Relink(id, false);
}

void ChunkDirectory::Spilled(ChunkKey chunk) {
  const std::int32_t id = Find(chunk, "Spilled");
  Chunk& c = C(id);
  if (c.state != State::kSpilling) Bad("Spilled", "no spill of " + Name(chunk) + " is outstanding");
  ++totals_.spills;
  totals_.bytes_spilled += c.bytes;
  while (c.first >= 0) RemoveReplica(id, P(c.first).rank, true);
  c.state = State::kSpilled;
  if (c.freed) Settle(id);
}

void ChunkDirectory::Rebalance() {
  const double tolerance = options_.balance_tolerance;
  std::vector<int> excluded;
  int skipped_rank = -1;
  int skips = 0;
  while (!movable_.empty()) {
    ++work_;
    const double mean =
        static_cast<double>(total_projected_) / static_cast<double>(total_capacity_);
    const auto [high, from] = *movable_.rbegin();
    const double low = by_fill_.begin()->first;
    if (high <= mean || (high <= mean * (1 + tolerance) && low >= mean * (1 - tolerance))) break;
    if (R(from).head[1] >= 0) {
      DropSurplus(from);
      continue;
    }
    const std::int32_t head = R(from).head[0];
    const std::int32_t id = P(head).chunk;
    const Chunk& c = C(id);
    const int to = c.holders < max_copies_ ? LeastFilledTarget(c, -1) : -1;
    if (to >= 0 && FillOf(to) < mean && Improves(from, to, c.bytes)) {
      EmitCopy(id, from, to, Reason::kRebalance);
      continue;
    }
    // This chunk may not go: try the rank's next ones, then leave the rank alone.
    skips = from == skipped_rank ? skips + 1 : 1;
    skipped_rank = from;
    if (skips > kMaxSkips || head == R(from).tail[0]) {
      R(from).excluded = true;
      excluded.push_back(from);
      Touch(from);
    } else {
      Unlink(head);
      Link(head, 0);
    }
  }
  for (const int rank : excluded) {
    R(rank).excluded = false;
    Touch(rank);
  }
}

std::vector<DirectoryDecision> ChunkDirectory::TakeDecisions() {
  std::vector<DirectoryDecision> taken;
  taken.swap(decisions_);
  return taken;
}

// ---- Queries ----------------------------------------------------------------------------

std::int64_t ChunkDirectory::held_bytes(int rank) const {
  CheckRank(rank, "held_bytes");
  return R(rank).held;
}

std::int64_t ChunkDirectory::pending_bytes(int rank) const {
  CheckRank(rank, "pending_bytes");
  return R(rank).pending;
}

double ChunkDirectory::fill(int rank) const {
  CheckRank(rank, "fill");
  return FillOf(rank);
}

std::vector<int> ChunkDirectory::holders(ChunkKey chunk) const {
  std::vector<int> ranks;
  const auto found = index_.find(chunk);
  if (found == index_.end()) return ranks;
  for (std::int32_t replica = C(found->second).first; replica >= 0;
       replica = P(replica).next_of_chunk) {
    ranks.push_back(P(replica).rank);
  }
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

bool ChunkDirectory::knows(ChunkKey chunk) const {
  const auto found = index_.find(chunk);
  return found != index_.end() && !C(found->second).freed;
}

bool ChunkDirectory::spilled(ChunkKey chunk) const {
  const auto found = index_.find(chunk);
  return found != index_.end() && C(found->second).state == State::kSpilled;
}

void ChunkDirectory::CheckConsistency() const {
  const auto fail = [](const std::string& what) {
    throw std::logic_error("ChunkDirectory::CheckConsistency: " + what);
  };
  const auto replica_at = [&](std::int32_t at) -> const Replica& {
    return replicas_[static_cast<std::size_t>(at)];
  };
  std::vector<Rank> expect(ranks_.size());
  std::int64_t live = 0;
  std::size_t listed = 0;
  std::size_t used = 0;
  for (std::int32_t id = 0; id < static_cast<std::int32_t>(chunks_.size()); ++id) {
    const Chunk& c = C(id);
    if (!c.freed && c.op_pos < 0) continue;  // a free slot
    const ChunkKey key = c.key;
    const auto found = index_.find(key);
    if (found == index_.end() || found->second != id) fail(Name(key) + " is not filed");
    ++used;
    live += c.freed ? 0 : 1;
    const int list = Busy(c) ? -1 : (c.holders > min_copies_ ? 1 : 0);
    int holders = 0;
    for (std::int32_t at = c.first; at >= 0; at = replica_at(at).next_of_chunk, ++holders) {
      const Replica& p = replica_at(at);
      if (p.chunk != id || p.list != list) fail(Name(key) + " has a replica filed wrong");
      for (std::int32_t other = replica_at(at).next_of_chunk; other >= 0;
           other = replica_at(other).next_of_chunk) {
        if (replica_at(other).rank == p.rank) fail(Name(key) + " is twice on a rank");
      }
      expect[static_cast<std::size_t>(p.rank)].held += c.bytes;
      if (c.state == State::kSpilling) expect[static_cast<std::size_t>(p.rank)].leaving += c.bytes;
      listed += p.list >= 0 ? 1 : 0;
    }
    int copies = 0, reserved = 0, pins = 0;
    for (const Mark& mark : c.marks) {
      Rank& to = expect[static_cast<std::size_t>(mark.rank)];
      if (mark.kind == MarkKind::kCopy || mark.kind == MarkKind::kReserve) to.pending += c.bytes;
      if (mark.kind == MarkKind::kCopy && mark.reason == Reason::kRebalance) {
        expect[static_cast<std::size_t>(mark.from)].leaving += c.bytes;
      }
      copies += mark.kind == MarkKind::kCopy ? 1 : 0;
      reserved += mark.kind == MarkKind::kReserve ? 1 : 0;
      pins += mark.kind == MarkKind::kPin ? mark.count : 0;
    }
    if (holders != c.holders || copies != c.copies || reserved != c.reserved || pins != c.pins) {
      fail(Name(key) + " counts its holders, copies, reserved replicas or pins wrong");
    }
    if (c.holders + c.copies + c.reserved > max_copies_) fail(Name(key) + " passes max_replicas");
    if (!c.freed && c.state == State::kHeld &&
        (c.holders < 1 || c.holders + c.copies < min_copies_)) {
      fail(Name(key) + " has fewer copies than min_replicas");
    }
    if (!c.freed && ops_.at(key.op).at(static_cast<std::size_t>(c.op_pos)) != id) {
      fail(Name(key) + " is missing from its op's list");
    }
  }
  if (live != live_ || used != index_.size()) fail("live_chunks() or the index is off");
  std::int64_t projected = 0;
  for (int rank = 0; rank < ranks(); ++rank) {
    const Rank& r = R(rank);
    const Rank& e = expect[static_cast<std::size_t>(rank)];
    const std::string name = "rank " + std::to_string(rank);
    if (r.held != e.held || r.pending != e.pending || r.leaving != e.leaving) {
      fail(name + ": held " + std::to_string(r.held) + " (expected " + std::to_string(e.held) +
           "), pending or leaving bytes are off");
    }
    projected += Projected(rank);
    if (r.key != FillOf(rank) || *r.by_fill != std::make_pair(r.key, rank)) {
      fail(name + " is misfiled");
    }
    if (r.filed_movable != (!r.excluded && (r.head[0] >= 0 || r.head[1] >= 0)) ||
        movable_.count({r.key, rank}) != (r.filed_movable ? 1u : 0u)) {
      fail(name + " is misfiled as movable");
    }
    for (int list = 0; list < 2; ++list) {
      std::int32_t prev = -1;
      for (std::int32_t at = r.head[list]; at >= 0; prev = at, at = replica_at(at).next) {
        const Replica& p = replica_at(at);
        if (p.rank != rank || p.list != list || p.prev != prev) fail(name + " has a broken list");
        --listed;
      }
      if (r.tail[list] != prev) fail(name + " has a broken list tail");
    }
  }
  if (listed != 0) fail("a listed replica is on no rank's list");
  if (projected != total_projected_ || by_fill_.size() != ranks_.size()) fail("totals are off");
}

}  // namespace tessera::exec
