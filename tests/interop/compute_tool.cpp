// compute_tool: a test-only program that builds lazy arrays from a JSON job, computes
// them through Tessera's public API and reports what ran, so Python tests can compare
// the values with numpy (tests/interop/test_compute.py).
//
//   compute_tool job      reads one JSON job on stdin, prints one JSON line
//   compute_tool batch    reads a JSON array of jobs on stdin, prints one line per job,
//                         in order (one process for hundreds of jobs: fast under ASan)
//
// A job:
//   {"allowed_mem": "1MB", "reserved_mem": "0", "executor": "threads", "max_workers": 0,
//    "fuse": true, "tile_elements": 4096, "tier": "auto" | "memory" | "disk",
//    "inputs": {"a": {"zarr": "/tmp/x/a.zarr"},
//               "b": {"random": {"shape": [5, 7], "chunks": [2, 3], "seed": 3}},
//               "c": {"full": {"shape": [], "chunks": [], "dtype": "int8", "value": SCALAR}},
//               "d": {"arange": {"start": 0, "stop": 7, "step": 1, "dtype": "int32", "chunk": 3}},
//               "e": {"ones": {"shape": [2], "chunks": [1], "dtype": "bool"}},  // or "zeros"
//               "f": {"raw": {"path": "f.bin", "dtype": "uint16", "shape": [3], "chunks": [2]}}},
//    "steps": [{"out": "s", "fn": "add", "args": ["a", "b"]},          // any elementwise name
//              {"out": "u", "fn": "add", "args": ["s", SCALAR]},
//              {"out": "v", "fn": "astype", "args": ["u"], "dtype": "int16"},
//              {"out": "w", "fn": "where", "args": ["cond", "x", SCALAR]},
//              {"out": "bb", "fn": "broadcast_to", "args": ["a"], "shape": [3, 5, 7]},
//              {"out": "m", "fn": "matmul", "args": ["a", "b"]},   // or "outer"
//              {"out": "t", "fn": "tensordot", "args": ["a", "b"], "axes": 1},  // or [[..], [..]]
//              {"out": "d", "fn": "vecdot", "args": ["a", "b"], "axis": -1},
//              MANIPULATION],
//    "outputs": {"v": "/tmp/x/v.zarr",                                  // to_zarr
//                "w": {"zarr": "/tmp/x/w.zarr", "compressor": "none"},  // or a codec spec
//                "s": {"raw": "/tmp/x/s.bin"}},                         // compute()
//    "compute": false,      // true: outputs given as plain strings are raw files too
//    "plan_only": false}    // true: plan every output, run nothing
// MANIPULATION steps (AXES is null for all axes, an int or a list of ints):
//   {"fn": "permute_dims", "axes": [1, 0]}, {"fn": "matrix_transpose"},
//   {"fn": "expand_dims", "axis": AXES}, {"fn": "squeeze", "axis": AXES},
//   {"fn": "flip", "axis": AXES}, {"fn": "roll", "shift": 2 | [1, 2], "axis": AXES},
//   {"fn": "reshape", "shape": [2, -1]}, {"fn": "repeat", "repeats": 2, "axis": 0 | null},
//   {"fn": "tile", "reps": [2, 1]}, {"fn": "concat", "args": [...], "axis": 0 | null},
//   {"fn": "stack", "args": [...], "axis": 0}, {"fn": "broadcast_arrays", "args": [...],
//   "which": 1}, {"fn": "index", "items": [1, {"slice": [null, null, -2]}, "...", null]}
//   (index items: an int, a slice [start, stop, step] with nulls, "..." or null: newaxis).
// SCALAR is {"scalar": 2.5}, {"scalar": 3, "kind": "int"}, {"scalar": true}, or
// {"scalar": "nan" | "inf" | "-inf"}; "kind" (bool, int, uint, float) overrides the
// kind the JSON number has.
//
// Raw outputs are computed together (tessera::compute, one plan); each Zarr output by
// its own to_zarr. Each plan is also made beforehand (tessera::plan, or Finalize with
// the Zarr target as to_zarr does) for its numbers; "stage" says which call threw. A raw file holds
// the values' bytes in C order, native byte order. The line printed:
//   {"steps": {"s": {"dtype": ..., "shape": [...], "chunks": [...]}, ...},   // every step
//    "plans": [{"outputs": ["s"], "max_projected_mem": N, "required_allowed_mem": N,
//               "num_tasks": N, "num_ops": N,
//               "ops": [{"name", "kind", "tasks", "projected_mem", "fused", "tier",
//                        "measured_mem_max", "unaccounted_mem_max",
//                        "footprint_mem_max"}]}],       // measured: from the run's report
//    "error": {"type": "MemoryBudgetError", "what": "...", "stage": "build|plan|run"}}
// "error" is present only when the job threw; "plans" holds what completed before.
//
// Exit codes: 0 ok (a job that threw still counts as ok: errors are results here),
// 2 a usage error or stdin that is not a job.
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tessera/tessera.hpp"

