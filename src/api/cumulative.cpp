// Cumulative sums and products as a blocked scan (tessera/api/cumulative.hpp).
#include "tessera/api/cumulative.hpp"

#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/api/creation.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/api/indexing.hpp"
#include "tessera/api/manipulation.hpp"
#include "tessera/api/map_blocks.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/plan/internal/graph_codec.hpp"
#include "tessera/plan/internal/index_map.hpp"
#include "tessera/plan/reduction.hpp"

namespace tessera {
namespace {

using planner::AxisMap;
using planner::MakeGather;
using planner::OneSourceMap;

enum class Scan { kSum, kProd };

std::string_view ScanName(Scan scan) {
  return scan == Scan::kSum ? "cumulative_sum" : "cumulative_prod";
}

// a + b or a * b, wrapping on integers (computed unsigned, as numpy's loops do).
template <Scan kScan, class T>
T Combine(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    const U result = kScan == Scan::kSum ? static_cast<U>(static_cast<U>(a) + static_cast<U>(b))
                                         : static_cast<U>(static_cast<U>(a) * static_cast<U>(b));
    return static_cast<T>(result);
  } else {
    return kScan == Scan::kSum ? a + b : a * b;
  }
}

// The running sums (products) of one block along `axis`.
template <Scan kScan, class T>
NDArray ScanBlock(const NDArray& in, int axis) {
  NDArray out = in;
  const Shape& shape = in.shape();
  const auto dim = static_cast<std::size_t>(axis);
  Index outer = 1;
  Index inner = 1;
  for (std::size_t d = 0; d < dim; ++d) outer *= shape[d];
  for (std::size_t d = dim + 1; d < shape.size(); ++d) inner *= shape[d];
  const Index length = shape[dim];
  std::span<T> values = out.mutable_data<T>();
  for (Index o = 0; o < outer; ++o) {
    T* const slab = values.data() + o * length * inner;
    for (Index j = 1; j < length; ++j) {
      T* const row = slab + j * inner;
      const T* const previous = row - inner;
      for (Index i = 0; i < inner; ++i) row[i] = Combine<kScan>(previous[i], row[i]);
    }
  }
  return out;
}

// The kernel scanning one block along `axis`.
BlockFunction ScanKernel(int axis, Scan scan) {
  return [axis, scan](std::span<const NDArray> in, const BlockInfo&) {
    return VisitDType(in[0].dtype(), [&](auto tag) -> NDArray {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, bool>) {
        throw Error("internal error: a scan of bool blocks");
      } else if (scan == Scan::kSum) {
        return ScanBlock<Scan::kSum, T>(in[0], axis);
      } else {
        return ScanBlock<Scan::kProd, T>(in[0], axis);
      }
    });
  };
}

// ScanKernel crossing processes (the dask and ray executors): "<sum|prod>,<axis>".
constexpr std::string_view kScanKernel = "scan-block";
[[maybe_unused]] const bool kScanKernelRegistered = [] {
  planner::RegisterBuiltinKernel(
      std::string(kScanKernel), [](std::string_view params, DType) -> BlockFunction {
        const std::size_t comma = params.find(',');
        const std::string_view kind = params.substr(0, comma);
        int axis = -1;
        if (comma != std::string_view::npos) {
          const std::string_view digits = params.substr(comma + 1);
          std::from_chars(digits.data(), digits.data() + digits.size(), axis);
        }
        if ((kind != "sum" && kind != "prod") || axis < 0 || axis > 64) {
          throw FormatError("graph codec: a scan kernel's parameters \"" + std::string(params) +
                            "\" are not <sum|prod>,<axis>");
        }
        return ScanKernel(axis, kind == "sum" ? Scan::kSum : Scan::kProd);
      });
  return true;
}();

// Each block of x scanned on its own along `axis`.
Array ScanEachBlock(const Array& x, int axis, Scan scan) {
  return map_blocks(
      ScanKernel(axis, scan), {x}, x.dtype(), 0,
      std::string(ScanName(scan)) + "-block(axis=" + std::to_string(axis) + ")",
      planner::BuiltinRecipe(kScanKernel, std::string(scan == Scan::kSum ? "sum" : "prod") + "," +
                                              std::to_string(axis)));
}

