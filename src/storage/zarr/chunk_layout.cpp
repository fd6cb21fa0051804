#include "chunk_layout.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/errors.hpp"

namespace tessera::zarr_detail {
namespace {

template <int kSize>
struct UIntOfSize;
template <>
struct UIntOfSize<1> {
  using type = std::uint8_t;
};
template <>
struct UIntOfSize<2> {
  using type = std::uint16_t;
};
template <>
struct UIntOfSize<4> {
  using type = std::uint32_t;
};
template <>
struct UIntOfSize<8> {
  using type = std::uint64_t;
};
template <>
struct UIntOfSize<16> {  // complex128: moved whole, never swapped whole
  struct type {
    std::uint64_t half[2];
  };
};
template <int kSize>
using UInt = typename UIntOfSize<kSize>::type;

inline std::uint16_t SwapBytes(std::uint16_t value) { return __builtin_bswap16(value); }
inline std::uint32_t SwapBytes(std::uint32_t value) { return __builtin_bswap32(value); }
inline std::uint64_t SwapBytes(std::uint64_t value) { return __builtin_bswap64(value); }

template <int kSize, ElementTransform kTransform>
inline void CopyElement(const std::byte* src, std::byte* dst) {
  if constexpr (kTransform == ElementTransform::kByteSwapHalves) {
    // A complex item: each part is a float of its own byte order.
    constexpr int kHalf = kSize / 2;
    UInt<kHalf> parts[2];
    std::memcpy(parts, src, kSize);
    parts[0] = SwapBytes(parts[0]);
    parts[1] = SwapBytes(parts[1]);
    std::memcpy(dst, parts, kSize);
    return;
  }
  UInt<kSize> value;
  std::memcpy(&value, src, kSize);
  if constexpr (kTransform == ElementTransform::kByteSwap) {
    static_assert(kSize <= 8, "16-byte items are complex: their halves are swapped");
    value = SwapBytes(value);
  } else if constexpr (kTransform == ElementTransform::kNormalizeBool) {
    value = static_cast<UInt<kSize>>(value != 0);
  }
  std::memcpy(dst, &value, kSize);
}

// Calls fn.operator()<kSize, kTransform>() for the item size and transform, so that
// the type dispatch happens once per call, never per element.
template <class Fn>
void DispatchItem(Index itemsize, ElementTransform transform, Fn&& fn) {
  using enum ElementTransform;
  const bool swap = transform == kByteSwap;
  switch (itemsize) {
    case 1:
      if (transform == kNormalizeBool) return fn.template operator()<1, kNormalizeBool>();
      return fn.template operator()<1, kNone>();  // swapping one byte is a no-op
    case 2:
      if (swap) return fn.template operator()<2, kByteSwap>();
      return fn.template operator()<2, kNone>();
    case 4:
      if (swap) return fn.template operator()<4, kByteSwap>();
      return fn.template operator()<4, kNone>();
    case 8:
      if (swap) return fn.template operator()<8, kByteSwap>();
      if (transform == kByteSwapHalves) return fn.template operator()<8, kByteSwapHalves>();
      return fn.template operator()<8, kNone>();
    case 16:
      if (transform == kByteSwapHalves) return fn.template operator()<16, kByteSwapHalves>();
      return fn.template operator()<16, kNone>();
    default:
      throw InvalidArgument("chunk layout: unsupported item size " + std::to_string(itemsize) +
                            " (expected 1, 2, 4, 8 or 16)");
  }
}

// One loop of a strided copy: `extent` steps of src_stride / dst_stride bytes.
struct LoopDim {
  Index extent;
  Index src_stride;
  Index dst_stride;
};

// Drops extent-1 dimensions, orders the rest by destination stride (outermost first,
// so the innermost loop walks the destination contiguously) and merges neighbours
// that are contiguous in both views, so that a contiguous box becomes one run.
// REQUIRES: every extent >= 1.
std::vector<LoopDim> PrepareLoop(std::span<const Index> shape, std::span<const Index> src_strides,
                                 std::span<const Index> dst_strides) {
  std::vector<LoopDim> dims;
  dims.reserve(shape.size());
  for (std::size_t dim = 0; dim < shape.size(); ++dim) {
    if (shape[dim] != 1) dims.push_back({shape[dim], src_strides[dim], dst_strides[dim]});
  }
  std::stable_sort(dims.begin(), dims.end(),
                   [](const LoopDim& a, const LoopDim& b) { return a.dst_stride > b.dst_stride; });
  std::vector<LoopDim> merged;
  merged.reserve(dims.size());
  for (const LoopDim& dim : dims) {
    if (!merged.empty() && merged.back().src_stride == dim.src_stride * dim.extent &&
        merged.back().dst_stride == dim.dst_stride * dim.extent) {
      merged.back() = {merged.back().extent * dim.extent, dim.src_stride, dim.dst_stride};
    } else {
      merged.push_back(dim);
    }
  }
  return merged;
}

// Calls fn(src_offset, dst_offset) for every position of `dims`, in C order.
template <class Fn>
void ForEachPosition(std::span<const LoopDim> dims, Fn&& fn) {
  if (dims.empty()) {
    fn(Index{0}, Index{0});
    return;
  }
  std::vector<Index> counter(dims.size(), 0);
  Index src = 0;
  Index dst = 0;
  while (true) {
    fn(src, dst);
    std::size_t dim = dims.size();
    while (true) {
      --dim;
      src += dims[dim].src_stride;
      dst += dims[dim].dst_stride;
      if (++counter[dim] < dims[dim].extent) break;
      src -= dims[dim].src_stride * dims[dim].extent;
      dst -= dims[dim].dst_stride * dims[dim].extent;
      counter[dim] = 0;
      if (dim == 0) return;
    }
  }
}

template <int kSize, ElementTransform kTransform>
void CopyRun(const std::byte* src, Index src_stride, std::byte* dst, Index dst_stride,
             Index count) {
  if (src_stride == kSize && dst_stride == kSize) {
    if constexpr (kTransform == ElementTransform::kNone) {
      std::memcpy(dst, src, static_cast<std::size_t>(count * kSize));
    } else {
      for (Index item = 0; item < count; ++item) {
        CopyElement<kSize, kTransform>(src + item * kSize, dst + item * kSize);
      }
    }
    return;
  }
  for (Index item = 0; item < count; ++item) {
    CopyElement<kSize, kTransform>(src + item * src_stride, dst + item * dst_stride);
  }
}

// A transposing copy of a 2-d box where `outer` is contiguous in the source and
// `inner` is contiguous in the destination. Square tiles keep both sides in cache:
// 32 x 32 items is 8 KiB per side for 8-byte items, well inside L1.
template <int kSize, ElementTransform kTransform>
void CopyTiled(const std::byte* src, const LoopDim& outer, const LoopDim& inner, std::byte* dst) {
  constexpr Index kTile = 32;
  for (Index outer_begin = 0; outer_begin < outer.extent; outer_begin += kTile) {
    const Index outer_end = std::min(outer_begin + kTile, outer.extent);
    for (Index inner_begin = 0; inner_begin < inner.extent; inner_begin += kTile) {
      const Index inner_end = std::min(inner_begin + kTile, inner.extent);
      for (Index o = outer_begin; o < outer_end; ++o) {
        const std::byte* src_row = src + o * outer.src_stride;
        std::byte* dst_row = dst + o * outer.dst_stride;
        for (Index i = inner_begin; i < inner_end; ++i) {
          CopyElement<kSize, kTransform>(src_row + i * inner.src_stride,
                                         dst_row + i * inner.dst_stride);
        }
      }
    }
  }
}

template <int kSize, ElementTransform kTransform>
void CopyLoop(std::span<const LoopDim> dims, const std::byte* src, std::byte* dst) {
  if (dims.empty()) {
    CopyElement<kSize, kTransform>(src, dst);
    return;
  }
  const LoopDim inner = dims.back();
  const std::span<const LoopDim> outer = dims.first(dims.size() - 1);
  if (inner.src_stride != kSize) {
    // The source is strided along the destination's rows: if another dimension is
    // contiguous in the source, this is a transposition; copy it in tiles.
    for (std::size_t dim = 0; dim < outer.size(); ++dim) {
      if (outer[dim].src_stride != kSize) continue;
      std::vector<LoopDim> rest(outer.begin(), outer.end());
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(dim));
      const LoopDim transposed = outer[dim];
      ForEachPosition(rest, [&](Index src_offset, Index dst_offset) {
        CopyTiled<kSize, kTransform>(src + src_offset, transposed, inner, dst + dst_offset);
      });
      return;
    }
  }
  ForEachPosition(outer, [&](Index src_offset, Index dst_offset) {
    CopyRun<kSize, kTransform>(src + src_offset, inner.src_stride, dst + dst_offset,
                               inner.dst_stride, inner.extent);
  });
}

template <int kSize>
void FillRun(std::byte* dst, Index stride, Index count, std::span<const std::byte> element) {
  if constexpr (kSize == 1) {
    if (stride == 1) {
      std::memset(dst, std::to_integer<int>(element[0]), static_cast<std::size_t>(count));
      return;
    }
  }
  UInt<kSize> value;
  std::memcpy(&value, element.data(), kSize);
  if (stride == kSize) {
    for (Index item = 0; item < count; ++item) std::memcpy(dst + item * kSize, &value, kSize);
    return;
  }
  for (Index item = 0; item < count; ++item) std::memcpy(dst + item * stride, &value, kSize);
}

void FillStrided(std::byte* dst, Index stride, Index count, std::span<const std::byte> element) {
  DispatchItem(static_cast<Index>(element.size()), ElementTransform::kNone,
               [&]<int kSize, ElementTransform>() { FillRun<kSize>(dst, stride, count, element); });
}

// The padding of a chunk, walked in its memory order: dimension `level` of the
// chunk's memory order has extent chunk[level], of which the first block[level]
// belong to the block; one step of it is step[level] bytes.
struct PadPlan {
  Shape chunk;
  Shape block;
  Shape step;
  std::vector<bool> suffix_full;  // [level]: block == chunk in every level >= level
  std::span<const std::byte> fill;
};

void PadLevel(const PadPlan& plan, std::size_t level, std::byte* dst) {
  if (plan.suffix_full[level]) return;
  const Index step = plan.step[level];
  if (level + 1 < plan.chunk.size()) {
    for (Index index = 0; index < plan.block[level]; ++index) {
      PadLevel(plan, level + 1, dst + index * step);
    }
  }
  const Index itemsize = static_cast<Index>(plan.fill.size());
  const Index tail_items = (plan.chunk[level] - plan.block[level]) * (step / itemsize);
  FillStrided(dst + plan.block[level] * step, itemsize, tail_items, plan.fill);
}

}  // namespace

