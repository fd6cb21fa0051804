// `tessera info STORE [--json]`: what a Zarr array or group holds.
//
// For an array: shape, dtype, chunk grid, codec and filters, fill value, dimension
// names, how many chunks are stored out of how many the grid has, logical and stored
// sizes and the compression ratio of the stored chunks. For a group: its member arrays
// (shape, dtype, chunks) and subgroups, found by walking the directory (chunk files are
// never listed). With --json the same facts are one JSON object with plain numbers.
//
//   CLI::App app;
//   InfoCommand info(app);        // registers the "info" subcommand
//   app.parse(argc, argv);
//   if (info.selected()) info.Run(std::cout);
//
// Run() throws tessera::Error (StorageError, FormatError) for a missing store or bad
// metadata; the message names the path.
#pragma once

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"

namespace tessera::cli {

class InfoCommand {
 public:
  // Registers "info" on `app`; `app` must outlive this object.
  explicit InfoCommand(CLI::App& app);
  InfoCommand(const InfoCommand&) = delete;
  InfoCommand& operator=(const InfoCommand&) = delete;

  // True when the command line selected "info".
  bool selected() const { return command_->parsed(); }
  void Run(std::ostream& out) const;

 private:
  CLI::App* command_;  // owned by the parent App
  std::string store_path_;
  bool json_ = false;
};

}  // namespace tessera::cli