namespace {

using nlohmann::json;
using tessera::Array;
using tessera::DType;
using tessera::Shape;

std::string ErrorTypeName(const std::exception& error) {
  if (dynamic_cast<const tessera::MemoryBudgetError*>(&error) != nullptr)
    return "MemoryBudgetError";
  if (dynamic_cast<const tessera::InvalidArgument*>(&error) != nullptr) return "InvalidArgument";
  if (dynamic_cast<const tessera::StorageError*>(&error) != nullptr) return "StorageError";
  if (dynamic_cast<const tessera::FormatError*>(&error) != nullptr) return "FormatError";
  if (dynamic_cast<const tessera::Error*>(&error) != nullptr) return "Error";
  return "std::exception";
}

Shape ShapeOf(const json& value) { return value.get<Shape>(); }

bool IsScalar(const json& value) { return value.is_object() && value.contains("scalar"); }

tessera::Scalar ParseScalar(const json& spec) {
  const json& value = spec.at("scalar");
  const std::string kind = spec.value("kind", "");
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
    throw tessera::InvalidArgument("scalar: unknown text \"" + text + "\"");
  }
  if (kind == "bool" || (kind.empty() && value.is_boolean())) return value.get<bool>();
  if (kind == "float" || (kind.empty() && value.is_number_float())) return value.get<double>();
  if (kind == "uint" ||
      (kind.empty() && value.is_number_unsigned() &&
       value.get<std::uint64_t>() >
           static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))) {
    return value.get<std::uint64_t>();
  }
  if (kind == "int" || kind.empty()) return value.get<std::int64_t>();
  throw tessera::InvalidArgument("scalar: unknown kind \"" + kind + "\"");
}

tessera::NDArray ReadRaw(const std::string& path, DType dtype, const Shape& shape) {
  tessera::NDArray data(shape, dtype);
  std::ifstream file(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (!file && !file.eof()) throw tessera::StorageError("cannot read " + path);
  if (static_cast<std::int64_t>(bytes.size()) != data.nbytes()) {
    throw tessera::InvalidArgument(path + " holds " + std::to_string(bytes.size()) +
                                   " bytes, the array needs " + std::to_string(data.nbytes()));
  }
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(data.mutable_bytes().data()));
  return data;
}

void WriteRaw(const std::string& path, const tessera::NDArray& data) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  const std::span<const std::byte> bytes = data.bytes();
  file.write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) throw tessera::StorageError("cannot write " + path);
}

Array MakeInput(const json& spec, const tessera::Spec& tessera_spec) {
  if (spec.contains("zarr"))
    return tessera::from_zarr(spec.at("zarr").get<std::string>(), tessera_spec);
  if (spec.contains("random")) {
    const json& r = spec.at("random");
    return tessera::random::random(ShapeOf(r.at("shape")), ShapeOf(r.at("chunks")), tessera_spec,
                                   r.value("seed", std::uint64_t{0}));
  }
  for (const char* name : {"ones", "zeros", "full"}) {
    if (!spec.contains(name)) continue;
    const json& c = spec.at(name);
    const Shape shape = ShapeOf(c.at("shape"));
    const Shape chunks = ShapeOf(c.at("chunks"));
    const DType dtype = DType::FromName(c.at("dtype").get<std::string>());
    if (std::string(name) == "ones") return tessera::ones(shape, dtype, chunks, tessera_spec);
    if (std::string(name) == "zeros") return tessera::zeros(shape, dtype, chunks, tessera_spec);
    return tessera::full(shape, ParseScalar(c.at("value")), dtype, chunks, tessera_spec);
  }
  if (spec.contains("arange")) {
    const json& a = spec.at("arange");
    return tessera::arange(a.at("start").get<double>(), a.at("stop").get<double>(),
                           a.at("step").get<double>(),
                           DType::FromName(a.at("dtype").get<std::string>()),
                           a.at("chunk").get<tessera::Index>(), tessera_spec);
  }
  if (spec.contains("raw")) {
    const json& r = spec.at("raw");
    const DType dtype = DType::FromName(r.at("dtype").get<std::string>());
    return tessera::asarray(ReadRaw(r.at("path").get<std::string>(), dtype, ShapeOf(r.at("shape"))),
                            ShapeOf(r.at("chunks")), tessera_spec);
  }
  throw tessera::InvalidArgument(
      "an input must be zarr, random, ones, zeros, full, arange or raw: " + spec.dump());
}

