// from_zarr / to_zarr for directory paths and s3://bucket/prefix URLs (Zarr v2 and v3,
// sharded or not).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace tessera::python {
namespace {

// compressor=: a codec spec ("blosc-lz4", "zstd:3", "gzip"); None or "none": no compression.
std::optional<CodecConfig> CompressorOf(const std::optional<std::string>& text) {
  if (!text || *text == "none" || *text == "raw") return std::nullopt;
  return ParseCodecSpec(*text);
}

}  // namespace

const char* const kToZarrDoc =
    "Plans, runs and writes the array as a Zarr array at `store`: a directory (written beside "
    "it and moved into place when complete) or \"s3://bucket/prefix\" (the array's metadata "
    "written last, so that it never reads as complete before it is).\n\n"
    "zarr_format: 2 or 3; None keeps the format of the array's first stored source (3 when "
    "it reads none). shards: a sharded Zarr v3 array whose shards (multiples of the array's "
    "chunks) hold inner chunks of those chunks; tasks write whole shards. compressor: a "
    "codec spec (\"blosc-lz4\", \"zstd:3\", \"gzip\"; lz4 and zlib for v2 only), None "
    "for none. checksum: a crc32c after every chunk (v3). dimension_names: xarray's names. "
    "consolidated: write the enclosing group's consolidated metadata (kept current anyway "
    "when the group has some). overwrite: replace an array there; resume: keep the chunks a "
    "failed run of the same work wrote.";

void ToZarr(const Array& x, nb::handle store, std::optional<int> zarr_format,
            std::optional<std::vector<Index>> shards, const std::optional<std::string>& compressor,
            bool checksum, std::optional<std::vector<std::string>> dimension_names,
            bool consolidated, bool overwrite, bool resume) {
  const std::string path = nb::cast<std::string>(nb::str(store));
  ToZarrOptions options;
  options.zarr_format = zarr_format;
  if (shards) options.shards = Shape(shards->begin(), shards->end());
  options.compressor = CompressorOf(compressor);
  options.checksum = checksum;
  if (dimension_names) options.dimension_names = *dimension_names;
  options.consolidated = consolidated;
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
      "A lazy array of the Zarr array at `store` (a directory or \"s3://bucket/prefix\"; Zarr "
      "v2 or v3, sharded or not); reads only its metadata. A sharded array's chunks are its inner chunks.");
  m.def("to_zarr", &ToZarr, nb::arg("x"), nb::arg("store"), nb::kw_only(),
        nb::arg("zarr_format") = nb::none(), nb::arg("shards") = nb::none(),
        nb::arg("compressor") = "blosc-lz4", nb::arg("checksum") = false,
        nb::arg("dimension_names") = nb::none(), nb::arg("consolidated") = false,
        nb::arg("overwrite") = true, nb::arg("resume") = false, kToZarrDoc);
}

}  // namespace tessera::python
