#include "output_target.hpp"

#include <algorithm>
#include <system_error>

#include "tessera/core/errors.hpp"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

// `path` absolute, normalized, without a trailing separator, symbolic links resolved
// where it exists, so that two spellings of one directory compare equal.
// An object store's URL ("s3://bucket/prefix") is compared as written, less trailing '/'.
fs::path ResolvedPath(const fs::path& path) {
  if (IsObjectStoreLocation(path.string())) return TargetPath(path.string());
  fs::path normal = fs::absolute(path).lexically_normal();
  if (!normal.has_filename() && normal.has_parent_path()) normal = normal.parent_path();
  return fs::weakly_canonical(normal);
}

// True when `inner` lies strictly inside directory `outer` (both resolved).
bool IsInside(const fs::path& inner, const fs::path& outer) {
  const auto [outer_end, inner_at] =
      std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return outer_end == outer.end() && inner_at != inner.end();
}

}  // namespace

fs::path TargetPath(const std::string& text) {
  if (IsObjectStoreLocation(text)) {
    std::string url = text;
    while (url.size() > 5 && url.back() == '/') url.pop_back();
    return fs::path(url);
  }
  fs::path target = fs::path(text).lexically_normal();
  if (!target.has_filename() && target.has_parent_path()) target = target.parent_path();
  return target;
}

void CheckTarget(const std::vector<SourcePath>& sources, const std::string& target_label,
                 const fs::path& target, bool overwrite) {
  const fs::path resolved_target = ResolvedPath(target);
  const std::string out = target_label + " " + target.string();
  for (const SourcePath& source : sources) {
    const fs::path resolved_source = ResolvedPath(source.path);
    const std::string in = source.label + " " + source.path.string();
    if (resolved_target == resolved_source) {
      throw InvalidArgument(target_label + " is " + source.label + " (" + resolved_source.string() +
                            "): tessera writes a new array and never rewrites its source; "
                            "choose another " +
                            target_label + ", e.g. " + target.string() + "_new");
    }
    if (IsInside(resolved_target, resolved_source)) {
      throw InvalidArgument(out + " lies inside " + in + "; choose a " + target_label +
                            " outside the source array");
    }
    if (IsInside(resolved_source, resolved_target)) {
      throw InvalidArgument(in + " lies inside " + out + "; writing " + target_label +
                            " would replace the source; choose another " + target_label);
    }
  }
  // An object store target's contents are checked when it is opened (CheckStoreTarget).
  std::error_code error;
  if (!overwrite && !IsObjectStoreLocation(target.string()) && fs::exists(resolved_target, error)) {
    throw InvalidArgument(out +
                          " already exists; pass --overwrite to replace it (the old array "
                          "goes only once the new one is complete) or choose another " +
                          target_label);
  }
}

std::optional<CodecConfig> ParseCodecOption(const std::string& text,
                                            const std::optional<CodecConfig>& default_codec,
                                            const std::string& default_name) {
  if (text.empty()) return default_codec;
  if (text == "raw" || text == "none") return std::nullopt;
  try {
    return ParseCodecSpec(text);
  } catch (const InvalidArgument& error) {
    throw InvalidArgument(std::string("--codec: ") + error.what() +
                          "; or raw for no compression; leave --codec out to keep " + default_name);
  }
}

std::string CodecText(const std::optional<CodecConfig>& codec) {
  return codec ? DescribeCodec(*codec) : "none (raw)";
}

}  // namespace tessera::cli
