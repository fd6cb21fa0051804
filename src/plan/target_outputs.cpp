// What a plan produces: the in-memory result of compute(), and the user's Zarr target's
// metadata (its output: zarr_target_output.hpp) (op_output.hpp).
#include <complex>
#include <limits>
#include <utility>

#include "op_output.hpp"
#include "region_copy.hpp"
#include "tessera/core/buffer.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/memory_account.hpp"
#include "tessera/core/touched_blocks.hpp"
#include "zarr_target_output.hpp"

namespace tessera::planner {

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
    std::vector<std::shared_ptr<const ZarrArray>> sources, const std::string& work_dir) {
  ZarrMetadata metadata =
      TargetMetadata(std::move(shape), std::move(chunks), dtype, target, sources);
  if (target.store != nullptr) {
    return MakeStoreTargetOutput(std::move(metadata), std::move(target), std::move(sources),
                                 work_dir);
  }
  return MakeDirectoryTargetOutput(std::move(metadata), std::move(target), std::move(sources));
}

}  // namespace tessera::planner
