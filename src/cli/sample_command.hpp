// `tessera sample OUT [--shape ...] [--chunks ...]`: writes a synthetic dataset.
//
// The values are a smooth, climate-like field (a mean plus one wave per dimension plus
// a little seeded noise), so codecs compress them as they would real data and every
// run with the same seed writes the same bytes. The array is written chunk by chunk
// in parallel: memory stays at one chunk per thread, whatever the array's size.
// With --variable NAME (the default "t2m") OUT becomes a Zarr group holding the array
// NAME, which xarray opens directly: xr.open_zarr(OUT).
//
//   CLI::App app;
//   SampleCommand sample(app);     // registers "sample"
//   app.parse(argc, argv);
//   if (sample.selected()) sample.Run(std::cout);
//
// Refuses to write into an existing non-empty OUT unless --overwrite is given, so no
// data is replaced by accident. Errors are tessera::Error (InvalidArgument for bad
// options, StorageError for I/O).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "CLI/CLI.hpp"

namespace tessera::cli {

class SampleCommand {
 public:
  explicit SampleCommand(CLI::App& app);
  SampleCommand(const SampleCommand&) = delete;
  SampleCommand& operator=(const SampleCommand&) = delete;

  bool selected() const { return command_->parsed(); }
  void Run(std::ostream& out) const;

 private:
  CLI::App* command_;  // owned by the parent App
  std::string out_path_;
  std::string shape_ = "8760,181,360";
  std::string chunks_;
  std::string dtype_ = "float32";
  std::string codec_ = "blosc-lz4";
  std::string dims_;
  int zarr_format_ = 3;
  std::string shards_;  // "" = unsharded
  std::string variable_ = "t2m";
  std::uint64_t seed_ = 0;
  int threads_ = 0;
  bool overwrite_ = false;
};

}  // namespace tessera::cli
