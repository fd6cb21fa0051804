// Linear algebra (array API / numpy): matmul, tensordot, vecdot, outer — lazy arrays
// computed block by block under allowed_mem.
//
//   auto c = tessera::matmul(a, b);                 // (..., M, K) @ (..., K, N)
//   auto t = tessera::tensordot(a, b, 1);           // a's last axis with b's first
//   auto u = tessera::tensordot(a, b, {0, 2}, {1, 0});
//   auto d = tessera::vecdot(x, y);                 // sum(x * y, axis=-1), broadcasting
//   auto o = tessera::outer(u1, v1);                // (M,) x (N,) -> (M, N)
//
// Each is one contraction (plan/contraction.hpp): a task computes one block of the
// result, streaming over the contracted dimensions in slabs as wide as allowed_mem
// allows (docs/memory-model.md, "Linear algebra"). Operands are cast to their result
// type (tessera::ResultType); float32 accumulates in float, float64 in double, integers
// wrap around as numpy's do, bool gives logical or of ands (numpy). The result's chunks
// follow x1's along its free dimensions, x2's along x2's, and the inputs' along batch
// dimensions. Bad shapes or axes throw InvalidArgument when the array is built.
#pragma once

#include <vector>

#include "tessera/api/array.hpp"

namespace tessera {

// numpy's matmul: 1-d operands are promoted to matrices (x1 to a row, x2 to a column)
// and the promoted dimension removed from the result; leading (batch) dimensions
// broadcast. InvalidArgument for 0-d operands, x1's last dimension differing from x2's
// second-to-last (its only one when 1-d), or batch dimensions that do not broadcast.
Array matmul(const Array& x1, const Array& x2);

// Sums the products over x1's last `axes` dimensions and x2's first `axes`: the result
// is x1's other dimensions followed by x2's. InvalidArgument unless 0 <= axes <=
// min(x1.ndim, x2.ndim) and the summed extents match.
Array tensordot(const Array& x1, const Array& x2, int axes = 2);
// Sums over x1's axes1[i] paired with x2's axes2[i] (negative axes count from the end).
// InvalidArgument for lists of different lengths, axes out of range or repeated, or
// paired extents that differ.
Array tensordot(const Array& x1, const Array& x2, const std::vector<int>& axes1,
                const std::vector<int>& axes2);

// sum(conj(x1) * x2, axis) (conj only matters for complex dtypes) with the other
// dimensions broadcast (array API vecdot). `axis` is
// negative (counting from the end of each operand), or non-negative when x1 and x2
// have the same number of dimensions. InvalidArgument for 0-d operands, an axis out of
// range, or extents along it that differ (they do not broadcast).
Array vecdot(const Array& x1, const Array& x2, int axis = -1);

// The outer product of two 1-d arrays: result[i, j] = x1[i] * x2[j].
Array outer(const Array& x1, const Array& x2);

}  // namespace tessera
