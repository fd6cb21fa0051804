// Plan recipe: a finalized plan as bytes from which another process remakes the same plan
// (its ops, tasks, tiers and intermediate folders) to run some of its tasks there: the
// workers of the Dask and Ray executors (exec/remote/remote_executor.hpp).
//
//   std::string recipe = planner::EncodePlanRecipe(plan);      // where the plan was made
//   FinalizedPlan again = planner::DecodePlanRecipe(recipe);   // in a worker process
//   // again.executable_ops()[op] writes what plan's op writes, into the same places
//
// The recipe holds the plan's requested outputs (graph_codec.hpp; what cannot cross
// processes is refused there), the spec as it was asked for (allowed_mem "auto" stays
// auto) with total_mem and max_workers resolved where the plan was made (a worker's
// machine may differ), the plan options, what history answered for each step (read
// instead of a database, so the worker counts what the planner counted) and the work
// directory (used, never created, cleaned or removed by the worker). Decoding plans again
// and compares PlanHash with the encoded one: an Error naming both when they differ.
// Malformed bytes are a FormatError.
//
// Internal to the engine (not installed).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/plan/finalized_plan.hpp"
#include "tessera/plan/internal/executable_op.hpp"

namespace tessera::planner {

std::string EncodePlanRecipe(const FinalizedPlan& plan);
FinalizedPlan DecodePlanRecipe(std::string_view recipe);

// The plan as processes compare it: every op's fingerprint, kind, tasks, inputs and tier
// (FNV-1a). Not its names (they count the arrays a process made) nor its projections (a
// process's history may differ: only the process that admits tasks counts them).
std::uint64_t PlanHash(const std::vector<std::shared_ptr<ExecutableOp>>& ops);

// A name for a recipe that another plan's cannot share (the recipe names its process's work
// directory): the same hash over its bytes, and its size. Equal recipes, equal keys.
std::string RecipeKey(std::string_view recipe);

}  // namespace tessera::planner
