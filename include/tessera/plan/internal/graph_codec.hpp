// Graph codec: a plan's requested outputs (the lazy node DAG under them, and where each is
// written) as bytes another process decodes into equal nodes, so that it plans the very
// same ops (the Dask and Ray executors' workers, plan/plan_recipe.hpp).
//
//   std::string bytes = planner::EncodeGraph({PlanOutput{x.node(), std::nullopt}});
//   std::vector<PlanOutput> again = planner::DecodeGraph(bytes);   // in another process
//   Finalize(again, spec) has the ops, fingerprints and tasks Finalize(outputs, spec) has
//
// Every node kind is encoded with what rebuilds it exactly (each node once, inputs before
// their readers; kernels by op name and dtype; in-memory data by value; a stored source
// by its store's Location() and path). What cannot cross processes is refused with
// InvalidArgument naming the node and what to do: a source or target in a store without a
// Location() (a MemoryStore), a map_blocks function without a FunctionRecipe (a C++
// lambda). A map_blocks function with one is rebuilt by the loader SetFunctionLoader
// (tessera/plan/block_function.hpp)
// installed (the Python module installs one that unpickles); none installed is an
// InvalidArgument.
//
// Decoding untrusted or damaged bytes never crashes: anything malformed, truncated or
// inconsistent (an input index out of range, a shape that disagrees with its chunks, an
// unknown kind, op or dtype) throws FormatError saying what was wrong.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/dtype.hpp"
#include "tessera/plan/block_function.hpp"
#include "tessera/plan/finalized_plan.hpp"

namespace tessera::planner {

std::string EncodeGraph(const std::vector<PlanOutput>& outputs);
std::vector<PlanOutput> DecodeGraph(std::string_view bytes);

// The engine's own kernels built on map_blocks (cumulative sums, ...) cross processes by
// name: BuiltinRecipe(name, params) is their recipe, and decoding rebuilds them with the
// factory registered under `name` (at static initialization, in the file that defines the
// kernel), never through the front end's FunctionLoader. Thread-safe.
using BuiltinKernelFactory = std::function<BlockFunction(std::string_view params, DType dtype)>;
void RegisterBuiltinKernel(std::string name, BuiltinKernelFactory factory);
FunctionRecipe BuiltinRecipe(std::string_view name, std::string_view params);

}  // namespace tessera::planner
