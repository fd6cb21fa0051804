#include "tessera/storage/zarr_array.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "chunk_layout.hpp"
#include "metadata_sizes.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/parallel.hpp"

namespace tessera {
namespace {

using zarr_detail::ByteStrides;
using zarr_detail::ChunkLayout;

constexpr std::string_view kArrayMetadataKey = ".zarray";
constexpr std::string_view kAttributesKey = ".zattrs";
constexpr std::string_view kGroupKey = ".zgroup";

// The largest item size of a Tessera dtype (float64, int64, uint64).
constexpr std::size_t kMaxItemSize = 8;

// .zarray is a few hundred bytes and .zattrs a small dictionary of user attributes;
// even long CF attribute lists stay far below one MiB. Reading at most 16 MiB bounds
// what a corrupt, hostile or misplaced file (a chunk renamed .zarray, a sparse file)
// can make Open allocate, while leaving room for any real document.
constexpr std::int64_t kMaxMetadataBytes = std::int64_t{16} << 20;

// A stored chunk larger than its codec's MaxEncodedSize(chunk bytes) cannot decode to
// one chunk, so it is refused before it is read. Tessera's encoders stay within that
// bound, but other writers may frame the same data a little larger (a gzip member
// carrying a file name or comment, a zstd frame with a checksum or a skippable frame,
// deflate stored blocks at a small memLevel, about 1% more): the limit adds 1/64 of
// the bound plus 64 KiB, still far below the allocations it exists to prevent.
constexpr std::int64_t kEncodedSlackDivisor = 64;
constexpr std::int64_t kEncodedSlackBytes = std::int64_t{64} << 10;

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

// Builds the codecs of a pipeline; InvalidArgument names the stage that failed.
std::shared_ptr<const Codec> MakeStage(const CodecConfig& config, const std::string& stage) {
  try {
    return MakeCodec(config);
  } catch (const InvalidArgument& error) {
    throw InvalidArgument(stage + " (id \"" + config.id + "\"): " + error.what());
  }
}

// Codec::Decode needs the exact decoded size. Only the last decoding stage's output
// size is known (one chunk); a compressor after a filter, or two filters, would need
// the unknown size of the filter's encoded bytes. Returns why a pipeline cannot be
// decoded, or nullopt when it can. Such arrays still open (for `tessera info`) and
// write; reading a stored chunk of one is a FormatError, creating one InvalidArgument.
std::optional<std::string> UndecodablePipeline(const ZarrMetadata& metadata) {
  const std::size_t stages = metadata.filters.size() + (metadata.compressor ? 1 : 0);
  if (stages <= 1) return std::nullopt;
  std::string ids;
  for (const CodecConfig& filter : metadata.filters) ids += (ids.empty() ? "" : ", ") + filter.id;
  return "filters [" + ids + "]" +
         (metadata.compressor ? " followed by compressor \"" + metadata.compressor->id + "\""
                              : std::string()) +
         ": Tessera decodes only one compressing stage per chunk (the codec API needs each "
         "stage's decoded size); use either one filter or one compressor";
}

// The buffers one thread reuses across the chunks it handles. Reuse matters: touching fresh pages
// costs more than compressing them.
struct ChunkScratch {
  Buffer stored;   // a chunk as read from the store
  Buffer decoded;  // a decoded (read) or gathered (write) chunk
  Buffer encoded;  // a chunk encoded for the store
};

// Scratch for concurrently running chunk tasks; at most one per running task exists.
class ScratchPool {
 public:
  class Lease {
   public:
    Lease(ScratchPool& pool, ChunkScratch scratch) : pool_(pool), scratch_(std::move(scratch)) {}
    ~Lease() { pool_.Return(std::move(scratch_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ChunkScratch& scratch() { return scratch_; }

   private:
    ScratchPool& pool_;
    ChunkScratch scratch_;
  };

  Lease Take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return Lease(*this, ChunkScratch());
    ChunkScratch scratch = std::move(free_.back());
    free_.pop_back();
    return Lease(*this, std::move(scratch));
  }

 private:
  void Return(ChunkScratch scratch) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(scratch));
  }

