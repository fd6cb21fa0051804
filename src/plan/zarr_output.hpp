// The Zarr side of op outputs: reading regions of Zarr arrays with the memory it takes,
// and ZarrOutput, the OpOutput written as a Zarr array (the disk tier and the user's
// target derive from it). Internal to src/plan.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "op_output.hpp"
#include "tessera/storage/zarr_array.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera::planner {

// Reads `region` of a Zarr array on this thread: the block itself when the region is one.
std::shared_ptr<const NDArray> ReadZarrRegion(const ZarrArray& array, const Region& region);

// What ReadZarrRegion holds: the region and the reader's buffers for chunks stored in
// at most `largest_chunk` bytes.
std::int64_t ProjectZarrRead(const ZarrArray& array, const Region& region,
                             std::int64_t largest_chunk);

// Metadata of an uncompressed C-order array of `dtype` (fill_value 0).
ZarrMetadata PlainMetadata(Shape shape, Shape chunks, DType dtype);

// An output written as a Zarr array: the disk tier and the user's target.
class ZarrOutput : public OpOutput {
 public:
  ZarrOutput(ZarrMetadata metadata, ZarrAttributes attributes);

  bool Has(const Shape& block) const override;
  void Write(const Shape& block, NDArray data) override;
  std::int64_t ProjectWrite(const Shape& block) const override;
  bool KeepsBlock(const Shape&) const override { return false; }
  std::shared_ptr<const NDArray> Read(const Region& region) const override;
  std::int64_t ProjectRead(const Region& region) const override;
  Index BlocksTouched(const Region& region) const override;
  Shape InnerChunks() const override {
    return metadata_.sharded() ? metadata_.read_chunks() : Shape{};
  }
  // Write of `block` with the values `whole` (an array of this output's shape and dtype
  // held in memory) has over its region, encoded straight from `whole`: no block of its
  // own. Holds ProjectWriteFrom(block, whole).
  void WriteFrom(const Shape& block, const NDArray& whole);
  std::int64_t ProjectWriteFrom(const Shape& block, const NDArray& whole) const;

 protected:
  // Opens the array at `path` of `store` when `keep_existing` and its metadata is this
  // one; creates it (clearing old chunks) otherwise.
  void OpenOrCreate(std::shared_ptr<Store> store, const std::string& path, bool keep_existing);

  ZarrMetadata metadata_;
  ZarrAttributes attributes_;
  std::shared_ptr<const ZarrArray> shadow_;
  // The largest chunk this output writes (what its reads hold at most); a resumed
  // target's chunks came from the same writer.
  std::int64_t largest_written_;
  bool holds_values_ = false;  // the target store keeps values in memory
  std::shared_ptr<const ZarrArray> array_;
};

}  // namespace tessera::planner
