#include "tessera/storage/zarr_array.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>

#include "chunk_io.hpp"
#include "chunk_key.hpp"
#include "chunk_layout.hpp"
#include "metadata_sizes.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/parallel.hpp"

namespace tessera {
namespace {

using zarr_detail::ByteStrides;
using zarr_detail::ChunkIo;
using zarr_detail::ChunkScratch;
using zarr_detail::kMaxItemSize;
using zarr_detail::ScratchPool;

constexpr std::string_view kArrayMetadataKey = ".zarray";
constexpr std::string_view kAttributesKey = ".zattrs";
constexpr std::string_view kGroupKey = ".zgroup";

// .zarray is a few hundred bytes and .zattrs a small dictionary of user attributes;
// even long CF attribute lists stay far below one MiB. Reading at most 16 MiB bounds
// what a corrupt, hostile or misplaced file (a chunk renamed .zarray, a sparse file)
// can make Open allocate, while leaving room for any real document.
constexpr std::int64_t kMaxMetadataBytes = std::int64_t{16} << 20;

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

Index ByteOffset(std::span<const Index> position, std::span<const Index> byte_strides) {
  Index offset = 0;
  for (std::size_t dim = 0; dim < position.size(); ++dim) {
    offset += position[dim] * byte_strides[dim];
  }
  return offset;
}

// One chunk a region read touches: the block, the part of its chunk inside the region
// (chunk coordinates), and where that part starts in the region.
struct TouchedBox {
  Shape block;
  Region box;
  Shape out_start;
};

// The blocks a region touches: first + [0, counts) per dimension.
struct TouchedRange {
  Shape first;
  Shape counts;
};

// The chunk of `grid` that `region` touches as the `linear`-th (C order) of `range`.
TouchedBox TouchedBoxAt(const ChunkGrid& grid, const Region& region, const TouchedRange& range,
                        Index linear) {
  const std::size_t ndim = region.shape.size();
  TouchedBox touched{Shape(ndim), Region{Shape(ndim), Shape(ndim)}, Shape(ndim)};
  for (std::size_t dim = ndim; dim-- > 0;) {
    touched.block[dim] = range.first[dim] + linear % range.counts[dim];
    linear /= range.counts[dim];
  }
  const Region block_region = grid.BlockRegion(touched.block);
  for (std::size_t dim = 0; dim < ndim; ++dim) {
    const Index begin = std::max(block_region.start[dim], region.start[dim]);
    const Index end = std::min(block_region.start[dim] + block_region.shape[dim],
                               region.start[dim] + region.shape[dim]);
    touched.box.start[dim] = begin - block_region.start[dim];
    touched.box.shape[dim] = end - begin;
    touched.out_start[dim] = begin - region.start[dim];
  }
  return touched;
}

// The first block `region` touches and how many it touches per dimension.
TouchedRange TouchedBlocks(const ChunkGrid& grid, const Region& region) {
  const std::size_t ndim = region.shape.size();
  TouchedRange range{Shape(ndim), Shape(ndim)};
  for (std::size_t dim = 0; dim < ndim; ++dim) {
    const Index chunk = grid.chunks()[dim];
    range.first[dim] = region.start[dim] / chunk;
    range.counts[dim] = (region.start[dim] + region.shape[dim] - 1) / chunk - range.first[dim] + 1;
  }
  return range;
}

// Builds the codecs of a pipeline; InvalidArgument names the stage that failed.
std::shared_ptr<const Codec> MakeStage(const CodecConfig& config, const std::string& stage) {
  try {
    return MakeCodec(config);
  } catch (const InvalidArgument& error) {
    throw InvalidArgument(stage + " (id \"" + config.id + "\"): " + error.what());
  }
}

// Reads a metadata document (.zarray, .zattrs) of at most kMaxMetadataBytes; nullopt
// when absent. FormatError naming the key for a larger one, which is never read.
std::optional<Buffer> GetMetadataDocument(const Store& store, const std::string& key) {
  auto check = [&](std::int64_t size) {
    if (size <= kMaxMetadataBytes) return;
    throw FormatError(store.DescribeKey(key) + ": the document is " + std::to_string(size) +
                      " bytes, more than the " + std::to_string(kMaxMetadataBytes) +
                      " bytes (16 MiB) Tessera reads for Zarr metadata; real metadata is a few "
                      "KB, so this file is corrupt or not Zarr metadata");
  };
  Buffer document;
  const std::optional<std::int64_t> size = store.GetInto(key, document, kMaxMetadataBytes);
  if (!size) return std::nullopt;
  check(*size);
  return document;
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

}  // namespace

ZarrArray::ZarrArray(std::shared_ptr<Store> store, std::string path, ZarrMetadata metadata,
                     ZarrAttributes attributes)
    : store_(std::move(store)),
      path_(std::move(path)),
      metadata_(std::move(metadata)),
      grid_(metadata_.grid()),
      attributes_(std::move(attributes)) {
  if (metadata_.order != 'C' && metadata_.order != 'F') {
    throw InvalidArgument(std::string("order must be 'C' or 'F', got '") + metadata_.order + "'");
  }
  if (metadata_.dimension_separator != '.' && metadata_.dimension_separator != '/') {
    throw InvalidArgument(std::string("dimension_separator must be '.' or '/', got '") +
                          metadata_.dimension_separator + "'");
  }
  if (!attributes_.dimension_names.empty() &&
      attributes_.dimension_names.size() != metadata_.shape.size()) {
    throw InvalidArgument("dimension names (_ARRAY_DIMENSIONS) give " +
                          std::to_string(attributes_.dimension_names.size()) +
                          " names, but the array of shape " + ShapeToString(metadata_.shape) +
                          " has " + std::to_string(metadata_.shape.size()) + " dimensions");
  }
  // grid_ has checked shape and chunks; now the byte sizes and the fill value, so that
  // Create writes nothing that ParseZarrMetadata would refuse to read back.
  if (const std::optional<zarr_detail::SizeProblem> problem = zarr_detail::CheckSizes(metadata_)) {
    throw InvalidArgument("metadata key \"" + problem->key + "\": expected " + problem->expected +
                          ", found " + problem->found);
  }
  std::array<std::byte, kMaxItemSize> fill_element{};
  EncodeFillElement(
      metadata_.fill_value, metadata_.dtype,
      std::span(fill_element).first(static_cast<std::size_t>(metadata_.dtype.itemsize())));
  if (metadata_.compressor) compressor_ = MakeStage(*metadata_.compressor, "compressor");
  for (std::size_t index = 0; index < metadata_.filters.size(); ++index) {
    filters_.push_back(
        MakeStage(metadata_.filters[index], "filters[" + std::to_string(index) + "]"));
  }
}

ZarrArray ZarrArray::Open(std::shared_ptr<Store> store, std::string path) {
  if (store == nullptr) throw InvalidArgument("ZarrArray::Open: store is null");
  if (!path.empty()) ValidateKey(path);
  const std::string metadata_key = JoinKey(path, kArrayMetadataKey);
  const std::optional<Buffer> metadata_bytes = GetMetadataDocument(*store, metadata_key);
  if (!metadata_bytes) {
    std::string message = "no Zarr array at " + DescribePath(*store, path) + ": .zarray not found";
    if (IsZarrGroup(*store, path)) {
      message += "; this path holds a Zarr group (.zgroup), open one of the arrays inside it";
    }
    throw StorageError(message);
  }
  const std::string where = store->DescribeKey(metadata_key);
  const auto as_text = [](const Buffer& bytes) {
    return std::string_view(reinterpret_cast<const char*>(bytes.data()),
                            static_cast<std::size_t>(bytes.size()));
  };
  ZarrMetadata metadata = ParseZarrMetadata(as_text(*metadata_bytes), where);

  ZarrAttributes attributes;
  const std::string attributes_key = JoinKey(path, kAttributesKey);
  const std::string attributes_where = store->DescribeKey(attributes_key);
  if (const std::optional<Buffer> attributes_bytes = GetMetadataDocument(*store, attributes_key)) {
    attributes = ParseZarrAttributes(as_text(*attributes_bytes), attributes_where);
  }
  if (!attributes.dimension_names.empty() &&
      attributes.dimension_names.size() != metadata.shape.size()) {
    throw FormatError(attributes_where + ": key \"_ARRAY_DIMENSIONS\": expected " +
                      std::to_string(metadata.shape.size()) + " names (one per dimension of " +
                      ShapeToString(metadata.shape) + "), found " +
                      std::to_string(attributes.dimension_names.size()));
  }
  try {
    return ZarrArray(std::move(store), std::move(path), std::move(metadata), std::move(attributes));
  } catch (const InvalidArgument& error) {
    throw FormatError(where + ": " + error.what());
  }
}

ZarrArray ZarrArray::Create(std::shared_ptr<Store> store, std::string path, ZarrMetadata metadata,
                            ZarrAttributes attributes) {
  if (store == nullptr) throw InvalidArgument("ZarrArray::Create: store is null");
  if (!path.empty()) ValidateKey(path);
  // Everything that can be refused is checked, and both documents are serialized,
  // before the store is touched.
  ZarrArray array(std::move(store), std::move(path), std::move(metadata), std::move(attributes));
  const std::string metadata_text = ZarrMetadataToJson(array.metadata_);
  const bool has_attributes = array.attributes_ != ZarrAttributes{};
  const std::string attributes_text =
      has_attributes ? ZarrAttributesToJson(array.attributes_) : std::string();

  Store& target = *array.store_;
  // Chunks of a previous array at this path would read as this array's data (or as
  // corrupt chunks): remove them first, as zarr-python's mode="w" clears the path.
  const std::string prefix = array.path_.empty() ? std::string() : array.path_ + "/";
  for (const std::string& key : target.List(prefix)) {
    if (zarr_detail::LooksLikeChunkKey(std::string_view(key).substr(prefix.size())))
      target.Erase(key);
  }
  target.Set(JoinKey(array.path_, kArrayMetadataKey), std::string_view(metadata_text));
  const std::string attributes_key = JoinKey(array.path_, kAttributesKey);
  if (has_attributes) {
    target.Set(attributes_key, std::string_view(attributes_text));
  } else {
    target.Erase(attributes_key);  // a stale .zattrs would describe another array
  }
  return array;
}

std::string ZarrArray::ChunkKey(std::span<const Index> block) const {
  grid_.CheckBlock(block);
  return ChunkIo(*store_, path_, metadata_, grid_, compressor_.get(), filters_).Key(block);
}

NDArray ZarrArray::ReadBlock(std::span<const Index> block) const {
  grid_.CheckBlock(block);
  NDArray out(grid_.BlockShape(block), metadata_.dtype);
  ReadBlockInto(block, out.mutable_bytes());
  return out;
}

void ZarrArray::ReadBlockInto(std::span<const Index> block, std::span<std::byte> out) const {
  CheckBlockData(grid_, metadata_.dtype, block, out.size(), "ReadBlockInto");
  const ChunkIo io(*store_, path_, metadata_, grid_, compressor_.get(), filters_);
  const Shape block_shape = grid_.BlockShape(block);
  ChunkScratch scratch;
  io.ReadPart(block, Region{Shape(block_shape.size(), 0), block_shape}, out.data(),
              ByteStrides(block_shape, metadata_.dtype.itemsize()), /*dst_contiguous=*/true,
              scratch);
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
  const ChunkIo io(*store_, path_, metadata_, grid_, compressor_.get(), filters_);
  ChunkScratch scratch;
  io.WriteFrom(block, data.data(), ByteStrides(grid_.BlockShape(block), metadata_.dtype.itemsize()),
               /*src_contiguous=*/true, scratch);
}

NDArray ZarrArray::Read(int max_threads) const {
  const int threads = ResolveThreads(max_threads);
  NDArray out(metadata_.shape, metadata_.dtype);
  const ChunkIo io(*store_, path_, metadata_, grid_, compressor_.get(), filters_);
  const Shape out_strides = ByteStrides(metadata_.shape, metadata_.dtype.itemsize());
  std::byte* const out_data = out.mutable_bytes().data();
  ScratchPool scratch_pool;
  ParallelFor(grid_.num_blocks(), threads, [&](std::int64_t linear) {
    const Shape block = grid_.BlockIndex(linear);
    const Region region = grid_.BlockRegion(block);
    ScratchPool::Lease scratch = scratch_pool.Take();
    io.ReadPart(block, Region{Shape(block.size(), 0), region.shape},
                out_data + ByteOffset(region.start, out_strides), out_strides,
                IsContiguousIn(metadata_.shape, region.shape), scratch.scratch());
  });
  return out;
}

NDArray ZarrArray::ReadRegion(const Region& region, int max_threads) const {
  CheckRegion(region, metadata_.shape);
  const int threads = ResolveThreads(max_threads);
  NDArray out(region.shape, metadata_.dtype);
  if (out.size() == 0) return out;
  const ChunkIo io(*store_, path_, metadata_, grid_, compressor_.get(), filters_);
  const Shape out_strides = ByteStrides(region.shape, metadata_.dtype.itemsize());
  std::byte* const out_data = out.mutable_bytes().data();

  const TouchedRange range = TouchedBlocks(grid_, region);
  ScratchPool scratch_pool;
  ParallelFor(ShapeSize(range.counts), threads, [&](std::int64_t linear) {
    const TouchedBox touched = TouchedBoxAt(grid_, region, range, linear);
    ScratchPool::Lease scratch = scratch_pool.Take();
    io.ReadPart(touched.block, touched.box, out_data + ByteOffset(touched.out_start, out_strides),
                out_strides, IsContiguousIn(region.shape, touched.box.shape), scratch.scratch());
  });
  return out;
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
  const ChunkIo io(*store_, path_, metadata_, grid_, compressor_.get(), filters_);
  const Shape data_strides = ByteStrides(metadata_.shape, metadata_.dtype.itemsize());
  const std::byte* const data_bytes = data.bytes().data();
  ScratchPool scratch_pool;
  ParallelFor(grid_.num_blocks(), threads, [&](std::int64_t linear) {
    const Shape block = grid_.BlockIndex(linear);
    const Region region = grid_.BlockRegion(block);
    ScratchPool::Lease scratch = scratch_pool.Take();
    io.WriteFrom(block, data_bytes + ByteOffset(region.start, data_strides), data_strides,
                 IsContiguousIn(metadata_.shape, region.shape), scratch.scratch());
  });
}

std::optional<std::int64_t> ZarrArray::StoredChunkSize(std::span<const Index> block) const {
  return store_->SizeOf(ChunkKey(block));
}

ZarrArray::StoredChunks ZarrArray::CountStoredChunks() const {
  const std::string prefix = path_.empty() ? std::string() : path_ + "/";
  StoredChunks result;
  for (const std::string& key : store_->List(prefix)) {
    if (!zarr_detail::IsChunkKey(std::string_view(key).substr(prefix.size()),
                                 metadata_.dimension_separator, grid_)) {
      continue;
    }
    if (const std::optional<std::int64_t> size = store_->SizeOf(key)) {
      ++result.count;
      result.bytes += *size;
      result.largest = std::max(result.largest, *size);
    }
  }
  return result;
}

std::int64_t ZarrArray::ReadRegionScratchBytes(const Region& region,
                                               std::int64_t max_stored_chunk) const {
  CheckRegion(region, metadata_.shape);
  const ChunkIo io(*store_, path_, metadata_, grid_, compressor_.get(), filters_);
  ChunkIo::ScratchBytes held;
  if (ShapeSize(region.shape) == 0) return 0;
  // The same walk as ReadRegion: every block the region touches, and its box.
  const TouchedRange range = TouchedBlocks(grid_, region);
  const Index stored = std::min(max_stored_chunk, io.max_stored_bytes());
  for (Index linear = 0, count = ShapeSize(range.counts); linear < count; ++linear) {
    const TouchedBox touched = TouchedBoxAt(grid_, region, range, linear);
    held.Grow(io.ReadScratch(touched.box, IsContiguousIn(region.shape, touched.box.shape), stored));
  }
  return held.Total();
}

std::int64_t ZarrArray::WriteBlockScratchBytes(std::span<const Index> block) const {
  grid_.CheckBlock(block);
  const ChunkIo io(*store_, path_, metadata_, grid_, compressor_.get(), filters_);
  return io.WriteScratch(block, /*src_contiguous=*/true).Total();
}

std::int64_t ZarrArray::MaxStoredChunkBytes() const {
  return ChunkIo(*store_, path_, metadata_, grid_, compressor_.get(), filters_).max_stored_bytes();
}

void CreateZarrGroup(Store& store, std::string_view path) {
  if (!path.empty()) ValidateKey(path);
  store.Set(JoinKey(path, kGroupKey), std::string_view("{\n    \"zarr_format\": 2\n}"));
}

bool IsZarrGroup(const Store& store, std::string_view path) {
  if (!path.empty()) ValidateKey(path);
  return store.Contains(JoinKey(path, kGroupKey));
}

}  // namespace tessera
