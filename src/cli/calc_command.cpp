#include "calc_command.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <system_error>

#include "nlohmann/json.hpp"
#include "output_target.hpp"
#include "run_summary.hpp"
#include "store_argument.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/api/expression.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/shape.hpp"
#include "tessera/plan/target_files.hpp"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

// One --input NAME=STORE, opened.
struct Input {
  std::string name;
  StoredArrayArgument stored;
};

std::vector<Input> OpenInputs(const std::vector<std::string>& arguments) {
  std::vector<Input> inputs;
  for (const std::string& argument : arguments) {
    const std::size_t equals = argument.find('=');
    if (equals == std::string::npos) {
      throw InvalidArgument("--input \"" + argument +
                            "\": expected NAME=STORE, the name the expression uses and a Zarr "
                            "array, e.g. --input t2=era5.zarr/t2m");
    }
    std::string name = argument.substr(0, equals);
    const std::string path = argument.substr(equals + 1);
    if (!is_expression_name(name)) {
      throw InvalidArgument("--input \"" + argument + "\": \"" + name +
                            "\" cannot be a name in an expression; use letters, digits and _, "
                            "not starting with a digit (e.g. t2m), and none of and, or, not, "
                            "True, False, None");
    }
    for (const Input& input : inputs) {
      if (input.name == name) {
        throw InvalidArgument("--input " + name + " is given twice (" +
                              input.stored.directory.string() + " and " + path +
                              "); give each name once");
      }
    }
    if (path.empty()) {
      throw InvalidArgument("--input \"" + argument + "\": no STORE after '='; e.g. --input " +
                            name + "=data.zarr/" + name);
    }
    inputs.push_back(Input{name, OpenArrayArgument(path, "--input " + name)});
  }
  return inputs;
}

// xarray's dimension names for the result: those of the first input of its shape.
std::vector<std::string> DimensionNames(const std::vector<Input>& inputs, const Array& result) {
  for (const Input& input : inputs) {
    const std::vector<std::string>& names = input.stored.array.attributes().dimension_names;
    if (input.stored.array.metadata().shape == result.shape() && !names.empty()) return names;
  }
  return {};
}

void WritePlan(std::ostream& out, const std::string& expression, const std::vector<Input>& inputs,
               const ExpressionResult& result, const std::optional<fs::path>& target,
               const ToZarrOptions& options, int zarr_format, const Spec& spec,
               const FinalizedPlan& plan) {
  out << "Expression " << expression << '\n';
  for (const Input& input : inputs) {
    WriteSource(out, "Input " + input.name + " = " + input.stored.directory.string(),
                input.stored.array);
  }
  out << "Result" << (result.name.empty() ? "" : " " + result.name) << '\n';
  WriteRow(out, "shape", ShapeToString(result.array.shape()));
  WriteRow(out, "dtype", std::string(result.array.dtype().name()));
  WriteRow(out, "chunks", ShapeToString(result.array.chunks()));
  WriteRow(out, "size", format_bytes(result.array.nbytes()));
  if (target) {
    out << "Output " << target->string() << '\n';
    WriteRow(out, "format", FormatText(options, zarr_format));
    WriteRow(out, "codec", CodecText(options.compressor));
  } else {
    out << "Output none given (--output): planned as an in-memory result\n";
  }
  WriteBudget(out, spec, plan);
  WriteRow(out, "required",
           format_bytes(plan.required_allowed_mem()) +
               " (the smallest allowed_mem that runs this plan)");
  out << '\n' << plan.summary() << '\n';
}

}  // namespace

CalcCommand::CalcCommand(CLI::App& app)
    : calc_(app.add_subcommand(
          "calc", "Compute a formula over Zarr arrays under a memory budget and write it")),
      plan_(app.add_subcommand(
          "plan", "Plan `tessera calc` (same arguments): print the plan, run nothing")) {
  AddOptions(*calc_);
  AddOptions(*plan_);
  calc_->get_option("--output")->required();
  calc_->add_flag("--plan", plan_only_, "Print the plan (as `tessera plan`); run nothing");
  const std::string footer =
      "EXPR is Python/numpy-like: + - * / // % ** (x**-1), comparisons, & | ~, and or not, "
      "the elementwise functions (exp, log, sqrt, abs, sin, ..., maximum, minimum, atan2, "
      "hypot), where(cond, a, b), astype(x, float32), sum/prod/mean/var/std/min/max/argmin/"
      "argmax/all/any/count_nonzero(x, axis=..., keepdims=...), constants pi e nan inf. "
      "Example (dew point):\n  tessera calc 'td = ((1/273) - 0.0001844*log(0.611*exp(5423*"
      "((1/273)-(1/t2)))*rh/100/0.611))**-1' --input t2=era5.zarr/t2m --input rh=era5.zarr/rh "
      "--output td.zarr\nAn EXPR starting with '-' goes after --: tessera calc --input x=x.zarr "
      "--output y.zarr -- '-x**2'";
  calc_->footer(footer);
  plan_->footer(footer);
}