  std::mutex mutex_;
  std::vector<ChunkScratch> free_;  // GUARDED_BY(mutex_)
};

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
  const std::optional<std::int64_t> size = store.SizeOf(key);
  if (!size) return std::nullopt;
  check(*size);
  std::optional<Buffer> document = store.Get(key);
  if (document) check(document->size());  // replaced between SizeOf and Get
  return document;
}

// True when `key` (relative to an array's path) is shaped like a chunk key of some
// array: digits and the separators '.' and '/' only. Metadata (".zarray", ".zgroup")
// and other files always contain another character.
bool LooksLikeChunkKey(std::string_view key) {
  return !key.empty() && key.find_first_not_of("0123456789./") == std::string_view::npos;
}

// Parses one decimal chunk coordinate (no sign, no leading zeros) below `limit`.
bool ParseCoordinate(std::string_view text, Index limit, Index& value) {
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return false;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && ptr == end && value >= 0 && value < limit;
}

// True when `key` (relative to the array's path) is the key of a block of `grid`.
bool IsChunkKey(std::string_view key, char separator, const ChunkGrid& grid) {
  if (grid.ndim() == 0) return key == "0";
  Index coordinate = 0;
  for (int dim = 0; dim < grid.ndim(); ++dim) {
    const std::size_t end = dim + 1 < grid.ndim() ? key.find(separator) : key.size();
    if (end == std::string_view::npos) return false;
    if (!ParseCoordinate(key.substr(0, end), grid.grid_shape()[static_cast<std::size_t>(dim)],
                         coordinate)) {
      return false;
    }
    key.remove_prefix(std::min(key.size(), end + 1));
  }
  return true;
}

// Everything chunk I/O needs from one ZarrArray, with the per-array constants
// (layout, fill element, chunk size) computed once per call. Const methods are
// thread-safe; each thread passes its own scratch buffer.
class ChunkIo {
 public:
  ChunkIo(Store& store, std::string_view path, const ZarrMetadata& metadata, const ChunkGrid& grid,
          const Codec* compressor, std::span<const std::shared_ptr<const Codec>> filters)
      : store_(store),
        path_(path),
        metadata_(metadata),
        grid_(grid),
        compressor_(compressor),
        filters_(filters),
        layout_(ChunkLayout::For(metadata)),
        chunk_nbytes_(layout_.ChunkBytes()),
        max_stored_bytes_(MaxStoredBytes()),
        undecodable_(UndecodablePipeline(metadata)) {
    const std::size_t itemsize = static_cast<std::size_t>(layout_.itemsize);
    EncodeFillElement(metadata.fill_value, metadata.dtype, std::span(fill_native_).first(itemsize));
    layout_.StoredFill(std::span(fill_native_).first(itemsize),
                       std::span(fill_stored_).first(itemsize));
  }

  std::string Key(std::span<const Index> block) const {
    std::string key;
    if (block.empty()) key = "0";
    for (std::size_t dim = 0; dim < block.size(); ++dim) {
      if (dim > 0) key += metadata_.dimension_separator;
      key += std::to_string(block[dim]);
    }
    return path_.empty() ? key : JoinKey(path_, key);
  }

  // Reads `box` (chunk coordinates) of a block's chunk into `dst`, whose byte strides
  // are `dst_strides`; `dst_contiguous` says the box is one C-order range at `dst`.
  // A chunk is read only after its stored size is checked (CheckStoredSize), so no
  // read allocates more than a valid encoding of one chunk can take.
  void ReadPart(std::span<const Index> block, const Region& box, std::byte* dst,
                std::span<const Index> dst_strides, bool dst_contiguous,
                ChunkScratch& scratch) const {
    const std::string key = Key(block);
    bool present = false;
    if (const std::optional<std::int64_t> stored_size = store_.SizeOf(key)) {
      CheckStoredSize(key, *stored_size);
      present = store_.GetInto(key, scratch.stored);
      // The key may have been replaced between SizeOf and GetInto.
      if (present) CheckStoredSize(key, scratch.stored.size());
    }
    const Buffer& stored = scratch.stored;
    if (!present) {
      zarr_detail::FillBox(box.shape, dst, dst_strides, FillNative());
      return;
    }
    // Fast path: a whole chunk whose memory order is C order decodes straight into
    // its destination; byte swapping and bool normalisation then run in place.
    if (dst_contiguous && box.shape == layout_.chunk_shape && layout_.MemoryOrderIsC()) {
      const std::span<std::byte> out(dst, static_cast<std::size_t>(chunk_nbytes_));
      DecodeInto(key, stored.span(), out);
      zarr_detail::FinishInPlace(layout_, out);
      return;
    }
    std::span<const std::byte> decoded;
    if (Decoder() == nullptr) {
      decoded = stored.span();  // CheckStoredSize: exactly chunk_nbytes_
    } else {
      scratch.decoded.ResizeUninitialized(chunk_nbytes_);
      DecodeInto(key, stored.span(), scratch.decoded.span());
      decoded = scratch.decoded.span();
    }
    zarr_detail::ChunkToBlock(layout_, decoded, box, dst, dst_strides);
  }

