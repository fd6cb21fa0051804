// The array a `tessera` command writes: checks on its path against the arrays it reads,
// and its --codec option.
//
//   const fs::path out = TargetPath(out_text);                  // normalized, no trailing '/'
//   CheckTarget({{"IN", in_path}}, "OUT", out, overwrite);      // before planning
//   std::optional<CodecConfig> codec = ParseCodecOption(codec_text, source_codec);
//
// Errors are InvalidArgument naming the paths and what to change; nothing is written.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tessera/api/storage.hpp"

namespace tessera::cli {

// `text` as a path, normalized, without a trailing separator.
std::filesystem::path TargetPath(const std::string& text);

// An array the command reads: how messages name it ("IN", "input t2") and its path.
struct SourcePath {
  std::string label;
  std::filesystem::path path;
};

// Refuses a target (`target_label`, e.g. "OUT" or "--output") that is one of `sources`,
// lies inside one or contains one, or exists while `overwrite` is false (pass true for
// a command that writes nothing, like --plan).
void CheckTarget(const std::vector<SourcePath>& sources, const std::string& target_label,
                 const std::filesystem::path& target, bool overwrite);

// --codec: "" gives `default_codec`; "raw" and "none" give nullopt (no compression);
// otherwise ParseCodecSpec's names (blosc-lz4, zstd, ...). `default_name` says what ""
// keeps, for the error ("IN's", "blosc-lz4").
std::optional<CodecConfig> ParseCodecOption(const std::string& text,
                                            const std::optional<CodecConfig>& default_codec,
                                            const std::string& default_name);

// "blosc lz4 ..." or "none (raw)".
std::string CodecText(const std::optional<CodecConfig>& codec);

}  // namespace tessera::cli