tessera::Axes AxesOf(const json& value) {
  if (value.is_null()) return tessera::Axes();
  if (value.is_number()) return tessera::Axes(value.get<int>());
  return tessera::Axes(value.get<std::vector<int>>());
}

std::optional<int> OptionalAxis(const json& step) {
  if (!step.contains("axis") || step.at("axis").is_null()) return std::nullopt;
  return step.at("axis").get<int>();
}

std::optional<tessera::Index> OptionalIndex(const json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<tessera::Index>();
}

tessera::IndexItem IndexItemOf(const json& item) {
  if (item.is_null()) return tessera::newaxis;
  if (item.is_string() && item.get<std::string>() == "...") return tessera::ellipsis;
  if (item.is_object()) {
    const json& slice = item.at("slice");
    return tessera::Slice(OptionalIndex(slice.at(0)), OptionalIndex(slice.at(1)),
                          OptionalIndex(slice.at(2)));
  }
  return item.get<tessera::Index>();
}

// A reduction step, or nullopt for another function:
//   {"out": "m", "fn": "mean", "args": ["a"], "axis": null | 1 | [0, 2],
//    "keepdims": false, "dtype": "float32", "correction": 1}
template <class FirstArray>
std::optional<Array> RunReduction(const std::string& fn, const json& step, FirstArray first) {
  static const std::map<std::string, tessera::ReductionOp> kOps = {
      {"sum", tessera::ReductionOp::kSum},
      {"prod", tessera::ReductionOp::kProd},
      {"mean", tessera::ReductionOp::kMean},
      {"var", tessera::ReductionOp::kVar},
      {"std", tessera::ReductionOp::kStd},
      {"min", tessera::ReductionOp::kMin},
      {"max", tessera::ReductionOp::kMax},
      {"argmin", tessera::ReductionOp::kArgMin},
      {"argmax", tessera::ReductionOp::kArgMax},
      {"all", tessera::ReductionOp::kAll},
      {"any", tessera::ReductionOp::kAny},
      {"count_nonzero", tessera::ReductionOp::kCountNonzero}};
  const auto found = kOps.find(fn);
  if (found == kOps.end()) return std::nullopt;
  const Array& x = first();
  const tessera::Axes axes = AxesOf(step.value("axis", json()));
  const bool keepdims = step.value("keepdims", false);
  std::optional<DType> dtype;
  if (step.contains("dtype")) dtype = DType::FromName(step.at("dtype").get<std::string>());
  const double correction = step.value("correction", 0.0);
  switch (found->second) {
    case tessera::ReductionOp::kSum:
      return tessera::sum(x, axes, keepdims, dtype);
    case tessera::ReductionOp::kProd:
      return tessera::prod(x, axes, keepdims, dtype);
    case tessera::ReductionOp::kMean:
      return tessera::mean(x, axes, keepdims, dtype);
    case tessera::ReductionOp::kVar:
      return tessera::var(x, axes, keepdims, correction, dtype);
    case tessera::ReductionOp::kStd:
      return tessera::std(x, axes, keepdims, correction, dtype);
    case tessera::ReductionOp::kMin:
      return tessera::min(x, axes, keepdims);
    case tessera::ReductionOp::kMax:
      return tessera::max(x, axes, keepdims);
    case tessera::ReductionOp::kArgMin:
      return tessera::argmin(x, OptionalAxis(step), keepdims);
    case tessera::ReductionOp::kArgMax:
      return tessera::argmax(x, OptionalAxis(step), keepdims);
    case tessera::ReductionOp::kAll:
      return tessera::all(x, axes, keepdims);
    case tessera::ReductionOp::kAny:
      return tessera::any(x, axes, keepdims);
    case tessera::ReductionOp::kCountNonzero:
      return tessera::count_nonzero(x, axes, keepdims);
  }
  return std::nullopt;
}

