#include "run_summary.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <system_error>
#include <vector>

#include "tessera/core/byte_size.hpp"
#include "tessera/core/shape.hpp"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

// `text` as a Python single-quoted string literal.
std::string PythonString(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\\' || c == '\'') quoted += '\\';
    quoted += c;
  }
  return quoted + "'";
}

// `python3 -c "<code>"`, with what a shell expands inside double quotes escaped.
std::string PythonCommand(const std::string& code) {
  std::string command = "python3 -c \"";
  for (const char c : code) {
    if (c == '"' || c == '\\' || c == '$' || c == '`') command += '\\';
    command += c;
  }
  return command + "\"";
}

}  // namespace

void WriteRow(std::ostream& out, std::string_view label, const std::string& value) {
  constexpr int kLabelWidth = 15;  // fits the longest label, "intermediates"
  out << "  " << std::left << std::setw(kLabelWidth) << label << value << '\n';
}

void WriteSource(std::ostream& out, const std::string& label, const ZarrArray& array) {
  const ZarrMetadata& metadata = array.metadata();
  std::string dims;
  for (const std::string& name : array.attributes().dimension_names) {
    dims += (dims.empty() ? "" : ", ") + name;
  }
  const std::int64_t logical = CheckedMul(ShapeSize(metadata.shape), metadata.dtype.itemsize());
  const ZarrArray::StoredChunks stored = array.CountStoredChunks();
  const std::optional<Shape> shards = ShardShape(metadata);
  out << label << '\n';
  WriteRow(out, "format", "Zarr v" + std::to_string(metadata.zarr_format));
  WriteRow(out, "shape", ShapeToString(metadata.shape) + (dims.empty() ? "" : " (" + dims + ")"));
  WriteRow(out, "dtype",
           std::string(metadata.dtype.name()) +
               (metadata.float16_storage ? " (stored as float16)" : ""));
  WriteRow(
      out, "chunks",
      ShapeToString(metadata.read_chunks()) + (shards ? " (inner chunks: tasks read these)" : ""));
  if (shards) WriteRow(out, "shards", ShapeToString(*shards));
  WriteRow(out, "codec", DescribeCodecs(metadata));
  WriteRow(out, "size",
           format_bytes(logical) + " logical, " + format_bytes(stored.bytes) + " stored in " +
               std::to_string(stored.count) + (shards ? " shards" : " chunks"));
}

void WriteBudget(std::ostream& out, const Spec& requested, const FinalizedPlan& plan) {
  const Spec& spec = plan.spec();
  out << "Budget\n";
  if (requested.allowed_mem_is_auto()) {
    WriteRow(out, "allowed_mem",
             "auto -> " + format_bytes(spec.allowed_mem) +
                 " per task (the smallest found that runs this plan without multiplying its "
                 "I/O)");
  } else {
    WriteRow(out, "allowed_mem", format_bytes(requested.allowed_mem) + " per task");
  }
  WriteRow(out, "reserved_mem", format_bytes(spec.reserved_mem) + " per task (included)");
  if (!spec.memory_tiers.empty()) {
    std::string tiers;
    for (const std::int64_t tier : spec.memory_tiers) {
      tiers += (tiers.empty() ? "" : ", ") + format_bytes(tier);
    }
    WriteRow(out, "memory_tiers", tiers);
  }
  WriteRow(out, "total_mem",
           format_bytes(spec.effective_total_mem()) + (spec.total_mem == 0 ? " (detected)" : ""));
  if (IsObjectStoreLocation(spec.work_dir)) {
    const std::string local = spec.local_disk != Spec::kAutoLocalDisk
                                  ? format_bytes(spec.local_disk)
                              : spec.runs_in_one_process()
                                  ? "nine tenths of its free space"
                                  : "none (processes of " + spec.executor + " share no local disk)";
    WriteRow(out, "work_dir",
             spec.work_dir + " (intermediates beyond the RAM left and local disk, " +
                 fs::temp_directory_path().string() + " up to " + local +
                 ", go to the object store, under a fresh prefix removed afterwards)");
  } else {
    WriteRow(out, "work_dir",
             (spec.work_dir.empty() ? fs::temp_directory_path().string() : spec.work_dir) +
                 " (intermediates on disk, in a fresh folder removed afterwards)");
  }
  WriteRow(out, "workers",
           std::to_string(spec.effective_max_workers()) + " (" + spec.executor + " executor)");
}

