#include "generators.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "tessera/core/errors.hpp"

namespace tessera::kernels {
namespace {

// Throws InvalidArgument unless the tile lies within its block and the shapes agree.
void CheckTile(const TilePosition& tile, std::size_t rank, const char* what) {
  const Index block_size = ShapeSize(tile.block_shape);
  if (tile.block_shape.size() != rank || tile.tile_start < 0 || tile.count < 0 ||
      tile.count > block_size - tile.tile_start) {
    throw InvalidArgument(std::string(what) + ": tile of " + std::to_string(tile.count) +
                          " elements at " + std::to_string(tile.tile_start) +
                          " does not fit block shape " + ShapeToString(tile.block_shape) +
                          " of rank " + std::to_string(rank));
  }
}

// Calls fn(position, run, offset) for each run of the tile that lies in one row of the
// block's last dimension: `position` is the block-local index of the run's first
// element, `offset` its index within the tile. A 0-d block is one run of one element.
template <class Fn>
void ForEachRow(const Shape& block_shape, Index tile_start, Index count, Fn&& fn) {
  if (count <= 0) return;
  Shape position = UnravelIndex(tile_start, block_shape);
  if (block_shape.empty()) {
    fn(position, count, Index{0});
    return;
  }
  const std::size_t last = block_shape.size() - 1;
  for (Index offset = 0; offset < count;) {
    const Index run = std::min(count - offset, block_shape[last] - position[last]);
    fn(position, run, offset);
    offset += run;
    position[last] += run;
    for (std::size_t dim = last; dim > 0 && position[dim] == block_shape[dim]; --dim) {
      position[dim] = 0;
      ++position[dim - 1];
    }
  }
}

// complex128's 16 bytes, moved as one value.
struct Bytes16 {
  std::uint64_t half[2];
};

// SplitMix64's output function (Steele, Lea, Flood 2014): a bijective 64-bit mix.
constexpr std::uint64_t Mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}
constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15u;  // 2^64 / golden ratio, odd
constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;   // 2^-53

// numpy's arange fill for element i of dtype T: buffer[0] and buffer[1] are start and
// start + step converted to T, and element i >= 2 is buffer[0] + i * (buffer[1] -
// buffer[0]) computed in T (integers wrap; float32 computes in float). numpy has no
// fill for bool past two elements; here element i >= 2 of bool is start + i * step != 0.
template <class T>
struct ArangeRule {
  ArangeRule(double start, double step)
      : start_(start),
        step_(step),
        first_(CastElement<T>(start)),
        second_(CastElement<T>(start + step)) {}

  T operator()(Index i) const {
    if (i == 0) return first_;
    if (i == 1) return second_;
    if constexpr (std::is_same_v<T, bool>) {
      return CastElement<bool>(start_ + step_ * static_cast<double>(i));
    } else if constexpr (std::is_integral_v<T>) {
      // Modulo 2^64, which is modulo T's 2^bits after the final conversion.
      const auto delta = static_cast<std::uint64_t>(second_) - static_cast<std::uint64_t>(first_);
      return static_cast<T>(static_cast<std::uint64_t>(first_) +
                            static_cast<std::uint64_t>(i) * delta);
    } else if constexpr (kIsComplex<T>) {
      return first_ + T(static_cast<typename T::value_type>(i)) * (second_ - first_);
    } else {
      return first_ + static_cast<T>(i) * (second_ - first_);
    }
  }

  double start_;
  double step_;
  T first_;
  T second_;
};

}  // namespace

void ForEachRun(const TilePosition& tile,
                const std::function<void(Index global, Index count, Index offset)>& fn) {
  const std::size_t rank = tile.array_shape.size();
  CheckTile(tile, rank, "ForEachRun");
  if (tile.block_start.size() != rank) {
    throw InvalidArgument("ForEachRun: block start " + ShapeToString(tile.block_start) +
                          " does not match array shape " + ShapeToString(tile.array_shape));
  }
  const Shape strides = CStrides(tile.array_shape);
  ForEachRow(tile.block_shape, tile.tile_start, tile.count,
             [&](const Shape& position, Index run, Index offset) {
               Index global = 0;
               for (std::size_t dim = 0; dim < rank; ++dim) {
                 global += (tile.block_start[dim] + position[dim]) * strides[dim];
               }
               fn(global, run, offset);
             });
}

