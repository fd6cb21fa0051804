// Array: a lazy N-dimensional array — a handle on a node of the plan DAG and the Spec
// it will run under. Building arrays runs nothing and never throws for memory; only
// planning (plan(), compute(), to_zarr()) does.
//
//   tessera::Spec spec = tessera::Spec::from({{"allowed_mem", "400MB"}});
//   tessera::Array t2 = tessera::from_zarr("era5.zarr/t2m", spec);
//   tessera::Array c = t2 - 273.15;                 // lazy
//   tessera::FinalizedPlan p = c.plan();            // memory proven here
//   tessera::NDArray values = c.compute();          // runs
//   c.to_zarr("celsius.zarr");                      // runs, writes atomically
//
// Copies are cheap and share the node. Thread-compatible: distinct Arrays may be used
// from distinct threads; computing runs its own threads.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/ndarray.hpp"
#include "tessera/core/spec.hpp"
#include "tessera/exec/execution_report.hpp"
#include "tessera/plan/finalized_plan.hpp"
#include "tessera/plan/node_handle.hpp"
#include "tessera/plan/plan_options.hpp"

namespace tessera {

// How compute() and to_zarr() plan and run.
class IndexItem;  // api/indexing.hpp

struct ComputeOptions {
  PlanOptions plan;
  ExecuteOptions execute;
  // When set, receives what ran: per op projected vs measured memory, every task.
  ExecutionReport* report = nullptr;
};

struct ToZarrOptions : ZarrWriteOptions {  // compressor, dimension_names, fill_value, ...
  ComputeOptions compute;
};

class Array {
 public:
  // An array on `node` (the engine's: the array API functions make them).
  Array(planner::NodePtr node, Spec spec);

  const Shape& shape() const;
  const Shape& chunks() const;
  DType dtype() const;
  int ndim() const;
  Index size() const;
  std::int64_t nbytes() const;
  const Spec& spec() const { return spec_; }
  const std::string& name() const;  // unique in the process: "add-7"
  const planner::NodePtr& node() const { return node_; }

  Array astype(DType dtype) const;
  // The same values on another chunk grid (-1: the whole extent of a dimension). Lazy;
  // planned as copies bounded by allowed_mem, with an intermediate in RAM, on disk or
  // both as total_mem allows (docs/rechunk.md).
  Array rechunk(Shape chunks) const;
  // Basic indexing (api/indexing.hpp): x[3], x[Slice(1, 5)], x[{Slice(1, 5), ellipsis}].
  Array operator[](const IndexItem& item) const;
  Array operator[](std::initializer_list<IndexItem> items) const;

  // Plans (throws MemoryBudgetError when a task would not fit) and runs nothing.
  FinalizedPlan plan(const PlanOptions& options = {}) const;
  // Plans, runs, returns the values.
  NDArray compute(const ComputeOptions& options = {}) const;
  // Plans, runs, writes a Zarr v2 array at directory `path` (readable by zarr-python
  // and xarray) — into "<path>.partial" first, moved into place when complete.
  void to_zarr(const std::string& path, const ToZarrOptions& options = {}) const;
  // The same, into `store` at `path` (written in place).
  void to_zarr(std::shared_ptr<Store> store, const std::string& path,
               const ToZarrOptions& options = {}) const;
  // The plan to_zarr(path, options) would run; runs nothing, writes nothing.
  FinalizedPlan plan_to_zarr(const std::string& path, const ToZarrOptions& options = {}) const;

 private:
  planner::NodePtr node_;
  Spec spec_;
};

// x.rechunk(chunks).
Array rechunk(const Array& x, Shape chunks);

// One plan for several arrays (their shared inputs are computed once).
FinalizedPlan plan(const std::vector<Array>& outputs, const PlanOptions& options = {});
std::vector<NDArray> compute(const std::vector<Array>& outputs, const ComputeOptions& options = {});

}  // namespace tessera
