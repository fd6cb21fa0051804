#include "op_output.hpp"

#include <limits>
#include <utility>

#include "region_copy.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/memory_account.hpp"
#include "tessera/storage/directory_store.hpp"
#include "tessera/storage/memory_store.hpp"

namespace tessera {
namespace {

Index RegionBytes(const Region& region, DType dtype) {
  return ShapeSize(region.shape) * dtype.itemsize();
}

// A copy of `region` of an array held whole.
std::shared_ptr<const NDArray> CopyRegionOf(const NDArray& whole, const Region& region) {
  auto out = std::make_shared<NDArray>(region.shape, whole.dtype());
  CopyBox(whole, Shape(region.start.size(), 0), *out, region.start, region);
  return out;
}

// The block of `grid` whose region is exactly `region`, if there is one.
std::optional<Shape> ExactBlock(const ChunkGrid& grid, const Region& region) {
  Shape block(region.start.size());
  for (std::size_t d = 0; d < block.size(); ++d) {
    if (region.start[d] % grid.chunks()[d] != 0) return std::nullopt;
    block[d] = region.start[d] / grid.chunks()[d];
    if (block[d] >= grid.grid_shape()[d]) return std::nullopt;
  }
  if (grid.BlockRegion(block) != region) return std::nullopt;
  return block;
}

// Reads `region` of a Zarr array on this thread: the block itself when the region is one.
std::shared_ptr<const NDArray> ReadZarrRegion(const ZarrArray& array, const Region& region) {
  if (const std::optional<Shape> block = ExactBlock(array.grid(), region)) {
    return std::make_shared<const NDArray>(array.ReadBlock(*block));
  }
  return std::make_shared<const NDArray>(array.ReadRegion(region, /*max_threads=*/1));
}

// What ReadZarrRegion holds: the region and the reader's buffers for chunks stored in
// at most `largest_chunk` bytes.
std::int64_t ProjectZarrRead(const ZarrArray& array, const Region& region,
                             std::int64_t largest_chunk) {
  return RegionBytes(region, array.metadata().dtype) +
         array.ReadRegionScratchBytes(region, largest_chunk);
}

// An array shaped like `metadata` in a throwaway in-memory store: answers projection
// questions about an array not created yet.
std::shared_ptr<const ZarrArray> ShadowArray(const ZarrMetadata& metadata) {
  return std::make_shared<const ZarrArray>(
      ZarrArray::Create(std::make_shared<MemoryStore>(), "", metadata));
}

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

class MemoryTierOutput : public OpOutput {
 public:
  MemoryTierOutput(Shape shape, Shape chunks, DType dtype)
      : grid_(std::move(shape), std::move(chunks)), dtype_(dtype) {}

  Tier tier() const override { return Tier::kMemory; }
  void Prepare() override {
    std::lock_guard lock(mutex_);
    blocks_.assign(static_cast<std::size_t>(grid_.num_blocks()), nullptr);
  }
  bool Has(const Shape&) const override { return false; }
  void Write(const Shape& block, NDArray data) override {
    auto stored = std::make_shared<const NDArray>(std::move(data));
    std::lock_guard lock(mutex_);
    blocks_[static_cast<std::size_t>(grid_.LinearIndex(block))] = std::move(stored);
  }
  std::int64_t ProjectWrite(const Shape&) const override { return 0; }
  bool KeepsBlock(const Shape&) const override { return true; }
  void Commit() override {}
  void Release() override {
    std::lock_guard lock(mutex_);
    blocks_.clear();
    blocks_.shrink_to_fit();
  }

