// Manipulation functions of the array API standard: numpy's semantics and errors,
// each lazy, each one memory-bounded op reading only the input chunks it needs.
//
//   auto t = tessera::permute_dims(x, {2, 0, 1});
//   auto c = tessera::concat({a, b}, 1);           // dtypes promote (tessera::ResultType)
//   auto r = tessera::reshape(x, {-1, 10});        // one -1 at most
//   auto f = tessera::flip(tessera::roll(x, 3, 0));
//
// permute_dims, expand_dims, squeeze, flip, roll, repeat, tile, concat, stack and
// matrix_transpose are gathers (tessera/plan/internal/index_map.hpp): chains of them compose
// into one op. Output chunks follow the input's: a permutation permutes them, flip /
// roll / repeat / tile / slices keep their sizes (cut to the new extents), a new axis
// has chunks of 1; concat and stack take the first array's. reshape keeps blocks as
// reinterpreted regions of the input, rechunking it first when its chunks do not line
// up (docs/memory-model.md). Bad arguments throw InvalidArgument saying what to change.
#pragma once

#include <optional>
#include <vector>

#include "tessera/api/array.hpp"
#include "tessera/api/reduction.hpp"

namespace tessera {

// x with its axes in the order `axes` (a permutation of 0..ndim-1; negative counts
// from the end).
Array permute_dims(const Array& x, std::vector<int> axes);
// x with its last two axes swapped (ndim >= 2).
Array matrix_transpose(const Array& x);
// x with new axes of extent 1 at positions `axis` of the result.
Array expand_dims(const Array& x, Axes axis = Axes(0));
// x without the axes `axis`, which must have extent 1; by default every axis of extent 1.
Array squeeze(const Array& x, Axes axis = {});
// The arrays broadcast to one shape (numpy's rules).
std::vector<Array> broadcast_arrays(const std::vector<Array>& arrays);
// The arrays joined along `axis` (nullopt: flattened, joined along 0); shapes must
// match elsewhere; the dtype is their ResultType.
Array concat(const std::vector<Array>& arrays, std::optional<int> axis = 0);
// The arrays (one shape) stacked along a new axis `axis` of the result.
Array stack(const std::vector<Array>& arrays, int axis = 0);
// x reversed along `axis` (default: every axis).
Array flip(const Array& x, Axes axis = {});
// x shifted by `shift` along `axis`, elements wrapping around; nullopt: over the
// flattened array. Several shifts and axes pair up (numpy's broadcasting of them).
Array roll(const Array& x, Index shift, std::optional<int> axis = std::nullopt);
Array roll(const Array& x, std::vector<Index> shifts, std::vector<int> axes);
// x's elements in C order in `shape`; one extent may be -1 (inferred).
Array reshape(const Array& x, Shape shape);
// Each element `repeats` times along `axis` (nullopt: of the flattened array).
Array repeat(const Array& x, Index repeats, std::optional<int> axis = std::nullopt);
// x repeated `reps[d]` times along each axis (numpy's tile: fewer reps than axes
// apply to the last axes; more add leading axes).
Array tile(const Array& x, Shape reps);

}  // namespace tessera
