// Finalize: prune, fuse, choose tiers, project, check. See finalized_plan.hpp.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "contract_op.hpp"
#include "disabled_passes.hpp"
#include "finalized_plan_state.hpp"
#include "fused_evaluator.hpp"
#include "fused_op.hpp"
#include "gather_op.hpp"
#include "node_detail.hpp"
#include "op_cost.hpp"
#include "op_fingerprint.hpp"
#include "op_output.hpp"
#include "output_op.hpp"
#include "rechunk_ops.hpp"
#include "reduction_rounds.hpp"
#include "reshape_op.hpp"
#include "smallest_budget.hpp"
#include "tessera/core/buffer_pool.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/memory/footprint_estimate.hpp"
#include "tessera/memory/history.hpp"
#include "tessera/plan/finalized_plan.hpp"
#include "work_directory.hpp"

namespace tessera {
namespace {

// a + b for non-negative byte counts, capped at the largest int64 instead of overflowing.
std::int64_t AddCapped(std::int64_t a, std::int64_t b) {
  return a > std::numeric_limits<std::int64_t>::max() - b ? std::numeric_limits<std::int64_t>::max()
                                                          : a + b;
}

using NodeSet = std::unordered_set<const Node*>;

// Every node `outputs` need, inputs before the nodes that read them.
std::vector<NodePtr> TopologicalOrder(const std::vector<NodePtr>& outputs) {
  std::vector<NodePtr> order;
  NodeSet visited;
  // Iterative DFS: deep chains must not overflow the stack.
  std::vector<std::pair<NodePtr, std::size_t>> stack;
  for (const NodePtr& output : outputs) {
    if (visited.contains(output.get())) continue;
    stack.emplace_back(output, 0);
    visited.insert(output.get());
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->inputs().size()) {
        const NodePtr& input = node->inputs()[next++];
        if (visited.insert(input.get()).second) stack.emplace_back(input, 0);
        continue;
      }
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

// Does `consumer` read `input` block by block on the same grid (so `input` can be
// computed inside the consumer's task)?
bool ReadsAligned(const Node& consumer, const Node& input) {
  // A reduction computes an elementwise input over its regions (FusedInputOf); other
  // ops planned alone read across chunks from storage.
  if (consumer.kind() == NodeKind::kReduce) return IsElementwise(input.kind());
  if (IsPlannedAlone(consumer.kind())) return false;
  if (IsGenerator(input.kind())) return true;  // computed from the index, any grid
  if (input.kind() == NodeKind::kBroadcast && consumer.kind() != NodeKind::kBroadcast &&
      consumer.shape() == input.shape()) {
    // A broadcast is evaluated over whatever region its reader asks for; only the
    // dimensions its own input spans must line up.
    for (int d = 0; d < input.inputs().front()->ndim(); ++d) {
      const std::size_t out = BroadcastDim(input, d);
      if (!IsStretched(input, d) && input.chunks()[out] != consumer.chunks()[out]) return false;
    }
    return true;
  }
  if (consumer.kind() != NodeKind::kBroadcast) return consumer.chunks() == input.chunks();
  for (int d = 0; d < input.ndim(); ++d) {
    const std::size_t out = BroadcastDim(consumer, d);
    if (!IsStretched(consumer, d) &&
        input.chunks()[static_cast<std::size_t>(d)] != consumer.chunks()[out]) {
      return false;
    }
  }
  return true;
}

class PlanBuilder {
 public:
  // `history` (null: none) is read for what earlier runs of each step measured.
  // Budget-dependent choices (fusion splits, rechunk stages, reduction fan-in,
  // contraction slabs, RAM for intermediates) are made for `choice_budget` (0: allowed_mem);
  // the check and the estimates use allowed_mem.
  PlanBuilder(const std::vector<PlanOutput>& outputs, const Spec& spec, const PlanOptions& options,
              std::shared_ptr<HistoryDatabase> history, std::int64_t choice_budget = 0)
      : spec_(spec),
        choice_spec_(spec),
        options_(options),
        requested_(outputs),
        history_(std::move(history)) {
    if (choice_budget != 0) choice_spec_.allowed_mem = choice_budget;
    spec_.validate();
    if (spec_.allowed_mem <= 0) {
      throw InvalidArgument("plan: spec.allowed_mem must be set (bytes per task, e.g. \"400MB\")");
    }
    for (PlanOutput& output : requested_) {
      if (output.node == nullptr) throw InvalidArgument("plan: an output array is empty");
      // A source asked for as an output is copied by an op of its own.
      if (IsSource(output.node->kind()))
        output.node = MakeAsType(output.node, output.node->dtype());
    }
    std::vector<NodePtr> roots;
    for (const PlanOutput& output : requested_) roots.push_back(output.node);
    order_ = TopologicalOrder(roots);
    for (const NodePtr& node : order_) {
      by_address_[node.get()] = node;
      for (const NodePtr& input : node->inputs()) consumers_[input.get()].insert(node.get());
    }
  }

  std::shared_ptr<FinalizedPlan::State> Build() {
    ChooseBoundaries();
    FuseWithinLimits();
    return MakeState();
  }

 private:
  // Nodes that must be stored: sources, outputs, nodes read by several ops, nodes a
  // consumer reads on another grid; with fusion off, every computed node.
  void ChooseBoundaries() {
    for (const PlanOutput& output : requested_) boundary_.insert(output.node.get());
    for (const NodePtr& node : order_) {
      const Node* raw = node.get();
      if (IsSource(node->kind())) {
        boundary_.insert(raw);
        continue;
      }
      if (IsGenerator(node->kind())) {
        // Recomputed by each reader, for free; stored when an op planned alone reads it
        // from storage by region (a reduction computes it instead).
        for (const Node* reader : consumers_[raw]) {
          if (IsPlannedAlone(reader->kind()) && !ReadsAligned(*reader, *node))
            boundary_.insert(raw);
        }
        continue;
      }
      if (!options_.fuse || IsPlannedAlone(node->kind())) boundary_.insert(raw);
      const NodeSet& readers = consumers_[raw];
      if (readers.size() > 1) boundary_.insert(raw);
      for (const Node* reader : readers) {
        if (!ReadsAligned(*reader, *node)) boundary_.insert(raw);
      }
    }
    // A map_blocks function sees whole blocks: a reduction's input group holding one is
    // stored instead of computed over the reduction's regions.
    for (const NodePtr& node : order_) {
      if (node->kind() != NodeKind::kReduce) continue;
      const Node* input = node->inputs().front().get();
      if (boundary_.contains(input)) continue;
      for (const Node* member : Members(*input)) {
        if (member->kind() == NodeKind::kMapBlocks) boundary_.insert(input);
      }
    }
  }

  // The group computed by `root`'s tasks: root and the non-boundary nodes it reaches.
  NodeSet Members(const Node& root) const {
    NodeSet members{&root};
    std::vector<const Node*> stack{&root};
    while (!stack.empty()) {
      const Node* node = stack.back();
      stack.pop_back();
      for (const NodePtr& input : node->inputs()) {
        if (boundary_.contains(input.get()) || members.contains(input.get())) continue;
        members.insert(input.get());
        stack.push_back(input.get());
      }
    }
    return members;
  }

  // Splits fused groups until each respects the limits and fits allowed_mem. A split
  // stores the root's largest fused input as an op of its own; for memory it is kept
  // only when it lowers the largest task (a split can cost more than it saves: the
  // stored node's block is then written and read whole).
  void FuseWithinLimits() {
    NodeSet unsplittable;
    bool changed = true;
    while (changed) {
      changed = false;
      for (const NodePtr& node : order_) {
        if (!IsComputedBoundary(*node) || unsplittable.contains(node.get())) continue;
        // Rechunks, reductions, ... are ops of their own kind, never fused groups.
        if (IsPlannedAlone(node->kind())) continue;
        const NodeSet members = Members(*node);
        if (members.size() < 2) continue;
        const auto op = MakeOp(*node, members, ProvisionalOutput(*node), {});
        const std::int64_t fused = op->MaxProjection();
        const bool over_limits = CountStoredInputs(members) > options_.max_fused_sources ||
                                 op->MaxInputBlocks() > options_.max_fused_input_blocks;
        if (!over_limits && fused <= choice_spec_.allowed_mem) continue;
        const Node* cut = NodeToCut(*node, members);
        if (cut == nullptr) continue;
        boundary_.insert(cut);
        if (!over_limits && std::max(ProjectGroup(*node), ProjectGroup(*cut)) >= fused) {
          boundary_.erase(cut);  // splitting would not help: keep the fused task
          unsplittable.insert(node.get());
          continue;
        }
        changed = true;
      }
    }
  }

  // The largest task projection of the group `root` computes under the current
  // boundaries.
  std::int64_t ProjectGroup(const Node& root) {
    return MakeOp(root, Members(root), ProvisionalOutput(root), {})->MaxProjection();
  }

  bool IsComputedBoundary(const Node& node) const {
    return boundary_.contains(&node) && !IsSource(node.kind());
  }

  int CountStoredInputs(const NodeSet& members) const {
    NodeSet stored;
    for (const Node* member : members) {
      for (const NodePtr& input : member->inputs()) {
        if (!members.contains(input.get())) stored.insert(input.get());
      }
    }
    return static_cast<int>(stored.size());
  }

  // The fused, non-generator input of the group with the most members under it.
  const Node* NodeToCut(const Node& root, const NodeSet& members) const {
    const Node* best = nullptr;
    std::size_t best_size = 0;
    for (const Node* member : members) {
      if (member == &root || IsGenerator(member->kind())) continue;
      if (member->kind() == NodeKind::kBroadcast) continue;  // cut its input instead
      const std::size_t size = Members(*member).size();
      if (size > best_size) {
        best = member;
        best_size = size;
      }
    }
    return best;
  }

  // The reader of a stored node: its source, or the output of the op computing it.
  std::shared_ptr<const StoredArray> Reader(const Node& node, bool provisional) {
    if (node.kind() == NodeKind::kZarr) {
      auto& reader = source_readers_[&node];
      if (!reader) reader = MakeZarrStoredArray(node.detail().zarr);
      return reader;
    }
    if (node.kind() == NodeKind::kInMemory) {
      auto& reader = source_readers_[&node];
      if (!reader) reader = MakeInMemoryStoredArray(node.detail().data, node.chunks());
      return reader;
    }
    return provisional ? ProvisionalOutput(node) : outputs_.at(&node);
  }

  // How an op planned alone (rechunk, reduction, ...) reads its input `node`: by region,
  // from the node's source or from the output of the op computing it.
  std::shared_ptr<const StoredArray> InputArray(const Node& node) {
    return Reader(node, /*provisional=*/false);
  }

  // While fusing, an intermediate is assumed in the tier its size alone would get.
  std::shared_ptr<OpOutput> ProvisionalOutput(const Node& node) {
    auto& output = provisional_[&node];
    if (!output) output = MakeOutput(node, TierAlone(node));
    return output;
  }

  Tier TierAlone(const Node& node) const {
    if (options_.intermediate_tier != Tier::kNone) return options_.intermediate_tier;
    return node.nbytes() <= IntermediateBudget() ? Tier::kMemory : Tier::kDisk;
  }

  // RAM intermediates may use: total_mem less what the running tasks and the pool of
  // reusable chunk buffers may hold.
  std::int64_t IntermediateBudget() const {
    const std::int64_t tasks =
        static_cast<std::int64_t>(spec_.effective_max_workers()) * choice_spec_.allowed_mem;
    return std::max<std::int64_t>(spec_.effective_total_mem() - tasks - BufferPoolCapacity(), 0);
  }

  std::shared_ptr<OpOutput> MakeOutput(const Node& node, Tier tier) {
    for (std::size_t i = 0; i < requested_.size(); ++i) {
      if (requested_[i].node.get() != &node) continue;
      if (requested_[i].target) {
        return MakeZarrTargetOutput(node.shape(), node.chunks(), node.dtype(),
                                    *requested_[i].target, ZarrSourcesOf(node));
      }
      return std::make_shared<ResultOutput>(node.shape(), node.chunks(), node.dtype());
    }
    if (tier == Tier::kMemory)
      return MakeMemoryTierOutput(node.shape(), node.chunks(), node.dtype());
    return MakeDiskTierOutput(node.shape(), node.chunks(), node.dtype(),
                              WorkDirectory() / node.name(), options_.disk_compressor);
  }

  // The stored Zarr arrays `node` is computed from, in plan order (a target records
  // their fingerprint).
  std::vector<std::shared_ptr<const ZarrArray>> ZarrSourcesOf(const Node& node) const {
    std::vector<std::shared_ptr<const ZarrArray>> sources;
    for (const NodePtr& source : TopologicalOrder({by_address_.at(&node)})) {
      if (source->kind() == NodeKind::kZarr) sources.push_back(source->detail().zarr);
    }
    return sources;
  }

  // This plan's directory for disk intermediates; the first use clears what killed runs
  // left in the same base.
  const std::filesystem::path& WorkDirectory() {
    if (work_directory_.empty()) {
      RemoveStaleWorkDirectories(WorkDirectoryBase(spec_));
      work_directory_ = NewWorkDirectory(spec_);
    }
    return work_directory_;
  }

  // The intermediates of rechunk `node`: in RAM, on disk or split, unless a tier is forced.
  IntermediateFactory RechunkIntermediates(const Node& node) {
    return [this, &node](int copy, const Shape& chunks, const Shape& disk_chunks,
                         Index blocks_in_memory, Index num_blocks) -> std::shared_ptr<OpOutput> {
      if (options_.intermediate_tier == Tier::kMemory) blocks_in_memory = num_blocks;
      if (options_.intermediate_tier == Tier::kDisk) blocks_in_memory = 0;
      if (blocks_in_memory >= num_blocks) {
        return MakeMemoryTierOutput(node.shape(), chunks, node.dtype());
      }
      const std::filesystem::path directory =
          WorkDirectory() / (node.name() + "." + std::to_string(copy));
      if (blocks_in_memory <= 0 && disk_chunks == chunks) {
        return MakeDiskTierOutput(node.shape(), chunks, node.dtype(), directory,
                                  options_.disk_compressor);
      }
      return MakeSplitTierOutput(node.shape(), chunks, disk_chunks, node.dtype(), blocks_in_memory,
                                 directory, options_.disk_compressor);
    };
  }

  std::shared_ptr<FusedOp> MakeOp(const Node& root, const NodeSet& members,
                                  std::shared_ptr<OpOutput> output, OpInfo info) {
    return std::make_shared<FusedOp>(std::move(info), MakeEvaluator(root, members),
                                     std::move(output), spec_.reserved_mem);
  }

  std::shared_ptr<const FusedEvaluator> MakeEvaluator(const Node& root, const NodeSet& members) {
    FusedEvaluator::Boundary boundary;
    for (const Node* member : members) {
      for (const NodePtr& input : member->inputs()) {
        if (!members.contains(input.get())) {
          boundary[input.get()] = Reader(*input, /*provisional=*/!final_);
        }
      }
    }
    return std::make_shared<const FusedEvaluator>(by_address_.at(&root), members,
                                                  std::move(boundary), options_.tile_elements);
  }

  std::string KindOf(const Node& root, const NodeSet& members) const {
    if (root.kind() == NodeKind::kMapBlocks) return "map_blocks";
    for (const Node* member : members) {
      if (member->kind() == NodeKind::kMapBlocks) return "blockwise";
    }
    if (members.size() == 1 && IsGenerator(root.kind())) return "generate";
    return "elementwise";
  }

  // A forced RAM tier (PlanOptions::intermediate_tier kMemory) must fit what total_mem
  // leaves for intermediates, as the automatic choice does; the sum of every RAM
  // intermediate is counted, as if all were held at once.
  void CheckForcedMemoryTier(FinalizedPlan::State& state) const {
    if (options_.intermediate_tier != Tier::kMemory) return;
    std::int64_t in_ram = 0;
    for (const OpInfo& info : state.infos) {
      if (info.tier != Tier::kMemory) continue;
      in_ram = AddCapped(in_ram, CheckedMul(ShapeSize(info.shape), info.dtype.itemsize()));
    }
    // Compared with total_mem less reserved_mem, not with what the running tasks leave:
    // the allowed_mem auto search plans with budgets up to total_mem, where tasks alone
    // would leave nothing, and must still find the budgets where the intermediates fit.
    const std::int64_t total = spec_.effective_total_mem();
    const std::int64_t budget = std::max<std::int64_t>(total - spec_.reserved_mem, 0);
    if (in_ram <= budget) return;
    const std::string what = "intermediates forced into memory hold " + format_bytes(in_ram) +
                             " (" + std::to_string(in_ram) + " bytes), more than the " +
                             format_bytes(budget) + " total_mem " + format_bytes(total) +
                             " leaves beside reserved_mem, before any task runs";
    if (options_.allow_over_total_mem) {
      state.warnings.push_back(what + "; allowed by allow_over_total_mem, the run may use about " +
                               format_bytes(AddCapped(total, in_ram - budget)) +
                               ", more than total_mem");
      return;
    }
    throw MemoryBudgetError(what +
                            ". Let Tessera choose (intermediate tier auto), put them on "
                            "disk, or raise total_mem to at least " +
                            format_bytes(AddCapped(total, in_ram - budget)) +
                            "; to run over total_mem anyway, set allow_over_total_mem "
                            "(--allow-over-total-mem)");
  }

  std::shared_ptr<FinalizedPlan::State> MakeState() {
    auto state = std::make_shared<FinalizedPlan::State>();
    state->spec = spec_;
    state->choice_budget = choice_spec_.allowed_mem;
    final_ = true;
    // Final outputs, tiers in plan order: RAM while the intermediates so far fit.
    std::int64_t in_memory = 0;
    for (const NodePtr& node : order_) {
      if (!IsComputedBoundary(*node)) continue;
      Tier tier = TierAlone(*node);
      if (options_.intermediate_tier == Tier::kNone && tier == Tier::kMemory) {
        if (in_memory + node->nbytes() > IntermediateBudget()) {
          tier = Tier::kDisk;
        } else {
          in_memory += node->nbytes();
        }
      }
      outputs_[node.get()] = MakeOutput(*node, tier);
    }
    for (const NodePtr& node : order_) {
      if (!IsComputedBoundary(*node)) continue;
      if (node->kind() == NodeKind::kRechunk) {
        AddRechunk(*node, *state, in_memory);
        continue;
      }
      if (node->kind() == NodeKind::kContract) {
        AddContract(*node, *state);
        continue;
      }
      if (node->kind() == NodeKind::kGather || node->kind() == NodeKind::kReshape) {
        AddIndexOp(*node, *state);
        continue;
      }
      if (node->kind() == NodeKind::kReduce) {
        AddReduction(*node, *state, in_memory);
        continue;
      }
      const NodeSet members = Members(*node);
      GroupReads group = ReadsOf(members);
      OpInfo info;
      info.name = node->name();
      info.kind = KindOf(*node, members);
      info.fused = std::move(group.fused);
      info.shape = node->shape();
      info.chunks = node->chunks();
      info.dtype = node->dtype();
      info.tier = outputs_.at(node.get())->tier();
      AppendOp(node.get(), MakeOp(*node, members, outputs_.at(node.get()), std::move(info)),
               group.stored, *state);
    }
    for (const PlanOutput& output : requested_) {
      state->result_ops.push_back(op_index_.at(output.node.get()));
    }
    state->work_directory = work_directory_;
    EstimateFootprints(*state);
    for (const PlanOutput& output : requested_) {
      if (!output.target) continue;
      const OpInfo& writer =
          state->ops[static_cast<std::size_t>(op_index_.at(output.node.get()))]->info();
      outputs_.at(output.node.get())
          ->SetWriterLayout(writer.kind + " " + std::to_string(writer.num_tasks) + " tasks " +
                            writer.fingerprint);
    }
    CheckForcedMemoryTier(*state);
    CheckMemory(*state);
    AssignMemorySizes(*state);
    return state;
  }

  // Appends `op`, which computes `node` reading the stored nodes `inputs`, to `state`:
  // its projection and the ops (or sources) it reads (its estimate and concurrency come
  // last, EstimateFootprints).
  // `node` is null for an op whose output no node stands for (a middle round);
  // `input_ops` are ops it reads besides those computing `inputs`.
  void AppendOp(const Node* node, std::shared_ptr<OutputOp> op,
                const std::vector<const Node*>& inputs, FinalizedPlan::State& state,
                const std::vector<int>& input_ops = {}) {
    std::int64_t worst_task = 0;
    const std::int64_t projected = op->MaxProjection(&worst_task);
    OpInfo& info = op->mutable_info();
    info.projected_mem = projected;
    std::vector<std::string> sources;
    info.inputs = input_ops;
    for (const Node* input : inputs) {
      if (auto found = op_index_.find(input); found != op_index_.end()) {
        if (std::find(info.inputs.begin(), info.inputs.end(), found->second) == info.inputs.end())
          info.inputs.push_back(found->second);
      } else if (std::find(sources.begin(), sources.end(), input->name()) == sources.end()) {
        sources.push_back(input->name());
      }
    }
    std::sort(info.inputs.begin(), info.inputs.end());
    if (info.bytes_read == 0 && info.bytes_written == 0) {
      // Each stored array it reads, read once, and its output written once (decoded).
      std::vector<const Node*> read;
      for (const Node* input : inputs) {
        if (std::find(read.begin(), read.end(), input) != read.end()) continue;
        read.push_back(input);
        info.bytes_read += input->nbytes();
      }
      for (const int input : input_ops) {
        const OpInfo& stored = state.infos[static_cast<std::size_t>(input)];
        info.bytes_read += CheckedMul(ShapeSize(stored.shape), stored.dtype.itemsize());
      }
      info.bytes_written = CheckedMul(ShapeSize(info.shape), info.dtype.itemsize());
    }
    if (node != nullptr) op_index_[node] = static_cast<int>(state.ops.size());
    state.outputs.push_back(op->output());
    state.infos.push_back(op->info());
    state.sources.push_back(std::move(sources));
    state.worst_tasks.push_back(worst_task);
    state.ops.push_back(std::move(op));
  }

  // The gather or reshape computing `node` (gather_op.hpp, reshape_op.hpp), appended.
  void AddIndexOp(const Node& node, FinalizedPlan::State& state) {
    OpInfo info;
    info.name = node.name();
    info.kind = node.op();
    info.fused = {node.name()};
    info.shape = node.shape();
    info.chunks = node.chunks();
    info.dtype = node.dtype();
    info.tier = outputs_.at(&node)->tier();
    std::vector<const Node*> inputs;
    std::vector<std::shared_ptr<const StoredArray>> arrays;
    std::vector<ChunkGrid> grids;
    for (const NodePtr& input : node.inputs()) {
      inputs.push_back(input.get());
      arrays.push_back(InputArray(*input));
      grids.push_back(input->grid());
    }
    std::shared_ptr<OutputOp> op;
    if (node.kind() == NodeKind::kReshape) {
      op = std::make_shared<ReshapeOp>(std::move(info), arrays.front(), node.inputs()[0]->shape(),
                                       outputs_.at(&node), spec_.reserved_mem);
    } else {
      op = std::make_shared<GatherOp>(std::move(info), node.detail().index_map, std::move(arrays),
                                      std::move(grids), outputs_.at(&node), spec_.reserved_mem);
    }
    AppendOp(&node, std::move(op), inputs, state);
  }

  // Tasks of `projected` bytes (reserved_mem included) that may run at once under
  // total_mem, as the executor admits them: the process's reserved_mem once, and each
  // task what it holds beyond it.
  int Concurrency(std::int64_t projected) const {
    const std::int64_t total = spec_.effective_total_mem() - spec_.reserved_mem;
    const std::int64_t task = std::max<std::int64_t>(projected - spec_.reserved_mem, 1);
    return static_cast<int>(
        std::clamp<std::int64_t>(total / task, 1, spec_.effective_max_workers()));
  }

  // The copies carrying rechunk `node`, appended to `state`; its intermediates take RAM
  // from what `in_memory` leaves.
  void AddRechunk(const Node& node, FinalizedPlan::State& state, std::int64_t& in_memory) {
    const Node& input = *node.inputs().front();
    RechunkInput reader{InputArray(input), true};
    if (input.kind() == NodeKind::kInMemory) reader.decodes = false;
    if (auto found = outputs_.find(&input); found != outputs_.end()) {
      const Tier tier = found->second->tier();
      reader.decodes = tier != Tier::kMemory && tier != Tier::kResult;
    }
    const std::int64_t memory_budget =
        options_.intermediate_tier == Tier::kNone
            ? std::max<std::int64_t>(IntermediateBudget() - in_memory, 0)
            : (options_.intermediate_tier == Tier::kMemory
                   ? std::numeric_limits<std::int64_t>::max() / 4
                   : 0);
    RechunkOps ops = BuildRechunkOps(node, reader, outputs_.at(&node), memory_budget, choice_spec_,
                                     RechunkIntermediates(node));
    if (options_.intermediate_tier == Tier::kNone) in_memory += ops.peak_memory_in_ram;
    const auto input_op = op_index_.find(&input);
    for (std::size_t k = 0; k < ops.copies.size(); ++k) {
      CopyOp& copy = *ops.copies[k];
      std::vector<std::string> sources;
      if (k > 0) {
        copy.mutable_info().inputs = {static_cast<int>(state.ops.size()) - 1};
      } else if (input_op != op_index_.end()) {
        copy.mutable_info().inputs = {input_op->second};
      } else {
        sources.push_back(input.name());
      }
      state.ops.push_back(ops.copies[k]);
      state.outputs.push_back(copy.output());
      state.infos.push_back(copy.info());
      state.sources.push_back(std::move(sources));
      state.worst_tasks.push_back(ops.worst_tasks[k]);
    }
    op_index_[&node] = static_cast<int>(state.ops.size()) - 1;
  }

  // The rounds carrying reduction `node`, appended to `state`. Round 1 computes a fused
  // elementwise input inside its tasks; partial states take RAM from what `in_memory`
  // leaves, else go to disk.
  void AddReduction(const Node& node, FinalizedPlan::State& state, std::int64_t& in_memory) {
    const Node& input = *node.inputs().front();
    FusedInput values = FusedInputOf(input);
    const auto make_partials = [&](int round, const Shape& shape,
                                   const Shape& chunks) -> std::shared_ptr<OpOutput> {
      const std::int64_t bytes = ShapeSize(shape);
      const bool in_ram = options_.intermediate_tier == Tier::kNone
                              ? in_memory + bytes <= IntermediateBudget()
                              : options_.intermediate_tier == Tier::kMemory;
      if (in_ram) return MakeMemoryTierOutput(shape, chunks, uint8);
      return MakeDiskTierOutput(shape, chunks, uint8,
                                WorkDirectory() / (node.name() + "." + std::to_string(round)),
                                options_.disk_compressor);
    };
    ReductionOps ops =
        BuildReductionOps(node, values.array, outputs_.at(&node), choice_spec_, make_partials);
    for (std::size_t k = 0; k < ops.rounds.size(); ++k) {
      const std::shared_ptr<ReduceOp>& round = ops.rounds[k];
      if (round->output()->tier() == Tier::kMemory) in_memory += ShapeSize(round->info().shape);
      const bool last = k + 1 == ops.rounds.size();
      if (k == 0) {
        std::vector<std::string>& fused = round->mutable_info().fused;
        fused.insert(fused.begin(), values.reads.fused.begin(), values.reads.fused.end());
        AppendOp(last ? &node : nullptr, round, values.reads.stored, state);
      } else {
        AppendOp(last ? &node : nullptr, round, {}, state,
                 {static_cast<int>(state.ops.size()) - 1});
      }
    }
  }

  // A fused group's members (names, inputs first) and the stored nodes it reads.
  struct GroupReads {
    std::vector<std::string> fused;
    std::vector<const Node*> stored;
  };
  GroupReads ReadsOf(const NodeSet& members) const {
    GroupReads reads;
    for (const NodePtr& member : order_) {
      if (!members.contains(member.get())) continue;
      reads.fused.push_back(member->name());
      for (const NodePtr& input : member->inputs()) {
        if (!members.contains(input.get())) reads.stored.push_back(input.get());
      }
    }
    return reads;
  }

  // How an op that reads by region reads `input`: stored, or — when the input is a
  // fused group (not a boundary) — computed when read, from the group's stored inputs.
  struct FusedInput {
    std::shared_ptr<const StoredArray> array;
    GroupReads reads;
  };
  FusedInput FusedInputOf(const Node& input) {
    if (boundary_.contains(&input)) return {InputArray(input), {{}, {&input}}};
    const NodeSet members = Members(input);
    return {MakeEvaluatedArray(MakeEvaluator(input, members)), ReadsOf(members)};
  }

  // The op computing contraction `node` (matmul, tensordot, ...), appended to `state`.
  void AddContract(const Node& node, FinalizedPlan::State& state) {
    const Node& a = *node.inputs()[0];
    const Node& b = *node.inputs()[1];
    OpInfo info;
    info.name = node.name();
    info.kind = "contract";
    info.fused = {node.name()};
    info.tier = outputs_.at(&node)->tier();
    AppendOp(&node,
             MakeContractOp(std::move(info), node, InputArray(a), InputArray(b), outputs_.at(&node),
                            choice_spec_),
             {&a, &b}, state);
  }

  // Every op's fingerprint and what the plan counts per task: its projection, or what
  // history measured above it (footprint_estimate.hpp); concurrency follows the count.
  // Then the seconds a task takes (op_cost.hpp).
  void EstimateFootprints(FinalizedPlan::State& state) const {
    std::unordered_map<std::string, const Node*> by_name;
    for (const NodePtr& node : order_) by_name[node->name()] = node.get();
    for (std::size_t i = 0; i < state.ops.size(); ++i) {
      OpInfo& info = dynamic_cast<OutputOp&>(*state.ops[i]).mutable_info();
      std::vector<const Node*> members;
      for (const std::string& name : info.fused) {
        if (auto found = by_name.find(name); found != by_name.end()) {
          members.push_back(found->second);
        }
      }
      info.fingerprint = OpFingerprint(info, members);
      const std::optional<LearnedFootprint> learned =
          history_ ? history_->Learned(info.fingerprint) : std::nullopt;
      const FootprintEstimate estimate =
          EstimateFootprint(info.projected_mem, spec_.reserved_mem, spec_.allowed_mem, learned);
      info.estimated_mem = estimate.bytes;
      info.estimate_from_history = estimate.from_history;
      info.learned_run = estimate.learned_run;
      info.learned_mem =
          estimate.learned_run != 0 ? estimate.learned_task_bytes + spec_.reserved_mem : 0;
      info.concurrency = Concurrency(info.estimated_mem);
      EstimateTaskSeconds(info, spec_, learned);
      state.infos[i] = info;
    }
  }

  // Every op's memory size and cost (op_cost.hpp), once the plan fits allowed_mem.
  void AssignMemorySizes(FinalizedPlan::State& state) const {
    for (std::size_t i = 0; i < state.ops.size(); ++i) {
      OpInfo& info = dynamic_cast<OutputOp&>(*state.ops[i]).mutable_info();
      AssignMemorySize(info, spec_);
      state.infos[i] = info;
    }
  }

  void CheckMemory(const FinalizedPlan::State& state) const {
    std::int64_t required = 0;
    for (const OpInfo& info : state.infos) required = std::max(required, SmallestAllowedMem(info));
    for (std::size_t i = 0; i < state.infos.size(); ++i) {
      const OpInfo& info = state.infos[i];
      if (info.estimated_mem <= spec_.allowed_mem) continue;
      const std::string block = state.ops[i]->DescribeTask(state.worst_tasks[i]);
      const std::string op =
          "in op \"" + info.name + "\" (" + info.kind + ", " + std::to_string(info.num_tasks) +
          (info.num_tasks == 1 ? " task" : " tasks") + ", largest at " + block + ")";
      std::string message;
      if (info.estimate_from_history) {
        message = "Memory learned from history (" + std::to_string(info.learned_mem) +
                  ") exceeds allowed_mem (" + std::to_string(spec_.allowed_mem) +
                  "), including reserved_mem (" + std::to_string(spec_.reserved_mem) + "), " + op +
                  ": run " + std::to_string(info.learned_run) + " measured " +
                  format_bytes(info.learned_mem) + " per task against a projection of " +
                  format_bytes(info.projected_mem) +
                  "; the smallest allowed_mem that would run it is " +
                  std::to_string(info.learned_mem) + " (" + format_bytes(info.learned_mem) + ")";
      } else {
        message = "Projected blockwise memory (" + std::to_string(info.projected_mem) +
                  ") exceeds allowed_mem (" + std::to_string(spec_.allowed_mem) +
                  "), including reserved_mem (" + std::to_string(spec_.reserved_mem) + "), " + op +
                  "; the smallest allowed_mem that would run it is " +
                  std::to_string(info.projected_mem) + " (" + format_bytes(info.projected_mem) +
                  ")";
      }
      if (required > SmallestAllowedMem(info)) {
        message += "; the whole plan needs " + std::to_string(required) + " (" +
                   format_bytes(required) + ")";
      }
      message += info.estimate_from_history
                     ? ". Raise allowed_mem, make the step allocate less, or plan without "
                       "history (Spec::history \"off\" or TESSERA_HISTORY=off)."
                     : ". Raise allowed_mem or use smaller chunks.";
      throw MemoryBudgetError(message);
    }
  }

  Spec spec_;
  Spec choice_spec_;  // spec_ with the budget choices are made for
  PlanOptions options_;
  std::vector<PlanOutput> requested_;
  std::shared_ptr<HistoryDatabase> history_;
  std::vector<NodePtr> order_;
  std::unordered_map<const Node*, NodePtr> by_address_;
  std::unordered_map<const Node*, NodeSet> consumers_;
  NodeSet boundary_;
  std::unordered_map<const Node*, std::shared_ptr<const StoredArray>> source_readers_;
  std::unordered_map<const Node*, std::shared_ptr<OpOutput>> provisional_;
  std::unordered_map<const Node*, std::shared_ptr<OpOutput>> outputs_;
  std::unordered_map<const Node*, int> op_index_;  // the op computing a stored node
  std::filesystem::path work_directory_;
  bool final_ = false;  // outputs_ chosen; before that, provisional_ stands in
};

}  // namespace

FinalizedPlan Finalize(const std::vector<PlanOutput>& outputs, const Spec& spec,
                       const PlanOptions& options) {
  spec.validate();
  CheckWorkDirectoryBase(spec);  // before any work: a missing, file or unwritable work_dir
  // Opened once, to read only: planning never creates, migrates or writes history.
  std::shared_ptr<HistoryDatabase> history;
  if (const std::optional<std::filesystem::path> path = ResolveHistoryPath(spec.history)) {
    history = HistoryDatabase::OpenToRead(*path);
  }
  const PlanOptions resolved = WithDisabledPasses(options);  // the suite's reruns
  const auto plan_at = [&](const Spec& budget, std::int64_t choice_budget) {
    return PlanBuilder(outputs, budget, resolved, history, choice_budget).Build();
  };
  if (!spec.allowed_mem_is_auto()) return FinalizedPlan(plan_at(spec, 0));
  return FinalizedPlan(PlanWithSmallestBudget(spec, plan_at));
}

}  // namespace tessera
