// PlanContext: what the planner's passes share while one plan is built — the spec and
// options, the logical plan the optimisation passes change, the physical plan
// (FinalizedPlan::State) lowering fills, and the bookkeeping between them (the reader of
// every stored node, the output of every op, the RAM intermediates hold so far). One
// context builds one plan, on one thread. Internal to src/plan.
//
//   PlanContext context(outputs, spec, options, history, choice_budget);
//   RunPlanPasses(context);   // pass_manager.hpp: prune, rewrites, fusion, ..., lowering
//   std::shared_ptr<FinalizedPlan::State> plan = context.state;
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "finalized_plan_state.hpp"
#include "fused_evaluator.hpp"
#include "fused_op.hpp"
#include "logical_plan.hpp"
#include "op_output.hpp"
#include "rechunk_ops.hpp"
#include "tessera/core/spec.hpp"
#include "tessera/memory/history.hpp"
#include "tessera/plan/plan_options.hpp"

namespace tessera::planner {

// What the plans one Finalize tries (one per budget, with allowed_mem "auto") share,
// so that work that does not depend on the budget is done once per Finalize, not once
// per try: the readers of the sources (from_zarr, asarray) by node, so a Zarr source
// lists its stored chunks once; and what history answered for each step's fingerprint,
// so each step is looked up once (and every try sees the same answer).
struct PlanSession {
  std::unordered_map<const Node*, std::shared_ptr<const StoredArray>> source_readers;
  std::mutex learned_mutex;
  std::unordered_map<std::string, std::optional<LearnedFootprint>> learned;
  // A plan remade in another process (plan_recipe.hpp): `learned` holds history's answers
  // as the first process had them, read instead of a database (a fingerprint missing had
  // none); and `given_work_directory` is the first process's, used rather than a new one
  // (never cleaned nor removed here), as `given_object_work_prefix` is its object store
  // prefix.
  bool learned_given = false;
  std::filesystem::path given_work_directory;
  std::string given_object_work_prefix;
};

// tessera::Finalize with `session` shared by its plans (one per budget tried): Finalize
// passes a fresh one; a plan remade in another process one holding what it was given.
FinalizedPlan FinalizeInSession(const std::vector<PlanOutput>& outputs, const Spec& spec,
                                const PlanOptions& options, std::shared_ptr<PlanSession> session);

struct PlanContext {
  // `history` (null: none) is read for what earlier runs of each step measured.
  // Budget-dependent choices (fusion splits, rechunk stages, reduction fan-in,
  // contraction slabs, RAM for intermediates) are made for `choice_budget`
  // (0: allowed_mem); the check and the estimates use allowed_mem.
  // `session` (null: the context's own) is shared with the other plans of its Finalize.
  // InvalidArgument for an invalid spec or an empty output.
  PlanContext(std::vector<PlanOutput> outputs_in, const Spec& spec_in,
              const PlanOptions& options_in, std::shared_ptr<HistoryDatabase> history_in,
              std::int64_t choice_budget = 0, std::shared_ptr<PlanSession> session = nullptr);

  Spec spec;
  Spec choice_spec;  // spec with the budget choices are made for
  PlanOptions options;
  std::shared_ptr<HistoryDatabase> history;
  std::vector<PlanOutput> requested;  // as given; `logical` holds them as planned
  LogicalPlan logical;
  std::shared_ptr<FinalizedPlan::State> state = std::make_shared<FinalizedPlan::State>();

  // ---- between fusion and lowering ------------------------------------------------
  // RAM intermediates may use, as the tiers pass found it (0 without that pass: every
  // intermediate goes to disk unless PlanOptions::intermediate_tier forces memory), and
  // what the intermediates planned so far hold of it.
  std::int64_t ram_for_intermediates = 0;
  std::int64_t in_memory = 0;
  bool lowered = false;  // outputs chosen; before that, provisional outputs stand in
  std::unordered_map<const Node*, std::shared_ptr<OpOutput>> outputs;  // stored node -> output
  std::unordered_map<const Node*, int> op_index;  // the op computing a stored node
  // What history measured per op (the history pass), by index in state->ops.
  std::unordered_map<int, LearnedFootprint> learned;

