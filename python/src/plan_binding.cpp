// plan(*arrays) and compute(*arrays): one plan for several arrays, and what a plan
// knows (FinalizedPlan, OpInfo). Planning and running release the GIL.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fstream>
#include <string>

#include "bindings.hpp"

namespace tessera::python {
namespace {}  // namespace

void CheckPlanKeywords(const nb::kwargs& keywords, const char* function) {
  // Cubed's planning keywords: Tessera always optimizes (its passes), so they change
  // nothing; anything else is a mistake worth naming.
  for (const auto& [key, value] : keywords) {
    const std::string name = nb::cast<std::string>(key);
    if (name != "optimize_graph" && name != "optimize_function" && name != "compile_function") {
      throw nb::type_error(
          (std::string(function) + "() got an unexpected keyword argument '" + name + "'").c_str());
    }
  }
}

namespace {

std::vector<Array> ArraysFrom(const nb::args& arrays) {
  std::vector<Array> result;
  for (nb::handle array : arrays) result.push_back(nb::cast<Array>(array));
  if (result.empty()) throw InvalidArgument("give at least one array");
  return result;
}

FinalizedPlan Plan(const std::vector<Array>& arrays) {
  return RunEngine([&] { return plan(arrays); });
}

}  // namespace

void BindPlan(nb::module_& m) {
  nb::class_<OpInfo>(m, "OpInfo", "What the plan knows of one op.")
      .def_ro("name", &OpInfo::name)
      .def_prop_ro("kind", [](const OpInfo& op) { return std::string(OpKindName(op.kind)); })
      .def_ro("num_tasks", &OpInfo::num_tasks)
      .def_ro("projected_mem", &OpInfo::projected_mem)
      .def_ro("estimated_mem", &OpInfo::estimated_mem)
      .def_prop_ro("tier", [](const OpInfo& op) { return std::string(TierName(op.tier)); })
      .def_ro("concurrency", &OpInfo::concurrency)
      .def_ro("memory_size", &OpInfo::memory_size)
      .def_ro("fingerprint", &OpInfo::fingerprint)
      .def_ro("estimate_from_history", &OpInfo::estimate_from_history)
      .def_ro("learned_mem", &OpInfo::learned_mem)
      .def_ro("learned_run", &OpInfo::learned_run)
      .def_ro("fused", &OpInfo::fused)
      .def("__repr__", [](const OpInfo& op) {
        return "OpInfo(" + op.name + ", " + std::string(OpKindName(op.kind)) + ", " +
               std::to_string(op.num_tasks) + " tasks, projected " +
               format_bytes(op.projected_mem) + ")";
      });

  nb::class_<FinalizedPlan>(m, "FinalizedPlan",
                            "A plan pruned, fused, projected and checked against allowed_mem: "
                            "everything known before anything runs.")
      .def_prop_ro("max_projected_mem", &FinalizedPlan::max_projected_mem)
      .def_prop_ro("required_allowed_mem", &FinalizedPlan::required_allowed_mem)
      .def_prop_ro("num_tasks", &FinalizedPlan::num_tasks)
      .def_prop_ro("ops", &FinalizedPlan::ops)
      .def_prop_ro("allowed_mem", [](const FinalizedPlan& p) { return p.spec().allowed_mem; })
      .def_prop_ro("spec", &FinalizedPlan::spec)
      .def("summary", &FinalizedPlan::summary,
           "One paragraph: ops, tasks, the largest projected task memory against allowed_mem.")
      .def("explain", &FinalizedPlan::explain, nb::arg("with_timings") = false,
           "A table of the ops: tasks, projected memory, fused ops, the storage tier of each "
           "intermediate and why (with_timings: the measured times of the last run).")
      .def("to_dot", &FinalizedPlan::to_dot, "The plan as Graphviz DOT text.")
      .def(
          "visualize",
          [](const FinalizedPlan& p, nb::handle filename, nb::handle format,
             const nb::kwargs& keywords) -> nb::object {
            CheckPlanKeywords(keywords, "visualize");
            const std::string dot = p.to_dot();
            if (filename.is_none()) return nb::str(dot.c_str());
            std::string path = nb::cast<std::string>(nb::str(filename));
            const std::string kind = format.is_none() ? "dot" : nb::cast<std::string>(format);
            if (kind == "dot") {
              if (path.size() < 4 || path.substr(path.size() - 4) != ".dot") path += ".dot";
              std::ofstream(path) << dot;
            } else {
              const nb::object subprocess = nb::module_::import_("subprocess");
              if (path.size() <= kind.size() ||
                  path.substr(path.size() - kind.size() - 1) != "." + kind) {
                path += "." + kind;
              }
              nb::dict options;
              options["input"] = nb::bytes(dot.data(), dot.size());
              options["check"] = true;
              subprocess.attr("run")(nb::make_tuple("dot", "-T" + kind, "-o", path), **options);
            }
            return nb::str(path.c_str());
          },
          nb::arg("filename") = nb::none(), nb::arg("format") = nb::none(), nb::arg("keywords"),
          "Writes the plan as Graphviz (filename.dot, or rendered by `dot` for format='svg', "
          "'png'); without a filename returns the DOT text.")
      .def("__repr__", [](const FinalizedPlan& p) { return p.summary(); });

  m.def(
      "plan",
      [](const nb::args& arrays, const nb::kwargs& keywords) {
        CheckPlanKeywords(keywords, "plan");
        return Plan(ArraysFrom(arrays));
      },
      "One plan for the arrays (shared inputs computed once); runs nothing. Raises "
      "MemoryBudgetError when a task would not fit allowed_mem.");
  m.def(
      "compute",
      [](const nb::args& arrays, const nb::kwargs& keywords) {
        CheckPlanKeywords(keywords, "compute");
        const std::vector<Array> outputs = ArraysFrom(arrays);
        std::vector<NDArray> results =
            RunPlan([&](const ComputeOptions& options) { return compute(outputs, options); });
        nb::list values;
        for (NDArray& result : results) values.append(ToNumpy(std::move(result)));
        return nb::tuple(values);
      },
      "Computes the arrays in one plan; returns a tuple of numpy arrays.");
}

}  // namespace tessera::python