void CalcCommand::AddOptions(CLI::App& command) {
  command
      .add_option("EXPR", expression_,
                  "The formula, e.g. 'td = 1 / (1/273 - 0.0001844 * log(e / 0.611))'")
      ->required();
  command.add_option("--input", inputs_,
                     "NAME=STORE: a Zarr array (v2 or v3: a directory holding .zarray or "
                     "zarr.json, or s3://BUCKET/PREFIX) the formula calls NAME; repeat for "
                     "each input");
  command.add_option("--output", output_,
                     "Directory of the Zarr array to write (written to STORE.tessera-partial, "
                     "moved into place when complete), or s3://BUCKET/PREFIX (its metadata "
                     "written last)");
  spec_options_.Register(command);
  command.add_option("--codec", codec_,
                     "Output codec: blosc-lz4 (default), blosc:zstd:3, zstd, gzip, lz4, zlib (v2 "
                     "only), raw");
  format_options_.Register(command, "the first input's");
  command.add_flag("--overwrite", overwrite_, "Replace an existing array at --output");
  command.add_flag("--resume", resume_,
                   "Continue an interrupted run: keep the chunks it left in "
                   "STORE.tessera-partial (refused unless the inputs, formula and options "
                   "are the same)");
  command.add_flag("--quiet", quiet_, "No progress on stderr");
  command.add_flag("--explain", explain_,
                   "Print the plan after every pass of the planner, with its time (implies "
                   "--plan)");
}

void CalcCommand::Run(std::ostream& out) const {
  const bool plan_only = plan_only_ || explain_ || plan_->parsed();
  const Spec spec = spec_options_.Build();
  const std::vector<Input> inputs = OpenInputs(inputs_);

  std::optional<fs::path> target;
  if (!output_.empty()) {
    target = TargetPath(output_);
    std::vector<SourcePath> sources;
    for (const Input& input : inputs) {
      sources.push_back(SourcePath{"--input " + input.name, input.stored.directory});
    }
    CheckTarget(sources, "--output", *target, overwrite_ || plan_only);
  }

  std::map<std::string, Array, std::less<>> arrays;
  for (const Input& input : inputs) {
    arrays.emplace(input.name, from_zarr(input.stored.store, "", spec));
  }
  const ExpressionResult result = evaluate_expression(expression_, arrays);

  ToZarrOptions options;
  options.dimension_names = DimensionNames(inputs, result.array);
  const int zarr_format = format_options_.Apply(
      options, "the result", result.array.shape(), result.array.chunks(),
      inputs.empty() ? nullptr : &inputs.front().stored.array.metadata(), options.dimension_names);
  options.compressor = ParseCodecOption(codec_, ToZarrOptions{}.compressor, "blosc-lz4");
  nlohmann::json attributes = nlohmann::json::object();
  if (!result.name.empty()) attributes["long_name"] = result.name;
  attributes["tessera_expression"] = expression_;
  options.attributes_json = attributes.dump();
  options.overwrite = overwrite_ || plan_only;  // plan writes nothing
  options.resume = resume_;
  options.compute.execute.progress = quiet_ ? ProgressMode::kNever : ProgressMode::kAuto;
  options.compute.execute.label = "tessera calc";

  if (plan_only) {
    const FinalizedPlan plan = target ? result.array.plan_to_zarr(target->string(), options)
                                      : result.array.plan(options.compute.plan);
    WritePlan(out, expression_, inputs, result, target, options, zarr_format, spec, plan);
    if (explain_) out << "Planner passes:\n" << plan.explain(/*with_timings=*/true) << '\n';
    out << "Nothing was run: no chunk was read or written. Run `tessera calc` with the same "
           "arguments"
        << (target ? "" : " and --output STORE") << " to compute it.\n";
    std::error_code error;
    if (target && !overwrite_ && fs::exists(*target, error)) {
      out << "Note: " << target->string()
          << " exists; the run will refuse to replace it unless --overwrite is given.\n";
    }
    return;
  }

  ExecutionReport report;
  options.compute.report = &report;
  try {
    result.array.to_zarr(target->string(), options);
  } catch (const Error& error) {
    ThrowWithPartialOutputNote(error, *target, "rerunning the same command with --resume");
  }
  WriteRunReport(out, report);
  out << "Wrote " << target->string() << " (" << FormatText(options, zarr_format) << ", shape "
      << ShapeToString(result.array.shape()) << ", dtype " << result.array.dtype().name() << ", chunks "
      << ShapeToString(result.array.chunks()) << ", codec " << CodecText(options.compressor)
      << ")\n";
  WriteHowToOpen(out, *target, !options.dimension_names.empty());
}

}  // namespace tessera::cli
