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

#include "output_target.hpp"
#include "run_summary.hpp"
#include "store_argument.hpp"
#include "tessera/api/array.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/api/storage.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/shape.hpp"
#include "tessera/plan/target_files.hpp"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

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

Tier IntermediateTier(const std::string& choice) {
  if (choice == "memory") return Tier::kMemory;
  if (choice == "disk") return Tier::kDisk;
  return Tier::kNone;  // "auto"; CLI11 admits nothing else
}

// What --plan shows before the plan itself: what is read, what is written, the budget.
void WritePlanHeader(std::ostream& out, const StoredArrayArgument& source,
                     const std::string& target, const Array& rechunked,
                     const std::optional<CodecConfig>& codec, bool codec_is_sources,
                     const Spec& spec, const FinalizedPlan& plan, const std::string& intermediate) {
  WriteSource(out, "Source " + source.directory.string(), source.array);
  out << "Target " << target << '\n';
  WriteRow(out, "chunks", ShapeToString(rechunked.chunks()));
  WriteRow(out, "codec", CodecText(codec) + (codec_is_sources ? " (the source's)" : ""));
  WriteBudget(out, spec, plan);
  WriteRow(out, "intermediates", intermediate);
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
                   "Directory of the Zarr array to write (written to OUT.tessera-partial, moved "
                   "into place when complete)")
      ->required();
  command_
      ->add_option("--chunks", chunks_,
                   "Target chunks, one per dimension, comma-separated; -1 = the whole "
                   "dimension (e.g. 8760,10,10)")
      ->required();
  spec_options_.Register(*command_);
  command_->add_option("--codec", codec_,
                       "Target codec: blosc-lz4, blosc:zstd:3, zstd, lz4, zlib, raw "
                       "(default: IN's codec)");
  command_
      ->add_option("--intermediate", intermediate_,
                   "Where intermediates live: auto (RAM, disk or both, as total_mem "
                   "allows), memory or disk")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "memory", "disk"}));
  command_->add_flag("--allow-over-total-mem", allow_over_total_mem_,
                     "With --intermediate memory, plan intermediates larger than what total_mem "
                     "leaves for them (refused otherwise); the plan prints a warning");
  command_->add_flag("--plan", plan_only_, "Print the plan (stages, tiers, memory); run nothing");
  command_->add_flag("--overwrite", overwrite_, "Replace an existing array at OUT");
  command_->add_flag("--resume", resume_,
                     "Continue an interrupted run: keep the chunks it left in OUT.tessera-partial "
                     "(refused unless IN, OUT's metadata and the plan are the same)");
  command_->add_flag("--quiet", quiet_, "No progress on stderr");
  command_->add_flag("--explain", explain_,
                     "Print the plan after every pass of the planner, with its time (implies "
                     "--plan)");
}

void RechunkCommand::Run(std::ostream& out) const {
  const StoredArrayArgument source = OpenArrayArgument(in_path_, "IN");
  const fs::path target = TargetPath(out_path_);
  const bool plan_only = plan_only_ || explain_;
  CheckTarget({{"IN", source.directory}}, "OUT", target, overwrite_ || plan_only);
  std::error_code exists_error;
  const bool replaces = fs::exists(target, exists_error);
  const Spec spec = spec_options_.Build();

  const Shape chunks = ParseChunks(chunks_, source.array);
  ToZarrOptions options;
  options.compressor = ParseCodecOption(codec_, source.array.metadata().compressor, "IN's");
  options.dimension_names = source.array.attributes().dimension_names;
  // The same values mean the same to readers: xarray masks the fill value.
  options.fill_value = source.array.metadata().fill_value;
  options.attributes_json = source.array.attributes().other_json;
  options.byte_order = source.array.metadata().byte_order;
  options.overwrite = overwrite_ || plan_only;  // --plan writes nothing
  options.resume = resume_;
  options.compute.plan.intermediate_tier = IntermediateTier(intermediate_);
  options.compute.plan.allow_over_total_mem = allow_over_total_mem_;
  options.compute.execute.progress = quiet_ ? ProgressMode::kNever : ProgressMode::kAuto;
  options.compute.execute.label = "tessera rechunk";

  const Array rechunked = from_zarr(source.store, "", spec).rechunk(chunks);
  if (plan_only) {
    const FinalizedPlan plan = rechunked.plan_to_zarr(target.string(), options);
    WritePlanHeader(out, source, target.string(), rechunked, options.compressor, codec_.empty(),
                    spec, plan, intermediate_);
    out << '\n' << plan.summary() << '\n';
    if (explain_) out << "Planner passes:\n" << plan.explain(/*with_timings=*/true) << '\n';
    out << "Nothing was run (--plan): no chunk was read or written. Run the same command "
           "without --plan to rechunk.\n";
    if (replaces && !overwrite_) {
      out << "Note: " << target.string()
          << " exists; the run will refuse to replace it unless --overwrite is given.\n";
    }
    return;
  }

  if (allow_over_total_mem_) {
    // The override is a choice the user sees before the run: the plan says what it costs.
    const FinalizedPlan plan = rechunked.plan_to_zarr(target.string(), options);
    for (const std::string& warning : plan.warnings()) out << "warning: " << warning << '\n';
  }
  ExecutionReport report;
  options.compute.report = &report;
  try {
    rechunked.to_zarr(target.string(), options);
  } catch (const Error& error) {
    ThrowWithPartialOutputNote(error, target, "rerunning the same command with --resume");
  }
  WriteRunReport(out, report);
  out << "Wrote " << target.string() << " (shape " << ShapeToString(rechunked.shape())
      << ", chunks " << ShapeToString(rechunked.chunks()) << ", codec "
      << CodecText(options.compressor) << ")\n";
  WriteHowToOpen(out, target, !options.dimension_names.empty());
}

}  // namespace tessera::cli
