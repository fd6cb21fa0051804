// from_zarr / to_zarr for directory paths (Zarr v2).
#include <nanobind/stl/string.h>

#include <string>

#include "bindings.hpp"

namespace tessera::python {

void ToZarr(const Array& x, nb::handle store, bool overwrite, bool resume) {
  const std::string path = nb::cast<std::string>(nb::str(store));
  ToZarrOptions options;
  options.overwrite = overwrite;
  options.resume = resume;
  RunPlan([&](const ComputeOptions& run) {
    options.compute = run;
    x.to_zarr(path, options);
    return true;
  });
}

void BindStorage(nb::module_& m) {
  m.def(
      "from_zarr",
      [](nb::handle store, nb::handle spec) {
        const std::string path = nb::cast<std::string>(nb::str(store));
        nb::gil_scoped_release release;
        return from_zarr(path, SpecOr(spec));
      },
      nb::arg("store"), nb::kw_only(), nb::arg("spec") = nb::none(),
      "A lazy array of the Zarr array at `store` (a directory); reads only its metadata.");
  m.def("to_zarr", &ToZarr, nb::arg("x"), nb::arg("store"), nb::kw_only(),
        nb::arg("overwrite") = true, nb::arg("resume") = false,
        "Plans, runs and writes `x` as a Zarr array at directory `store`, atomically.");
}

}  // namespace tessera::python
