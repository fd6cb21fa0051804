// Intermediates: in RAM, on local disk, in the object store, or split between RAM and
// one of those (op_output.hpp).
#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "op_output.hpp"
#include "region_copy.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/touched_blocks.hpp"
#include "tessera/core/warning.hpp"
#include "tessera/storage/directory_store.hpp"
#include "tessera/storage/open_store.hpp"
#include "work_directory.hpp"
#include "zarr_output.hpp"

namespace tessera::planner {
namespace {

class MemoryTierOutput : public OpOutput, public SharedBlocks {
 public:
  MemoryTierOutput(Shape shape, Shape chunks, DType dtype)
      : grid_(std::move(shape), std::move(chunks)), dtype_(dtype) {}

  Tier tier() const override { return Tier::kMemory; }
  void Prepare() override {
    std::lock_guard lock(mutex_);
    blocks_.assign(static_cast<std::size_t>(grid_.num_blocks()), nullptr);
    written_.Clear();
  }
  bool Has(const Shape&) const override { return false; }
  void Write(const Shape& block, NDArray data) override {
    auto stored = std::make_shared<const NDArray>(std::move(data));
    const Index linear = grid_.LinearIndex(block);
    std::lock_guard lock(mutex_);
    blocks_[static_cast<std::size_t>(linear)] = std::move(stored);
    written_.Add(linear);
  }
  std::int64_t ProjectWrite(const Shape&) const override { return 0; }
  bool KeepsBlock(const Shape&) const override { return true; }
  void Commit() override {}
  void Release() override {
    std::lock_guard lock(mutex_);
    blocks_.clear();
    blocks_.shrink_to_fit();
    written_.Clear();
    remote_ = nullptr;
  }

