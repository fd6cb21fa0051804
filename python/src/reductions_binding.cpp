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
  using Typed = Array (*)(const Array&, Axes, bool, std::optional<DType>);
  const std::pair<const char*, Typed> typed[] = {
      {"sum", &tessera::sum}, {"prod", &tessera::prod}, {"mean", &tessera::mean}};
  for (const auto& [name, fn] : typed) {
    const Typed reduce = fn;
    m.def(
        name,
        [reduce](const Array& x, nb::handle axis, bool keepdims, nb::handle dtype) {
          return reduce(x, AxesFrom(axis), keepdims, OptionalDType(dtype));
        },
        nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false,
        nb::arg("dtype") = nb::none());
  }
  using Scan = Array (*)(const Array&, std::optional<int>, std::optional<DType>, bool);
  const std::pair<const char*, Scan> scans[] = {{"cumulative_sum", &tessera::cumulative_sum},
                                                {"cumulative_prod", &tessera::cumulative_prod}};
  for (const auto& [name, fn] : scans) {
    const Scan scan = fn;
    m.def(
        name,
        [scan](const Array& x, std::optional<int> axis, nb::handle dtype, bool include_initial) {
          return scan(x, axis, OptionalDType(dtype), include_initial);
        },
        nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("dtype") = nb::none(),
        nb::arg("include_initial") = false);
  }
  using Plain = Array (*)(const Array&, Axes, bool);
  const std::pair<const char*, Plain> plain[] = {{"min", &tessera::min},
                                                 {"max", &tessera::max},
                                                 {"all", &tessera::all},
                                                 {"any", &tessera::any},
                                                 {"count_nonzero", &tessera::count_nonzero}};
  for (const auto& [name, fn] : plain) {
    const Plain reduce = fn;
    m.def(
        name,
        [reduce](const Array& x, nb::handle axis, bool keepdims) {
          return reduce(x, AxesFrom(axis), keepdims);
        },
        nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false);
  }
  m.def(
      "var",
      [](const Array& x, nb::handle axis, double correction, bool keepdims) {
        return var(x, AxesFrom(axis), keepdims, correction);
      },
      nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("correction") = 0.0,
      nb::arg("keepdims") = false);
  m.def(
      "std",
      [](const Array& x, nb::handle axis, double correction, bool keepdims) {
        return tessera::std(x, AxesFrom(axis), keepdims, correction);
      },
      nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("correction") = 0.0,
      nb::arg("keepdims") = false);
  m.def(
      "argmin",
      [](const Array& x, std::optional<int> axis, bool keepdims) {
        return argmin(x, axis, keepdims);
      },
      nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false);
  m.def(
      "argmax",
      [](const Array& x, std::optional<int> axis, bool keepdims) {
        return argmax(x, axis, keepdims);
      },
      nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false);

  m.def(
      "matmul", [](const Array& x1, const Array& x2) { return matmul(x1, x2); }, nb::arg("x1"),
      nb::arg("x2"));
  m.def(
      "tensordot",
      [](const Array& x1, const Array& x2, nb::handle axes) {
        if (nb::isinstance<nb::int_>(axes)) return tensordot(x1, x2, nb::cast<int>(axes));
        // (axes of x1, axes of x2), paired in order.
        const auto pair = nb::cast<std::pair<std::vector<int>, std::vector<int>>>(axes);
        return tensordot(x1, x2, pair.first, pair.second);
      },
      nb::arg("x1"), nb::arg("x2"), nb::kw_only(), nb::arg("axes") = 2);
  m.def(
      "vecdot", [](const Array& x1, const Array& x2, int axis) { return vecdot(x1, x2, axis); },
      nb::arg("x1"), nb::arg("x2"), nb::kw_only(), nb::arg("axis") = -1);
  m.def(
      "outer", [](const Array& x1, const Array& x2) { return outer(x1, x2); }, nb::arg("x1"),
      nb::arg("x2"));
}

}  // namespace tessera::python
