// Sources as StoredArrays: Zarr arrays and arrays held in memory (op_output.hpp).
#include <utility>

#include "op_output.hpp"
#include "region_copy.hpp"
#include "zarr_output.hpp"

namespace tessera::planner {
namespace {

class ZarrStoredArray : public StoredArray {
 public:
  explicit ZarrStoredArray(std::shared_ptr<const ZarrArray> array)
      : array_(std::move(array)), largest_chunk_(array_->CountStoredChunks().largest) {}

  std::shared_ptr<const NDArray> Read(const Region& region) const override {
    return ReadZarrRegion(*array_, region);
  }
  std::int64_t ProjectRead(const Region& region) const override {
    return ProjectZarrRead(*array_, region, largest_chunk_);
  }
  Index BlocksTouched(const Region& region) const override {
    return CountTouchedBlocks(array_->grid(), region);
  }

 private:
  std::shared_ptr<const ZarrArray> array_;
  std::int64_t largest_chunk_;
};

// Reads regions of an array held whole in memory by copying them out.
class InMemoryStoredArray : public StoredArray {
 public:
  InMemoryStoredArray(std::shared_ptr<const NDArray> data, Shape chunks)
      : data_(std::move(data)), grid_(data_->shape(), std::move(chunks)) {}

  std::shared_ptr<const NDArray> Read(const Region& region) const override {
    return CopyRegionOf(*data_, region);
  }
  std::int64_t ProjectRead(const Region& region) const override {
    return RegionBytes(region, data_->dtype());
  }
  Index BlocksTouched(const Region& region) const override {
    return CountTouchedBlocks(grid_, region);
  }

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