  std::shared_ptr<const NDArray> Read(const Region& region) const override {
    if (const std::optional<Shape> block = ExactBlock(grid_, region)) return Block(*block);
    auto out = std::make_shared<NDArray>(region.shape, dtype_);
    ForEachTouchedBlock(grid_, region, [&](const Shape& block) {
      const Region block_region = grid_.BlockRegion(block);
      CopyBox(*Block(block), block_region.start, *out, region.start,
              Intersect(block_region, region));
    });
    return out;
  }
  std::int64_t ProjectRead(const Region& region) const override {
    // A whole block is shared, not copied; projected as held all the same (it is).
    return RegionBytes(region, dtype_);
  }
  Index BlocksTouched(const Region& region) const override {
    return CountTouchedBlocks(grid_, region);
  }
  bool SharesRead(const Region& region) const override {
    return ExactBlock(grid_, region).has_value();
  }

 private:
  std::shared_ptr<const NDArray> Block(const Shape& block) const {
    std::lock_guard lock(mutex_);
    const auto linear = static_cast<std::size_t>(grid_.LinearIndex(block));
    if (linear >= blocks_.size() || blocks_[linear] == nullptr) {
      throw Error("internal error: block " + ShapeToString(block) +
                  " of an in-memory intermediate was read before it was written");
    }
    return blocks_[linear];
  }

  ChunkGrid grid_;
  DType dtype_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<const NDArray>> blocks_;  // GUARDED_BY(mutex_)
};

ZarrMetadata PlainMetadata(Shape shape, Shape chunks, DType dtype) {
  ZarrMetadata metadata;
  metadata.shape = std::move(shape);
  metadata.chunks = std::move(chunks);
  metadata.dtype = dtype;
  metadata.compressor = std::nullopt;
  return metadata;
}

// An output written as a Zarr array: the disk tier and the user's target.
class ZarrOutput : public OpOutput {
 public:
  ZarrOutput(ZarrMetadata metadata, ZarrAttributes attributes)
      : metadata_(std::move(metadata)),
        attributes_(std::move(attributes)),
        shadow_(ShadowArray(metadata_)),
        largest_written_(
            metadata_.compressor
                ? MakeCodec(*metadata_.compressor)->MaxEncodedSize(metadata_.chunk_nbytes())
                : metadata_.chunk_nbytes()) {}

  bool Has(const Shape& block) const override {
    return array_ != nullptr && array_->StoredChunkSize(block).has_value();
  }
  void Write(const Shape& block, NDArray data) override { array_->WriteBlock(block, data); }
  std::int64_t ProjectWrite(const Shape& block) const override {
    // A store holding values in memory keeps a copy of the encoded chunk.
    return shadow_->WriteBlockScratchBytes(block) + (holds_values_ ? largest_written_ : 0);
  }
  bool KeepsBlock(const Shape&) const override { return false; }
  std::shared_ptr<const NDArray> Read(const Region& region) const override {
    return ReadZarrRegion(*array_, region);
  }
  std::int64_t ProjectRead(const Region& region) const override {
    return ProjectZarrRead(*shadow_, region, largest_written_);
  }
  Index BlocksTouched(const Region& region) const override {
    return CountTouchedBlocks(shadow_->grid(), region);
  }

