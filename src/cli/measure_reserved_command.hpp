// `tessera measure-reserved [--executor sync|threads] [--workers N] [--json]`: the
// reserved_mem this machine's tessera process needs (tessera::measure_reserved_mem):
// its resident memory while running a trivial computation, in whole MiB, with the
// option to pass it on (--reserved-mem SIZE).
//
//   MeasureReservedCommand measure(app);   // registers "measure-reserved"
//   if (measure.selected()) measure.Run(std::cout);
#pragma once

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"

namespace tessera::cli {

class MeasureReservedCommand {
 public:
  explicit MeasureReservedCommand(CLI::App& app);
  MeasureReservedCommand(const MeasureReservedCommand&) = delete;
  MeasureReservedCommand& operator=(const MeasureReservedCommand&) = delete;

  bool selected() const { return command_->parsed(); }
  void Run(std::ostream& out) const;

 private:
  CLI::App* command_;  // owned by the parent App
  std::string executor_ = "threads";
  int workers_ = 0;
  bool json_ = false;
};

}  // namespace tessera::cli