ChunkLayout ChunkLayout::For(const ZarrMetadata& metadata) {
  return For(metadata.chunks, metadata.dtype, metadata.codec_chain());
}

ChunkLayout ChunkLayout::For(Shape chunk_shape, DType dtype, const ZarrCodecChain& chain) {
  ChunkLayout layout;
  layout.chunk_shape = std::move(chunk_shape);
  layout.itemsize = dtype.itemsize();
  layout.memory_order = chain.transpose;
  layout.byteswap = layout.itemsize > 1 && chain.endian == ByteOrder::kBig;
  layout.is_bool = dtype == bool_;
  layout.is_complex = dtype.is_complex();
  return layout;
}

std::vector<Index> ChunkLayout::FortranOrder(std::size_t ndim) {
  std::vector<Index> order;
  for (std::size_t dim = ndim; dim-- > 0;) order.push_back(static_cast<Index>(dim));
  return order;
}

Index ChunkLayout::ChunkBytes() const { return CheckedMul(ShapeSize(chunk_shape), itemsize); }

Shape ChunkLayout::ChunkStrides() const {
  if (memory_order.empty()) return ByteStrides(chunk_shape, itemsize);
  Shape strides(chunk_shape.size(), itemsize);
  Index stride = itemsize;
  for (std::size_t level = memory_order.size(); level-- > 0;) {
    const auto dim = static_cast<std::size_t>(memory_order[level]);
    strides[dim] = stride;
    stride *= chunk_shape[dim];
  }
  return strides;
}