 protected:
  // Opens the array at `path` of `store` when `keep_existing` and its metadata is this
  // one; creates it (clearing old chunks) otherwise.
  void OpenOrCreate(std::shared_ptr<Store> store, const std::string& path, bool keep_existing) {
    if (keep_existing && store->Contains(JoinKey(path, ".zarray"))) {
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

  ZarrMetadata metadata_;
  ZarrAttributes attributes_;
  std::shared_ptr<const ZarrArray> shadow_;
  // The largest chunk this output writes (what its reads hold at most); a resumed
  // target's chunks came from the same writer.
  std::int64_t largest_written_;
  bool holds_values_ = false;  // the target store keeps values in memory
  std::shared_ptr<const ZarrArray> array_;
};

class DiskTierOutput : public ZarrOutput {
 public:
  DiskTierOutput(ZarrMetadata metadata, std::filesystem::path directory)
      : ZarrOutput(std::move(metadata), {}), directory_(std::move(directory)) {}
  ~DiskTierOutput() override { Release(); }

  Tier tier() const override { return Tier::kDisk; }
  void Prepare() override {
    std::filesystem::remove_all(directory_);
    OpenOrCreate(DirectoryStore::Open(directory_), "", /*keep_existing=*/false);
  }
  void Commit() override {}
  void Release() override {
    array_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
  }

 private:
  std::filesystem::path directory_;
};

// Blocks before `blocks_in_memory` (C order) in RAM, the rest on disk in chunks that
// tile them.
class SplitTierOutput : public OpOutput {
 public:
  SplitTierOutput(ChunkGrid grid, ChunkGrid disk_grid, DType dtype, Index blocks_in_memory,
                  std::shared_ptr<OpOutput> memory, std::shared_ptr<OpOutput> disk)
      : grid_(std::move(grid)),
        disk_grid_(std::move(disk_grid)),
        dtype_(dtype),
        blocks_in_memory_(blocks_in_memory),
        memory_(std::move(memory)),
        disk_(std::move(disk)) {}

  Tier tier() const override { return blocks_in_memory_ > 0 ? Tier::kMixed : Tier::kDisk; }
  void Prepare() override {
    memory_->Prepare();
    disk_->Prepare();
  }
  bool Has(const Shape& block) const override {
    if (InMemory(block)) return memory_->Has(block);
    bool has = true;
    ForEachTouchedBlock(disk_grid_, grid_.BlockRegion(block),
                        [&](const Shape& stored) { has = has && disk_->Has(stored); });
    return has;
  }
  void Write(const Shape& block, NDArray data) override {
    if (InMemory(block)) return memory_->Write(block, std::move(data));
    const Region region = grid_.BlockRegion(block);
    if (disk_grid_.chunks() == grid_.chunks()) return disk_->Write(block, std::move(data));
    ForEachTouchedBlock(disk_grid_, region, [&](const Shape& stored) {
      const Region piece = disk_grid_.BlockRegion(stored);
      NDArray values(piece.shape, dtype_);
      CopyBox(data, region.start, values, piece.start, piece);
      disk_->Write(stored, std::move(values));
    });
  }
  std::int64_t ProjectWrite(const Shape& block) const override {
    if (InMemory(block)) return memory_->ProjectWrite(block);
    if (disk_grid_.chunks() == grid_.chunks()) return disk_->ProjectWrite(block);
    std::int64_t peak = 0;
    ForEachTouchedBlock(disk_grid_, grid_.BlockRegion(block), [&](const Shape& stored) {
      peak = std::max(
          peak, RegionBytes(disk_grid_.BlockRegion(stored), dtype_) + disk_->ProjectWrite(stored));
    });
    return peak;
  }
  bool KeepsBlock(const Shape& block) const override { return InMemory(block); }
  void Commit() override {}
  void Release() override {
    memory_->Release();
    disk_->Release();
  }

  // A region in one part is read from it directly; one across both is assembled from
  // each block's piece in turn.
  std::shared_ptr<const NDArray> Read(const Region& region) const override {
    if (const OpOutput* part = SinglePart(region)) return part->Read(region);
    auto out = std::make_shared<NDArray>(region.shape, dtype_);
    ForEachTouchedBlock(grid_, region, [&](const Shape& block) {
      const Region piece = Intersect(grid_.BlockRegion(block), region);
      const std::shared_ptr<const NDArray> values = Part(block).Read(piece);
      CopyBox(*values, piece.start, *out, region.start, piece);
    });
    return out;
  }
  std::int64_t ProjectRead(const Region& region) const override {
    if (const OpOutput* part = SinglePart(region)) return part->ProjectRead(region);
    std::int64_t piece_peak = 0;
    ForEachTouchedBlock(grid_, region, [&](const Shape& block) {
      const Region piece = Intersect(grid_.BlockRegion(block), region);
      piece_peak = std::max(piece_peak, Part(block).ProjectRead(piece));
    });
    return RegionBytes(region, dtype_) + piece_peak;
  }
  Index BlocksTouched(const Region& region) const override {
    return CountTouchedBlocks(grid_, region);
  }
  bool SharesRead(const Region& region) const override {
    const OpOutput* part = SinglePart(region);
    return part != nullptr && part->SharesRead(region);
  }

 private:
  bool InMemory(const Shape& block) const { return grid_.LinearIndex(block) < blocks_in_memory_; }
  OpOutput& Part(const Shape& block) const { return InMemory(block) ? *memory_ : *disk_; }
  // The part holding every block `region` touches, or null when it spans both.
  const OpOutput* SinglePart(const Region& region) const {
    bool in_memory = false;
    bool on_disk = false;
    ForEachTouchedBlock(grid_, region, [&](const Shape& block) {
      if (InMemory(block)) {
        in_memory = true;
      } else {
        on_disk = true;
      }
    });
    if (in_memory == on_disk) return nullptr;
    return in_memory ? memory_.get() : disk_.get();
  }

  ChunkGrid grid_;
  ChunkGrid disk_grid_;
  DType dtype_;
  Index blocks_in_memory_;
  std::shared_ptr<OpOutput> memory_;
  std::shared_ptr<OpOutput> disk_;
};

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

std::shared_ptr<StoredArray> MakeZarrStoredArray(std::shared_ptr<const ZarrArray> array) {
  return std::make_shared<ZarrStoredArray>(std::move(array));
}

std::shared_ptr<StoredArray> MakeInMemoryStoredArray(std::shared_ptr<const NDArray> data,
                                                     Shape chunks) {
  return std::make_shared<InMemoryStoredArray>(std::move(data), std::move(chunks));
}

ResultOutput::ResultOutput(Shape shape, Shape chunks, DType dtype)
    : grid_(std::move(shape), std::move(chunks)), dtype_(dtype) {}

void ResultOutput::Prepare() {
  // Not charged to any task: the result is the caller's, not a task's working memory.
  ScopedMemoryAccount none(nullptr);
  result_ = NDArray(grid_.shape(), dtype_);
}

void ResultOutput::Write(const Shape& block, NDArray data) {
  const Region region = grid_.BlockRegion(block);
  CopyBox(data, region.start, result_, Shape(region.start.size(), 0), region);
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

std::shared_ptr<OpOutput> MakeMemoryTierOutput(Shape shape, Shape chunks, DType dtype) {
  return std::make_shared<MemoryTierOutput>(std::move(shape), std::move(chunks), dtype);
}

std::shared_ptr<OpOutput> MakeDiskTierOutput(Shape shape, Shape chunks, DType dtype,
                                             std::filesystem::path directory,
                                             std::optional<CodecConfig> compressor) {
  ZarrMetadata metadata = PlainMetadata(std::move(shape), std::move(chunks), dtype);
  metadata.compressor = std::move(compressor);
  return std::make_shared<DiskTierOutput>(std::move(metadata), std::move(directory));
}

std::shared_ptr<OpOutput> MakeSplitTierOutput(Shape shape, Shape chunks, Shape disk_chunks,
                                              DType dtype, Index blocks_in_memory,
                                              std::filesystem::path directory,
                                              std::optional<CodecConfig> compressor) {
  for (std::size_t d = 0; d < chunks.size(); ++d) {
    if (disk_chunks[d] < 1 || chunks[d] % disk_chunks[d] != 0) {
      throw Error("internal error: disk chunks " + ShapeToString(disk_chunks) +
                  " do not tile the chunks " + ShapeToString(chunks) + " of a split intermediate");
    }
  }
  ChunkGrid grid(shape, chunks);
  ChunkGrid disk_grid(shape, disk_chunks);
  auto memory = MakeMemoryTierOutput(shape, chunks, dtype);
  auto disk = MakeDiskTierOutput(std::move(shape), std::move(disk_chunks), dtype,
                                 std::move(directory), std::move(compressor));
  return std::make_shared<SplitTierOutput>(std::move(grid), std::move(disk_grid), dtype,
                                           blocks_in_memory, std::move(memory), std::move(disk));
}

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