// A manipulation or indexing step (see MANIPULATION above), or nullopt for another fn.
std::optional<Array> RunManipulation(const std::string& fn, const json& step,
                                     const std::vector<Array>& args) {
  if (fn == "concat" || fn == "stack" || fn == "broadcast_arrays") {
    if (fn == "concat") return tessera::concat(args, OptionalAxis(step));
    if (fn == "stack") return tessera::stack(args, step.value("axis", 0));
    return tessera::broadcast_arrays(args).at(step.value("which", std::size_t{0}));
  }
  const Array& x = args.at(0);
  if (fn == "permute_dims")
    return tessera::permute_dims(x, step.at("axes").get<std::vector<int>>());
  if (fn == "matrix_transpose") return tessera::matrix_transpose(x);
  if (fn == "expand_dims") return tessera::expand_dims(x, AxesOf(step.at("axis")));
  if (fn == "squeeze") return tessera::squeeze(x, AxesOf(step.value("axis", json())));
  if (fn == "flip") return tessera::flip(x, AxesOf(step.value("axis", json())));
  if (fn == "roll") {
    const json& shift = step.at("shift");
    const json axis = step.value("axis", json());
    if (shift.is_number()) return tessera::roll(x, shift.get<tessera::Index>(), OptionalAxis(step));
    return tessera::roll(
        x, shift.get<std::vector<tessera::Index>>(),
        axis.is_number() ? std::vector<int>{axis.get<int>()} : axis.get<std::vector<int>>());
  }
  if (fn == "reshape") return tessera::reshape(x, ShapeOf(step.at("shape")));
  if (fn == "repeat")
    return tessera::repeat(x, step.at("repeats").get<tessera::Index>(), OptionalAxis(step));
  if (fn == "tile") return tessera::tile(x, ShapeOf(step.at("reps")));
  if (fn == "index") {
    std::vector<tessera::IndexItem> items;
    for (const json& item : step.at("items")) items.push_back(IndexItemOf(item));
    return tessera::index(x, items);
  }
  return std::nullopt;
}

// One step: an elementwise function, where, astype, broadcast_to, a reduction, a linalg
// function or a manipulation.
Array RunStep(const json& step, const std::map<std::string, Array>& arrays) {
  const std::string fn = step.at("fn").get<std::string>();
  const json& args = step.at("args");
  auto array = [&](std::size_t i) -> const Array& {
    const std::string name = args.at(i).get<std::string>();
    const auto found = arrays.find(name);
    if (found == arrays.end()) throw tessera::InvalidArgument("no array named \"" + name + "\"");
    return found->second;
  };
  if (std::optional<Array> reduced = RunReduction(fn, step, [&] { return array(0); }))
    return *reduced;
  std::vector<Array> all;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!IsScalar(args.at(i))) all.push_back(array(i));
  }
  if (std::optional<Array> manipulated = RunManipulation(fn, step, all)) return *manipulated;
  if (fn == "astype")
    return tessera::astype(array(0), DType::FromName(step.at("dtype").get<std::string>()));
  if (fn == "broadcast_to") return tessera::broadcast_to(array(0), ShapeOf(step.at("shape")));
  if (fn == "matmul") return tessera::matmul(array(0), array(1));
  if (fn == "outer") return tessera::outer(array(0), array(1));
  if (fn == "vecdot") return tessera::vecdot(array(0), array(1), step.value("axis", -1));
  if (fn == "tensordot") {
    const json& axes = step.value("axes", json(2));
    if (axes.is_number()) return tessera::tensordot(array(0), array(1), axes.get<int>());
    return tessera::tensordot(array(0), array(1), axes.at(0).get<std::vector<int>>(),
                              axes.at(1).get<std::vector<int>>());
  }
  if (fn == "where") {
    if (IsScalar(args.at(1))) return tessera::where(array(0), ParseScalar(args.at(1)), array(2));
    if (IsScalar(args.at(2))) return tessera::where(array(0), array(1), ParseScalar(args.at(2)));
    return tessera::where(array(0), array(1), array(2));
  }
  if (args.size() == 1) return tessera::elementwise(fn, array(0));
  if (args.size() != 2)
    throw tessera::InvalidArgument(fn + ": 1 or 2 arguments, got " + args.dump());
  if (IsScalar(args.at(0))) return tessera::elementwise(fn, ParseScalar(args.at(0)), array(1));
  if (IsScalar(args.at(1))) return tessera::elementwise(fn, array(0), ParseScalar(args.at(1)));
  return tessera::elementwise(fn, array(0), array(1));
}

