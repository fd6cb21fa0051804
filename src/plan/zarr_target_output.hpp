// The user's Zarr target (ZarrTarget) as an op output, in one of two forms:
//
//   - a directory (DirectoryTargetOutput, directory_target_output.cpp): the array is
//     written into OUT.tessera-partial/array and moved into place when complete;
//   - a key prefix of a store (StoreTargetOutput, store_target_output.cpp), such as an
//     object store's: nothing can be moved into place, so the array's documents are
//     written last, and a marker object beside them says the prefix is Tessera's own
//     unfinished output until then.
//
// Both refuse, before anything is written, a target that is (or holds, or lies inside) a
// source of the run, one that is not theirs to replace, and a resume of other work.
// Internal to src/plan.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "target_ownership.hpp"
#include "tessera/plan/plan_options.hpp"
#include "tessera/storage/store.hpp"
#include "zarr_output.hpp"

namespace tessera::planner {

// What the two forms share: the marker of the run's work (sources, target metadata,
// task layout) that resuming checks, and the parent group's metadata.
class ZarrTargetOutput : public ZarrOutput {
 public:
  ZarrTargetOutput(ZarrMetadata metadata, ZarrTarget target,
                   std::vector<std::shared_ptr<const ZarrArray>> sources);

  Tier tier() const override { return Tier::kTarget; }
  void SetWriterLayout(std::string layout) override;
  void Release() override {}
  void FollowRelease() override {}

 protected:
  // The marker of this run's partial output: its sources, target metadata and tasks.
  // Made once per run (fingerprinting the sources lists every stored chunk).
  const OwnerMarker& WantedMarker() const;
  // Refuses to resume into `partial` (named in the message) when `found`, its marker,
  // records other work than `wanted`.
  void CheckSameWork(const std::string& partial, const OwnerMarker& found,
                     const OwnerMarker& wanted) const;
  // Writes the consolidated metadata of the group at `group` of `store`, the array now in
  // it, when asked to or when the group has some already (it would hide the array from
  // readers that trust it). A parent that is no readable group is left alone, unless
  // consolidation was asked for (IsZarrGroup's FormatError then says why not).
  void UpdateGroupMetadata(Store& store, const std::string& group) const;

  ZarrTarget target_;
  std::vector<std::shared_ptr<const ZarrArray>> sources_;

 private:
  std::string layout_;
  mutable std::optional<OwnerMarker> wanted_;  // WantedMarker's, once made
};

// REQUIRES: target.store == nullptr (target.directory names the array's directory).
std::shared_ptr<OpOutput> MakeDirectoryTargetOutput(
    ZarrMetadata metadata, ZarrTarget target,
    std::vector<std::shared_ptr<const ZarrArray>> sources);
// REQUIRES: target.store != nullptr (the array goes at target.path in it).
// Throws InvalidArgument when the target is, holds or lies inside one of `sources` or
// an object store `work_dir`.
std::shared_ptr<OpOutput> MakeStoreTargetOutput(
    ZarrMetadata metadata, ZarrTarget target, std::vector<std::shared_ptr<const ZarrArray>> sources,
    const std::string& work_dir);

}  // namespace tessera::planner
