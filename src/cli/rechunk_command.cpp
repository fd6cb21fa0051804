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

Tier IntermediateTier(const std::string& choice) {
  if (choice == "memory") return Tier::kMemory;
  if (choice == "disk") return Tier::kDisk;
  return Tier::kNone;  // "auto"; CLI11 admits nothing else
}

// What --plan shows before the plan itself: what is read, what is written, the budget.
void WritePlanHeader(std::ostream& out, const StoredArrayArgument& source,
                     const std::string& target, const Array& rechunked,
                     const ToZarrOptions& options, int zarr_format, bool codec_is_sources,
                     const Spec& spec, const FinalizedPlan& plan, const std::string& intermediate) {
  WriteSource(out, "Source " + source.directory.string(), source.array);
  out << "Target " << target << '\n';
  WriteRow(out, "format", FormatText(options, zarr_format));
  if (options.shards) {
    WriteRow(out, "chunks", ShapeToString(rechunked.chunks()) + " (inner chunks)");
    WriteRow(out, "shards", ShapeToString(*options.shards) +
                                " (tasks write whole shards: no two write the same one)");
  } else {
    WriteRow(out, "chunks", ShapeToString(rechunked.chunks()));
  }
  WriteRow(out, "codec",
           CodecText(options.compressor) + (codec_is_sources ? " (the source's)" : ""));
  WriteBudget(out, spec, plan);
  WriteRow(out, "intermediates", intermediate);
}

}  // namespace

RechunkCommand::RechunkCommand(CLI::App& app)
    : command_(app.add_subcommand(
          "rechunk", "Copy a Zarr array onto another chunk grid under a memory budget")) {
  command_
      ->add_option("IN", in_path_,
                   "Zarr array to read (v2 or v3): a directory holding .zarray or zarr.json "
                   "(e.g. data.zarr/t2m), or s3://BUCKET/PREFIX")
      ->required();
  command_
      ->add_option("OUT", out_path_,
                   "Directory of the Zarr array to write (written to OUT.tessera-partial, moved "
                   "into place when complete), or s3://BUCKET/PREFIX (metadata written last)")
      ->required();
  command_
      ->add_option("--chunks", chunks_,
                   "Target chunks, one per dimension, comma-separated; -1 = the whole "
                   "dimension (e.g. 8760,10,10)")
      ->required();
  spec_options_.Register(*command_);
  command_->add_option("--codec", codec_,
                       "Target codec: blosc-lz4, blosc:zstd:3, zstd, gzip, lz4, zlib (v2 only), "
                       "raw (default: IN's codec)");
  format_options_.Register(*command_, "IN's");
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

  const ZarrMetadata& in = source.array.metadata();
  const std::vector<std::string>& names = source.array.attributes().dimension_names;
  const Shape chunks = ParseExtentList(chunks_, "--chunks", "IN", in.shape, names);
  Shape resolved_chunks = chunks;  // -1: the whole dimension
  for (std::size_t dim = 0; dim < chunks.size(); ++dim) {
    if (chunks[dim] == -1) resolved_chunks[dim] = std::max<Index>(in.shape[dim], 1);
  }
  ToZarrOptions options;
  const int zarr_format = format_options_.Apply(options, "IN", in.shape, resolved_chunks, &in, names);
  // IN's compressor, as a v3 codec when v3 has none of its own (lz4, zlib).
  const std::optional<CodecConfig> kept =
      zarr_format == 3 ? AsV3Compressor(ChunkCompressor(in)) : ChunkCompressor(in);
  options.compressor = ParseCodecOption(codec_, kept, "IN's");
  options.dimension_names = names;
  // The same values mean the same to readers: xarray masks the fill value.
  options.fill_value = in.fill_value;
  options.attributes_json = source.array.attributes().other_json;
  options.byte_order = in.zarr_format == 2 ? in.byte_order : ByteOrder::kLittle;
  options.float16 = in.float16_storage;
  options.overwrite = overwrite_ || plan_only;  // --plan writes nothing
  options.resume = resume_;
  options.compute.plan.intermediate_tier = IntermediateTier(intermediate_);
  options.compute.plan.allow_over_total_mem = allow_over_total_mem_;
  options.compute.execute.progress = quiet_ ? ProgressMode::kNever : ProgressMode::kAuto;
  options.compute.execute.label = "tessera rechunk";

  const Array rechunked = from_zarr(source.store, "", spec).rechunk(chunks);
  if (plan_only) {
    const FinalizedPlan plan = rechunked.plan_to_zarr(target.string(), options);
    WritePlanHeader(out, source, target.string(), rechunked, options, zarr_format, codec_.empty(),
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
  out << "Wrote " << target.string() << " (" << FormatText(options, zarr_format) << ", shape "
      << ShapeToString(rechunked.shape()) << ", chunks " << ShapeToString(rechunked.chunks())
      << ", codec " << CodecText(options.compressor) << ")\n";
  WriteHowToOpen(out, target, !options.dimension_names.empty());
}

}  // namespace tessera::cli