json Describe(const Array& array) {
  return json{{"dtype", std::string(array.dtype().name())},
              {"shape", array.shape()},
              {"chunks", array.chunks()}};
}

// The plan's numbers, and per op what it projected and (after a run) what it measured.
json DescribePlan(const std::vector<std::string>& names, const tessera::FinalizedPlan& plan,
                  const tessera::ExecutionReport* report) {
  json ops = json::array();
  for (const tessera::OpInfo& op : plan.ops()) {
    ops.push_back(json{{"name", op.name},
                       {"kind", std::string(tessera::OpKindName(op.kind))},
                       {"tasks", op.num_tasks},
                       {"projected_mem", op.projected_mem},
                       {"fused", op.fused},
                       {"contraction_steps", op.contraction_steps},
                       {"tier", std::string(tessera::TierName(op.tier))}});
  }
  json ran = json::array();
  if (report != nullptr) {
    for (const tessera::OpReport& op : report->ops) {
      ran.push_back(json{{"name", op.name},
                         {"kind", op.kind},
                         {"tasks", op.tasks},
                         {"projected_mem", op.projected_mem},
                         {"measured_mem_max", op.measured_mem_max},
                         {"unaccounted_mem_max", op.unaccounted_mem_max},
                         {"footprint_mem_max", op.footprint_mem_max}});
    }
  }
  return json{{"outputs", names},
              {"max_projected_mem", plan.max_projected_mem()},
              {"required_allowed_mem", plan.required_allowed_mem()},
              {"num_tasks", plan.num_tasks()},
              {"num_ops", plan.ops().size()},
              {"ops", ops},
              {"report", ran}};
}

tessera::Tier ParseTier(const std::string& name) {
  if (name == "auto") return tessera::Tier::kNone;
  if (name == "memory") return tessera::Tier::kMemory;
  if (name == "disk") return tessera::Tier::kDisk;
  throw tessera::InvalidArgument("tier must be auto, memory or disk, got \"" + name + "\"");
}

