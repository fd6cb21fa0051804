// What a plan produces: the in-memory result of compute() and the user's Zarr target
// (op_output.hpp).
#include <algorithm>
#include <complex>
#include <cstring>
#include <limits>
#include <system_error>
#include <utility>

#include "op_output.hpp"
#include "region_copy.hpp"
#include "target_ownership.hpp"
#include "tessera/core/buffer.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/memory_account.hpp"
#include "tessera/core/touched_blocks.hpp"
#include "tessera/plan/target_files.hpp"
#include "tessera/storage/directory_store.hpp"
#include "tessera/storage/zarr_group.hpp"
#include "zarr_output.hpp"

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

class ZarrTargetOutput : public ZarrOutput {
 public:
  ZarrTargetOutput(ZarrMetadata metadata, ZarrTarget target,
                   std::vector<std::shared_ptr<const ZarrArray>> sources)
      : ZarrOutput(std::move(metadata),
                   ZarrAttributes{target.dimension_names, target.attributes_json}),
        target_(std::move(target)),
        sources_(std::move(sources)) {
    holds_values_ = target_.store != nullptr && target_.store->HoldsValuesInMemory();
    ZarrAttributesToJson(attributes_);  // InvalidArgument now, not after the work
    if (target_.file_ops == nullptr) target_.file_ops = DefaultFileOps();
    if (target_.store == nullptr) CheckReplaceable(target_.directory, target_.overwrite);
  }

  Tier tier() const override { return Tier::kTarget; }
  void SetWriterLayout(std::string layout) override {
    layout_ = std::move(layout);
    wanted_.reset();  // the marker records the layout
  }

  // Resuming into a partial output of other work is refused before any op runs (the
  // upstream ops of an unfused plan would otherwise run first).
  void CheckBeforeRun() const override {
    if (target_.store != nullptr || !target_.resume) return;
    const fs::path partial = PartialOutputPath(target_.directory);
    if (!Occupied(partial) || IsEmptyRealDirectory(partial)) return;
    CheckSameWork(partial, *CheckOwnPartial(partial), WantedMarker());
  }