void WriteRunReport(std::ostream& out, const ExecutionReport& report) {
  std::vector<std::string> tasks;
  std::size_t name_width = 2;
  std::size_t tasks_width = 5;
  for (const OpReport& op : report.ops) {
    tasks.push_back(std::to_string(op.tasks));
    if (op.tasks_skipped > 0) tasks.back() += " (" + std::to_string(op.tasks_skipped) + " resumed)";
    name_width = std::max(name_width, op.name.size());
    tasks_width = std::max(tasks_width, tasks.back().size());
  }
  const auto row = [&](const std::string& name, const std::string& task_count,
                       const std::string& at_once, const std::string& projected,
                       const std::string& measured, const std::string& seconds) {
    out << "  " << std::left << std::setw(static_cast<int>(name_width)) << name << std::right
        << std::setw(static_cast<int>(tasks_width) + 2) << task_count << std::setw(9) << at_once
        << std::setw(16) << projected << std::setw(14) << measured << std::setw(10) << seconds
        << '\n';
  };
  row("op", "tasks", "at once", "projected/task", "measured max", "seconds");
  for (std::size_t index = 0; index < report.ops.size(); ++index) {
    const OpReport& op = report.ops[index];
    std::ostringstream seconds;
    seconds << std::fixed << std::setprecision(2) << op.seconds;
    // A task's footprint: Tessera's buffers plus the fresh pages it touched outside them
    // (a codec's contexts, a kernel's allocations), so an overrun always shows here.
    row(op.name, tasks[index], std::to_string(op.max_tasks_at_once), format_bytes(op.projected_mem),
        format_bytes(op.footprint_mem_max), seconds.str());
  }
  out << "Total " << std::fixed << std::setprecision(2) << report.seconds << " s; process peak RSS "
      << format_bytes(report.peak_rss_bytes) << "; allowed_mem " << format_bytes(report.allowed_mem)
      << " per task; at most " << report.max_tasks_at_once
      << (report.max_tasks_at_once == 1 ? " task" : " tasks") << " at once, admitted by memory ("
      << format_bytes(report.max_admitted_mem) << " of " << format_bytes(report.admission_capacity)
      << ")\n";
  const ClusterReport& cluster = report.cluster;
  if (cluster.ranks == 0) return;
  out << "MPI: " << cluster.ranks << (cluster.ranks == 1 ? " rank" : " ranks")
      << "; blocks fetched " << format_bytes(cluster.bytes_fetched) << ", replicated "
      << format_bytes(cluster.bytes_replicated) << ", rebalanced "
      << format_bytes(cluster.bytes_rebalanced) << ", dropped "
      << format_bytes(cluster.bytes_dropped) << ", spilled " << format_bytes(cluster.bytes_spilled)
      << ", results gathered " << format_bytes(cluster.bytes_gathered) << "; " << cluster.decisions
      << " directory decisions; " << cluster.tasks_moved_after_failure
      << " tasks moved after a failure\n";
  for (const RankReport& rank : cluster.per_rank) {
    out << "  rank " << rank.rank << ": " << rank.tasks << " tasks, peak RSS "
        << format_bytes(rank.peak_rss_bytes) << ", largest task "
        << format_bytes(rank.measured_mem_max) << ", held at most "
        << format_bytes(rank.held_bytes_max) << ", memory " << format_bytes(rank.capacity) << '\n';
  }
}

void WriteHowToOpen(std::ostream& out, const fs::path& target, bool has_dimension_names) {
  out << "Open it with zarr-python:\n  "
      << PythonCommand("import zarr; print(zarr.open(" + PythonString(target.string()) +
                       ", mode='r'))")
      << '\n';
  const fs::path group = target.parent_path();
  std::error_code error;
  bool in_group = !group.empty() && fs::exists(group / ".zgroup", error);
  if (!group.empty() && !in_group && fs::exists(group / "zarr.json", error)) {
    in_group = IsReadableZarrGroup(*DirectoryStore::Open(group, {.create = false}));
  }
  if (in_group && has_dimension_names) {
    out << "or with xarray, as the variable " << target.filename().string() << " of the group "
        << group.string() << ":\n  "
        << PythonCommand("import xarray as xr; print(xr.open_zarr(" + PythonString(group.string()) +
                         ", consolidated=False)[" + PythonString(target.filename().string()) + "])")
        << '\n';
  } else if (has_dimension_names) {
    out << "(xarray opens Zarr groups, not bare arrays: to open the result with "
           "xr.open_zarr, write it inside a group, OUT = GROUP.zarr/NAME)\n";
  }
}

}  // namespace tessera::cli