void FillConstant(const Scalar& value, DType dtype, void* out, Index count) {
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::fill_n(static_cast<T*>(out), count, value.As<T>());
  });
}

void FillArange(double start, double step, DType dtype, void* out, const TilePosition& tile) {
  if (tile.array_shape.size() != 1) {
    throw InvalidArgument("arange fills 1-D arrays only, not shape " +
                          ShapeToString(tile.array_shape));
  }
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const ArangeRule<T> rule(start, step);
    T* target = static_cast<T*>(out);
    ForEachRun(tile, [&](Index global, Index count, Index offset) {
      for (Index k = 0; k < count; ++k) target[offset + k] = rule(global + k);
    });
  });
}

// Element i of seed s is (Mix(Mix(s) + (i + 1) * kGoldenGamma) >> 11) * 2^-53, all
// arithmetic modulo 2^64: output i of a SplitMix64 stream whose state starts at Mix(s).
// The top 53 bits make a double in [0, 1) with every multiple of 2^-53 equally likely.
void FillRandom(std::uint64_t seed, double* out, const TilePosition& tile) {
  const std::uint64_t state = Mix(seed);
  ForEachRun(tile, [&](Index global, Index count, Index offset) {
    double* __restrict target = out + offset;
    const std::uint64_t first = static_cast<std::uint64_t>(global) + 1;
    for (Index k = 0; k < count; ++k) {
      const std::uint64_t counter = first + static_cast<std::uint64_t>(k);
      target[k] = static_cast<double>(Mix(state + counter * kGoldenGamma) >> 11) * kTwoToMinus53;
    }
  });
}

void GatherStrided(const std::byte* source, const Shape& byte_strides, std::int64_t itemsize,
                   std::byte* out, const TilePosition& tile) {
  CheckTile(tile, byte_strides.size(), "GatherStrided");
  auto gather = [&](auto bits_tag) {
    using Bits = typename decltype(bits_tag)::type;
    constexpr std::size_t kBytes = sizeof(Bits);
    constexpr auto kSize = static_cast<Index>(kBytes);
    const Index inner_stride = byte_strides.empty() ? 0 : byte_strides.back();
    ForEachRow(tile.block_shape, tile.tile_start, tile.count,
               [&](const Shape& position, Index run, Index offset) {
                 Index byte_offset = 0;
                 for (std::size_t dim = 0; dim < position.size(); ++dim) {
                   byte_offset += position[dim] * byte_strides[dim];
                 }
                 const std::byte* from = source + byte_offset;
                 std::byte* to = out + offset * kSize;
                 if (inner_stride == kSize) {
                   std::memcpy(to, from, static_cast<std::size_t>(run * kSize));
                 } else if (inner_stride == 0) {  // broadcast: one value repeated
                   Bits value;
                   std::memcpy(&value, from, kBytes);
                   for (Index k = 0; k < run; ++k) std::memcpy(to + k * kSize, &value, kBytes);
                 } else {
                   for (Index k = 0; k < run; ++k) {
                     std::memcpy(to + k * kSize, from + k * inner_stride, kBytes);
                   }
                 }
               });
  };
  switch (itemsize) {
    case 1:
      return gather(TypeTag<std::uint8_t>{});
    case 2:
      return gather(TypeTag<std::uint16_t>{});
    case 4:
      return gather(TypeTag<std::uint32_t>{});
    case 8:
      return gather(TypeTag<std::uint64_t>{});
    case 16:
      return gather(TypeTag<Bytes16>{});
    default:
      throw InvalidArgument("GatherStrided: itemsize must be 1, 2, 4, 8 or 16, not " +
                            std::to_string(itemsize));
  }
}

}  // namespace tessera::kernels