// Runs one job; fills `result` as it goes so that a failure still reports what ran.
void RunJob(const json& job, json& result, std::string& stage) {
  stage = "build";
  tessera::Spec spec;
  spec.set_allowed_mem(job.value("allowed_mem", "100MB"));
  spec.set_reserved_mem(job.value("reserved_mem", "0"));
  if (job.contains("total_mem")) spec.set_total_mem(job.at("total_mem").get<std::string>());
  spec.executor = job.value("executor", "threads");
  spec.max_workers = job.value("max_workers", 0);
  if (job.contains("work_dir")) spec.work_dir = job.at("work_dir").get<std::string>();
  spec.validate();

  tessera::ComputeOptions compute;
  compute.plan.fuse = job.value("fuse", true);
  compute.plan.tile_elements = job.value("tile_elements", compute.plan.tile_elements);
  compute.plan.intermediate_tier = ParseTier(job.value("tier", "auto"));
  compute.execute.retries = 0;  // a failure here is a bug to see, not to retry
  compute.execute.progress = tessera::ProgressMode::kNever;

  std::map<std::string, Array> arrays;
  const json inputs = job.value("inputs", json::object());
  for (const auto& [name, input] : inputs.items()) {
    arrays.insert_or_assign(name, MakeInput(input, spec));
  }
  result["steps"] = json::object();
  const json steps = job.value("steps", json::array());
  for (const json& step : steps) {
    const std::string out = step.at("out").get<std::string>();
    const Array array = RunStep(step, arrays);
    result["steps"][out] = Describe(array);
    arrays.insert_or_assign(out, array);
  }

  // Outputs: raw ones computed together, Zarr ones each by to_zarr.
  const bool compute_all = job.value("compute", false);
  std::vector<std::string> raw_names, raw_paths;
  std::vector<Array> raw_arrays;
  struct ZarrOutput {
    std::string name, path;
    std::optional<tessera::CodecConfig> compressor;
  };
  std::vector<ZarrOutput> zarr_outputs;
  const json outputs = job.value("outputs", json::object());
  for (const auto& [name, where] : outputs.items()) {
    const auto found = arrays.find(name);
    if (found == arrays.end())
      throw tessera::InvalidArgument("no array named \"" + name + "\" to output");
    if (where.is_string() && compute_all) {
      raw_names.push_back(name);
      raw_paths.push_back(where.get<std::string>());
      raw_arrays.push_back(found->second);
    } else if (where.is_object() && where.contains("raw")) {
      raw_names.push_back(name);
      raw_paths.push_back(where.at("raw").get<std::string>());
      raw_arrays.push_back(found->second);
    } else {
      ZarrOutput output{
          name, where.is_string() ? where.get<std::string>() : where.at("zarr").get<std::string>(),
          tessera::ToZarrOptions{}.compressor};
      const std::string codec = where.is_object() ? where.value("compressor", "") : "";
      if (codec == "none") output.compressor.reset();
      if (!codec.empty() && codec != "none") output.compressor = tessera::ParseCodecSpec(codec);
      zarr_outputs.push_back(std::move(output));
    }
  }

  result["plans"] = json::array();
  const bool plan_only = job.value("plan_only", false);
  if (!raw_arrays.empty()) {
    stage = "plan";
    const tessera::FinalizedPlan plan = tessera::plan(raw_arrays, compute.plan);
    if (plan_only) {
      result["plans"].push_back(DescribePlan(raw_names, plan, nullptr));
    } else {
      stage = "run";
      tessera::ExecutionReport report;
      compute.report = &report;
      const std::vector<tessera::NDArray> values = tessera::compute(raw_arrays, compute);
      compute.report = nullptr;
      for (std::size_t i = 0; i < values.size(); ++i) WriteRaw(raw_paths[i], values[i]);
      result["plans"].push_back(DescribePlan(raw_names, plan, &report));
    }
  }
  for (const ZarrOutput& output : zarr_outputs) {
    const Array& array = arrays.at(output.name);
    stage = "plan";
    // The plan to_zarr makes (its output is a Zarr target, encoded: not array.plan()'s).
    tessera::ZarrTarget target;
    target.directory = output.path;
    target.compressor = output.compressor;
    const tessera::FinalizedPlan plan =
        tessera::Finalize({tessera::PlanOutput{array.node(), target}}, spec, compute.plan);
    if (plan_only) {
      result["plans"].push_back(DescribePlan({output.name}, plan, nullptr));
      continue;
    }
    stage = "run";
    tessera::ExecutionReport report;
    tessera::ToZarrOptions options;
    options.compressor = output.compressor;
    options.compute = compute;
    options.compute.report = &report;
    array.to_zarr(output.path, options);
    result["plans"].push_back(DescribePlan({output.name}, plan, &report));
  }
}

json RunOne(const json& job) {
  json result = json::object();
  std::string stage = "parse";
  try {
    if (!job.is_object()) throw tessera::InvalidArgument("a job must be a JSON object");
    RunJob(job, result, stage);
  } catch (const std::exception& error) {
    result["error"] =
        json{{"type", ErrorTypeName(error)}, {"what", error.what()}, {"stage", stage}};
  }
  return result;
}

// One line; bytes that are not UTF-8 (in an error message) are replaced, not thrown on.
std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 2 ? argv[1] : "";
  if (mode != "job" && mode != "batch") {
    std::cerr << "usage: compute_tool job|batch < JSON\n";
    return 2;
  }
  json input;
  try {
    input = json::parse(std::cin);
  } catch (const json::exception& error) {
    std::cerr << "compute_tool: error: stdin is not JSON: " << error.what() << '\n';
    return 2;
  }
  if (mode == "job") {
    std::cout << Dump(RunOne(input)) << '\n';
    return 0;
  }
  if (!input.is_array()) {
    std::cerr << "compute_tool: error: batch: stdin must hold a JSON array of jobs\n";
    return 2;
  }
  for (const json& job : input) std::cout << Dump(RunOne(job)) << std::endl;
  return 0;
}
