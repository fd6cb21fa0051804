#include "rechunk_command.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iomanip>
#include <optional>
#include <sstream>
#include <string_view>
#include <system_error>
#include <vector>

#include "store_argument.hpp"
#include "tessera/api/array.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/shape.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

// The array IN names, opened read-only.
struct Source {
  fs::path directory;
  std::shared_ptr<DirectoryStore> store;
  ZarrArray array;
};

// The names of the arrays directly inside group directory `group`, sorted.
std::vector<std::string> MemberArrays(const fs::path& group) {
  std::vector<std::string> names;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(group, error)) {
    if (fs::exists(entry.path() / ".zarray", error)) {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

Source OpenSource(const std::string& path) {
  std::shared_ptr<DirectoryStore> store = OpenStoreArgument(path);
  if (IsZarrGroup(*store, "")) {
    const std::vector<std::string> members = MemberArrays(path);
    if (members.empty()) {
      throw InvalidArgument("IN " + path + " is a Zarr group holding no array; pass an array");
    }
    std::string listed;
    for (const std::string& name : members) listed += (listed.empty() ? "" : ", ") + name;
    throw InvalidArgument("IN " + path + " is a Zarr group, not an array; pass one of its " +
                          "arrays (" + listed + "), e.g. " +
                          (fs::path(path) / members.front()).string());
  }
  ZarrArray array = ZarrArray::Open(store);
  return Source{fs::path(path), std::move(store), std::move(array)};
}

// `path` absolute, normalized, without a trailing separator, symbolic links resolved
// where it exists, so that two spellings of one directory compare equal.
fs::path ResolvedPath(const fs::path& path) {
  fs::path normal = fs::absolute(path).lexically_normal();
  if (!normal.has_filename() && normal.has_parent_path()) normal = normal.parent_path();
  return fs::weakly_canonical(normal);
}

// True when `inner` lies strictly inside directory `outer` (both resolved).
bool IsInside(const fs::path& inner, const fs::path& outer) {
  const auto [outer_end, inner_at] =
      std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return outer_end == outer.end() && inner_at != inner.end();
}

// Refuses an OUT that would overwrite, nest in or contain IN, or replace an existing
// array without --overwrite — before anything is planned or written.
// `overwrite`: an existing OUT may be replaced (for --plan, which writes nothing).
void CheckTarget(const fs::path& in, const fs::path& out, bool overwrite) {
  const fs::path source = ResolvedPath(in);
  const fs::path target = ResolvedPath(out);
  if (target == source) {
    throw InvalidArgument("OUT is IN (" + source.string() +
                          "): rechunk writes a new array and never rewrites its source; "
                          "choose another OUT, e.g. " +
                          out.string() + "_rechunked");
  }
  if (IsInside(target, source)) {
    throw InvalidArgument("OUT " + out.string() + " lies inside IN " + in.string() +
                          "; choose an OUT outside the source array");
  }
  if (IsInside(source, target)) {
    throw InvalidArgument("IN " + in.string() + " lies inside OUT " + out.string() +
                          "; writing OUT would replace the source; choose another OUT");
  }
  std::error_code error;
  if (!overwrite && fs::exists(target, error)) {
    throw InvalidArgument("OUT " + out.string() +
                          " already exists; pass --overwrite to replace it (the old array "
                          "goes only once the new one is complete) or choose another OUT");
  }
}

// "dimension 0 (time)", or "dimension 0" when IN has no dimension names; for messages.
std::string DimensionName(const ZarrArray& array, std::size_t dim) {
  const std::vector<std::string>& names = array.attributes().dimension_names;
  if (dim < names.size()) return "dimension " + std::to_string(dim) + " (" + names[dim] + ")";
  return "dimension " + std::to_string(dim);
}

// Parses --chunks against IN: one whole number per dimension, each >= 1 or -1 (the
// whole dimension; kept as -1 for Array::rechunk).
Shape ParseChunks(const std::string& text, const ZarrArray& array) {
  const Shape& shape = array.metadata().shape;
  std::string example;  // -1 (a whole dimension) first, 10 for the others
  for (std::size_t dim = 0; dim < shape.size(); ++dim) example += dim == 0 ? "-1" : ",10";
  const std::string expected =
      "give one chunk length per dimension of IN (shape " + ShapeToString(shape) +
      "), comma-separated, -1 for a whole dimension, e.g. --chunks " + example;
  Shape chunks;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    Index value = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || error != std::errc() || end != item.data() + item.size()) {
      throw InvalidArgument("--chunks \"" + text + "\": \"" + std::string(item) +
                            "\" is not a whole number; " + expected);
    }
    chunks.push_back(value);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (chunks.size() != shape.size()) {
    throw InvalidArgument("--chunks \"" + text + "\" gives " + std::to_string(chunks.size()) +
                          (chunks.size() == 1 ? " value" : " values") + " but IN has " +
                          std::to_string(shape.size()) + " dimensions; " + expected);
  }
  for (std::size_t dim = 0; dim < chunks.size(); ++dim) {
    if (chunks[dim] < 1 && chunks[dim] != -1) {
      throw InvalidArgument("--chunks \"" + text + "\": " + std::to_string(chunks[dim]) + " for " +
                            DimensionName(array, dim) +
                            " must be >= 1, or -1 for the whole dimension");
    }
  }
  return chunks;
}

// parse_bytes with the option's name in its error.
std::int64_t ParseSizeOption(const std::string& text, std::string_view option) {
  try {
    return parse_bytes(text);
  } catch (const InvalidArgument& error) {
    throw InvalidArgument(std::string(option) + ": " + error.what() +
                          "; give a size such as 400MB, 1.5GB or 512MiB");
  }
}

// nullopt (no compression) for "raw" and "none"; IN's compressor for "".
std::optional<CodecConfig> TargetCodec(const std::string& text, const ZarrArray& source) {
  if (text.empty()) return source.metadata().compressor;
  if (text == "raw" || text == "none") return std::nullopt;
  try {
    return ParseCodecSpec(text);
  } catch (const InvalidArgument& error) {
    throw InvalidArgument(std::string("--codec: ") + error.what() +
                          "; or raw for no compression; leave --codec out to keep IN's");
  }
}

std::string CodecText(const std::optional<CodecConfig>& codec) {
  return codec ? DescribeCodec(*codec) : "none (raw)";
}

Tier IntermediateTier(const std::string& choice) {
  if (choice == "memory") return Tier::kMemory;
  if (choice == "disk") return Tier::kDisk;
  return Tier::kNone;  // "auto"; CLI11 admits nothing else
}

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

void WriteRow(std::ostream& out, std::string_view label, const std::string& value) {
  constexpr int kLabelWidth = 15;  // fits the longest label, "intermediates"
  out << "  " << std::left << std::setw(kLabelWidth) << label << value << '\n';
}

// What --plan shows before the plan itself: what is read, what is written, the budget.
void WritePlanHeader(std::ostream& out, const Source& source, const std::string& target,
                     const Array& rechunked, const std::optional<CodecConfig>& codec,
                     bool codec_is_sources, const Spec& spec, const std::string& intermediate) {
  const ZarrMetadata& metadata = source.array.metadata();
  const std::vector<std::string>& names = source.array.attributes().dimension_names;
  std::string dims;
  for (const std::string& name : names) dims += (dims.empty() ? "" : ", ") + name;
  const std::int64_t logical = CheckedMul(ShapeSize(metadata.shape), metadata.dtype.itemsize());
  const ZarrArray::StoredChunks stored = source.array.CountStoredChunks();

  out << "Source " << source.directory.string() << '\n';
  WriteRow(out, "shape", ShapeToString(metadata.shape) + (dims.empty() ? "" : " (" + dims + ")"));
  WriteRow(out, "dtype", std::string(metadata.dtype.name()));
  WriteRow(out, "chunks", ShapeToString(metadata.chunks));
  WriteRow(out, "codec", CodecText(metadata.compressor));
  WriteRow(out, "size",
           format_bytes(logical) + " logical, " + format_bytes(stored.bytes) + " stored in " +
               std::to_string(stored.count) + " chunks");
  out << "Target " << target << '\n';
  WriteRow(out, "chunks", ShapeToString(rechunked.chunks()));
  WriteRow(out, "codec", CodecText(codec) + (codec_is_sources ? " (the source's)" : ""));
  out << "Budget\n";
  WriteRow(out, "allowed_mem", format_bytes(spec.allowed_mem) + " per task");
  WriteRow(out, "reserved_mem", format_bytes(spec.reserved_mem) + " per task (included)");
  WriteRow(out, "total_mem",
           format_bytes(spec.effective_total_mem()) + (spec.total_mem == 0 ? " (detected)" : ""));
  WriteRow(out, "work_dir",
           (spec.work_dir.empty() ? fs::temp_directory_path().string() : spec.work_dir) +
               " (intermediates on disk, in a fresh folder removed afterwards)");
  WriteRow(out, "workers",
           std::to_string(spec.effective_max_workers()) + " (" + spec.executor + " executor)");
  WriteRow(out, "intermediates", intermediate);
}

// After a run: per op its tasks, projected vs measured memory per task and time.
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
                       const std::string& projected, const std::string& measured,
                       const std::string& seconds) {
    out << "  " << std::left << std::setw(static_cast<int>(name_width)) << name << std::right
        << std::setw(static_cast<int>(tasks_width) + 2) << task_count << std::setw(16) << projected
        << std::setw(14) << measured << std::setw(10) << seconds << '\n';
  };
  row("op", "tasks", "projected/task", "measured max", "seconds");
  for (std::size_t index = 0; index < report.ops.size(); ++index) {
    const OpReport& op = report.ops[index];
    std::ostringstream seconds;
    seconds << std::fixed << std::setprecision(2) << op.seconds;
    row(op.name, tasks[index], format_bytes(op.projected_mem), format_bytes(op.measured_mem_max),
        seconds.str());
  }
  out << "Total " << std::fixed << std::setprecision(2) << report.seconds << " s; process peak RSS "
      << format_bytes(report.peak_rss_bytes) << '\n';
}

