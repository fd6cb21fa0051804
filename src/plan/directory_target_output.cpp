// The user's Zarr target in a directory (zarr_target_output.hpp): written into
// OUT.tessera-partial/array (marked as Tessera's, target_ownership.hpp) and moved into
// place when complete; an array already at OUT is moved aside into OUT.tessera-old until
// then. Never follows a link at these names, never touches a folder without Tessera's
// marker, and never writes into or removes a source.
#include <algorithm>
#include <cstring>
#include <system_error>
#include <utility>

#include "target_ownership.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/plan/target_files.hpp"
#include "tessera/storage/directory_store.hpp"
#include "zarr_target_output.hpp"

namespace tessera::planner {
namespace {

// Refuses, before anything is written, a target directory that exists and must not be
// replaced: any when overwriting is off, and one that is not a Zarr array or group (or
// empty) — to_zarr never deletes someone's other files.
void CheckReplaceable(const std::filesystem::path& directory, bool overwrite) {
  std::error_code error;
  if (!std::filesystem::exists(directory, error)) return;
  if (!overwrite) {
    throw InvalidArgument("to_zarr: " + directory.string() +
                          " already exists; remove it or allow overwriting");
  }
  if (!std::filesystem::is_directory(directory, error)) {
    throw InvalidArgument("to_zarr: " + directory.string() +
                          " exists and is not a directory; choose another path");
  }
  const bool is_zarr = std::filesystem::exists(directory / ".zarray", error) ||
                       std::filesystem::exists(directory / ".zgroup", error) ||
                       std::filesystem::exists(directory / "zarr.json", error);
  if (!is_zarr && !std::filesystem::is_empty(directory, error)) {
    throw InvalidArgument("to_zarr: " + directory.string() +
                          " exists and is not a Zarr array or group; refusing to replace it "
                          "(choose another path or remove it)");
  }
}

namespace fs = std::filesystem;

// The directory a source array is stored in, when it is one.
std::optional<fs::path> SourceDirectory(const ZarrArray& source) {
  const auto* store = dynamic_cast<const DirectoryStore*>(source.store().get());
  if (store == nullptr) return std::nullopt;
  return source.path().empty() ? store->root() : store->root() / source.path();
}

// True when `inner` is `outer` or lies inside it (both resolved).
bool IsWithin(const fs::path& inner, const fs::path& outer) {
  return std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end()).first == outer.end();
}

fs::path Resolved(const fs::path& path) {
  std::error_code error;
  fs::path resolved = fs::weakly_canonical(fs::absolute(path, error), error);
  return error ? fs::absolute(path).lexically_normal() : resolved;
}

[[noreturn]] void ThrowFileError(const std::string& what, const fs::path& path, int error) {
  throw StorageError("to_zarr: cannot " + what + " \"" + path.string() +
                     "\": " + std::strerror(error));
}

class DirectoryTargetOutput final : public ZarrTargetOutput {
 public:
  DirectoryTargetOutput(ZarrMetadata metadata, ZarrTarget target,
                        std::vector<std::shared_ptr<const ZarrArray>> sources)
      : ZarrTargetOutput(std::move(metadata), std::move(target), std::move(sources)) {
    if (target_.file_ops == nullptr) target_.file_ops = DefaultFileOps();
    CheckReplaceable(target_.directory, target_.overwrite);
  }

  // Resuming into a partial output of other work is refused before any op runs (the
  // upstream ops of an unfused plan would otherwise run first).
  void CheckBeforeRun() const override {
    if (!target_.resume) return;
    const fs::path partial = PartialOutputPath(target_.directory);
    if (!Occupied(partial) || IsEmptyRealDirectory(partial)) return;
    CheckSameWork(partial.string(), *CheckOwnPartial(partial), WantedMarker());
  }