// The inclusive scan of x (of its accumulation dtype) along `axis`.
Array BlockedScan(const Array& x, int axis, Scan scan) {
  const auto dim = static_cast<std::size_t>(axis);
  const Index extent = x.shape()[dim];
  const Index chunk = x.chunks()[dim];
  const Array scanned = ScanEachBlock(x, axis, scan);
  const Index blocks = extent == 0 ? 0 : (extent - 1) / chunk + 1;
  if (blocks <= 1) return scanned;
  // Each block's total is its scan's last element; their own inclusive scan, shifted
  // one block on (the initial value first), is what each block starts from.
  std::vector<Index> last_of_block;
  for (Index b = 0; b < blocks; ++b) last_of_block.push_back(std::min(extent, (b + 1) * chunk) - 1);
  Array totals = take(scanned, last_of_block, axis);
  Shape totals_chunks = totals.chunks();
  totals_chunks[dim] = std::min(blocks, std::max<Index>(chunk, 2));  // fewer blocks each round
  totals = BlockedScan(totals.rechunk(totals_chunks), axis, scan);
  Shape one = totals.shape();
  one[dim] = 1;
  Shape one_chunks = totals.chunks();
  one_chunks[dim] = 1;
  const Array initial = scan == Scan::kSum ? zeros(one, x.dtype(), one_chunks, x.spec())
                                           : ones(one, x.dtype(), one_chunks, x.spec());
  std::vector<IndexItem> all_but_last(dim, Slice());
  all_but_last.push_back(Slice(std::nullopt, -1));
  const Array before = concat({initial, index(totals, all_but_last)}, axis);
  // Spread over x's extent, chunked as x: element i of x starts from block i / chunk.
  std::vector<AxisMap> axes;
  for (int d = 0; d < x.ndim(); ++d) axes.push_back(AxisMap{d});
  axes[dim].divisor = chunk;
  planner::IndexMap map =
      OneSourceMap(std::move(axes), Shape(static_cast<std::size_t>(x.ndim()), -1), x.shape());
  const Array offsets(MakeGather({before.node()}, std::move(map), x.shape(), x.chunks(), x.dtype()),
                      x.spec());
  return scan == Scan::kSum ? add(scanned, offsets) : multiply(scanned, offsets);
}

Array Cumulative(Scan scan, const Array& x, std::optional<int> axis, std::optional<DType> dtype,
                 bool include_initial) {
  const std::string name(ScanName(scan));
  if (x.ndim() == 0) {
    throw InvalidArgument(name + ": x is 0-dimensional; give an array of one or more dimensions");
  }
  if (!axis) {
    if (x.ndim() != 1) {
      throw InvalidArgument(name + ": x has " + std::to_string(x.ndim()) +
                            " dimensions; give the axis to accumulate along");
    }
    axis = 0;
  }
  if (*axis < -x.ndim() || *axis >= x.ndim()) {
    throw InvalidArgument(name + ": axis " + std::to_string(*axis) +
                          " is out of range for an array of " + std::to_string(x.ndim()) +
                          " dimensions (use " + std::to_string(-x.ndim()) + " to " +
                          std::to_string(x.ndim() - 1) + ")");
  }
  const int along = *axis < 0 ? *axis + x.ndim() : *axis;
  if (dtype && dtype->kind() == DTypeKind::kBool) {
    throw InvalidArgument(name + ": dtype bool cannot accumulate; use an integer or float dtype");
  }
  const DType accumulate = ReductionResultType(
      scan == Scan::kSum ? ReductionOp::kSum : ReductionOp::kProd, x.dtype(), dtype);
  const Array input = x.dtype() == accumulate ? x : astype(x, accumulate);
  Array result = BlockedScan(input, along, scan);
  if (!include_initial) return result;
  const auto dim = static_cast<std::size_t>(along);
  Shape one = x.shape();
  one[dim] = 1;
  Shape one_chunks = x.chunks();
  one_chunks[dim] = 1;
  const Array initial = scan == Scan::kSum ? zeros(one, accumulate, one_chunks, x.spec())
                                           : ones(one, accumulate, one_chunks, x.spec());
  return concat({initial, result}, along);
}

}  // namespace

Array cumulative_sum(const Array& x, std::optional<int> axis, std::optional<DType> dtype,
                     bool include_initial) {
  return Cumulative(Scan::kSum, x, axis, dtype, include_initial);
}

Array cumulative_prod(const Array& x, std::optional<int> axis, std::optional<DType> dtype,
                      bool include_initial) {
  return Cumulative(Scan::kProd, x, axis, dtype, include_initial);
}

}  // namespace tessera