  // RAM intermediates may use: total_mem less what the running tasks and the pool of
  // reusable chunk buffers may hold.
  std::int64_t IntermediateBudget() const;
  // The tier `node`'s size alone would get (fusion assumes it for intermediates).
  Tier TierAlone(const Node& node) const;
  // Where a computed stored node's output goes: the tiers pass's choice, else the tier
  // PlanOptions::intermediate_tier forces, else disk.
  Tier ChosenTier(const Node& node) const;

  // What history learned of the step with `fingerprint` (nullopt without history or a
  // record), asked once per Finalize (PlanSession).
  std::optional<LearnedFootprint> Learned(const std::string& fingerprint) const;
  // Whether the plan counts history: a database, or the answers a remade plan was given.
  bool ReadsHistory() const;

  // The reader of a stored node: its source, or the output of the op computing it
  // (provisional while fusing).
  std::shared_ptr<const StoredArray> Reader(const Node& node, bool provisional);
  // How an op planned alone reads its stored input `node`, by region.
  std::shared_ptr<const StoredArray> InputArray(const Node& node);
  std::shared_ptr<OpOutput> ProvisionalOutput(const Node& node);
  // The output `node` gets in `tier`; a provisional one (fusion's stand-in, never
  // written) names no folder of its own.
  std::shared_ptr<OpOutput> MakeOutput(const Node& node, Tier tier, bool provisional = false);
  // This plan's directory for disk intermediates; the first use clears what killed runs
  // left in the same base.
  const std::filesystem::path& WorkDirectory();
  // Where one stored intermediate of `bytes` goes (nothing is created): a new folder
  // "intermediate-<n>" of WorkDirectory(), n counting this plan's intermediates so that
  // every rank of an MPI run, planning alike, names the same one (node names count per
  // process). With an s3:// work_dir, the object store prefix
  // "<ObjectWorkPrefix()>/intermediate-<n>" instead when the local disk intermediates
  // kept so far (KeepLocalDisk), `pending` bytes (the earlier intermediates of the same
  // candidate layout, alive with this one) and this one would exceed Spec::local_disk.
  // Choosing a place reserves nothing: a candidate passed over costs no local disk.
  StoredPlace IntermediatePlace(std::int64_t bytes, std::int64_t pending = 0);
  // Counts the local disk bytes of kept op `info`'s output against Spec::local_disk.
  void KeepLocalDisk(const OpInfo& info);
  // This plan's prefix for object store intermediates (NewObjectWorkPrefix, or the first
  // process's for a plan remade elsewhere).
  const std::string& ObjectWorkPrefix();

  std::shared_ptr<const FusedEvaluator> MakeEvaluator(const Node& root, const NodeSet& members);
  std::shared_ptr<FusedOp> MakeFusedOp(const Node& root, const NodeSet& members,
                                       std::shared_ptr<OpOutput> output, OpInfo info);

  // A fused group's members (names, inputs first) and the stored nodes it reads.
  struct GroupReads {
    std::vector<std::string> fused;
    std::vector<const Node*> stored;
  };
  GroupReads ReadsOf(const NodeSet& members) const;

  // Appends `op`, which computes `node` reading the stored nodes `inputs`, to the group
  // opened last: its projection and the ops (or sources) it reads. `node` is null for an
  // op whose output no node stands for (a middle round); `input_ops` are ops it reads
  // besides those computing `inputs`. Returns its index.
  int AppendOp(const Node* node, std::shared_ptr<OutputOp> op,
               const std::vector<const Node*>& inputs, const std::vector<int>& input_ops = {});

  // Tasks of `projected` bytes (reserved_mem included) that may run at once under
  // total_mem, as the executor admits them.
  int Concurrency(std::int64_t projected) const;

 private:
  std::shared_ptr<PlanSession> session_;
  std::unordered_map<const Node*, std::shared_ptr<OpOutput>> provisional_;
  std::filesystem::path work_directory_;
  std::string object_work_prefix_;
  int intermediates_ = 0;           // IntermediatePlace's count
  std::int64_t on_local_disk_ = 0;  // the bytes of its kept local disk intermediates
};

}  // namespace tessera::planner
