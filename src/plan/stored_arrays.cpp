// Sources as StoredArrays: Zarr arrays and arrays held in memory (op_output.hpp).
#include <map>
#include <mutex>
#include <utility>

#include "op_output.hpp"
#include "region_copy.hpp"
#include "tessera/core/errors.hpp"
#include "zarr_output.hpp"

namespace tessera::planner {

void StoredArray::ReadInto(const Region&, NDArray&, const Shape&) const {
  throw Error("internal error: this stored array is read by blocks (ReadsInto is false)");
}

namespace {

class ZarrStoredArray : public StoredArray {
 public:
  explicit ZarrStoredArray(std::shared_ptr<const ZarrArray> array)
      : array_(std::move(array)), largest_chunk_(array_->CountStoredChunks().largest) {}

  std::shared_ptr<const NDArray> Read(const Region& region) const override {
    return ReadZarrRegion(*array_, region);
  }
  std::int64_t ProjectRead(const Region& region) const override {
    return RegionBytes(region, array_->metadata().dtype) + Scratch(region, /*out_dense=*/true);
  }
  Index BlocksTouched(const Region& region) const override {
    return CountTouchedBlocks(array_->grid(), region);
  }
  bool ReadsInto() const override { return true; }
  void ReadInto(const Region& region, NDArray& target, const Shape& target_start) const override {
    const BytePlace place = PlaceIn(target, target_start, region.start);
    array_->ReadRegionInto(region, target.mutable_bytes().data() + place.offset, place.strides);
  }
  Shape ReadIntoChunks() const override { return array_->grid().chunks(); }
  std::int64_t ProjectReadInto(const Region& region) const override {
    // As for a target laid out otherwise than the region (the result of compute()).
    return Scratch(region, /*out_dense=*/false);
  }

 private:
  // ReadRegionScratchBytes, remembered: planning asks for the same regions at every
  // budget it tries (the reader is shared by all of them: plan_context.hpp), and a
  // sharded array's figure walks its inner chunks. Forgotten past kRemembered regions.
  static constexpr std::size_t kRemembered = 4096;
  std::int64_t Scratch(const Region& region, bool out_dense) const {
    Shape key = region.start;
    key.insert(key.end(), region.shape.begin(), region.shape.end());
    key.push_back(out_dense ? 1 : 0);
    {
      const std::lock_guard lock(mutex_);
      if (const auto found = scratch_.find(key); found != scratch_.end()) return found->second;
    }
    const std::int64_t bytes = array_->ReadRegionScratchBytes(region, largest_chunk_, out_dense);
    const std::lock_guard lock(mutex_);
    if (scratch_.size() >= kRemembered) scratch_.clear();
    scratch_.emplace(std::move(key), bytes);
    return bytes;
  }

  std::shared_ptr<const ZarrArray> array_;
  std::int64_t largest_chunk_;
  mutable std::mutex mutex_;
  mutable std::map<Shape, std::int64_t> scratch_;
};

// Reads regions of an array held whole in memory: a region that is one run of its
// memory (rows of a C-order array: the blocks of a row-chunked numpy array) is handed out
// as a read-only view of it, costing nothing; any other region is copied out.
class InMemoryStoredArray : public StoredArray {
 public:
  InMemoryStoredArray(std::shared_ptr<const NDArray> data, Shape chunks)
      : data_(std::move(data)), grid_(data_->shape(), std::move(chunks)) {}

  std::shared_ptr<const NDArray> Read(const Region& region) const override {
    if (ShapeSize(region.shape) == 0 || !IsOneRun(data_->shape(), region)) {
      return CopyRegionOf(*data_, region);
    }
    const BytePlace place = PlaceIn(*data_, Shape(region.start.size(), 0), region.start);
    return std::make_shared<const NDArray>(
        NDArray::Borrow(region.shape, data_->dtype(), data_->bytes().data() + place.offset, data_));
  }
  // A view is projected as the copy it replaces (as an in-memory intermediate's shared
  // block is): the plan and its budget stay those of a copied read, and the view only
  // measures less. (Projecting it as nothing would expose the rounding of tiny blocks
  // that ops do not project.)
  std::int64_t ProjectRead(const Region& region) const override {
    return RegionBytes(region, data_->dtype());
  }
  Index BlocksTouched(const Region& region) const override {
    return CountTouchedBlocks(grid_, region);
  }
  const NDArray* HeldWhole() const override { return data_.get(); }

 private:
  std::shared_ptr<const NDArray> data_;
  ChunkGrid grid_;
};

}  // namespace

std::shared_ptr<StoredArray> MakeZarrStoredArray(std::shared_ptr<const ZarrArray> array) {
  return std::make_shared<ZarrStoredArray>(std::move(array));
}

std::shared_ptr<StoredArray> MakeInMemoryStoredArray(std::shared_ptr<const NDArray> data,
                                                     Shape chunks) {
  return std::make_shared<InMemoryStoredArray>(std::move(data), std::move(chunks));
}

}  // namespace tessera::planner
