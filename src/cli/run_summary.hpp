// What `tessera` commands print around a plan and a run: labelled rows, the per-op table
// of projected vs measured memory after a run, and how to open the written array.
//
//   WriteRow(out, "allowed_mem", "400.0 MB per task");
//   WriteSource(out, "Source in.zarr", array);   WriteBudget(out, spec, plan);
//   WriteRunReport(out, report);          // after to_zarr(..., options with &report)
//   WriteHowToOpen(out, target, true);    // zarr-python (and xarray) one-liners
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <string_view>

#include "tessera/api/array.hpp"  // ExecutionReport, filled by to_zarr and compute
#include "tessera/api/storage.hpp"
#include "tessera/core/spec.hpp"
#include "tessera/plan/finalized_plan.hpp"

namespace tessera::cli {

// "  label          value": labels padded to one column.
void WriteRow(std::ostream& out, std::string_view label, const std::string& value);

// "LABEL" then the rows shape (with dimension names), dtype, chunks, codec and size
// (logical, and stored in how many chunks) of a stored array.
void WriteSource(std::ostream& out, const std::string& label, const ZarrArray& array);

// "Budget" then allowed_mem (for auto: "auto -> SIZE per task (the smallest found that
// runs this plan without multiplying its I/O)", the size `plan` chose), reserved_mem, memory_tiers
// when set, total_mem, work_dir and workers. `requested`: the Spec before planning.
void WriteBudget(std::ostream& out, const Spec& requested, const FinalizedPlan& plan);

// Per op its tasks, projected vs measured memory per task and seconds; then the total
// time, the process's peak RSS, the allowed_mem the run was planned with, and how many
// tasks admission by memory let run at once (and the memory they held of the pool).
void WriteRunReport(std::ostream& out, const ExecutionReport& report);

// How to open the array written at `target`: zarr-python always; xarray when it is an
// array of a group (xr.open_zarr opens groups, not bare arrays) and has dimension names.
void WriteHowToOpen(std::ostream& out, const std::filesystem::path& target,
                    bool has_dimension_names);

}  // namespace tessera::cli