  std::shared_ptr<const NDArray> Read(const Region& region) const override {
    if (const std::optional<Shape> block = ExactBlock(grid_, region)) {
      return Block(*block, grid_.BlockRegion(*block));
    }
    auto out = std::make_shared<NDArray>(region.shape, dtype_);
    ForEachTouchedBlock(grid_, region, [&](const Shape& block) {
      const Region block_region = grid_.BlockRegion(block);
      const Region part = Intersect(block_region, region);
      const std::shared_ptr<const NDArray> values = Block(block, part);
      // A block held here whole; a part fetched from another process, just that part.
      const Shape& values_start =
          values->shape() == block_region.shape ? block_region.start : part.start;
      CopyBox(*values, values_start, *out, region.start, part);
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

  SharedBlocks* shared_blocks() override { return this; }
  std::shared_ptr<const NDArray> Held(Index block) const override {
    std::lock_guard lock(mutex_);
    if (block < 0 || static_cast<std::size_t>(block) >= blocks_.size()) return nullptr;
    return blocks_[static_cast<std::size_t>(block)];
  }
  std::shared_ptr<const NDArray> HeldRegion(Index block, const Region& region) const override {
    const std::shared_ptr<const NDArray> whole = Held(block);
    if (whole == nullptr) return nullptr;
    const Region block_region = BlockRegion(block);
    if (region == block_region) return whole;
    auto part = std::make_shared<NDArray>(region.shape, dtype_);
    CopyBox(*whole, block_region.start, *part, region.start, region);
    return part;
  }
  Region BlockRegion(Index block) const override {
    return grid_.BlockRegion(grid_.BlockIndex(block));
  }
  void Put(Index block, std::shared_ptr<const NDArray> values) override {
    std::lock_guard lock(mutex_);
    if (block >= 0 && static_cast<std::size_t>(block) < blocks_.size()) {
      blocks_[static_cast<std::size_t>(block)] = std::move(values);
    }
  }
  void Drop(Index block) override {
    std::shared_ptr<const NDArray> dropped;  // freed outside the lock
    std::lock_guard lock(mutex_);
    if (block >= 0 && static_cast<std::size_t>(block) < blocks_.size()) {
      dropped = std::move(blocks_[static_cast<std::size_t>(block)]);
    }
  }
  void SetRemote(Fetch fetch) override {
    std::lock_guard lock(mutex_);
    remote_ = std::move(fetch);
  }
  std::vector<Index> TakeWritten() override { return written_.Take(); }
  Index num_blocks() const override { return grid_.num_blocks(); }
  DType dtype() const override { return dtype_; }

 private:
  // The block held here whole, or `part` of it (the whole block or less) fetched from
  // the process holding it (not kept: the executor Puts the whole blocks it keeps).
  std::shared_ptr<const NDArray> Block(const Shape& block, const Region& part) const {
    const auto linear = grid_.LinearIndex(block);
    Fetch remote;
    {
      std::lock_guard lock(mutex_);
      if (static_cast<std::size_t>(linear) < blocks_.size() &&
          blocks_[static_cast<std::size_t>(linear)] != nullptr) {
        return blocks_[static_cast<std::size_t>(linear)];
      }
      remote = remote_;
    }
    if (remote) return remote(linear, part);
    throw Error("internal error: block " + ShapeToString(block) +
                " of an in-memory intermediate was read before it was written");
  }

  ChunkGrid grid_;
  DType dtype_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<const NDArray>> blocks_;  // GUARDED_BY(mutex_)
  BlocksWrittenByThread written_;                       // TakeWritten's
  Fetch remote_;                                        // GUARDED_BY(mutex_)
};

// An intermediate stored as a Zarr array in a folder of the plan's local work directory.
class DiskTierOutput : public ZarrOutput {
 public:
  DiskTierOutput(ZarrMetadata metadata, std::filesystem::path directory)
      : ZarrOutput(std::move(metadata), {}), directory_(std::move(directory)) {}
  // Only the output that made its folder removes it: a plan remade elsewhere (a worker's,
  // perhaps in this very process) or passed over while planning never touches it.
  ~DiskTierOutput() override {
    if (prepared_) Release();
  }

  Tier tier() const override { return Tier::kDisk; }
  // directory_ lies in the plan's work directory, created here with its marker
  // (work_directory.hpp); nothing outside a work directory of this process is touched.
  void Prepare() override {
    prepared_ = true;
    PrepareInsideWorkDirectory(directory_);
    OpenOrCreate(DirectoryStore::Open(directory_), "", /*keep_existing=*/false);
  }
  void Commit() override {}
  void Release() override {
    array_.reset();
    RemoveInsideWorkDirectory(directory_);
  }
  // A follower rank writes and reads the array the leader's Prepare made.
  void FollowPrepare() override {
    DirectoryStore::Options existing;
    existing.create = false;  // the leader's; never made here
    array_ = std::make_shared<const ZarrArray>(
        ZarrArray::Open(DirectoryStore::Open(directory_, existing)));
  }
  void FollowCommit() override {}
  void FollowRelease() override { array_.reset(); }

 private:
  std::filesystem::path directory_;
  bool prepared_ = false;
};

// An intermediate stored as a Zarr array under the plan's own prefix of an object store
// work_dir (the third tier), "s3://.../tessera-<...>/intermediate-<n>". The prefix carries
// a marker object naming the process that writes it; Prepare refuses a prefix holding
// anything without it (another run's objects, or someone's data) and touches nothing
// there, and Release removes every object under the prefix, the marker last.
class ObjectTierOutput : public ZarrOutput {
 public:
  ObjectTierOutput(ZarrMetadata metadata, std::string url)
      : ZarrOutput(std::move(metadata), {}), url_(std::move(url)) {}
  ~ObjectTierOutput() override {
    if (store_ != nullptr) Release();
  }

  Tier tier() const override { return Tier::kObject; }
  void Prepare() override {
    std::shared_ptr<Store> store = OpenStore(url_, {.create = false});
    const std::string owner = ObjectPrefixOwnerText();
    std::vector<std::string> keys = store->List("");
    if (!keys.empty()) {
      if (store->GetText(kObjectPrefixMarker) != owner) {
        throw StorageError("the object store prefix " + url_ +
                           " for an intermediate of this run already holds " +
                           std::to_string(keys.size()) +
                           " objects that this run did not write (another run's, or "
                           "someone's data); Tessera never touches them: choose another "
                           "work_dir, or remove them if they are a killed run's");
      }
      EraseUnderPrefix(*store, std::move(keys));  // an earlier run of this plan, here
    }
    store->Set(kObjectPrefixMarker, owner);
    store_ = store;  // ours from here on: Release removes what is under it
    OpenOrCreate(std::move(store), "", /*keep_existing=*/false);
  }
  void Commit() override {}
  // Removes the intermediate's objects; a failure is a warning (the run's result stands),
  // naming what is left and how to remove it.
  void Release() override {
    array_.reset();
    if (store_ == nullptr) return;
    try {
      EraseUnderPrefix(*store_, store_->List(""));
    } catch (const std::exception& error) {
      Warn("could not remove the intermediate objects under " + url_ + " (" + error.what() +
           "); remove them with: aws s3 rm --recursive " + url_ + "/");
    }
    store_.reset();
  }
  // Another process writes and reads the array the leader's Prepare made.
  void FollowPrepare() override {
    array_ = std::make_shared<const ZarrArray>(ZarrArray::Open(OpenStore(url_, {.create = false})));
  }
  void FollowCommit() override {}
  void FollowRelease() override { array_.reset(); }

 private:
  // Removes `keys` of `store`, the prefix's marker last (a failure midway leaves the
  // prefix marked as this process's, for a later try to clear).
  static void EraseUnderPrefix(Store& store, std::vector<std::string> keys) {
    std::erase(keys, std::string(kObjectPrefixMarker));
    store.EraseKeys(keys);
    store.Erase(kObjectPrefixMarker);
  }

  std::string url_;
  std::shared_ptr<Store> store_;  // between Prepare and Release (the leader's only)
};

// A stored intermediate at `place`: on local disk or in the object store.
std::shared_ptr<OpOutput> MakeStoredOutput(ZarrMetadata metadata, const StoredPlace& place) {
  if (!place.object_url.empty()) {
    return std::make_shared<ObjectTierOutput>(std::move(metadata), place.object_url);
  }
  return std::make_shared<DiskTierOutput>(std::move(metadata), place.directory);
}

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

  Tier tier() const override {
    if (blocks_in_memory_ <= 0) return disk_->tier();
    return disk_->tier() == Tier::kObject ? Tier::kMemoryAndObject : Tier::kMixed;
  }
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
    // Each stored piece's figure depends on its shape alone: one piece of each kind.
    std::int64_t peak = 0;
    for (const Shape& stored : DistinctTouchedBlocks(disk_grid_, grid_.BlockRegion(block))) {
      peak = std::max(
          peak, RegionBytes(disk_grid_.BlockRegion(stored), dtype_) + disk_->ProjectWrite(stored));
    }
    return peak;
  }
  bool KeepsBlock(const Shape& block) const override { return InMemory(block); }
  void Commit() override {}
  void Release() override {
    memory_->Release();
    disk_->Release();
  }
  void FollowPrepare() override {
    memory_->FollowPrepare();
    disk_->FollowPrepare();
  }
  void FollowCommit() override {}
  void FollowRelease() override {
    memory_->FollowRelease();
    disk_->FollowRelease();
  }
  SharedBlocks* shared_blocks() override { return memory_->shared_blocks(); }

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
    // Across both parts: each block's piece read from either part, one piece of each
    // kind (a bound: a kind may lie in one part only).
    std::int64_t piece_peak = 0;
    for (const Shape& block : DistinctTouchedBlocks(grid_, region)) {
      const Region piece = Intersect(grid_.BlockRegion(block), region);
      piece_peak = std::max({piece_peak, memory_->ProjectRead(piece), disk_->ProjectRead(piece)});
    }
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
  // The blocks in RAM come first in C order, so the region's first block (the one with
  // the lowest position) and its last (the highest) say which parts it touches.
  const OpOutput* SinglePart(const Region& region) const {
    const std::vector<Shape> kinds = DistinctTouchedBlocks(grid_, region);  // in C order
    if (kinds.empty()) return nullptr;
    if (!InMemory(kinds.front())) return disk_.get();
    if (InMemory(kinds.back())) return memory_.get();
    return nullptr;
  }

  ChunkGrid grid_;
  ChunkGrid disk_grid_;
  DType dtype_;
  Index blocks_in_memory_;
  std::shared_ptr<OpOutput> memory_;
  std::shared_ptr<OpOutput> disk_;
};

}  // namespace

std::shared_ptr<OpOutput> MakeMemoryTierOutput(Shape shape, Shape chunks, DType dtype) {
  return std::make_shared<MemoryTierOutput>(std::move(shape), std::move(chunks), dtype);
}

std::shared_ptr<OpOutput> MakeStoredTierOutput(Shape shape, Shape chunks, DType dtype,
                                               const StoredPlace& place,
                                               std::optional<CodecConfig> compressor) {
  ZarrMetadata metadata = PlainMetadata(std::move(shape), std::move(chunks), dtype);
  metadata.compressor = std::move(compressor);
  return MakeStoredOutput(std::move(metadata), place);
}

std::shared_ptr<OpOutput> MakeSplitTierOutput(Shape shape, Shape chunks, Shape disk_chunks,
                                              DType dtype, Index blocks_in_memory,
                                              const StoredPlace& place,
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
  auto disk = MakeStoredTierOutput(std::move(shape), std::move(disk_chunks), dtype, place,
                                   std::move(compressor));
  return std::make_shared<SplitTierOutput>(std::move(grid), std::move(disk_grid), dtype,
                                           blocks_in_memory, std::move(memory), std::move(disk));
}

}  // namespace tessera::planner