// How to open the written array: zarr-python always; xarray when OUT is an array of a
// group (xr.open_zarr opens groups, not bare arrays) and has dimension names.
void WriteHowToOpen(std::ostream& out, const fs::path& target, bool has_dimension_names) {
  out << "Open it with zarr-python:\n  "
      << PythonCommand("import zarr; print(zarr.open(" + PythonString(target.string()) +
                       ", mode='r'))")
      << '\n';
  const fs::path group = target.parent_path();
  std::error_code error;
  const bool in_group = !group.empty() && fs::exists(group / ".zgroup", error);
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

}  // namespace

RechunkCommand::RechunkCommand(CLI::App& app)
    : command_(app.add_subcommand(
          "rechunk", "Copy a Zarr array onto another chunk grid under a memory budget")) {
  command_
      ->add_option("IN", in_path_,
                   "Zarr array to read: a directory holding .zarray (e.g. data.zarr/t2m)")
      ->required();
  command_
      ->add_option("OUT", out_path_,
                   "Directory of the Zarr array to write (written to OUT.partial, moved into "
                   "place when complete)")
      ->required();
  command_
      ->add_option("--chunks", chunks_,
                   "Target chunks, one per dimension, comma-separated; -1 = the whole "
                   "dimension (e.g. 8760,10,10)")
      ->required();
  command_
      ->add_option("--allowed-mem", allowed_mem_,
                   "Memory one task may hold, reserved_mem included (e.g. 400MB)")
      ->required();
  command_
      ->add_option("--reserved-mem", reserved_mem_,
                   "Baseline memory of a worker, counted in every task's budget")
      ->capture_default_str();
  command_->add_option("--total-mem", total_mem_,
                       "Memory all running tasks and in-memory intermediates may use together "
                       "(default: detected, the cgroup limit or physical RAM)");
  command_->add_option("--work-dir", work_dir_,
                       "Folder for intermediates on disk (default: the system temp dir)");
  command_->add_option("--workers", workers_, "Tasks run at once (0 = all cores)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command_->add_option("--executor", executor_, "How tasks run")
      ->capture_default_str()
      ->check(CLI::IsMember({"sync", "threads"}));
  command_->add_option("--codec", codec_,
                       "Target codec: blosc-lz4, blosc:zstd:3, zstd, lz4, zlib, raw "
                       "(default: IN's codec)");
  command_
      ->add_option("--intermediate", intermediate_,
                   "Where intermediates live: auto (RAM, disk or both, as total_mem "
                   "allows), memory or disk")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "memory", "disk"}));
  command_->add_flag("--plan", plan_only_, "Print the plan (stages, tiers, memory); run nothing");
  command_->add_flag("--overwrite", overwrite_, "Replace an existing array at OUT");
  command_->add_flag("--resume", resume_,
                     "Keep the chunks an interrupted run left in OUT.partial; skip their tasks");
  command_->add_flag("--quiet", quiet_, "No progress on stderr");
}

