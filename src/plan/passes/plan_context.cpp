#include "plan_context.hpp"

#include <algorithm>
#include <utility>

#include "node_detail.hpp"
#include "tessera/core/buffer_pool.hpp"
#include "tessera/core/cluster.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/open_store.hpp"
#include "work_directory.hpp"

namespace tessera::planner {

PlanContext::PlanContext(std::vector<PlanOutput> outputs_in, const Spec& spec_in,
                         const PlanOptions& options_in, std::shared_ptr<HistoryDatabase> history_in,
                         std::int64_t choice_budget, std::shared_ptr<PlanSession> session)
    : spec(spec_in),
      choice_spec(spec_in),
      options(options_in),
      history(std::move(history_in)),
      requested(std::move(outputs_in)),
      session_(session ? std::move(session) : std::make_shared<PlanSession>()) {
  if (choice_budget != 0) choice_spec.allowed_mem = choice_budget;
  spec.validate();
  if (spec.allowed_mem <= 0) {
    throw InvalidArgument("plan: spec.allowed_mem must be set (bytes per task, e.g. \"400MB\")");
  }
  for (const PlanOutput& output : requested) {
    if (output.node == nullptr) throw InvalidArgument("plan: an output array is empty");
  }
  if (!spec.keeps_intermediates_in_memory()) {
    if (options.intermediate_tier == Tier::kMemory) {
      throw InvalidArgument("plan: executor \"" + spec.executor +
                            "\" runs tasks in worker processes that share no memory, so "
                            "intermediates cannot be forced into RAM; leave the tier to the "
                            "planner or force disk");
    }
    options.intermediate_tier = Tier::kDisk;
  }
  state->spec = spec;
  state->choice_budget = choice_spec.allowed_mem;
}

std::int64_t PlanContext::IntermediateBudget() const {
  const std::int64_t tasks =
      static_cast<std::int64_t>(spec.effective_total_workers()) * choice_spec.allowed_mem;
  return std::max<std::int64_t>(spec.effective_total_mem() - tasks - BufferPoolCapacity(), 0);
}

Tier PlanContext::TierAlone(const Node& node) const {
  if (options.intermediate_tier != Tier::kNone) return options.intermediate_tier;
  return node.nbytes() <= IntermediateBudget() ? Tier::kMemory : Tier::kDisk;
}

Tier PlanContext::ChosenTier(const Node& node) const {
  if (const auto found = logical.tiers.find(&node); found != logical.tiers.end()) {
    return found->second;
  }
  return options.intermediate_tier != Tier::kNone ? options.intermediate_tier : Tier::kDisk;
}

std::optional<LearnedFootprint> PlanContext::Learned(const std::string& fingerprint) const {
  if (!ReadsHistory()) return std::nullopt;
  {
    const std::lock_guard lock(session_->learned_mutex);
    if (const auto found = session_->learned.find(fingerprint); found != session_->learned.end()) {
      return found->second;
    }
    if (session_->learned_given) return std::nullopt;
  }
  std::optional<LearnedFootprint> answer = history->Learned(fingerprint);
  const std::lock_guard lock(session_->learned_mutex);
  session_->learned.emplace(fingerprint, answer);
  return answer;
}

bool PlanContext::ReadsHistory() const { return history != nullptr || session_->learned_given; }

std::shared_ptr<const StoredArray> PlanContext::Reader(const Node& node, bool provisional) {
  if (node.kind() == NodeKind::kZarr) {
    auto& reader = session_->source_readers[&node];
    if (!reader) reader = MakeZarrStoredArray(node.detail().zarr);
    return reader;
  }
  if (node.kind() == NodeKind::kInMemory) {
    auto& reader = session_->source_readers[&node];
    if (!reader) reader = MakeInMemoryStoredArray(node.detail().data, node.chunks());
    return reader;
  }
  return provisional ? ProvisionalOutput(node) : outputs.at(&node);
}

std::shared_ptr<const StoredArray> PlanContext::InputArray(const Node& node) {
  return Reader(node, /*provisional=*/false);
}

std::shared_ptr<OpOutput> PlanContext::ProvisionalOutput(const Node& node) {
  auto& output = provisional_[&node];
  if (!output) output = MakeOutput(node, TierAlone(node), /*provisional=*/true);
  return output;
}

std::shared_ptr<OpOutput> PlanContext::MakeOutput(const Node& node, Tier tier, bool provisional) {
  for (const PlanOutput& output : logical.outputs) {
    if (output.node.get() != &node) continue;
    if (output.target) {
      // The stored Zarr arrays `node` is computed from, in plan order (a target records
      // their fingerprint).
      std::vector<std::shared_ptr<const ZarrArray>> sources;
      for (const NodePtr& source : TopologicalOrder({output.node})) {
        if (source->kind() == NodeKind::kZarr) sources.push_back(source->detail().zarr);
      }
      return MakeZarrTargetOutput(node.shape(), node.chunks(), node.dtype(), *output.target,
                                  std::move(sources), spec.work_dir);
    }
    return std::make_shared<ResultOutput>(node.shape(), node.chunks(), node.dtype());
  }
  if (tier == Tier::kMemory) return MakeMemoryTierOutput(node.shape(), node.chunks(), node.dtype());
  // A provisional output is never written: it takes no number, so that the folders of the
  // real ones do not depend on the order fusion looked at its candidates in (which follows
  // node addresses, different in every process that plans alike).
  if (provisional) {
    return MakeStoredTierOutput(node.shape(), node.chunks(), node.dtype(),
                                StoredPlace{WorkDirectory() / "provisional", ""},
                                options.disk_compressor);
  }
  std::shared_ptr<OpOutput> output =
      MakeStoredTierOutput(node.shape(), node.chunks(), node.dtype(),
                           IntermediatePlace(node.nbytes()), options.disk_compressor);
  if (output->tier() == Tier::kDisk) on_local_disk_ += node.nbytes();
  return output;
}

const std::filesystem::path& PlanContext::WorkDirectory() {
  if (work_directory_.empty() && !session_->given_work_directory.empty()) {
    work_directory_ = session_->given_work_directory;
  }
  if (work_directory_.empty()) {
    // Only a run's leader clears leftovers: another rank, perhaps on another machine,
    // would take the leader's live directory for a dead process's.
    if (spec.executor != "mpi" || JoinCluster().leads()) {
      RemoveStaleWorkDirectories(WorkDirectoryBase(spec));
    }
    work_directory_ = NewWorkDirectory(spec);
    state->work_directory = work_directory_;
  }
  return work_directory_;
}

StoredPlace PlanContext::IntermediatePlace(std::int64_t bytes, std::int64_t pending) {
  const std::string name = "intermediate-" + std::to_string(++intermediates_);
  if (IsObjectStoreLocation(spec.work_dir)) {
    const std::int64_t local = LocalDiskAllowed(spec);
    if (local <= 0 || bytes > local - on_local_disk_ - pending) {
      return StoredPlace{{}, ObjectWorkPrefix() + "/" + name};
    }
  }
  return StoredPlace{WorkDirectory() / name, ""};
}

void PlanContext::KeepLocalDisk(const OpInfo& info) {
  if (info.tier == Tier::kDisk) on_local_disk_ += info.bytes_written;
  if (info.tier == Tier::kMixed) on_local_disk_ += info.bytes_written - info.bytes_in_memory;
}

const std::string& PlanContext::ObjectWorkPrefix() {
  if (object_work_prefix_.empty()) {
    object_work_prefix_ = session_->given_object_work_prefix.empty()
                              ? NewObjectWorkPrefix(spec, WorkDirectory())
                              : session_->given_object_work_prefix;
    state->object_work_prefix = object_work_prefix_;
  }
  return object_work_prefix_;
}

std::shared_ptr<const FusedEvaluator> PlanContext::MakeEvaluator(const Node& root,
                                                                 const NodeSet& members) {
  FusedEvaluator::Boundary boundary;
  for (const Node* member : members) {
    for (const NodePtr& input : member->inputs()) {
      if (!members.contains(input.get())) {
        boundary[input.get()] = Reader(*input, /*provisional=*/!lowered);
      }
    }
  }
  return std::make_shared<const FusedEvaluator>(logical.by_address.at(&root), members,
                                                std::move(boundary), options.tile_elements);
}

std::shared_ptr<FusedOp> PlanContext::MakeFusedOp(const Node& root, const NodeSet& members,
                                                  std::shared_ptr<OpOutput> output, OpInfo info) {
  return std::make_shared<FusedOp>(std::move(info), MakeEvaluator(root, members), std::move(output),
                                   spec.reserved_mem, spec.effective_total_workers());
}

PlanContext::GroupReads PlanContext::ReadsOf(const NodeSet& members) const {
  GroupReads reads;
  for (const NodePtr& member : logical.order) {
    if (!members.contains(member.get())) continue;
    reads.fused.push_back(member->name());
    for (const NodePtr& input : member->inputs()) {
      if (!members.contains(input.get())) reads.stored.push_back(input.get());
    }
  }
  return reads;
}

int PlanContext::AppendOp(const Node* node, std::shared_ptr<OutputOp> op,
                          const std::vector<const Node*>& inputs,
                          const std::vector<int>& input_ops) {
  PlannedOp planned;
  const std::int64_t projected = op->MaxProjection(&planned.worst_task);
  OpInfo& info = op->mutable_info();
  info.projected_mem = projected;
  info.inputs = input_ops;
  for (const Node* input : inputs) {
    if (auto found = op_index.find(input); found != op_index.end()) {
      if (std::find(info.inputs.begin(), info.inputs.end(), found->second) == info.inputs.end())
        info.inputs.push_back(found->second);
    } else if (std::find(planned.sources.begin(), planned.sources.end(), input->name()) ==
               planned.sources.end()) {
      planned.sources.push_back(input->name());
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
      const OpInfo& stored = state->ops[static_cast<std::size_t>(input)].info();
      info.bytes_read += CheckedMul(ShapeSize(stored.shape), stored.dtype.itemsize());
    }
    info.bytes_written = CheckedMul(ShapeSize(info.shape), info.dtype.itemsize());
  }
  planned.op = std::move(op);
  const int index = state->AddOp(std::move(planned));
  if (node != nullptr) op_index[node] = index;
  return index;
}

int PlanContext::Concurrency(std::int64_t projected) const {
  // The process's reserved_mem once, and each task what it holds beyond it.
  const std::int64_t total = spec.effective_total_mem() - spec.reserved_mem;
  const std::int64_t task = std::max<std::int64_t>(projected - spec.reserved_mem, 1);
  return static_cast<int>(
      std::clamp<std::int64_t>(total / task, 1, spec.effective_total_workers()));
}

}  // namespace tessera::planner
