// Reductions of the array API (axis=None|int|tuple, keepdims=, dtype=, correction=) and
// linear algebra (matmul, tensordot, vecdot, outer).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

#include <optional>

#include "bindings.hpp"

namespace tessera::python {
namespace {

std::optional<DType> OptionalDType(nb::handle dtype) {
  if (dtype.is_none()) return std::nullopt;
  return DTypeFrom(dtype);
}

}  // namespace

void BindReductions(nb::module_& m) {
  // The reductions' docstrings say what each computes; every one is lazy, reduces over
  // `axis` (an int, a tuple, or None for all axes) and keeps them as extent 1 when
  // `keepdims`. Their memory is planned as any op's: partial results per block, combined
  // in rounds.
  struct Typed {
    const char* name;
    Array (*reduce)(const Array&, Axes, bool, std::optional<DType>);
    const char* doc;
  };
  const Typed typed[] = {
      {"sum", &tessera::sum,
       "The sum of x over axis (all axes when None), lazy. Integers and bool sum in int64 "
       "(uint64 for unsigned) unless dtype says otherwise; floats in double precision, "
       "pairwise; complex numbers too."},
      {"prod", &tessera::prod,
       "The product of x over axis (all axes when None), lazy; dtypes as sum."},
      {"mean", &tessera::mean,
       "The arithmetic mean of x over axis (all axes when None), lazy: float64 for integers "
       "and bool, x's dtype for floats and complex numbers (or dtype)."}};
  for (const auto& [name, fn, doc] : typed) {
    const auto reduce = fn;
    m.def(
        name,
        [reduce](const Array& x, nb::handle axis, bool keepdims, nb::handle dtype) {
          return reduce(x, AxesFrom(axis), keepdims, OptionalDType(dtype));
        },
        nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false,
        nb::arg("dtype") = nb::none(), doc);
  }
  struct Scan {
    const char* name;
    Array (*scan)(const Array&, std::optional<int>, std::optional<DType>, bool);
    const char* doc;
  };
  const Scan scans[] = {
      {"cumulative_sum", &tessera::cumulative_sum,
       "The running sums of x along axis (needed unless x is 1-d), lazy: a blocked scan, "
       "each block scanned alone then offset by the totals before it. include_initial "
       "puts a 0 first. Integers and bool accumulate in int64 unless dtype says otherwise."},
      {"cumulative_prod", &tessera::cumulative_prod,
       "The running products of x along axis, lazy; as cumulative_sum, with 1 first when "
       "include_initial."}};
  for (const auto& [name, fn, doc] : scans) {
    const auto scan = fn;
    m.def(
        name,
        [scan](const Array& x, std::optional<int> axis, nb::handle dtype, bool include_initial) {
          return scan(x, axis, OptionalDType(dtype), include_initial);
        },
        nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("dtype") = nb::none(),
        nb::arg("include_initial") = false, doc);
  }
  struct Plain {
    const char* name;
    Array (*reduce)(const Array&, Axes, bool);
    const char* doc;
  };
  const Plain plain[] = {
      {"min", &tessera::min,
       "The smallest element of x over axis (all axes when None), lazy; NaN if any is NaN. "
       "Not defined for complex dtypes."},
      {"max", &tessera::max,
       "The largest element of x over axis (all axes when None), lazy; NaN if any is NaN. "
       "Not defined for complex dtypes."},
      {"all", &tessera::all,
       "Whether every element of x over axis is nonzero (true for none), lazy; bool."},
      {"any", &tessera::any,
       "Whether some element of x over axis is nonzero (false for none), lazy; bool."},
      {"count_nonzero", &tessera::count_nonzero,
       "How many elements of x over axis are nonzero (NaN counts), lazy; int64."}};
  for (const auto& [name, fn, doc] : plain) {
    const auto reduce = fn;
    m.def(
        name,
        [reduce](const Array& x, nb::handle axis, bool keepdims) {
          return reduce(x, AxesFrom(axis), keepdims);
        },
        nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false,
        doc);
  }
  m.def(
      "var",
      [](const Array& x, nb::handle axis, double correction, bool keepdims) {
        return var(x, AxesFrom(axis), keepdims, correction);
      },
      nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("correction") = 0.0,
      nb::arg("keepdims") = false,
      "The variance of x over axis, lazy: the sum of squared deviations divided by N - "
      "correction (1 for the sample variance), from partial moments merged as Chan et al. "
      "Real dtypes; float64 for integers.");
  m.def(
      "std",
      [](const Array& x, nb::handle axis, double correction, bool keepdims) {
        return tessera::std(x, AxesFrom(axis), keepdims, correction);
      },
      nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("correction") = 0.0,
      nb::arg("keepdims") = false,
      "The standard deviation of x over axis, lazy: the square root of var (same arguments).");
  m.def(
      "argmin",
      [](const Array& x, std::optional<int> axis, bool keepdims) {
        return argmin(x, axis, keepdims);
      },
      nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false,
      "The index of the smallest element along axis (of the flattened x when None), the first "
      "of ties; NaN counts as smallest. Lazy; int64.");
  m.def(
      "argmax",
      [](const Array& x, std::optional<int> axis, bool keepdims) {
        return argmax(x, axis, keepdims);
      },
      nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false,
      "The index of the largest element along axis (of the flattened x when None), the first "
      "of ties; NaN counts as largest. Lazy; int64.");

  m.def(
      "matmul", [](const Array& x1, const Array& x2) { return matmul(x1, x2); }, nb::arg("x1"),
      nb::arg("x2"),
      "The matrix product x1 @ x2 (numpy's rules for 1-d operands and batch dimensions), lazy: "
      "BLAS on each pair of blocks, the partial products summed.");
  m.def(
      "tensordot",
      [](const Array& x1, const Array& x2, nb::handle axes) {
        if (nb::isinstance<nb::int_>(axes)) return tensordot(x1, x2, nb::cast<int>(axes));
        // (axes of x1, axes of x2), paired in order.
        const auto pair = nb::cast<std::pair<std::vector<int>, std::vector<int>>>(axes);
        return tensordot(x1, x2, pair.first, pair.second);
      },
      nb::arg("x1"), nb::arg("x2"), nb::kw_only(), nb::arg("axes") = 2,
      "The sum of products over axes: the last `axes` of x1 with the first of x2 (an int), or "
      "the axes paired in ((axes of x1), (axes of x2)). Lazy.");
  m.def(
      "vecdot", [](const Array& x1, const Array& x2, int axis) { return vecdot(x1, x2, axis); },
      nb::arg("x1"), nb::arg("x2"), nb::kw_only(), nb::arg("axis") = -1,
      "sum(conj(x1) * x2) along axis, the other axes broadcast; lazy.");
  m.def(
      "outer", [](const Array& x1, const Array& x2) { return outer(x1, x2); }, nb::arg("x1"),
      nb::arg("x2"), "The outer product of two 1-d arrays: x1[i] * x2[j], lazy.");
}

}  // namespace tessera::python
