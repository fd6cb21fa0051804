// `tessera calc EXPR --input NAME=STORE ... --output STORE`: the calculator. Computes a
// numpy-like formula over Zarr arrays chunk by chunk under a memory budget and writes
// the result as a Zarr array; `tessera plan` (or calc --plan) takes the same arguments
// and prints what a run would do, running and writing nothing.
//
//   CLI::App app;
//   CalcCommand calc(app);     // registers "calc" and "plan"
//   app.parse(argc, argv);
//   if (calc.selected()) calc.Run(std::cout);
//
// EXPR: tessera/api/expression.hpp's grammar, e.g. the dew point
//   "td = ((1/273) - 0.0001844*log(0.611*exp(5423*((1/273)-(1/t2)))*rh/100/0.611))**-1".
// Each --input NAME=STORE names a Zarr v2 array directory. The output has the result's
// dtype and the inputs' chunks (reductions: the reduced grid), --codec's compressor
// (blosc-lz4 by default), the dimension names of the first input of the same shape, and
// in .zattrs "long_name" (NAME of a leading "NAME =") and "tessera_expression" (EXPR).
// --allowed-mem is auto by default: planning picks the smallest budget that runs.
//
// A run writes OUT.partial and moves it to OUT once complete: a run that fails midway
// (a bad chunk, a full disk) leaves OUT.partial, never a half-written OUT; the next run
// to OUT starts it afresh.
//
// Errors found before running (tessera::Error, exit 1, nothing written): ExpressionError pointing
// at a column (syntax, unknown names, shapes that do not broadcast); InvalidArgument for an
// --input without '=', a bad or repeated NAME, an output that is an input, lies inside
// one or contains one, an existing output without --overwrite, bad sizes or --codec;
// StorageError/FormatError for a missing or non-Zarr input; MemoryBudgetError when the
// plan does not fit. Missing EXPR, or a missing --output for calc, is a usage error
// (CLI11, exit 2).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "spec_options.hpp"
#include "zarr_format_options.hpp"

namespace tessera::cli {

class CalcCommand {
 public:
  // Registers "calc" and "plan" on `app`; `app` must outlive this object.
  explicit CalcCommand(CLI::App& app);
  CalcCommand(const CalcCommand&) = delete;
  CalcCommand& operator=(const CalcCommand&) = delete;

  // True when the command line selected "calc" or "plan".
  bool selected() const { return calc_->parsed() || plan_->parsed(); }
  void Run(std::ostream& out) const;

 private:
  // The options both commands take.
  void AddOptions(CLI::App& command);

  CLI::App* calc_;  // owned by the parent App
  CLI::App* plan_;
  std::string expression_;
  std::vector<std::string> inputs_;  // NAME=STORE
  std::string output_;
  SpecOptions spec_options_{SpecOptions::AllowedMem::kAutoByDefault};
  std::string codec_;  // "" = to_zarr's default
  ZarrFormatOptions format_options_;
  bool plan_only_ = false;
  bool explain_ = false;  // --explain: the plan after every planner pass
  bool overwrite_ = false;
  bool resume_ = false;
  bool quiet_ = false;
};

}  // namespace tessera::cli