  // Writes a block's chunk from `src` (the block, byte strides `src_strides`;
  // `src_contiguous` says it is one C-order range).
  void WriteFrom(std::span<const Index> block, const std::byte* src,
                 std::span<const Index> src_strides, bool src_contiguous,
                 ChunkScratch& scratch) const {
    const Shape block_shape = grid_.BlockShape(block);
    std::span<const std::byte> raw;
    if (src_contiguous && layout_.IsIdentityFor(block_shape)) {
      raw = {src, static_cast<std::size_t>(chunk_nbytes_)};
    } else {
      scratch.decoded.ResizeUninitialized(chunk_nbytes_);
      zarr_detail::BlockToChunk(layout_, block_shape, src, src_strides, FillStored(),
                                scratch.decoded.span());
      raw = scratch.decoded.span();
    }
    Buffer filtered;
    for (const std::shared_ptr<const Codec>& filter : filters_) {
      filtered = filter->Encode(raw, layout_.itemsize);
      raw = filtered.span();
    }
    if (compressor_ != nullptr) {
      compressor_->EncodeInto(raw, layout_.itemsize, scratch.encoded);
      raw = scratch.encoded.span();
    }
    store_.Set(Key(block), raw);
  }

  std::span<const std::byte> FillNative() const {
    return std::span(fill_native_).first(static_cast<std::size_t>(layout_.itemsize));
  }

 private:
  std::span<const std::byte> FillStored() const {
    return std::span(fill_stored_).first(static_cast<std::size_t>(layout_.itemsize));
  }

  // The one decoding stage (see UndecodablePipeline), or null when uncompressed.
  const Codec* Decoder() const {
    if (compressor_ != nullptr) return compressor_;
    return filters_.empty() ? nullptr : filters_.front().get();
  }

  // The largest stored size of a chunk that can decode: exactly the chunk's bytes
  // when uncompressed, else the decoding stage's bound plus the slack for other writers.
  Index MaxStoredBytes() const {
    const Codec* decoder = Decoder();
    if (decoder == nullptr) return chunk_nbytes_;
    const Index bound = decoder->MaxEncodedSize(chunk_nbytes_);
    return bound + bound / kEncodedSlackDivisor + kEncodedSlackBytes;
  }

  // Throws FormatError naming the chunk's key when a stored chunk of `stored_size`
  // bytes cannot be decoded into one chunk, before anything reads it.
  void CheckStoredSize(const std::string& key, Index stored_size) const {
    if (undecodable_) {
      throw FormatError(store_.DescribeKey(key) + ": cannot decode the chunk: " + *undecodable_);
    }
    const Codec* decoder = Decoder();
    if (decoder == nullptr) {
      if (stored_size == chunk_nbytes_) return;
      throw FormatError(
          store_.DescribeKey(key) + ": stored chunk is " + std::to_string(stored_size) +
          " bytes, but an uncompressed chunk of shape " + ShapeToString(layout_.chunk_shape) +
          " and dtype " + std::string(metadata_.dtype.name()) + " is " +
          std::to_string(chunk_nbytes_) +
          " bytes; the chunk is truncated or was written with another chunk shape");
    }
    if (stored_size <= max_stored_bytes_) return;
    throw FormatError(store_.DescribeKey(key) + ": stored chunk is " + std::to_string(stored_size) +
                      " bytes, but the largest valid " + DescribeCodec(decoder->config()) +
                      " encoding of a chunk of shape " + ShapeToString(layout_.chunk_shape) +
                      " and dtype " + std::string(metadata_.dtype.name()) + " (" +
                      std::to_string(chunk_nbytes_) + " bytes decoded) is " +
                      std::to_string(max_stored_bytes_) +
                      " bytes; the chunk is corrupt or was written with another chunk shape, "
                      "dtype or codec");
  }

