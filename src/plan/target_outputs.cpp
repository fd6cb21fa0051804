// What a plan produces: the in-memory result of compute() and the user's Zarr target
// (op_output.hpp).
#include <limits>
#include <utility>

#include "op_output.hpp"
#include "region_copy.hpp"
#include "tessera/core/buffer.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/memory_account.hpp"
#include "tessera/storage/directory_store.hpp"
#include "zarr_output.hpp"

namespace tessera {
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
                       std::filesystem::exists(directory / ".zgroup", error);
  if (!is_zarr && !std::filesystem::is_empty(directory, error)) {
    throw InvalidArgument("to_zarr: " + directory.string() +
                          " exists and is not a Zarr array or group; refusing to replace it "
                          "(choose another path or remove it)");
  }
}

class ZarrTargetOutput : public ZarrOutput {
 public:
  ZarrTargetOutput(ZarrMetadata metadata, ZarrTarget target)
      : ZarrOutput(std::move(metadata),
                   ZarrAttributes{target.dimension_names, target.attributes_json}),
        target_(std::move(target)) {
    holds_values_ = target_.store != nullptr && target_.store->HoldsValuesInMemory();
    ZarrAttributesToJson(attributes_);  // InvalidArgument now, not after the work
    if (target_.store == nullptr) CheckReplaceable(target_.directory, target_.overwrite);
  }

  Tier tier() const override { return Tier::kTarget; }
  void Prepare() override {
    if (target_.store != nullptr) {
      OpenOrCreate(target_.store, target_.path, target_.resume);
      return;
    }
    CheckReplaceable(target_.directory, target_.overwrite);
    OpenOrCreate(DirectoryStore::Open(Partial()), "", target_.resume);
  }
  void Commit() override {
    if (target_.store != nullptr) return;
    // Move the finished array into place; an older array there goes only once the new
    // one is complete.
    const std::filesystem::path& directory = target_.directory;
    std::filesystem::path old;
    if (std::filesystem::exists(directory)) {
      old = directory;
      old += ".old";
      std::filesystem::remove_all(old);
      std::filesystem::rename(directory, old);
    }
    std::filesystem::rename(Partial(), directory);
    if (!old.empty()) std::filesystem::remove_all(old);
    array_ = std::make_shared<const ZarrArray>(ZarrArray::Open(DirectoryStore::Open(directory)));
  }
  void Release() override {}

 private:
  std::filesystem::path Partial() const {
    std::filesystem::path partial = target_.directory;
    partial += ".partial";
    return partial;
  }

  ZarrTarget target_;
};

}  // namespace

ResultOutput::ResultOutput(Shape shape, Shape chunks, DType dtype)
    : grid_(std::move(shape), std::move(chunks)), dtype_(dtype) {}

void ResultOutput::Prepare() {
  // Not charged to any task: the result is the caller's, not a task's working memory.
  ScopedMemoryAccount none(nullptr);
  result_ = NDArray(grid_.shape(), dtype_);
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

std::shared_ptr<OpOutput> MakeZarrTargetOutput(Shape shape, Shape chunks, DType dtype,
                                               ZarrTarget target) {
  ZarrMetadata metadata = PlainMetadata(std::move(shape), std::move(chunks), dtype);
  metadata.compressor = target.compressor;
  metadata.byte_order = target.byte_order;
  if (target.fill_value) {
    metadata.fill_value = *target.fill_value;
  } else if (dtype.kind() == DTypeKind::kFloat) {
    metadata.fill_value = std::numeric_limits<double>::quiet_NaN();
  } else {
    metadata.fill_value = std::monostate{};
  }
  return std::make_shared<ZarrTargetOutput>(std::move(metadata), std::move(target));
}

}  // namespace tessera
