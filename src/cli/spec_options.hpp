// The budget and execution options `tessera` commands share (--allowed-mem,
// --reserved-mem, --total-mem, --memory-tiers, --work-dir, --workers, --executor),
// registered on a subcommand and turned into a Spec. --allowed-mem takes a size or
// "auto" (the smallest budget that runs the plan, docs/sizing.md).
//
//   SpecOptions spec_options(SpecOptions::AllowedMem::kAutoByDefault);
//   spec_options.Register(*command);     // before parsing
//   Spec spec = spec_options.Build();    // after parsing; throws InvalidArgument
//
// Build's errors name the option (--allowed-mem: ...) and say what to change. The
// object must outlive the parse (CLI11 writes into it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "tessera/core/spec.hpp"

namespace tessera::cli {

// parse_bytes with the option's name in its error.
std::int64_t ParseSizeOption(const std::string& text, std::string_view option);

class SpecOptions {
 public:
  enum class AllowedMem {
    kRequired,       // --allowed-mem SIZE|auto must be given
    kAutoByDefault,  // --allowed-mem SIZE|auto, auto when not given
  };
  explicit SpecOptions(AllowedMem allowed_mem) : mode_(allowed_mem) {
    if (mode_ == AllowedMem::kAutoByDefault) allowed_mem_ = "auto";
  }

  void Register(CLI::App& command);
  Spec Build() const;

  const std::string& allowed_mem_text() const { return allowed_mem_; }

 private:
  AllowedMem mode_;
  std::string allowed_mem_;
  std::string reserved_mem_ = "0";
  std::string total_mem_;  // "" = detected
  std::string memory_tiers_;
  std::string work_dir_;  // "" = the system temp dir
  std::string local_disk_ = "auto";
  int workers_ = 0;  // 0 = all cores
  std::vector<std::string> executor_options_;
  std::string executor_ = "threads";
};

}  // namespace tessera::cli