  void Prepare() override {
    // --consolidated needs whatever metadata OUT's parent has to be Zarr's: refused here
    // (IsZarrGroup's FormatError names the file), before any task runs, not after the
    // array is in place.
    if (target_.consolidated) {
      ForParentGroup([](Store& store, const std::string& group) { IsZarrGroup(store, group); });
    }
    if (target_.store != nullptr) {
      // A store cannot rename a finished array into place: the array's documents are
      // written last, by Commit, so that it never reads as complete before it is.
      OpenOrCreate(target_.store, target_.path, target_.resume, /*publish=*/false);
      return;
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
        CheckSameWork(partial, *found, wanted);
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
    if (target_.store != nullptr) {
      array_->Publish();
      ForParentGroup(
          [this](Store& store, const std::string& group) { UpdateGroupMetadata(store, group); });
      return;
    }
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
  void Release() override {}

  // A follower rank writes into the partial array the leader's Prepare made, and reads
  // the finished one once the leader's Commit moved it into place.
  void FollowPrepare() override {
    if (target_.store != nullptr) {
      if (holds_values_) {
        throw InvalidArgument(
            "to_zarr: a store held in one process's memory cannot be written by the ranks "
            "of an MPI run; write to a directory all ranks reach");
      }
      array_ = std::make_shared<const ZarrArray>(
          ZarrArray::Define(target_.store, target_.path, metadata_, attributes_));
      return;
    }
    DirectoryStore::Options options;
    options.file_ops = target_.file_ops;
    options.create = false;  // the leader's; never made here
    store_ = DirectoryStore::Open(PartialOutputPath(target_.directory) / "array", options);
    array_ = std::make_shared<const ZarrArray>(ZarrArray::Open(store_));
  }
  void FollowCommit() override {
    if (target_.store != nullptr) return;
    DirectoryStore::Options existing;
    existing.create = false;
    array_ = std::make_shared<const ZarrArray>(
        ZarrArray::Open(DirectoryStore::Open(target_.directory, existing)));
  }
  void FollowRelease() override {}

 private:
  // Calls fn(store, group) for where the group OUT is a member of would be: OUT's parent
  // key in the target's store, or OUT's parent directory (when there is one).
  template <class Fn>
  void ForParentGroup(Fn&& fn) const {
    if (target_.store != nullptr) {
      const std::size_t slash = target_.path.rfind('/');
      fn(*target_.store,
         slash == std::string::npos ? std::string() : target_.path.substr(0, slash));
      return;
    }
    const fs::path& directory = target_.directory;
    const fs::path parent = directory.has_parent_path() ? directory.parent_path() : fs::path(".");
    std::error_code error;
    if (fs::is_directory(parent, error)) {
      fn(*DirectoryStore::Open(parent, {.create = false}), std::string());
    }
  }

  // Writes the consolidated metadata of the group at `group` in `store`, the array now
  // being in it, when asked to or when the group has some already (it would hide the
  // array from readers that trust it).
  // A parent whose metadata is not Zarr's (a stray zarr.json) is no group to update,
  // unless consolidation was asked for (IsZarrGroup's FormatError then says why not).
  void UpdateGroupMetadata(Store& store, const std::string& group) const {
    const bool in_group =
        target_.consolidated ? IsZarrGroup(store, group) : IsReadableZarrGroup(store, group);
    if (!in_group) return;
    if (target_.consolidated || HasConsolidatedMetadata(store, group)) {
      ConsolidateZarrGroup(store, group);
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

  // The marker of this run's partial output: its sources, target metadata and tasks.
  // Made once per run (fingerprinting the sources stats every stored chunk): the check
  // before the run and Prepare share it.
  const OwnerMarker& WantedMarker() const {
    if (wanted_) return *wanted_;
    OwnerMarker& wanted = wanted_.emplace();
    wanted.kind = "partial-output";
    wanted.run = NewRunId();
    wanted.source = FingerprintSources(sources_);
    wanted.target = HashText(metadata_.zarr_format == 3 ? ZarrJsonText(metadata_, attributes_)
                                                        : ZarrMetadataToJson(metadata_) +
                                                              ZarrAttributesToJson(attributes_));
    wanted.layout = layout_;
    return wanted;
  }

  // Resuming continues only the same work: the same sources, target and task layout.
  void CheckSameWork(const fs::path& partial, const OwnerMarker& found,
                     const OwnerMarker& wanted) const {
    std::string why;
    if (found.source != wanted.source) {
      why = "the source differs from the one the interrupted run read (" +
            std::to_string(found.source.keys) + " stored keys, " +
            std::to_string(found.source.bytes) + " bytes then; " +
            std::to_string(wanted.source.keys) + " keys, " + std::to_string(wanted.source.bytes) +
            " bytes now; sizes or modification times changed)";
    } else if (found.target != wanted.target) {
      why =
          "the target's metadata (shape, chunks, dtype, codec, fill value or attributes) "
          "differs from the interrupted run's";
    } else if (found.layout != wanted.layout) {
      why = "the plan's tasks differ from the interrupted run's (then: " + found.layout +
            "; now: " + wanted.layout + ")";
    }
    if (why.empty()) return;
    throw InvalidArgument("to_zarr: cannot resume into " + partial.string() + ": " + why +
                          "; rerun with the same source and options, or delete " +
                          partial.string() + " (or run without resume) to start over");
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

  ZarrTarget target_;
  std::vector<std::shared_ptr<const ZarrArray>> sources_;
  std::string layout_;
  mutable std::optional<OwnerMarker> wanted_;  // WantedMarker's, once made
  std::shared_ptr<DirectoryStore> store_;
};

}  // namespace

ResultOutput::ResultOutput(Shape shape, Shape chunks, DType dtype)
    : grid_(std::move(shape), std::move(chunks)), dtype_(dtype) {}

void ResultOutput::Prepare() {
  // Not charged to any task: the result is the caller's, not a task's working memory.
  ScopedMemoryAccount none(nullptr);
  result_ = NDArray(grid_.shape(), dtype_);
  const std::lock_guard lock(written_mutex_);
  written_.assign(static_cast<std::size_t>(grid_.num_blocks()), 0);
  new_blocks_.Clear();
}

void ResultOutput::NoteWritten(const Region& region) {
  const std::lock_guard lock(written_mutex_);
  ForEachTouchedBlock(grid_, region, [&](const Shape& block) {
    const Index linear = grid_.LinearIndex(block);
    char& written = written_[static_cast<std::size_t>(linear)];
    if (written == 0) new_blocks_.Add(linear);
    written = 1;
  });
}

std::vector<Index> ResultOutput::TakeWritten() { return new_blocks_.Take(); }

std::shared_ptr<const NDArray> ResultOutput::Held(Index block) const {
  return HeldRegion(block, BlockRegion(block));
}

void ResultOutput::Put(Index block, std::shared_ptr<const NDArray> values) {
  const Region region = grid_.BlockRegion(grid_.BlockIndex(block));
  if (values == nullptr || values->shape() != region.shape || values->dtype() != dtype_) {
    throw Error("internal error: a block put into compute()'s result has the wrong shape");
  }
  CopyBox(*values, region.start, result_, Shape(region.start.size(), 0), region);
  const std::lock_guard lock(written_mutex_);
  written_[static_cast<std::size_t>(block)] = 1;
}

std::shared_ptr<const NDArray> ResultOutput::HeldRegion(Index block, const Region& region) const {
  {
    const std::lock_guard lock(written_mutex_);
    if (block < 0 || block >= grid_.num_blocks() ||
        written_[static_cast<std::size_t>(block)] == 0) {
      return nullptr;
    }
  }
  ScopedMemoryAccount none(nullptr);  // a copy to send elsewhere, no task's
  return CopyRegionOf(result_, region);
}

Region ResultOutput::BlockRegion(Index block) const {
  return grid_.BlockRegion(grid_.BlockIndex(block));
}

void ResultOutput::Write(const Shape& block, NDArray data) {
  const Region region = grid_.BlockRegion(block);
  const auto copy = [&] {
    CopyBox(data, region.start, result_, Shape(region.start.size(), 0), region);
  };
  // The result's pages are the caller's, written first by the task: not the task's own
  // (noted as such where a block spans enough pages to matter; measuring costs two
  // system calls).
  if (RegionBytes(region, dtype_) >= kTouchedFreshBytes) {
    TouchAccountedMemory(copy);
  } else {
    copy();
  }
  NoteWritten(region);
}

void ResultOutput::WriteFrom(const Region& region, const StoredArray& source) {
  const Shape origin(region.start.size(), 0);
  if (RegionBytes(region, dtype_) >= kTouchedFreshBytes) {
    // The result's pages are the caller's (as in Write): fault the block's in first, on
    // their own, so that the source's scratch is measured as the task's.
    TouchAccountedMemory([&] { TouchRegionPages(result_, origin, region); });
  }
  source.ReadInto(region, result_, origin);
  NoteWritten(region);
}

std::shared_ptr<const NDArray> ResultOutput::Read(const Region& region) const {
  return CopyRegionOf(result_, region);
}

std::int64_t ResultOutput::ProjectRead(const Region& region) const {
  return RegionBytes(region, dtype_);
}

Index ResultOutput::BlocksTouched(const Region& region) const {
  return CountTouchedBlocks(grid_, region);
}

NDArray ResultOutput::TakeResult() { return std::move(result_); }

namespace {

// The format a target is written in: the one asked for, else its first stored source's,
// else v3.
int TargetFormat(const ZarrTarget& target,
                 const std::vector<std::shared_ptr<const ZarrArray>>& sources) {
  if (target.zarr_format) return *target.zarr_format;
  if (target.shards) return 3;
  return sources.empty() ? 3 : sources.front()->metadata().zarr_format;
}

FillValue DefaultFill(DType dtype, int zarr_format) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (dtype.kind() == DTypeKind::kFloat) return nan;
  if (dtype.is_complex()) return std::complex<double>(nan, nan);
  if (zarr_format == 2) return std::monostate{};
  if (dtype.kind() == DTypeKind::kBool) return false;
  if (dtype.kind() == DTypeKind::kUnsignedInt) return std::uint64_t{0};
  return std::int64_t{0};
}

ZarrMetadata TargetMetadata(Shape shape, Shape chunks, DType dtype, const ZarrTarget& target,
                            const std::vector<std::shared_ptr<const ZarrArray>>& sources) {
  const int format = TargetFormat(target, sources);
  if (format != 2 && format != 3) {
    throw InvalidArgument("to_zarr: zarr_format must be 2 or 3, got " + std::to_string(format));
  }
  if (target.float16 && dtype != float32) {
    throw InvalidArgument("to_zarr: float16 storage holds float32 arrays; this one is " +
                          std::string(dtype.name()) + " (astype(float32) first)");
  }
  ZarrMetadata metadata;
  if (format == 3) {
    std::optional<Shape> shards;
    Shape inner = std::move(chunks);
    if (target.shards) {
      // The shards as given: the blocks written (`chunks`) are the same grid, cut to the
      // array's extent where a shard is larger.
      shards = target.shards;
      inner = target.inner_chunks.empty() ? *shards : target.inner_chunks;
    }
    try {
      metadata = MakeV3Metadata(std::move(shape), std::move(inner), dtype, target.compressor,
                                std::move(shards), target.checksum, target.byte_order);
    } catch (const InvalidArgument& error) {
      throw InvalidArgument(std::string("to_zarr (Zarr v3): ") + error.what());
    }
  } else {
    if (target.shards || target.checksum) {
      throw InvalidArgument(std::string("to_zarr: ") +
                            (target.shards ? "sharding" : "the crc32c checksum") +
                            " is Zarr v3's; write zarr_format 3, or leave it out for v2");
    }
    metadata = PlainMetadata(std::move(shape), std::move(chunks), dtype);
    metadata.compressor = target.compressor;
    if (metadata.compressor) metadata.compressor->typesize = 0;  // v2: the dtype's size
    metadata.byte_order = target.byte_order;
  }
  metadata.float16_storage = target.float16;
  metadata.fill_value = target.fill_value ? *target.fill_value : DefaultFill(dtype, format);
  return metadata;
}

}  // namespace

std::shared_ptr<OpOutput> MakeZarrTargetOutput(
    Shape shape, Shape chunks, DType dtype, ZarrTarget target,
    std::vector<std::shared_ptr<const ZarrArray>> sources) {
  ZarrMetadata metadata =
      TargetMetadata(std::move(shape), std::move(chunks), dtype, target, sources);
  return std::make_shared<ZarrTargetOutput>(std::move(metadata), std::move(target),
                                            std::move(sources));
}

}  // namespace tessera::planner