  // Decodes a stored chunk into exactly `out` (chunk_nbytes_ bytes).
  // REQUIRES: CheckStoredSize(key, stored.size()) passed.
  void DecodeInto(const std::string& key, std::span<const std::byte> stored,
                  std::span<std::byte> out) const {
    const Codec* decoder = Decoder();
    if (decoder == nullptr) {
      if (!stored.empty()) std::memcpy(out.data(), stored.data(), stored.size());
      return;
    }
    try {
      decoder->Decode(stored, out);
    } catch (const FormatError& error) {
      throw FormatError(store_.DescribeKey(key) + ": " + error.what());
    }
  }

  Store& store_;
  std::string_view path_;
  const ZarrMetadata& metadata_;
  const ChunkGrid& grid_;
  const Codec* compressor_;
  std::span<const std::shared_ptr<const Codec>> filters_;
  ChunkLayout layout_;
  Index chunk_nbytes_;
  Index max_stored_bytes_;  // CheckStoredSize's limit
  std::optional<std::string> undecodable_;
  std::array<std::byte, kMaxItemSize> fill_native_{};
  std::array<std::byte, kMaxItemSize> fill_stored_{};
};

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
  if (const std::optional<std::string> problem = UndecodablePipeline(array.metadata_)) {
    throw InvalidArgument(*problem + "; Tessera could not read this array back");
  }
  const std::string metadata_text = ZarrMetadataToJson(array.metadata_);
  const bool has_attributes = array.attributes_ != ZarrAttributes{};
  const std::string attributes_text =
      has_attributes ? ZarrAttributesToJson(array.attributes_) : std::string();

  Store& target = *array.store_;
  // Chunks of a previous array at this path would read as this array's data (or as
  // corrupt chunks): remove them first, as zarr-python's mode="w" clears the path.
  const std::string prefix = array.path_.empty() ? std::string() : array.path_ + "/";
  for (const std::string& key : target.List(prefix)) {
    if (LooksLikeChunkKey(std::string_view(key).substr(prefix.size()))) target.Erase(key);
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

  // The blocks the region touches: first_block + [0, block_counts) per dimension.
  const std::size_t ndim = region.shape.size();
  Shape first_block(ndim);
  Shape block_counts(ndim);
  for (std::size_t dim = 0; dim < ndim; ++dim) {
    const Index chunk = metadata_.chunks[dim];
    first_block[dim] = region.start[dim] / chunk;
    block_counts[dim] = (region.start[dim] + region.shape[dim] - 1) / chunk - first_block[dim] + 1;
  }
  ScratchPool scratch_pool;
  ParallelFor(ShapeSize(block_counts), threads, [&](std::int64_t linear) {
    Shape block(ndim);
    for (std::size_t dim = ndim; dim-- > 0;) {
      block[dim] = first_block[dim] + linear % block_counts[dim];
      linear /= block_counts[dim];
    }
    const Region block_region = grid_.BlockRegion(block);
    Region box{Shape(ndim), Shape(ndim)};  // in chunk coordinates
    Shape out_start(ndim);
    for (std::size_t dim = 0; dim < ndim; ++dim) {
      const Index begin = std::max(block_region.start[dim], region.start[dim]);
      const Index end = std::min(block_region.start[dim] + block_region.shape[dim],
                                 region.start[dim] + region.shape[dim]);
      box.start[dim] = begin - block_region.start[dim];
      box.shape[dim] = end - begin;
      out_start[dim] = begin - region.start[dim];
    }
    ScratchPool::Lease scratch = scratch_pool.Take();
    io.ReadPart(block, box, out_data + ByteOffset(out_start, out_strides), out_strides,
                IsContiguousIn(region.shape, box.shape), scratch.scratch());
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
    if (!IsChunkKey(std::string_view(key).substr(prefix.size()), metadata_.dimension_separator,
                    grid_)) {
      continue;
    }
    if (const std::optional<std::int64_t> size = store_->SizeOf(key)) {
      ++result.count;
      result.bytes += *size;
    }
  }
  return result;
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
