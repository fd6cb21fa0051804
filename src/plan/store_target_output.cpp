// The user's Zarr target at a key prefix of a store (zarr_target_output.hpp), such as an
// object store's "s3://bucket/out.zarr". A store cannot move a finished array into place,
// so the array never reads as complete before it is:
//   1. Prepare writes the marker PATH/.tessera-partial (the run's work, as the marker of a
//      directory's partial output records it, of kind "clearing-output"), then removes
//      the documents of an array already there (it stops reading as an array), then that
//      array's chunks, and then marks the prefix "partial-output": from then on every
//      chunk under it is this work's, and only such a prefix is resumed;
//   2. the tasks write the chunks;
//   3. Commit checks that the marker is still this run's (two runs writing one target at
//      once are not supported; the one whose marker was replaced fails rather than
//      publishing another's chunks), writes the array's documents (ZarrArray::Publish),
//      then removes the marker.
// A run that fails or is killed leaves chunks and the marker but no documents: no reader
// sees an array there, and the next run replaces it, or continues it with resume.
#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "tessera/core/errors.hpp"
#include "tessera/plan/target_files.hpp"
#include "tessera/storage/open_store.hpp"
#include "tessera/storage/zarr_group.hpp"
#include "zarr_target_output.hpp"

namespace tessera::planner {
namespace {

// The marker's kind while an earlier array's chunks may still be under the prefix.
constexpr const char* kClearingKind = "clearing-output";

// "bucket/prefix/" of a store's Location() and a key path in it, '/'-terminated, so that
// comparing prefixes compares whole segments ("a.zarr/" is not a prefix of "a.zarr2/").
// A local directory's location has its symbolic links resolved first.
std::string KeyPrefix(const std::string& location, const std::string& path) {
  std::string prefix = location;
  if (!prefix.empty() && !IsObjectStoreLocation(prefix)) {
    std::error_code error;
    const std::filesystem::path resolved = std::filesystem::weakly_canonical(prefix, error);
    if (!error) prefix = resolved.string();
  }
  if (!path.empty()) prefix += "/" + path;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  return prefix + "/";
}

// Up to about 200 characters of `names`, comma-separated: enough to recognise them.
std::string SomeNames(const std::vector<std::string>& names) {
  std::string listed;
  for (const std::string& name : names) {
    if (listed.size() > 200) return listed + ", ...";
    listed += (listed.empty() ? "" : ", ") + name;
  }
  return listed;
}

// Does the array at `path` of `store` share keys with `source`: the same array, one
// inside the other? Stores are told apart by their Location() (another process opens
// the same one from it), or, without one, by identity.
bool SharesKeys(const Store& store, const std::string& path, const ZarrArray& source) {
  const Store& other = *source.store();
  const std::optional<std::string> here = store.Location();
  const std::optional<std::string> there = other.Location();
  std::string target_prefix;
  std::string source_prefix;
  if (here && there) {
    target_prefix = KeyPrefix(*here, path);
    source_prefix = KeyPrefix(*there, source.path());
  } else if (&store == &other) {
    target_prefix = KeyPrefix("", path);
    source_prefix = KeyPrefix("", source.path());
  } else {
    return false;
  }
  return target_prefix.starts_with(source_prefix) || source_prefix.starts_with(target_prefix);
}

class StoreTargetOutput final : public ZarrTargetOutput {
 public:
  StoreTargetOutput(ZarrMetadata metadata, ZarrTarget target,
                    std::vector<std::shared_ptr<const ZarrArray>> sources,
                    const std::string& work_dir)
      : ZarrTargetOutput(std::move(metadata), std::move(target), std::move(sources)) {
    holds_values_ = target_.store->HoldsValuesInMemory();
    // Intermediates under the target's prefix would be taken for foreign objects there.
    const std::optional<std::string> location = target_.store->Location();
    if (location && IsObjectStoreLocation(work_dir)) {
      const std::string out = KeyPrefix(*location, target_.path);
      const std::string work = KeyPrefix(work_dir, "");
      if (out.starts_with(work) || work.starts_with(out)) {
        throw InvalidArgument("to_zarr: work_dir " + work_dir + " and the target " + Name() +
                              " overlap; put the work_dir beside the output (e.g. "
                              "s3://BUCKET/scratch), never inside it or above it");
      }
    }
    for (const std::shared_ptr<const ZarrArray>& source : sources_) {
      if (!SharesKeys(*target_.store, target_.path, *source)) continue;
      throw InvalidArgument("to_zarr: the target " + Name() + " is, holds or lies inside " +
                            source->store()->DescribeKey(source->path()) +
                            ", a source of this run; writing there would remove the values "
                            "the run reads: choose another output path");
    }
  }

  // What is at the target's prefix is checked again just before the run (planning ran
  // none of it: a plan is made many times over while sizing the budget).
  void CheckBeforeRun() const override {
    const StoreTargetContents contents = CheckStoreTarget(*target_.store, target_.path, target_);
    if (const std::optional<OwnerMarker> resumed = Resumable(contents)) {
      CheckSameWork(Name(), *resumed, WantedMarker());
    }
  }

