// Ownership of what the Zarr target creates beside OUT (target_files.hpp): the marker,
// the source fingerprint it records, and removing only what carries the marker without
// following symbolic links. All file changes go through FileOps. Internal to src/plan.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/storage/file_ops.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera::planner {

inline constexpr const char* kOwnerMarkerName = ".tessera-owner";

// What the sources of a run are, as far as resuming is concerned: their metadata and
// every stored key's size (and modification time on a local directory).
struct SourceFingerprint {
  std::string hash;  // 16 hex digits
  std::int64_t keys = 0;
  std::int64_t bytes = 0;
  bool operator==(const SourceFingerprint&) const = default;
};
SourceFingerprint FingerprintSources(const std::vector<std::shared_ptr<const ZarrArray>>& sources);

// The marker's contents.
struct OwnerMarker {
  std::string kind;  // "partial-output" or "previous-output"
  std::string run;   // pid and start time of the run that made it
  SourceFingerprint source;
  std::string target;  // hash of the target's metadata and attributes
  std::string layout;  // the writing op's kind, task count and fingerprint
};

std::string HashText(const std::string& text);  // 16 hex digits (FNV-1a 64)
std::string NewRunId();

// The marker as the text of its file (or object), and back: nullopt when `text` is no
// marker of `kind`.
std::string OwnerMarkerText(const OwnerMarker& marker);
std::optional<OwnerMarker> ParseOwnerMarker(const std::string& text, const std::string& kind);

// Reads `directory`/.tessera-owner when `directory` is a real directory (not a link)
// holding a regular marker file of `kind`; nullopt otherwise.
std::optional<OwnerMarker> ReadOwnerMarker(const std::filesystem::path& directory,
                                           const std::string& kind);
// Writes the marker atomically (temporary file, fsync, rename, fsync of the directory);
// StorageError on failure, leaving no marker.
void WriteOwnerMarker(FileOps& ops, const std::filesystem::path& directory,
                      const OwnerMarker& marker);

// Removes `path` and everything under it without following symbolic links (a link is
// removed, never what it points to). StorageError on the first failure.
void RemoveTree(FileOps& ops, const std::filesystem::path& path);

// Removes a folder of Tessera's own: everything but its marker first, then the marker
// and the folder, so that a failure midway leaves it marked (or empty).
void RemoveOwnedDirectory(FileOps& ops, const std::filesystem::path& directory);
// An empty real directory (or one holding only an unfinished marker's temporary file)
// holds nobody's data: Tessera may remove one at the names it needs, as a run killed
// while creating its folder, or a failure while removing it, leaves one.
bool IsEmptyRealDirectory(const std::filesystem::path& path);

// Is something (a link included) at `path`?
bool Occupied(const std::filesystem::path& path);
// Is `path` a real directory (not a symbolic link to one)?
bool IsRealDirectory(const std::filesystem::path& path);

}  // namespace tessera::planner
