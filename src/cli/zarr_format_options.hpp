// The Zarr format of the array a `tessera` command writes: --zarr-format, --shards,
// --checksum and --consolidated, shared by rechunk and calc, turned into ToZarrOptions.
//
//   ZarrFormatOptions format_options;
//   format_options.Register(*command, "IN's");              // before parsing
//   int format = format_options.Apply(options, shape, &in);  // after parsing
//
// Without --zarr-format the target keeps its (first) source's format; --shards makes a
// sharded Zarr v3 target whose inner chunks are the array's chunks. Errors are
// InvalidArgument naming the option and what to change.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "tessera/api/array.hpp"
#include "tessera/api/storage.hpp"

namespace tessera::cli {

// Parses a comma-separated list of whole numbers, one per dimension of `shape`, each >= 1
// or -1 (a whole dimension, kept as -1), for `option` ("--chunks") of the array messages
// call `array_label` ("IN"); `dimension_names` (may be empty) name dimensions in messages.
Shape ParseExtentList(const std::string& text, const std::string& option,
                      const std::string& array_label, const Shape& shape,
                      const std::vector<std::string>& dimension_names);

// The source's compressor as a Zarr v3 codec where it has none of its own: numcodecs'
// lz4 as blosc(lz4), zlib as gzip at its level; others as they are.
std::optional<CodecConfig> AsV3Compressor(const std::optional<CodecConfig>& compressor);

class ZarrFormatOptions {
 public:
  // `keeps` says whose format the default keeps ("IN's", "the first input's").
  void Register(CLI::App& command, const std::string& keeps);
  // Sets options.zarr_format, shards (-1: the whole dimension of `shape`, rounded up to
  // a multiple of `chunks`, the array's chunks) and checksum (also kept from `source`'s
  // chunks when the target is v3); returns the format written. `source` may be null (no
  // stored source: v3).
  int Apply(ToZarrOptions& options, const std::string& array_label, const Shape& shape,
            const Shape& chunks, const ZarrMetadata* source,
            const std::vector<std::string>& dimension_names) const;

 private:
  int zarr_format_ = 0;  // 0: the source's
  std::string shards_;
  bool checksum_ = false;
  bool consolidated_ = false;
};

// " (Zarr v3, shards (4, 6))" or " (Zarr v2)": how a command says what it wrote.
std::string FormatText(const ToZarrOptions& options, int zarr_format);

}  // namespace tessera::cli
