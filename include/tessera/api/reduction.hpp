// Reductions (array API): sum, prod, min, max, mean, var, std, argmin, argmax, all,
// any, count_nonzero — numpy's results, dtypes and NaN handling, computed chunk by chunk.
//
//   auto total = tessera::sum(x);                 // over all axes: a 0-d array
//   auto by_time = tessera::mean(t2m, 0);         // over axis 0
//   auto m = tessera::max(x, {0, 2}, /*keepdims=*/true);
//   auto s = tessera::sum(counts, 1, false, tessera::int64);
//
// A reduction is planned as rounds of partial reductions (docs/memory-model.md): round
// 1 streams groups of blocks into partial results, later rounds combine as many partial
// results per task as allowed_mem holds, so the number of rounds follows from the
// budget; var and std combine partial moments (count, mean, M2) so they stay accurate. Lazy like
// every Array; the memory check happens when the plan is finalized.
#pragma once

#include <initializer_list>
#include <optional>
#include <vector>

#include "tessera/api/array.hpp"
#include "tessera/plan/reduction.hpp"

namespace tessera {

// The axes a reduction runs over: all of them (the default), one, or several; negative
// axes count from the end. InvalidArgument for an axis out of range or given twice.
class Axes {
 public:
  Axes() = default;                                  // every axis
  Axes(int axis) : axes_(std::vector<int>{axis}) {}  // NOLINT(google-explicit-constructor)
  Axes(std::initializer_list<int> axes) : axes_(std::vector<int>(axes)) {}
  explicit Axes(std::vector<int> axes) : axes_(std::move(axes)) {}

  bool all() const { return !axes_.has_value(); }
  // The axes of an array of `ndim` dimensions, sorted, non-negative.
  std::vector<int> Resolve(int ndim) const;

 private:
  std::optional<std::vector<int>> axes_;
};

// dtype: the accumulation and result dtype (numpy's `dtype=`); by default numpy's:
// sum/prod of bool and signed ints give int64, of unsigned ints uint64, floats keep
// theirs; mean/var/std of ints give float64.
Array sum(const Array& x, Axes axes = {}, bool keepdims = false,
          std::optional<DType> dtype = std::nullopt);
Array prod(const Array& x, Axes axes = {}, bool keepdims = false,
           std::optional<DType> dtype = std::nullopt);
Array mean(const Array& x, Axes axes = {}, bool keepdims = false,
           std::optional<DType> dtype = std::nullopt);
// correction: 0 for the population variance (numpy's ddof).
Array var(const Array& x, Axes axes = {}, bool keepdims = false, double correction = 0,
          std::optional<DType> dtype = std::nullopt);
Array std(const Array& x, Axes axes = {}, bool keepdims = false, double correction = 0,
          std::optional<DType> dtype = std::nullopt);
Array min(const Array& x, Axes axes = {}, bool keepdims = false);
Array max(const Array& x, Axes axes = {}, bool keepdims = false);
// Indices (int64) along one axis, or into the flattened array when axis is nullopt.
Array argmin(const Array& x, std::optional<int> axis = std::nullopt, bool keepdims = false);
Array argmax(const Array& x, std::optional<int> axis = std::nullopt, bool keepdims = false);
Array all(const Array& x, Axes axes = {}, bool keepdims = false);
Array any(const Array& x, Axes axes = {}, bool keepdims = false);
Array count_nonzero(const Array& x, Axes axes = {}, bool keepdims = false);

}  // namespace tessera
