#include "tessera/api/array.hpp"

#include <utility>

#include "tessera/core/errors.hpp"
#include "tessera/exec/internal/executor.hpp"
#include "tessera/plan/internal/node.hpp"
#include "tessera/plan/internal/plan_recipe.hpp"
#include "tessera/plan/target_files.hpp"
#include "tessera/storage/open_store.hpp"

namespace tessera {

using planner::MakeRechunk;
namespace {

// The outputs' spec: all arrays of one plan must agree on it.
const Spec& CommonSpec(const std::vector<Array>& outputs) {
  if (outputs.empty()) throw InvalidArgument("plan/compute: no arrays given");
  return outputs.front().spec();
}

std::vector<NDArray> Run(FinalizedPlan& plan, std::size_t results, const ComputeOptions& options) {
  ExecuteOptions execute = options.execute;
  if (execute.label.empty()) execute.label = "compute";
  execute.plan_recipe = [&plan] { return planner::EncodePlanRecipe(plan); };
  ExecutionReport report = Execute(plan.executable_ops(), plan.spec(), execute);
  if (options.report != nullptr) *options.report = std::move(report);
  std::vector<NDArray> values;
  values.reserve(results);
  for (std::size_t i = 0; i < results; ++i) values.push_back(plan.TakeResult(i));
  return values;
}

// What a sharded target writes: `array` on its shards, which must be whole multiples of
// its chunks (those become the inner chunks).
Array OnShards(const Array& array, const Shape& shards, ZarrTarget& target) {
  if (target.zarr_format && *target.zarr_format != 3) {
    throw InvalidArgument("to_zarr: shards are Zarr v3's, but zarr_format " +
                          std::to_string(*target.zarr_format) +
                          " was asked for; write zarr_format 3 or leave shards out");
  }
  if (static_cast<int>(shards.size()) != array.ndim()) {
    throw InvalidArgument("to_zarr: shards " + ShapeToString(shards) + " give " +
                          std::to_string(shards.size()) + " extents for an array of " +
                          std::to_string(array.ndim()) + " dimensions");
  }
  for (std::size_t dim = 0; dim < shards.size(); ++dim) {
    if (shards[dim] < 1 || shards[dim] % array.chunks()[dim] != 0) {
      throw InvalidArgument("to_zarr: shards " + ShapeToString(shards) +
                            " must be whole multiples of the array's chunks " +
                            ShapeToString(array.chunks()) + " (dimension " + std::to_string(dim) +
                            " is not); the chunks become the shards' inner chunks: rechunk "
                            "the array first or choose other shards");
    }
  }
  target.inner_chunks = array.chunks();
  return array.rechunk(shards);
}

// The target a path names: a directory, or a key prefix of an object store
// ("s3://bucket/dataset.zarr/t2m": the array "t2m" in the store at "s3://bucket/dataset.zarr",
// so that a group it is written into is the store's root). What is there already is
// checked now (CheckStoreTarget), before any planning.
ZarrTarget TargetAt(const std::string& path, const ToZarrOptions& options) {
  if (path.empty()) throw InvalidArgument("to_zarr: the path is empty");
  ZarrTarget target;
  if (!IsObjectStoreLocation(path)) {
    target.directory = path;
    return target;
  }
  StoreTargetLocation location;
  try {
    location = OpenStoreTarget(path);
    static_cast<void>(CheckStoreTarget(*location.store, location.path, options));
  } catch (const StorageError& error) {
    throw StorageError("to_zarr " + path + ": the target cannot be read: " + error.what());
  }
  target.store = std::move(location.store);
  target.path = std::move(location.path);
  return target;
}

// The plan of writing `array` to `target` as `options` say.
FinalizedPlan PlanToZarr(const Array& array, ZarrTarget target, const ToZarrOptions& options) {
  static_cast<ZarrWriteOptions&>(target) = options;
  if (!target.dimension_names.empty() &&
      static_cast<int>(target.dimension_names.size()) != array.ndim()) {
    throw InvalidArgument("to_zarr: " + std::to_string(target.dimension_names.size()) +
                          " dimension names for an array of " + std::to_string(array.ndim()) +
                          " dimensions");
  }
  const Array written = target.shards ? OnShards(array, *target.shards, target) : array;
  return Finalize({PlanOutput{written.node(), std::move(target)}}, array.spec(),
                  options.compute.plan);
}

void ToZarr(const Array& array, ZarrTarget target, const ToZarrOptions& options) {
  // Where a failed run's partial output is kept: a directory's, or a store's prefix.
  const std::filesystem::path directory = target.directory;
  const std::shared_ptr<Store> store = target.store;
  const std::string path = target.path;
  FinalizedPlan plan = PlanToZarr(array, std::move(target), options);
  ExecuteOptions execute = options.compute.execute;
  execute.resume = execute.resume || options.resume;
  if (execute.label.empty()) execute.label = "to_zarr";
  execute.plan_recipe = [&plan] { return planner::EncodePlanRecipe(plan); };
  ExecutionReport report;
  try {
    report = Execute(plan.executable_ops(), plan.spec(), execute);
  } catch (const Error& error) {
    // A failed run keeps its partial output: say where, and how to continue it.
    const std::string how =
        "running to_zarr again with resume (options.resume = true in C++, resume=True in "
        "Python)";
    if (store != nullptr) ThrowWithStorePartialOutputNote(error, *store, path, how);
    ThrowWithPartialOutputNote(error, directory, how);
  }
  if (options.compute.report != nullptr) *options.compute.report = std::move(report);
}

}  // namespace

Array::Array(planner::NodePtr node, Spec spec) : node_(std::move(node)), spec_(std::move(spec)) {
  if (node_ == nullptr) throw InvalidArgument("Array: null node");
}

const Shape& Array::shape() const { return node_->shape(); }
const Shape& Array::chunks() const { return node_->chunks(); }
DType Array::dtype() const { return node_->dtype(); }
int Array::ndim() const { return node_->ndim(); }
Index Array::size() const { return node_->size(); }
std::int64_t Array::nbytes() const { return node_->nbytes(); }
const std::string& Array::name() const { return node_->name(); }

Array Array::rechunk(Shape chunks) const {
  return Array(MakeRechunk(node_, std::move(chunks)), spec_);
}

Array rechunk(const Array& x, Shape chunks) { return x.rechunk(std::move(chunks)); }

FinalizedPlan Array::plan_to_zarr(const std::string& path, const ToZarrOptions& options) const {
  return PlanToZarr(*this, TargetAt(path, options), options);
}

FinalizedPlan Array::plan(const PlanOptions& options) const {
  return Finalize({PlanOutput{node_, std::nullopt}}, spec_, options);
}

NDArray Array::compute(const ComputeOptions& options) const {
  FinalizedPlan finalized = plan(options.plan);
  return std::move(Run(finalized, 1, options).front());
}

void Array::to_zarr(const std::string& path, const ToZarrOptions& options) const {
  ToZarr(*this, TargetAt(path, options), options);
}

void Array::to_zarr(std::shared_ptr<Store> store, const std::string& path,
                    const ToZarrOptions& options) const {
  if (store == nullptr) throw InvalidArgument("to_zarr: the store is null");
  ZarrTarget target;
  target.store = std::move(store);
  target.path = path;
  ToZarr(*this, std::move(target), options);
}

FinalizedPlan plan(const std::vector<Array>& outputs, const PlanOptions& options) {
  const Spec& spec = CommonSpec(outputs);
  std::vector<PlanOutput> planned;
  for (const Array& array : outputs) planned.push_back(PlanOutput{array.node(), std::nullopt});
  return Finalize(planned, spec, options);
}

std::vector<NDArray> compute(const std::vector<Array>& outputs, const ComputeOptions& options) {
  // The same array asked for twice is computed once and copied.
  std::vector<Array> distinct;
  std::vector<std::size_t> slot;
  for (const Array& array : outputs) {
    std::size_t found = 0;
    while (found < distinct.size() && distinct[found].node() != array.node()) ++found;
    if (found == distinct.size()) distinct.push_back(array);
    slot.push_back(found);
  }
  FinalizedPlan finalized = plan(distinct, options.plan);
  std::vector<NDArray> values = Run(finalized, distinct.size(), options);
  std::vector<NDArray> results;
  results.reserve(outputs.size());
  for (const std::size_t index : slot) results.push_back(values[index]);
  return results;
}

}  // namespace tessera
