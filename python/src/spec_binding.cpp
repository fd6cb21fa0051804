// tessera.Spec: the resources a computation may use, as Cubed's Spec takes them
// (sizes as ints or strings such as "400MB"; allowed_mem="auto").
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "bindings.hpp"

namespace tessera::python {
namespace {

// An int (bytes) or a size string, as Spec::set takes it.
std::string SizeText(nb::handle value, const char* name) {
  if (nb::isinstance<nb::str>(value)) return nb::cast<std::string>(value);
  if (nb::isinstance<nb::int_>(value) && !nb::isinstance<nb::bool_>(value)) {
    return std::to_string(nb::cast<std::int64_t>(value));
  }
  throw InvalidArgument(std::string("Spec: ") + name + " must be a number of bytes or a size " +
                        "string such as \"400MB\", got " + nb::cast<std::string>(nb::repr(value)));
}

}  // namespace

void BindSpec(nb::module_& m) {
  nb::class_<Spec>(
      m, "Spec",
      "The resources a computation may use: allowed_mem per task (bytes, a size "
      "string, or \"auto\" for the smallest that runs the plan), reserved_mem, "
      "total_mem (None: detected), work_dir (a folder, or \"s3://bucket/prefix\" for the object "
      "store tier), local_disk (with an s3:// work_dir: the bytes of local disk "
      "intermediates may take; None: nine tenths of the temp dir's free space, none for mpi, "
      "dask and ray), executor (\"threads\", \"sync\", "
      "\"mpi\" "
      "under mpirun, \"dask\" on a distributed.Client, \"ray\" after ray.init()), "
      "executor_options (a dict; {\"client\": client} for dask), max_workers.")
      .def(
          "__init__",
          [](Spec* spec, nb::handle work_dir, nb::handle allowed_mem, nb::handle reserved_mem,
             nb::handle total_mem, const std::string& executor, nb::handle max_workers,
             nb::handle history, nb::handle memory_tiers, nb::handle executor_options,
             nb::handle local_disk) {
            new (spec) Spec();
            spec->allowed_mem = Spec::kAutoAllowedMem;
            if (!work_dir.is_none()) spec->work_dir = nb::cast<std::string>(nb::str(work_dir));
            if (!allowed_mem.is_none())
              spec->set("allowed_mem", SizeText(allowed_mem, "allowed_mem"));
            if (!reserved_mem.is_none())
              spec->set("reserved_mem", SizeText(reserved_mem, "reserved_mem"));
            if (!total_mem.is_none()) spec->set("total_mem", SizeText(total_mem, "total_mem"));
            if (!local_disk.is_none()) spec->set("local_disk", SizeText(local_disk, "local_disk"));
            spec->executor = executor;
            if (!max_workers.is_none()) spec->max_workers = nb::cast<int>(max_workers);
            if (!history.is_none()) spec->history = nb::cast<std::string>(nb::str(history));
            if (!memory_tiers.is_none()) {
              std::string tiers;
              for (nb::handle tier : nb::iter(memory_tiers)) {
                tiers += (tiers.empty() ? "" : ",") + SizeText(tier, "memory_tiers");
              }
              spec->set_memory_tiers(tiers);
            }
            if (!executor_options.is_none()) {
              if (!nb::isinstance<nb::dict>(executor_options)) {
                throw InvalidArgument(
                    "Spec executor_options must be a dict of setting names to values, e.g. "
                    "{\"min_replicas\": 2}");
              }
              for (auto [name, value] : nb::borrow<nb::dict>(executor_options)) {
                // A Python object (a distributed.Client) stays in Python, named by a token
                // the executor's launcher resolves (tessera._cluster.keep_option).
                const bool plain =
                    nb::isinstance<nb::str>(value) || nb::isinstance<nb::int_>(value) ||
                    nb::isinstance<nb::float_>(value) || nb::isinstance<nb::bool_>(value);
                spec->executor_options[nb::cast<std::string>(nb::str(name))] =
                    plain
                        ? nb::cast<std::string>(nb::str(value))
                        : nb::cast<std::string>(
                              nb::module_::import_("tessera._cluster").attr("keep_option")(value));
              }
            }
            spec->validate();
          },
          nb::arg("work_dir") = nb::none(), nb::arg("allowed_mem") = nb::none(),
          nb::arg("reserved_mem") = 0, nb::arg("total_mem") = nb::none(),
          nb::arg("executor") = "threads", nb::arg("max_workers") = nb::none(),
          nb::arg("history") = nb::none(), nb::arg("memory_tiers") = nb::none(),
          nb::arg("executor_options") = nb::none(), nb::arg("local_disk") = nb::none())
      .def_prop_ro("allowed_mem",
                   [](const Spec& spec) -> nb::object {
                     if (spec.allowed_mem_is_auto()) return nb::str("auto");
                     return nb::int_(spec.allowed_mem);
                   })
      .def_ro("reserved_mem", &Spec::reserved_mem)
      .def_prop_ro("total_mem", [](const Spec& spec) { return spec.effective_total_mem(); })
      .def_prop_ro("work_dir",
                   [](const Spec& spec) -> nb::object {
                     if (spec.work_dir.empty()) return nb::none();
                     return nb::str(spec.work_dir.c_str());
                   })
      .def_ro("executor", &Spec::executor)
      .def_ro("executor_options", &Spec::executor_options)
      .def_prop_ro("max_workers", [](const Spec& spec) { return spec.effective_max_workers(); })
      .def_ro("memory_tiers", &Spec::memory_tiers)
      .def_prop_ro("local_disk",
                   [](const Spec& spec) -> nb::object {
                     if (spec.local_disk == Spec::kAutoLocalDisk) return nb::none();
                     return nb::int_(spec.local_disk);
                   })
      .def("__repr__", [](const Spec& spec) {
        const std::string allowed =
            spec.allowed_mem_is_auto() ? "'auto'" : "'" + format_bytes(spec.allowed_mem) + "'";
        return "Spec(allowed_mem=" + allowed + ", reserved_mem='" +
               format_bytes(spec.reserved_mem) + "', executor='" + spec.executor + "'" +
               (spec.work_dir.empty() ? std::string() : ", work_dir='" + spec.work_dir + "'") +
               (spec.local_disk == Spec::kAutoLocalDisk
                    ? std::string()
                    : ", local_disk='" + format_bytes(spec.local_disk) + "'") +
               ")";
      });
}

}  // namespace tessera::python