bool ChunkLayout::MemoryOrderIsC() const {
  Index previous = -1;
  for (const Index dim : memory_order) {
    if (chunk_shape[static_cast<std::size_t>(dim)] == 1) continue;
    if (dim < previous) return false;
    previous = dim;
  }
  return true;
}

bool ChunkLayout::IsIdentityFor(std::span<const Index> block_shape) const {
  return std::ranges::equal(block_shape, chunk_shape) && MemoryOrderIsC() && !byteswap;
}

ElementTransform ChunkLayout::WriteTransform() const {
  if (!byteswap) return ElementTransform::kNone;
  return is_complex ? ElementTransform::kByteSwapHalves : ElementTransform::kByteSwap;
}

ElementTransform ChunkLayout::ReadTransform() const {
  if (is_bool) return ElementTransform::kNormalizeBool;
  return WriteTransform();
}

void ChunkLayout::StoredFill(std::span<const std::byte> fill_native,
                             std::span<std::byte> out) const {
  std::copy(fill_native.begin(), fill_native.end(), out.begin());
  if (!byteswap) return;
  if (is_complex) {
    const auto half = static_cast<std::ptrdiff_t>(out.size() / 2);
    std::reverse(out.begin(), out.begin() + half);
    std::reverse(out.begin() + half, out.end());
  } else {
    std::reverse(out.begin(), out.end());
  }
}

