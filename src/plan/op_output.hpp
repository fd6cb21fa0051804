// Where arrays live while a plan runs, and what reading or writing them holds.
//
// StoredArray: a node's values that tasks read by region (a source, or the output of
// an earlier op). OpOutput: the StoredArray an op writes block by block: the result
// of compute(), an intermediate in RAM or on disk, or the user's Zarr target.
// Every figure returned by a Project* method is exact for the implementation next to
// it (all memory goes through tessera::Buffer), which is what lets the executor check
// measured <= projected task by task.
// Thread safety: Read and Write may run concurrently for different blocks.
// Implemented in stored_arrays.cpp (sources), intermediate_outputs.cpp (RAM, disk,
// split, object store), target_outputs.cpp (result) and the Zarr target's files
// (zarr_target_output.hpp), on zarr_output.hpp.
// Internal to src/plan.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/chunk_grid.hpp"
#include "tessera/core/ndarray.hpp"
#include "tessera/plan/internal/executable_op.hpp"
#include "tessera/plan/internal/node.hpp"
#include "tessera/plan/internal/shared_blocks.hpp"
#include "tessera/plan/plan_options.hpp"
#include "tessera/storage/codec.hpp"
#include "tessera/storage/store.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera::planner {

class StoredArray {
 public:
  virtual ~StoredArray() = default;
  // The values of `region` (single-threaded). The result may share memory with the
  // store (read-only).
  virtual std::shared_ptr<const NDArray> Read(const Region& region) const = 0;
  // Bytes Read(region) allocates at its peak, its result included.
  virtual std::int64_t ProjectRead(const Region& region) const = 0;
  // Stored blocks Read(region) touches.
  virtual Index BlocksTouched(const Region& region) const = 0;
  // Does Read(region) return memory shared with the store (a block held in RAM)?
  virtual bool SharesRead(const Region&) const { return false; }
  // Whether ReadInto works (a Zarr source; an array held in memory is read by blocks).
  virtual bool ReadsInto() const { return false; }
  // Writes the values of `region` into `target`, a C-order block of the array's dtype
  // whose first element is at global `target_start` (as CopyBox), straight from the
  // store: no block of its own. Holds ProjectReadInto(region) bytes besides `target`.
  virtual void ReadInto(const Region& region, NDArray& target, const Shape& target_start) const;
  virtual std::int64_t ProjectReadInto(const Region&) const { return 0; }
  // The blocks ReadInto reads best one at a time (a sharded array's shards: each
  // shard's index is read once for all its inner chunks), costing no more scratch than
  // one of the blocks Read is given; empty when there are none (ReadsInto false).
  virtual Shape ReadIntoChunks() const { return {}; }
  // The whole array when it is held in this process's memory (asarray), read-only: a
  // writer can encode its blocks straight from it; nullptr otherwise.
  virtual const NDArray* HeldWhole() const { return nullptr; }
};

// A stored Zarr array (from_zarr). Projections use the largest chunk now stored.
std::shared_ptr<StoredArray> MakeZarrStoredArray(std::shared_ptr<const ZarrArray> array);
// An array held in memory, cut into `chunks` (asarray).
std::shared_ptr<StoredArray> MakeInMemoryStoredArray(std::shared_ptr<const NDArray> data,
                                                     Shape chunks);

class OpOutput : public StoredArray {
 public:
  virtual Tier tier() const = 0;
  // ExecutableOp::CheckBeforeRun for the op writing this output.
  virtual void CheckBeforeRun() const {}
  virtual void Prepare() = 0;
  virtual bool Has(const Shape& block) const = 0;
  // `data` has the block's shape and the array's dtype.
  virtual void Write(const Shape& block, NDArray data) = 0;
  // Bytes Write(block) allocates besides `data`.
  virtual std::int64_t ProjectWrite(const Shape& block) const = 0;
  // Does Write(block) keep `data` itself (an intermediate's block held in RAM)? True of
  // a prefix of the blocks in C order (all, none or the first N), and ProjectWrite of a
  // block not kept depends on the block's shape alone: projections visit one block of
  // each kind (DistinctTouchedBlocks) where no block is kept.
  virtual bool KeepsBlock(const Shape& block) const = 0;
  virtual void Commit() = 0;
  virtual void Release() = 0;
  // ExecutableOp's follower steps (a process that did not lead the run): open and drop
  // what the leader's Prepare, Commit and Release made, changing nothing on storage. By
  // default those of an output held in the process alone: the steps themselves.
  virtual void FollowPrepare() { Prepare(); }
  virtual void FollowCommit() { Commit(); }
  virtual void FollowRelease() { Release(); }
  // ExecutableOp::shared_blocks: an output held in this process's memory.
  virtual SharedBlocks* shared_blocks() { return nullptr; }
  // What the plan's op writing this output does (kind, task count, fingerprint): a
  // target records it so that a resume continues only the same work.
  virtual void SetWriterLayout(std::string) {}
  // The inner chunks of an output stored sharded (its blocks are shards); empty otherwise.
  virtual Shape InnerChunks() const { return {}; }
};

