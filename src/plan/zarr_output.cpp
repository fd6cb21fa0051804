#include "zarr_output.hpp"

#include <utility>

#include "region_copy.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/memory_store.hpp"

namespace tessera::planner {
namespace {

// An array shaped like `metadata` in a throwaway in-memory store: answers projection
// questions about an array not created yet.
std::shared_ptr<const ZarrArray> ShadowArray(const ZarrMetadata& metadata) {
  return std::make_shared<const ZarrArray>(
      ZarrArray::Create(std::make_shared<MemoryStore>(), "", metadata));
}

}  // namespace

std::shared_ptr<const NDArray> ReadZarrRegion(const ZarrArray& array, const Region& region) {
  if (const std::optional<Shape> block = ExactBlock(array.grid(), region)) {
    return std::make_shared<const NDArray>(array.ReadBlock(*block));
  }
  return std::make_shared<const NDArray>(array.ReadRegion(region, /*max_threads=*/1));
}

std::int64_t ProjectZarrRead(const ZarrArray& array, const Region& region,
                             std::int64_t largest_chunk) {
  return RegionBytes(region, array.metadata().dtype) +
         array.ReadRegionScratchBytes(region, largest_chunk);
}

ZarrMetadata PlainMetadata(Shape shape, Shape chunks, DType dtype) {
  ZarrMetadata metadata;
  metadata.shape = std::move(shape);
  metadata.chunks = std::move(chunks);
  metadata.dtype = dtype;
  metadata.compressor = std::nullopt;
  return metadata;
}

ZarrOutput::ZarrOutput(ZarrMetadata metadata, ZarrAttributes attributes)
    : metadata_(std::move(metadata)),
      attributes_(std::move(attributes)),
      shadow_(ShadowArray(metadata_)),
      largest_written_(shadow_->MaxEncodedChunkBytes()) {}

bool ZarrOutput::Has(const Shape& block) const {
  return array_ != nullptr && array_->StoredChunkSize(block).has_value();
}

void ZarrOutput::Write(const Shape& block, NDArray data) { array_->WriteBlock(block, data); }

std::int64_t ZarrOutput::ProjectWrite(const Shape& block) const {
  // A store holding values in memory keeps a copy of the encoded chunk.
  return shadow_->WriteBlockScratchBytes(block) + (holds_values_ ? largest_written_ : 0);
}

void ZarrOutput::WriteFrom(const Shape& block, const NDArray& whole) {
  const Region region = array_->grid().BlockRegion(block);
  const BytePlace place = PlaceIn(whole, Shape(region.start.size(), 0), region.start);
  array_->WriteBlockStrided(block, whole.bytes().data() + place.offset, place.strides);
}

std::int64_t ZarrOutput::ProjectWriteFrom(const Shape& block, const NDArray& whole) const {
  const Region region = shadow_->grid().BlockRegion(block);
  // As WriteBlockStrided decides: the block's own C-order strides are the whole's.
  const bool contiguous = CStrides(region.shape) == CStrides(whole.shape());
  return shadow_->WriteBlockScratchBytes(block, contiguous) +
         (holds_values_ ? largest_written_ : 0);
}

std::shared_ptr<const NDArray> ZarrOutput::Read(const Region& region) const {
  return ReadZarrRegion(*array_, region);
}

std::int64_t ZarrOutput::ProjectRead(const Region& region) const {
  return ProjectZarrRead(*shadow_, region, largest_written_);
}

Index ZarrOutput::BlocksTouched(const Region& region) const {
  return CountTouchedBlocks(shadow_->grid(), region);
}

void ZarrOutput::OpenOrCreate(std::shared_ptr<Store> store, const std::string& path,
                              bool keep_existing) {
  if (keep_existing &&
      (store->Contains(JoinKey(path, ".zarray")) || store->Contains(JoinKey(path, "zarr.json")))) {
    try {
      auto existing = std::make_shared<const ZarrArray>(ZarrArray::Open(store, path));
      if (existing->metadata() == metadata_) {
        array_ = std::move(existing);
        return;
      }
    } catch (const Error&) {
      // An unreadable leftover is replaced below.
    }
  }
  array_ = std::make_shared<const ZarrArray>(
      ZarrArray::Create(std::move(store), path, metadata_, attributes_));
}

}  // namespace tessera::planner
