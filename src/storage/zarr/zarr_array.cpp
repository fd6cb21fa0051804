#include "tessera/storage/zarr_array.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "chunk_codec.hpp"
#include "chunk_key.hpp"
#include "chunk_layout.hpp"
#include "codec_chain_json.hpp"
#include "metadata_document.hpp"
#include "metadata_sizes.hpp"
#include "region_walk.hpp"
#include "shard_chunk_codec.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/core/touched_blocks.hpp"

namespace tessera {
namespace {

using zarr_detail::ByteOffset;
using zarr_detail::ByteStrides;
using zarr_detail::ChunkCodec;
using zarr_detail::ChunkScratch;
using zarr_detail::kArrayDocument;
using zarr_detail::kAttributesDocument;
using zarr_detail::kMaxItemSize;
using zarr_detail::kNodeDocument;
using zarr_detail::ReadMetadataDocument;
using zarr_detail::ScratchBytes;
using zarr_detail::ScratchPool;
using zarr_detail::TouchedBlocks;
using zarr_detail::TouchedBox;
using zarr_detail::TouchedBoxAt;
using zarr_detail::TouchedRange;
using zarr_detail::ValueRef;

std::string DescribePath(const Store& store, std::string_view path) {
  return path.empty() ? store.Describe() : store.DescribeKey(path);
}

int ResolveThreads(int max_threads) {
  if (max_threads < 0) {
    throw InvalidArgument("max_threads must be >= 0 (0 = hardware concurrency), got " +
                          std::to_string(max_threads));
  }
  return max_threads == 0 ? HardwareThreads() : max_threads;
}

// True when `box` of a C-order array of `shape` is one contiguous range of memory:
// extent 1 in the leading dimensions, then any extent in one dimension, then the full
// extent in every trailing one.
bool IsContiguousIn(std::span<const Index> shape, std::span<const Index> box_shape) {
  std::size_t dim = 0;
  while (dim < box_shape.size() && box_shape[dim] == 1) ++dim;
  for (++dim; dim < box_shape.size(); ++dim) {
    if (box_shape[dim] != shape[dim]) return false;
  }
  return true;
}

void CheckBlockData(const ChunkGrid& grid, DType dtype, std::span<const Index> block,
                    std::size_t nbytes, const char* what) {
  grid.CheckBlock(block);
  const Index expected = CheckedMul(ShapeSize(grid.BlockShape(block)), dtype.itemsize());
  if (static_cast<Index>(nbytes) != expected) {
    throw InvalidArgument(std::string(what) + ": block " + ShapeToString(block) + " of shape " +
                          ShapeToString(grid.BlockShape(block)) + " and dtype " +
                          std::string(dtype.name()) + " needs " + std::to_string(expected) +
                          " bytes, got " + std::to_string(nbytes));
  }
}

void CheckRegion(const Region& region, const Shape& shape) {
  bool valid = region.start.size() == shape.size() && region.shape.size() == shape.size();
  for (std::size_t dim = 0; valid && dim < shape.size(); ++dim) {
    valid = region.start[dim] >= 0 && region.shape[dim] >= 0 &&
            region.start[dim] <= shape[dim] - region.shape[dim];
  }
  if (!valid) {
    throw InvalidArgument("ReadRegion: region with start " + ShapeToString(region.start) +
                          " and shape " + ShapeToString(region.shape) +
                          " is not inside the array of shape " + ShapeToString(shape));
  }
}

// Checks what the v3 document cannot express or Tessera cannot write, for metadata
// built in code (a parsed document passed the same checks already).
void CheckV3Metadata(const ZarrMetadata& metadata) {
  zarr_detail::ValidateCodecChain(metadata.codecs, zarr_detail::StoredElementType(metadata),
                                  metadata.chunks, "codecs");
}

}  // namespace

ZarrArray::ZarrArray(std::shared_ptr<Store> store, std::string path, ZarrMetadata metadata,
                     ZarrAttributes attributes)
    : store_(std::move(store)),
      path_(std::move(path)),
      metadata_(std::move(metadata)),
      grid_(metadata_.grid()),
      attributes_(std::move(attributes)) {
  if (metadata_.zarr_format != 2 && metadata_.zarr_format != 3) {
    throw InvalidArgument("zarr_format must be 2 or 3, got " +
                          std::to_string(metadata_.zarr_format));
  }
  if (metadata_.order != 'C' && metadata_.order != 'F') {
    throw InvalidArgument(std::string("order must be 'C' or 'F', got '") + metadata_.order + "'");
  }
  if (metadata_.dimension_separator != '.' && metadata_.dimension_separator != '/') {
    throw InvalidArgument(std::string("dimension_separator must be '.' or '/', got '") +
                          metadata_.dimension_separator + "'");
  }
  if (metadata_.float16_storage && metadata_.dtype != float32) {
    throw InvalidArgument("float16 storage holds float32 arrays, not " +
                          std::string(metadata_.dtype.name()));
  }
  if (metadata_.zarr_format == 2 && metadata_.key_encoding != ChunkKeyEncoding::kV2) {
    throw InvalidArgument(
        "a Zarr v2 array's chunk keys are v2's (\"1.2\"); the default "
        "encoding (\"c/1/2\") is Zarr v3's");
  }
  if (!attributes_.dimension_names.empty() &&
      attributes_.dimension_names.size() != metadata_.shape.size()) {
    throw InvalidArgument("dimension names (_ARRAY_DIMENSIONS) give " +
                          std::to_string(attributes_.dimension_names.size()) +
                          " names, but the array of shape " + ShapeToString(metadata_.shape) +
                          " has " + std::to_string(metadata_.shape.size()) + " dimensions");
  }
  // grid_ has checked shape and chunks; now the byte sizes and the fill value, so that
  // Create writes nothing that the parsers would refuse to read back.
  if (const std::optional<zarr_detail::SizeProblem> problem = zarr_detail::CheckSizes(metadata_)) {
    throw InvalidArgument("metadata key \"" + problem->key + "\": expected " + problem->expected +
                          ", found " + problem->found);
  }
  std::array<std::byte, kMaxItemSize> fill_element{};
  EncodeFillElement(
      metadata_.fill_value, metadata_.dtype,
      std::span(fill_element).first(static_cast<std::size_t>(metadata_.dtype.itemsize())));
  if (metadata_.zarr_format == 3) CheckV3Metadata(metadata_);
  codec_ = zarr_detail::MakeChunkCodec(metadata_);
}

ZarrArray ZarrArray::Open(std::shared_ptr<Store> store, std::string path) {
  if (store == nullptr) throw InvalidArgument("ZarrArray::Open: store is null");
  if (!path.empty()) ValidateKey(path);
  std::string where;
  ZarrMetadata metadata;
  ZarrAttributes attributes;
  const std::string node_key = JoinKey(path, kNodeDocument);
  if (const std::optional<std::string> node = ReadMetadataDocument(*store, node_key)) {
    where = store->DescribeKey(node_key);
    std::tie(metadata, attributes) = ParseZarrJson(*node, where);
  } else {
    const std::string metadata_key = JoinKey(path, kArrayDocument);
    const std::optional<std::string> document = ReadMetadataDocument(*store, metadata_key);
    if (!document) {
      std::string message = "no Zarr array at " + DescribePath(*store, path) +
                            ": zarr.json not found (Zarr v3) and .zarray not found (Zarr v2)";
      if (IsZarrGroup(*store, path)) {
        message += "; this path holds a Zarr group (.zgroup), open one of the arrays inside it";
      }
      throw StorageError(message);
    }
    where = store->DescribeKey(metadata_key);
    metadata = ParseZarrMetadata(*document, where);
    const std::string attributes_key = JoinKey(path, kAttributesDocument);
    const std::string attributes_where = store->DescribeKey(attributes_key);
    if (const std::optional<std::string> text = ReadMetadataDocument(*store, attributes_key)) {
      attributes = ParseZarrAttributes(*text, attributes_where);
    }
    if (!attributes.dimension_names.empty() &&
        attributes.dimension_names.size() != metadata.shape.size()) {
      throw FormatError(attributes_where + ": key \"_ARRAY_DIMENSIONS\": expected " +
                        std::to_string(metadata.shape.size()) + " names (one per dimension of " +
                        ShapeToString(metadata.shape) + "), found " +
                        std::to_string(attributes.dimension_names.size()));
    }
  }
  try {
    return ZarrArray(std::move(store), std::move(path), std::move(metadata), std::move(attributes));
  } catch (const InvalidArgument& error) {
    throw FormatError(where + ": " + error.what());
  }
}

ZarrArray ZarrArray::Define(std::shared_ptr<Store> store, std::string path, ZarrMetadata metadata,
                            ZarrAttributes attributes) {
  if (store == nullptr) throw InvalidArgument("ZarrArray: store is null");
  if (!path.empty()) ValidateKey(path);
  // Everything that can be refused is checked here, before the store is touched.
  ZarrArray array(std::move(store), std::move(path), std::move(metadata), std::move(attributes));
  if (array.metadata_.zarr_format == 3) {
    static_cast<void>(ZarrJsonText(array.metadata_, array.attributes_));
  } else {
    static_cast<void>(ZarrMetadataToJson(array.metadata_));
    static_cast<void>(ZarrAttributesToJson(array.attributes_));
  }
  return array;
}

ZarrArray ZarrArray::Create(std::shared_ptr<Store> store, std::string path, ZarrMetadata metadata,
                            ZarrAttributes attributes) {
  ZarrArray array =
      Define(std::move(store), std::move(path), std::move(metadata), std::move(attributes));
  array.RemoveChunks();
  array.Publish();
  return array;
}

void ZarrArray::RemoveChunks() const {
  // Chunks of a previous array at this path would read as this array's data (or as
  // corrupt chunks): remove them first, as zarr-python's mode="w" clears the path.
  const std::string prefix = path_.empty() ? std::string() : path_ + "/";
  std::vector<std::string> chunks = store_->List(prefix);
  std::erase_if(chunks, [&prefix](const std::string& key) {
    return !zarr_detail::LooksLikeChunkKey(std::string_view(key).substr(prefix.size()));
  });
  // Many at once, no HEAD first where the store can (an object store's DELETEs).
  store_->EraseKeys(chunks);
}

void ZarrArray::Clear() const {
  const std::string documents[] = {JoinKey(path_, kNodeDocument), JoinKey(path_, kArrayDocument),
                                   JoinKey(path_, kAttributesDocument)};
  store_->EraseKeys(documents);  // first: the array stops reading as complete
  RemoveChunks();
}

void ZarrArray::Publish() const {
  Store& target = *store_;
  // The other format's documents would describe another array.
  const std::string attributes_key = JoinKey(path_, kAttributesDocument);
  if (metadata_.zarr_format == 3) {
    const std::string metadata_text = ZarrJsonText(metadata_, attributes_);
    target.Erase(JoinKey(path_, kArrayDocument));
    target.Erase(attributes_key);
    target.Set(JoinKey(path_, kNodeDocument), std::string_view(metadata_text));
    return;
  }
  // .zarray last: it makes the array readable, so .zattrs must be right before it is.
  const std::string metadata_text = ZarrMetadataToJson(metadata_);
  target.Erase(JoinKey(path_, kNodeDocument));
  if (attributes_ != ZarrAttributes{}) {
    target.Set(attributes_key, std::string_view(ZarrAttributesToJson(attributes_)));
  } else {
    target.Erase(attributes_key);  // a stale .zattrs would describe another array
  }
  target.Set(JoinKey(path_, kArrayDocument), std::string_view(metadata_text));
}

std::string ZarrArray::ChunkKey(std::span<const Index> block) const {
  grid_.CheckBlock(block);
  return zarr_detail::FormatChunkKey(path_, block, metadata_.dimension_separator,
                                     metadata_.key_encoding);
}

void ZarrArray::ReadPart(std::span<const Index> block, const Region& box, std::byte* dst,
                         std::span<const Index> dst_strides, bool dst_contiguous,
                         ChunkScratch& scratch) const {
  const std::string key = zarr_detail::FormatChunkKey(path_, block, metadata_.dimension_separator,
                                                      metadata_.key_encoding);
  codec_->ReadPart(ValueRef{store_.get(), &key, ShardRange{}}, box, dst, dst_strides,
                   dst_contiguous, scratch);
}

void ZarrArray::WritePart(std::span<const Index> block, const std::byte* src,
                          std::span<const Index> src_strides, bool src_contiguous,
                          ChunkScratch& scratch) const {
  const std::string key = zarr_detail::FormatChunkKey(path_, block, metadata_.dimension_separator,
                                                      metadata_.key_encoding);
  const std::optional<std::span<const std::byte>> encoded =
      codec_->Encode(grid_.BlockShape(block), src, src_strides, src_contiguous,
                     /*omit_fill=*/false, scratch);
  if (encoded) {
    store_->Set(key, *encoded);
  } else {
    store_->Erase(key);  // a shard of fill values only: none is stored, as zarr-python does
  }
}

NDArray ZarrArray::ReadBlock(std::span<const Index> block) const {
  grid_.CheckBlock(block);
  NDArray out(grid_.BlockShape(block), metadata_.dtype);
  ReadBlockInto(block, out.mutable_bytes());
  return out;
}

void ZarrArray::ReadBlockInto(std::span<const Index> block, std::span<std::byte> out) const {
  CheckBlockData(grid_, metadata_.dtype, block, out.size(), "ReadBlockInto");
  const Shape block_shape = grid_.BlockShape(block);
  ChunkScratch scratch;
  ReadPart(block, Region{Shape(block_shape.size(), 0), block_shape}, out.data(),
           ByteStrides(block_shape, metadata_.dtype.itemsize()), /*dst_contiguous=*/true, scratch);
}

void ZarrArray::WriteBlock(std::span<const Index> block, const NDArray& data) const {
  grid_.CheckBlock(block);
  const Shape block_shape = grid_.BlockShape(block);
  if (data.shape() != block_shape || data.dtype() != metadata_.dtype) {
    throw InvalidArgument(
        "WriteBlock: block " + ShapeToString(block) + " needs shape " + ShapeToString(block_shape) +
        " and dtype " + std::string(metadata_.dtype.name()) + ", got shape " +
        ShapeToString(data.shape()) + " and dtype " + std::string(data.dtype().name()));
  }
  WriteBlockFrom(block, data.bytes());
}

void ZarrArray::WriteBlockFrom(std::span<const Index> block,
                               std::span<const std::byte> data) const {
  CheckBlockData(grid_, metadata_.dtype, block, data.size(), "WriteBlockFrom");
  ChunkScratch scratch;
  WritePart(block, data.data(), ByteStrides(grid_.BlockShape(block), metadata_.dtype.itemsize()),
            /*src_contiguous=*/true, scratch);
}

void ZarrArray::WriteBlockStrided(std::span<const Index> block, const std::byte* src,
                                  std::span<const Index> src_strides) const {
  grid_.CheckBlock(block);
  const Shape block_shape = grid_.BlockShape(block);
  if (src_strides.size() != block_shape.size()) {
    throw InvalidArgument("WriteBlockStrided: " + std::to_string(src_strides.size()) +
                          " strides for a block of " + std::to_string(block_shape.size()) +
                          " dimensions");
  }
  const Shape dense = ByteStrides(block_shape, metadata_.dtype.itemsize());
  ChunkScratch scratch;
  WritePart(block, src, src_strides, std::equal(dense.begin(), dense.end(), src_strides.begin()),
            scratch);
}

NDArray ZarrArray::Read(int max_threads) const {
  return ReadRegion(Region{Shape(metadata_.shape.size(), 0), metadata_.shape}, max_threads);
}

NDArray ZarrArray::ReadRegion(const Region& region, int max_threads) const {
  CheckRegion(region, metadata_.shape);
  const int threads = ResolveThreads(max_threads);
  NDArray out(region.shape, metadata_.dtype);
  if (out.size() == 0) return out;
  const Shape out_strides = ByteStrides(region.shape, metadata_.dtype.itemsize());
  std::byte* const out_data = out.mutable_bytes().data();
  const TouchedRange range = TouchedBlocks(grid_, region);
  const auto* sharded = dynamic_cast<const zarr_detail::ShardChunkCodec*>(codec_.get());
  if (sharded != nullptr && threads > 1 && ShapeSize(range.counts) < threads) {
    // Fewer shards than threads: each shard's index is read once, then its inner chunks
    // are read in parallel.
    ReadShardsByInnerChunks(*sharded, region, range, out_data, out_strides, threads);
    return out;
  }
  ScratchPool scratch_pool;
  ParallelFor(ShapeSize(range.counts), threads, [&](std::int64_t linear) {
    const TouchedBox touched = TouchedBoxAt(grid_, region, range, linear);
    ScratchPool::Lease scratch = scratch_pool.Take();
    ReadPart(touched.block, touched.box, out_data + ByteOffset(touched.out_start, out_strides),
             out_strides, IsContiguousIn(region.shape, touched.box.shape), scratch.scratch());
  });
  return out;
}

void ZarrArray::ReadRegionInto(const Region& region, std::byte* out,
                               std::span<const Index> out_strides) const {
  CheckRegion(region, metadata_.shape);
  if (out_strides.size() != region.shape.size()) {
    throw InvalidArgument("ReadRegionInto: " + std::to_string(out_strides.size()) +
                          " strides for a region of " + std::to_string(region.shape.size()) +
                          " dimensions");
  }
  if (ShapeSize(region.shape) == 0) return;
  const Shape dense = ByteStrides(region.shape, metadata_.dtype.itemsize());
  const bool out_dense = std::equal(dense.begin(), dense.end(), out_strides.begin());
  const TouchedRange range = TouchedBlocks(grid_, region);
  ChunkScratch scratch;
  for (Index linear = 0; linear < ShapeSize(range.counts); ++linear) {
    const TouchedBox touched = TouchedBoxAt(grid_, region, range, linear);
    ReadPart(touched.block, touched.box, out + ByteOffset(touched.out_start, out_strides),
             out_strides, out_dense && IsContiguousIn(region.shape, touched.box.shape), scratch);
  }
}

void ZarrArray::ReadShardsByInnerChunks(const zarr_detail::ShardChunkCodec& codec,
                                        const Region& region, const TouchedRange& shards,
                                        std::byte* out, std::span<const Index> out_strides,
                                        int threads) const {
  const Index shard_count = ShapeSize(shards.counts);
  std::vector<std::string> keys(static_cast<std::size_t>(shard_count));
  std::vector<std::optional<ShardIndex>> indexes(static_cast<std::size_t>(shard_count));
  // Each shard opened once: its index and inner chunks are read from that one version.
  std::vector<std::unique_ptr<const PinnedValueStore>> opened(
      static_cast<std::size_t>(shard_count));
  ParallelFor(shard_count, threads, [&](std::int64_t linear) {
    const TouchedBox touched = TouchedBoxAt(grid_, region, shards, linear);
    const auto slot = static_cast<std::size_t>(linear);
    keys[slot] = zarr_detail::FormatChunkKey(path_, touched.block, metadata_.dimension_separator,
                                             metadata_.key_encoding);
    opened[slot] = std::make_unique<const PinnedValueStore>(*store_, keys[slot]);
    indexes[slot] = codec.ReadIndex(ValueRef{opened[slot].get(), &keys[slot], ShardRange{}});
  });
  // The inner chunks of the top-level sharding (a nested shard is read as one part).
  const ChunkGrid inner_grid(metadata_.shape, codec.inner_grid().chunks());
  const TouchedRange parts = TouchedBlocks(inner_grid, region);
  ScratchPool scratch_pool;
  ParallelFor(ShapeSize(parts.counts), threads, [&](std::int64_t linear) {
    const TouchedBox touched = TouchedBoxAt(inner_grid, region, parts, linear);
    // The part's shard, its slot among the touched shards, and the part as a box of it.
    Index slot = 0;
    Region box{Shape(touched.block.size()), touched.box.shape};
    for (std::size_t dim = 0; dim < touched.block.size(); ++dim) {
      const Index start = touched.block[dim] * inner_grid.chunks()[dim] + touched.box.start[dim];
      const Index shard = start / grid_.chunks()[dim];
      slot = slot * shards.counts[dim] + (shard - shards.first[dim]);
      box.start[dim] = start - shard * grid_.chunks()[dim];
    }
    ScratchPool::Lease scratch = scratch_pool.Take();
    const auto index = static_cast<std::size_t>(slot);
    codec.ReadPartIndexed(ValueRef{opened[index].get(), &keys[index], ShardRange{}}, indexes[index],
                          box, out + ByteOffset(touched.out_start, out_strides), out_strides,
                          scratch.scratch());
  });
}

void ZarrArray::Write(const NDArray& data, int max_threads) const {
  if (data.shape() != metadata_.shape || data.dtype() != metadata_.dtype) {
    throw InvalidArgument("Write: the array at " + DescribePath(*store_, path_) + " needs shape " +
                          ShapeToString(metadata_.shape) + " and dtype " +
                          std::string(metadata_.dtype.name()) + ", got shape " +
                          ShapeToString(data.shape()) + " and dtype " +
                          std::string(data.dtype().name()));
  }
  const int threads = ResolveThreads(max_threads);
  const Shape data_strides = ByteStrides(metadata_.shape, metadata_.dtype.itemsize());
  const std::byte* const data_bytes = data.bytes().data();
  ScratchPool scratch_pool;
  ParallelFor(grid_.num_blocks(), threads, [&](std::int64_t linear) {
    const Shape block = grid_.BlockIndex(linear);
    const Region region = grid_.BlockRegion(block);
    ScratchPool::Lease scratch = scratch_pool.Take();
    WritePart(block, data_bytes + ByteOffset(region.start, data_strides), data_strides,
              IsContiguousIn(metadata_.shape, region.shape), scratch.scratch());
  });
}

std::optional<std::int64_t> ZarrArray::StoredChunkSize(std::span<const Index> block) const {
  return store_->SizeOf(ChunkKey(block));
}

ZarrArray::StoredChunks ZarrArray::CountStoredChunks() const {
  const std::string prefix = path_.empty() ? std::string() : path_ + "/";
  StoredChunks result;
  // One listing with sizes: an object store would otherwise answer one HEAD per chunk.
  for (const ListedKey& listed : store_->ListWithSizes(prefix)) {
    if (!zarr_detail::IsChunkKey(std::string_view(listed.key).substr(prefix.size()),
                                 metadata_.dimension_separator, metadata_.key_encoding, grid_)) {
      continue;
    }
    ++result.count;
    result.bytes += listed.size;
    result.largest = std::max(result.largest, listed.size);
  }
  return result;
}

std::int64_t ZarrArray::ReadRegionScratchBytes(const Region& region, std::int64_t max_stored_chunk,
                                               bool out_dense) const {
  CheckRegion(region, metadata_.shape);
  ScratchBytes held;
  if (ShapeSize(region.shape) == 0) return 0;
  // The boxes ReadRegion walks, one of each kind: a block's scratch depends only on its
  // box, so the most any block needs is the most one of these needs.
  const Index stored = std::min(max_stored_chunk, codec_->max_leaf_stored_bytes());
  for (Shape& block : DistinctTouchedBlocks(grid_, region)) {
    const TouchedBox touched = zarr_detail::TouchedBoxOf(grid_, region, std::move(block));
    held.Grow(codec_->ReadScratch(
        touched.box, out_dense && IsContiguousIn(region.shape, touched.box.shape), stored));
  }
  return held.Total();
}

std::int64_t ZarrArray::WriteBlockScratchBytes(std::span<const Index> block,
                                               bool src_contiguous) const {
  grid_.CheckBlock(block);
  return codec_->WriteScratch(grid_.BlockShape(block), src_contiguous).Total();
}

std::int64_t ZarrArray::MaxStoredChunkBytes() const { return codec_->max_stored_bytes(); }

std::int64_t ZarrArray::MaxEncodedChunkBytes() const { return codec_->max_encoded_bytes(); }

}  // namespace tessera