Shape ByteStrides(std::span<const Index> shape, Index itemsize) {
  Shape strides = CStrides(shape);
  for (Index& stride : strides) stride *= itemsize;
  return strides;
}

void CopyBox(std::span<const Index> shape, const std::byte* src, std::span<const Index> src_strides,
             std::byte* dst, std::span<const Index> dst_strides, Index itemsize,
             ElementTransform transform) {
  if (std::ranges::any_of(shape, [](Index extent) { return extent == 0; })) return;
  const std::vector<LoopDim> dims = PrepareLoop(shape, src_strides, dst_strides);
  DispatchItem(itemsize, transform, [&]<int kSize, ElementTransform kTransform>() {
    CopyLoop<kSize, kTransform>(dims, src, dst);
  });
}

void FillBox(std::span<const Index> shape, std::byte* dst, std::span<const Index> dst_strides,
             std::span<const std::byte> element) {
  if (std::ranges::any_of(shape, [](Index extent) { return extent == 0; })) return;
  const std::vector<LoopDim> dims = PrepareLoop(shape, dst_strides, dst_strides);
  const Index itemsize = static_cast<Index>(element.size());
  if (dims.empty()) {
    FillStrided(dst, itemsize, 1, element);
    return;
  }
  const LoopDim inner = dims.back();
  ForEachPosition(std::span(dims).first(dims.size() - 1), [&](Index, Index dst_offset) {
    FillStrided(dst + dst_offset, inner.dst_stride, inner.extent, element);
  });
}

void TransformInPlace(std::span<std::byte> bytes, Index itemsize, ElementTransform transform) {
  if (transform == ElementTransform::kNone) return;
  const Index count = static_cast<Index>(bytes.size()) / itemsize;
  std::byte* data = bytes.data();
  DispatchItem(itemsize, transform, [&]<int kSize, ElementTransform kTransform>() {
    if constexpr (kTransform != ElementTransform::kNone) {
      for (Index item = 0; item < count; ++item) {
        CopyElement<kSize, kTransform>(data + item * kSize, data + item * kSize);
      }
    }
  });
}

void BlockToChunk(const ChunkLayout& layout, std::span<const Index> block_shape,
                  const std::byte* block, std::span<const Index> block_strides,
                  std::span<const std::byte> stored_fill, std::span<std::byte> chunk) {
  const Shape chunk_strides = layout.ChunkStrides();
  CopyBox(block_shape, block, block_strides, chunk.data(), chunk_strides, layout.itemsize,
          layout.WriteTransform());
  if (std::ranges::equal(block_shape, layout.chunk_shape)) return;

  // Walk the chunk in its memory order.
  const std::size_t ndim = layout.chunk_shape.size();
  PadPlan plan{Shape(ndim), Shape(ndim), Shape(ndim), std::vector<bool>(ndim + 1, true),
               stored_fill};
  for (std::size_t level = 0; level < ndim; ++level) {
    const std::size_t dim = layout.memory_order.empty()
                                ? level
                                : static_cast<std::size_t>(layout.memory_order[level]);
    plan.chunk[level] = layout.chunk_shape[dim];
    plan.block[level] = block_shape[dim];
    plan.step[level] = chunk_strides[dim];
  }
  for (std::size_t level = ndim; level-- > 0;) {
    plan.suffix_full[level] = plan.suffix_full[level + 1] && plan.block[level] == plan.chunk[level];
  }
  PadLevel(plan, 0, chunk.data());
}

void ChunkToBlock(const ChunkLayout& layout, std::span<const std::byte> chunk, const Region& box,
                  std::byte* dst, std::span<const Index> dst_strides) {
  const Shape chunk_strides = layout.ChunkStrides();
  Index offset = 0;
  for (std::size_t dim = 0; dim < box.start.size(); ++dim) {
    offset += box.start[dim] * chunk_strides[dim];
  }
  CopyBox(box.shape, chunk.data() + offset, chunk_strides, dst, dst_strides, layout.itemsize,
          layout.ReadTransform());
}

void FinishInPlace(const ChunkLayout& layout, std::span<std::byte> block) {
  TransformInPlace(block, layout.itemsize, layout.ReadTransform());
}

}  // namespace tessera::zarr_detail