  void Prepare() override {
    // --consolidated needs whatever metadata OUT's parent has to be Zarr's: refused here
    // (IsZarrGroup's FormatError names the file), before any task runs, not after the
    // array is in place.
    if (target_.consolidated) {
      ForParentGroup([](Store& store, const std::string& group) { IsZarrGroup(store, group); });
    }
    CheckReplaceable(target_.directory, target_.overwrite);
    const fs::path partial = PartialOutputPath(target_.directory);
    const fs::path previous = PreviousOutputPath(target_.directory);
    CheckNotASource(partial);
    if (Occupied(target_.directory)) CheckNotASource(previous);
    CheckPreviousName(previous);
    const OwnerMarker& wanted = WantedMarker();
    FileOps& ops = *target_.file_ops;
    bool keep = false;
    if (IsEmptyRealDirectory(partial)) RemoveOwnedDirectory(ops, partial);
    if (Occupied(partial)) {
      const std::optional<OwnerMarker> found = CheckOwnPartial(partial);
      if (target_.resume) {
        CheckSameWork(partial.string(), *found, wanted);
        keep = true;
      } else {
        RemoveOwnedDirectory(ops, partial);  // an earlier run's own leftover: start over
      }
    }
    if (!keep) {
      if (const int error = ops.MakeDirectory(partial); error != 0) {
        ThrowFileError("create the partial output", partial, error);
      }
      try {
        WriteOwnerMarker(ops, partial, wanted);
      } catch (...) {
        RemoveQuietly(partial);  // nothing of it is anyone's yet
        throw;
      }
    }
    DirectoryStore::Options options;
    options.file_ops = target_.file_ops;
    store_ = DirectoryStore::Open(partial / "array", options);
    // A killed run's temporaries (perhaps of the same pid) are never part of the output.
    if (keep) store_->RemoveStaleTemporaries(/*including_this_process=*/true);
    OpenOrCreate(store_, "", keep);
  }

  void Commit() override {
    // Move the finished array into place; an older array there goes only once the new
    // one is complete, kept meanwhile in OUT.tessera-old/previous.
    FileOps& ops = *target_.file_ops;
    const fs::path& directory = target_.directory;
    const fs::path partial = PartialOutputPath(directory);
    const fs::path previous = PreviousOutputPath(directory);
    store_->RemoveStaleTemporaries(/*including_this_process=*/true);
    bool moved_previous = false;
    if (Occupied(directory)) {
      CheckPreviousName(previous);
      if (Occupied(previous)) RemoveOwnedDirectory(ops, previous);  // ours and stale (checked)
      if (const int error = ops.MakeDirectory(previous); error != 0) {
        ThrowFileError("create", previous, error);
      }
      OwnerMarker marker;
      marker.kind = "previous-output";
      marker.run = NewRunId();
      try {
        WriteOwnerMarker(ops, previous, marker);
        if (const int error = ops.RenameNoReplace(directory, previous / "previous"); error != 0) {
          ThrowFileError("move the previous array aside to", previous / "previous", error);
        }
      } catch (...) {
        RemoveQuietly(previous);
        throw;
      }
      moved_previous = true;
    }
    if (const int error = ops.RenameNoReplace(partial / "array", directory); error != 0) {
      if (moved_previous && ops.RenameNoReplace(previous / "previous", directory) == 0) {
        RemoveQuietly(previous);
      }
      ThrowFileError("move the finished array into place at", directory, error);
    }
    // The new array is in place: what remains is Tessera's own, marked, and a later run
    // clears it should removing it here fail.
    RemoveQuietly(partial);
    if (moved_previous) RemoveQuietly(previous);
    array_ = std::make_shared<const ZarrArray>(ZarrArray::Open(DirectoryStore::Open(directory)));
    ForParentGroup(
        [this](Store& store, const std::string& group) { UpdateGroupMetadata(store, group); });
  }
  // A follower rank writes into the partial array the leader's Prepare made, and reads
  // the finished one once the leader's Commit moved it into place.
  void FollowPrepare() override {
    DirectoryStore::Options options;
    options.file_ops = target_.file_ops;
    options.create = false;  // the leader's; never made here
    store_ = DirectoryStore::Open(PartialOutputPath(target_.directory) / "array", options);
    array_ = std::make_shared<const ZarrArray>(ZarrArray::Open(store_));
  }
  void FollowCommit() override {
    DirectoryStore::Options existing;
    existing.create = false;
    array_ = std::make_shared<const ZarrArray>(
        ZarrArray::Open(DirectoryStore::Open(target_.directory, existing)));
  }