void RechunkCommand::Run(std::ostream& out) const {
  const Source source = OpenSource(in_path_);
  fs::path target = fs::path(out_path_).lexically_normal();
  if (!target.has_filename() && target.has_parent_path()) target = target.parent_path();
  CheckTarget(source.directory, target, overwrite_ || plan_only_);
  std::error_code exists_error;
  const bool replaces = fs::exists(target, exists_error);

  Spec spec;
  spec.allowed_mem = ParseSizeOption(allowed_mem_, "--allowed-mem");
  spec.reserved_mem = ParseSizeOption(reserved_mem_, "--reserved-mem");
  if (!total_mem_.empty()) spec.total_mem = ParseSizeOption(total_mem_, "--total-mem");
  if (spec.allowed_mem <= spec.reserved_mem) {
    throw InvalidArgument("--allowed-mem (" + format_bytes(spec.allowed_mem) +
                          ") must exceed --reserved-mem (" + format_bytes(spec.reserved_mem) +
                          "): every task's budget includes reserved_mem; raise --allowed-mem "
                          "or lower --reserved-mem");
  }
  if (spec.total_mem != 0 && spec.total_mem < spec.allowed_mem) {
    throw InvalidArgument("--total-mem (" + format_bytes(spec.total_mem) +
                          ") is below --allowed-mem (" + format_bytes(spec.allowed_mem) +
                          "): no task could run; raise --total-mem or lower --allowed-mem");
  }
  spec.work_dir = work_dir_;
  spec.executor = executor_;
  spec.max_workers = workers_;
  spec.validate();

  const Shape chunks = ParseChunks(chunks_, source.array);
  ToZarrOptions options;
  options.compressor = TargetCodec(codec_, source.array);
  options.dimension_names = source.array.attributes().dimension_names;
  // The same values mean the same to readers: xarray masks the fill value.
  options.fill_value = source.array.metadata().fill_value;
  options.attributes_json = source.array.attributes().other_json;
  options.byte_order = source.array.metadata().byte_order;
  options.overwrite = overwrite_ || plan_only_;  // --plan writes nothing
  options.resume = resume_;
  options.compute.plan.intermediate_tier = IntermediateTier(intermediate_);
  options.compute.execute.progress = quiet_ ? ProgressMode::kNever : ProgressMode::kAuto;
  options.compute.execute.label = "tessera rechunk";

  const Array rechunked = from_zarr(source.store, "", spec).rechunk(chunks);
  if (plan_only_) {
    const FinalizedPlan plan = rechunked.plan_to_zarr(target.string(), options);
    WritePlanHeader(out, source, target.string(), rechunked, options.compressor, codec_.empty(),
                    spec, intermediate_);
    out << '\n' << plan.summary() << '\n';
    out << "Nothing was run (--plan): no chunk was read or written. Run the same command "
           "without --plan to rechunk.\n";
    if (replaces && !overwrite_) {
      out << "Note: " << target.string()
          << " exists; the run will refuse to replace it unless --overwrite is given.\n";
    }
    return;
  }

  ExecutionReport report;
  options.compute.report = &report;
  rechunked.to_zarr(target.string(), options);
  WriteRunReport(out, report);
  out << "Wrote " << target.string() << " (shape " << ShapeToString(rechunked.shape())
      << ", chunks " << ShapeToString(rechunked.chunks()) << ", codec "
      << CodecText(options.compressor) << ")\n";
  WriteHowToOpen(out, target, !options.dimension_names.empty());
}

}  // namespace tessera::cli