  void Prepare() override {
    if (target_.consolidated) {
      ParentGroup([](Store& store, const std::string& group) { IsZarrGroup(store, group); });
    }
    Store& store = *target_.store;
    const StoreTargetContents contents = CheckStoreTarget(store, target_.path, target_);
    const std::optional<OwnerMarker> resumed = Resumable(contents);
    if (resumed) CheckSameWork(Name(), *resumed, WantedMarker());
    auto array = std::make_shared<const ZarrArray>(
        ZarrArray::Define(target_.store, target_.path, metadata_, attributes_));
    if (!resumed) {
      OwnerMarker clearing = WantedMarker();
      clearing.kind = kClearingKind;
      store.Set(MarkerKey(), OwnerMarkerText(clearing));
      array->Clear();  // the documents first: an array there stops reading as one
    }
    // The same work's marker, now naming this run (the one Commit expects to find).
    store.Set(MarkerKey(), OwnerMarkerText(WantedMarker()));
    array_ = std::move(array);
  }

  void Commit() override {
    if (target_.store->GetText(MarkerKey()) != OwnerMarkerText(WantedMarker())) {
      throw StorageError("to_zarr: " + Name() + "/" + kStorePartialMarkerName +
                         " is no longer this run's marker: another run is writing the same "
                         "target; its documents are not written (run one writer at a time)");
    }
    array_->Publish();
    target_.store->Erase(MarkerKey());
    ParentGroup(
        [this](Store& store, const std::string& group) { UpdateGroupMetadata(store, group); });
  }

  // Another process (an MPI rank, a Dask or Ray worker) writes into the array the
  // leader's Prepare made ready.
  void FollowPrepare() override {
    if (holds_values_) {
      throw InvalidArgument(
          "to_zarr: a store held in one process's memory cannot be written by the ranks "
          "of an MPI run; write to a directory all ranks reach");
    }
    array_ = std::make_shared<const ZarrArray>(
        ZarrArray::Define(target_.store, target_.path, metadata_, attributes_));
  }
  void FollowCommit() override {}

 private:
  std::string Name() const { return target_.store->DescribeKey(target_.path); }
  std::string MarkerKey() const { return JoinKey(target_.path, kStorePartialMarkerName); }

  // With resume, the marker of a partial output whose chunks are all its work's (not one
  // a run left while clearing the prefix: that one starts over).
  std::optional<OwnerMarker> Resumable(const StoreTargetContents& contents) const {
    if (!target_.resume || contents.holds != StoreTargetContents::kPartialOutput) {
      return std::nullopt;
    }
    return ParseOwnerMarker(contents.marker, "partial-output");
  }

  // Calls fn(store, group) for the group OUT would be a member of: OUT's parent key.
  template <class Fn>
  void ParentGroup(Fn&& fn) const {
    const std::size_t slash = target_.path.rfind('/');
    fn(*target_.store, slash == std::string::npos ? std::string() : target_.path.substr(0, slash));
  }
};

}  // namespace
}  // namespace tessera::planner

namespace tessera {

StoreTargetContents CheckStoreTarget(const Store& store, const std::string& path,
                                     const ZarrWriteOptions& options) {
  const std::string name = store.DescribeKey(path);
  StoreTargetContents contents;
  const std::vector<std::string> names = store.ListFolder(path);
  if (names.empty()) return contents;
  const auto has = [&names](std::string_view wanted) {
    return std::ranges::find(names, wanted) != names.end();
  };
  if (IsReadableZarrGroup(store, path)) {
    const std::string listed = planner::SomeNames(ListZarrGroup(store, path).arrays);
    throw InvalidArgument("to_zarr: " + name + " is a Zarr group" +
                          (listed.empty() ? "" : " (arrays: " + listed + ")") +
                          "; to_zarr writes an array and never replaces a group: write to a "
                          "path inside it (" +
                          name + "/NAME) or remove the group first");
  }
  if (has("zarr.json") || has(".zarray")) {
    if (!options.overwrite) {
      throw InvalidArgument("to_zarr: " + name +
                            " already exists; remove it or allow overwriting (--overwrite, "
                            "overwrite=True)");
    }
    contents.holds = StoreTargetContents::kArray;
    return contents;
  }
  if (has(kStorePartialMarkerName)) {
    contents.marker = store.GetText(JoinKey(path, kStorePartialMarkerName)).value_or("");
    if (planner::ParseOwnerMarker(contents.marker, "partial-output") ||
        planner::ParseOwnerMarker(contents.marker, planner::kClearingKind)) {
      contents.holds = StoreTargetContents::kPartialOutput;
      return contents;
    }
  }
  throw InvalidArgument("to_zarr: " + name + " holds objects that are not a Zarr array (" +
                        planner::SomeNames(names) +
                        "); refusing to replace them: choose another path or remove them");
}

}  // namespace tessera

namespace tessera::planner {

std::shared_ptr<OpOutput> MakeStoreTargetOutput(
    ZarrMetadata metadata, ZarrTarget target, std::vector<std::shared_ptr<const ZarrArray>> sources,
    const std::string& work_dir) {
  return std::make_shared<StoreTargetOutput>(std::move(metadata), std::move(target),
                                             std::move(sources), work_dir);
}

}  // namespace tessera::planner