// The in-memory result of compute(): one NDArray of the whole shape, allocated by
// Prepare (outside any task); Write copies a block in, WriteFrom reads one in from a
// source. TakeResult after Commit.
class ResultOutput : public OpOutput, public SharedBlocks {
 public:
  ResultOutput(Shape shape, Shape chunks, DType dtype);
  Tier tier() const override { return Tier::kResult; }
  void Prepare() override;
  bool Has(const Shape&) const override { return false; }
  void Write(const Shape& block, NDArray data) override;
  std::int64_t ProjectWrite(const Shape&) const override { return 0; }
  bool KeepsBlock(const Shape&) const override { return false; }
  void Commit() override {}
  void Release() override {}
  std::shared_ptr<const NDArray> Read(const Region& region) const override;
  std::int64_t ProjectRead(const Region& region) const override;
  Index BlocksTouched(const Region& region) const override;
  // The values `source` holds over `region`, read straight into the result
  // (source.ReadsInto()); holds what source.ProjectReadInto(region) says.
  void WriteFrom(const Region& region, const StoredArray& source);
  NDArray TakeResult();

  // Across processes each holds the whole result: blocks written elsewhere are Put here
  // (copied in) before the op commits. Held copies out a block written or put here; Drop
  // and SetRemote do nothing (the result is never read by a task). A task's region is a
  // union of whole blocks (FusedOp reads whole stored chunks that are multiples of them).
  SharedBlocks* shared_blocks() override { return this; }
  std::shared_ptr<const NDArray> Held(Index block) const override;
  void Put(Index block, std::shared_ptr<const NDArray> values) override;
  void Drop(Index) override {}
  void SetRemote(Fetch) override {}
  std::vector<Index> TakeWritten() override;
  std::shared_ptr<const NDArray> HeldRegion(Index block, const Region& region) const override;
  Region BlockRegion(Index block) const override;
  Index num_blocks() const override { return grid_.num_blocks(); }
  DType dtype() const override { return dtype_; }

 private:
  void NoteWritten(const Region& region);

  ChunkGrid grid_;
  DType dtype_;
  NDArray result_;
  mutable std::mutex written_mutex_;
  std::vector<char> written_;         // GUARDED_BY(written_mutex_): per block, by this process
  BlocksWrittenByThread new_blocks_;  // since TakeWritten
};

// An intermediate kept in RAM, block by block (Write keeps the block itself).
std::shared_ptr<OpOutput> MakeMemoryTierOutput(Shape shape, Shape chunks, DType dtype);
// Where a stored intermediate goes (PlanContext::IntermediatePlace): a folder of the
// plan's local work directory, or, when object_url is set, a prefix of the object store
// ("s3://.../intermediate-<n>", the third tier).
struct StoredPlace {
  std::filesystem::path directory;
  std::string object_url;
};

// An intermediate stored at `place`: a Zarr array compressed with `compressor` (nullopt:
// raw) in its local folder (Tier::kDisk) or under its object store prefix
// (Tier::kObject), removed by Release (and by its destructor).
std::shared_ptr<OpOutput> MakeStoredTierOutput(Shape shape, Shape chunks, DType dtype,
                                               const StoredPlace& place,
                                               std::optional<CodecConfig> compressor);

// An intermediate too large for the RAM left to it, written in blocks of `chunks`:
// blocks whose C-order position is below `blocks_in_memory` are kept in RAM, the
// others stored at `place` (as MakeStoredTierOutput) in `disk_chunks`, which must tile
// `chunks` (divide them in every dimension) so each stored chunk has one writer.
std::shared_ptr<OpOutput> MakeSplitTierOutput(Shape shape, Shape chunks, Shape disk_chunks,
                                              DType dtype, Index blocks_in_memory,
                                              const StoredPlace& place,
                                              std::optional<CodecConfig> compressor);

// The user's target (zarr_target_output.hpp). A directory target is written to
// "<directory>.tessera-partial/array" beside Tessera's marker (target_files.hpp) and moved
// into place by Commit; a store target (target.store set, an object store's prefix) is
// marked .tessera-partial and gets its documents last. Either way readers never see a
// half-written array; with resume, the chunks an interrupted run of the same work left
// (same fingerprint of `sources`, target metadata and writer layout) are kept and Has()
// reports them; anything else is refused. Tessera never writes into or removes what lacks
// its marker, nor follows a link there. A store target refuses a `work_dir` (the plan's
// Spec::work_dir) whose prefix it is, holds or lies inside.
std::shared_ptr<OpOutput> MakeZarrTargetOutput(
    Shape shape, Shape chunks, DType dtype, ZarrTarget target,
    std::vector<std::shared_ptr<const ZarrArray>> sources, const std::string& work_dir);

}  // namespace tessera::planner
