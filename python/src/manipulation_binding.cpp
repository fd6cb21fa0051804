// Manipulation functions of the array API (permute_dims, reshape, concat, stack, ...) and
// rechunk.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"

namespace tessera::python {

void BindManipulation(nb::module_& m) {
  m.def(
      "rechunk",
      [](const Array& x, nb::handle chunks) { return x.rechunk(ChunksFrom(chunks, x.shape())); },
      nb::arg("x"), nb::arg("chunks"));
  m.def(
      "permute_dims",
      [](const Array& x, std::vector<int> axes) { return permute_dims(x, std::move(axes)); },
      nb::arg("x"), nb::arg("axes"));
  m.def(
      "matrix_transpose", [](const Array& x) { return matrix_transpose(x); }, nb::arg("x"));
  m.def(
      "expand_dims", [](const Array& x, nb::handle axis) { return expand_dims(x, AxesFrom(axis)); },
      nb::arg("x"), nb::kw_only(), nb::arg("axis") = 0);
  m.def(
      "squeeze", [](const Array& x, nb::handle axis) { return squeeze(x, AxesFrom(axis)); },
      nb::arg("x"), nb::kw_only(), nb::arg("axis"));
  m.def("broadcast_arrays",
        [](const std::vector<Array>& arrays) { return broadcast_arrays(arrays); });
  m.def(
      "concat",
      [](const std::vector<Array>& arrays, std::optional<int> axis) {
        return concat(arrays, axis);
      },
      nb::arg("arrays"), nb::kw_only(), nb::arg("axis") = 0);
  m.def(
      "stack", [](const std::vector<Array>& arrays, int axis) { return stack(arrays, axis); },
      nb::arg("arrays"), nb::kw_only(), nb::arg("axis") = 0);
  m.def(
      "flip", [](const Array& x, nb::handle axis) { return flip(x, AxesFrom(axis)); }, nb::arg("x"),
      nb::kw_only(), nb::arg("axis") = nb::none());
  m.def(
      "reshape", [](const Array& x, nb::handle shape) { return reshape(x, ShapeFrom(shape)); },
      nb::arg("x"), nb::arg("shape"));
  m.def(
      "repeat",
      [](const Array& x, Index repeats, std::optional<int> axis) {
        return repeat(x, repeats, axis);
      },
      nb::arg("x"), nb::arg("repeats"), nb::kw_only(), nb::arg("axis") = nb::none());
  m.def(
      "tile", [](const Array& x, nb::handle reps) { return tile(x, ShapeFrom(reps)); },
      nb::arg("x"), nb::arg("repetitions"));
}

}  // namespace tessera::python
