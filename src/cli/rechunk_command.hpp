// `tessera rechunk IN OUT --chunks ... --allowed-mem ...`: copies a Zarr array onto
// another chunk grid, every task kept under allowed_mem (the plan is proven before
// anything runs; see docs/memory-model.md).
//
// IN is a Zarr v2 array directory (data.zarr/t2m inside a group, or a bare array); OUT
// is the directory of the array to write, into OUT.partial first and moved into place
// when complete. The target keeps IN's dtype and dimension names, and IN's compressor
// unless --codec says otherwise. With --plan it prints the source, the target, the
// budget and the plan's stages (tiers, projected memory, chunks moved) and runs
// nothing; otherwise it runs with progress on stderr (unless --quiet) and reports per
// op projected vs measured memory and time, then how to open OUT.
//
//   CLI::App app;
//   RechunkCommand rechunk(app);     // registers "rechunk"
//   app.parse(argc, argv);
//   if (rechunk.selected()) rechunk.Run(std::cout);
//
// --allowed-mem takes a size or auto (the smallest budget that runs the plan without
// multiplying its reads; docs/sizing.md), with --memory-tiers as for tessera calc.
//
// Errors (tessera::Error, exit 1): InvalidArgument for bad --chunks/sizes/--codec, an
// existing OUT without --overwrite, OUT equal to, inside or containing IN;
// StorageError/FormatError for a missing or non-Zarr IN; MemoryBudgetError for a plan
// that does not fit. An unknown --executor or --intermediate value, a negative --workers
// and a missing --chunks or --allowed-mem are usage errors (CLI11, exit 2). Nothing is
// written when Run throws before running.
#pragma once

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "spec_options.hpp"
#include "zarr_format_options.hpp"

namespace tessera::cli {

class RechunkCommand {
 public:
  // Registers "rechunk" on `app`; `app` must outlive this object.
  explicit RechunkCommand(CLI::App& app);
  RechunkCommand(const RechunkCommand&) = delete;
  RechunkCommand& operator=(const RechunkCommand&) = delete;

  // True when the command line selected "rechunk".
  bool selected() const { return command_->parsed(); }
  void Run(std::ostream& out) const;

 private:
  CLI::App* command_;  // owned by the parent App
  std::string in_path_;
  std::string out_path_;
  std::string chunks_;
  SpecOptions spec_options_{SpecOptions::AllowedMem::kRequired};
  std::string codec_;  // "" = IN's compressor
  ZarrFormatOptions format_options_;
  std::string intermediate_ = "auto";
  bool plan_only_ = false;
  bool explain_ = false;  // --explain: the plan after every planner pass (implies --plan)
  bool allow_over_total_mem_ = false;
  bool overwrite_ = false;
  bool resume_ = false;
  bool quiet_ = false;
};

}  // namespace tessera::cli
