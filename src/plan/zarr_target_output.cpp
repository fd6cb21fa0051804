#include "zarr_target_output.hpp"

#include <utility>

#include "tessera/core/errors.hpp"
#include "tessera/storage/zarr_group.hpp"

namespace tessera::planner {

ZarrTargetOutput::ZarrTargetOutput(ZarrMetadata metadata, ZarrTarget target,
                                   std::vector<std::shared_ptr<const ZarrArray>> sources)
    : ZarrOutput(std::move(metadata),
                 ZarrAttributes{target.dimension_names, target.attributes_json}),
      target_(std::move(target)),
      sources_(std::move(sources)) {
  ZarrAttributesToJson(attributes_);  // InvalidArgument now, not after the work
}

void ZarrTargetOutput::SetWriterLayout(std::string layout) {
  layout_ = std::move(layout);
  wanted_.reset();  // the marker records the layout
}

const OwnerMarker& ZarrTargetOutput::WantedMarker() const {
  if (wanted_) return *wanted_;
  OwnerMarker& wanted = wanted_.emplace();
  wanted.kind = "partial-output";
  wanted.run = NewRunId();
  wanted.source = FingerprintSources(sources_);
  wanted.target = HashText(metadata_.zarr_format == 3
                               ? ZarrJsonText(metadata_, attributes_)
                               : ZarrMetadataToJson(metadata_) + ZarrAttributesToJson(attributes_));
  wanted.layout = layout_;
  return wanted;
}

void ZarrTargetOutput::CheckSameWork(const std::string& partial, const OwnerMarker& found,
                                     const OwnerMarker& wanted) const {
  std::string why;
  if (found.source != wanted.source) {
    why = "the source differs from the one the interrupted run read (" +
          std::to_string(found.source.keys) + " stored keys, " +
          std::to_string(found.source.bytes) + " bytes then; " +
          std::to_string(wanted.source.keys) + " keys, " + std::to_string(wanted.source.bytes) +
          " bytes now: keys, sizes or, in a local directory, modification times changed)";
  } else if (found.target != wanted.target) {
    why =
        "the target's metadata (shape, chunks, dtype, codec, fill value or attributes) "
        "differs from the interrupted run's";
  } else if (found.layout != wanted.layout) {
    why = "the plan's tasks differ from the interrupted run's (then: " + found.layout +
          "; now: " + wanted.layout + ")";
  }
  if (why.empty()) return;
  throw InvalidArgument("to_zarr: cannot resume into " + partial + ": " + why +
                        "; rerun with the same source and options, or delete " + partial +
                        " (or run without resume) to start over");
}

void ZarrTargetOutput::UpdateGroupMetadata(Store& store, const std::string& group) const {
  const bool in_group =
      target_.consolidated ? IsZarrGroup(store, group) : IsReadableZarrGroup(store, group);
  if (!in_group) return;
  if (target_.consolidated || HasConsolidatedMetadata(store, group)) {
    ConsolidateZarrGroup(store, group);
  }
}

}  // namespace tessera::planner