 private:
  // Calls fn(store, group) for where the group OUT is a member of would be: OUT's parent
  // directory (when there is one).
  template <class Fn>
  void ForParentGroup(Fn&& fn) const {
    const fs::path& directory = target_.directory;
    const fs::path parent = directory.has_parent_path() ? directory.parent_path() : fs::path(".");
    std::error_code error;
    if (fs::is_directory(parent, error)) {
      fn(*DirectoryStore::Open(parent, {.create = false}), std::string());
    }
  }

  void RemoveQuietly(const fs::path& path) const {
    try {
      RemoveOwnedDirectory(*target_.file_ops, path);
    } catch (const Error&) {
    }
  }

  // Refuses a name beside OUT that is (or holds) one of the run's sources.
  void CheckNotASource(const fs::path& name) const {
    if (!IsRealDirectory(name)) return;  // a link or file there is refused as not Tessera's
    const fs::path resolved = Resolved(name);
    for (const std::shared_ptr<const ZarrArray>& source : sources_) {
      const std::optional<fs::path> directory = SourceDirectory(*source);
      if (!directory) continue;
      std::error_code error;
      if (fs::equivalent(name, *directory, error) || IsWithin(Resolved(*directory), resolved)) {
        throw InvalidArgument(
            "to_zarr: " + name.string() + " is a source of this run (" + directory->string() +
            "), but Tessera needs that name beside the output for its own files and never "
            "writes into or removes a source; rename the source (e.g. mv " +
            name.string() + " " + name.string() + "-source) or choose another output path");
      }
    }
  }

  // What stands at the partial output's name must be Tessera's own partial output.
  std::optional<OwnerMarker> CheckOwnPartial(const fs::path& partial) const {
    std::error_code error;
    const fs::file_status status = fs::symlink_status(partial, error);
    if (fs::is_symlink(status)) {
      throw InvalidArgument("to_zarr: " + partial.string() +
                            " is a symbolic link; Tessera keeps its partial output in a "
                            "directory of that name and never follows a link there; remove "
                            "the link (rm " +
                            partial.string() + ") or choose another output path");
    }
    std::optional<OwnerMarker> marker = ReadOwnerMarker(partial, "partial-output");
    if (!marker) {
      throw InvalidArgument(
          "to_zarr: " + partial.string() + " exists but was not made by Tessera (" +
          (fs::is_directory(status) ? std::string("it has no ") + kOwnerMarkerName + " marker"
                                    : std::string("it is not a directory")) +
          "); Tessera needs that name for its partial output; move or delete it, or choose "
          "another output path");
    }
    return marker;
  }

  // OUT.tessera-old, needed while replacing OUT, must be free or Tessera's own stale one.
  void CheckPreviousName(const fs::path& previous) const {
    if (!Occupied(previous) || IsEmptyRealDirectory(previous)) return;
    const bool target_exists = Occupied(target_.directory);
    if (!ReadOwnerMarker(previous, "previous-output")) {
      if (!target_exists) return;  // not needed: nothing to move aside
      throw InvalidArgument("to_zarr: " + previous.string() +
                            " exists but was not made by Tessera; Tessera needs that name to "
                            "keep the array at " +
                            target_.directory.string() +
                            " until the new one is complete; move or delete it, then run again");
    }
    if (!target_exists && Occupied(previous / "previous")) {
      throw InvalidArgument("to_zarr: " + (previous / "previous").string() +
                            " holds the array that was at " + target_.directory.string() +
                            " before an interrupted overwrite; move it back (mv " +
                            (previous / "previous").string() + " " + target_.directory.string() +
                            ") or delete " + previous.string() + ", then run again");
    }
  }

  std::shared_ptr<DirectoryStore> store_;
};

}  // namespace

std::shared_ptr<OpOutput> MakeDirectoryTargetOutput(
    ZarrMetadata metadata, ZarrTarget target,
    std::vector<std::shared_ptr<const ZarrArray>> sources) {
  return std::make_shared<DirectoryTargetOutput>(std::move(metadata), std::move(target),
                                                 std::move(sources));
}

}  // namespace tessera::planner
