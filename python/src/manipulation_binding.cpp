// Manipulation functions of the array API (permute_dims, reshape, concat, stack, ...) and
// rechunk; take's engine half.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"

namespace tessera::python {

void BindManipulation(nb::module_& m) {
  m.def(
      "rechunk",
      [](const Array& x, nb::handle chunks) { return x.rechunk(ChunksFrom(chunks, x.shape())); },
      nb::arg("x"), nb::arg("chunks"),
      "x's values on another chunk grid (an int, a tuple, -1 or None for a whole axis, or "
      "dask's tuples of sizes); lazy. The planner moves them through memory, disk or both, "
      "whichever the budget allows at the least cost.");
  m.def(
      "permute_dims",
      [](const Array& x, std::vector<int> axes) { return permute_dims(x, std::move(axes)); },
      nb::arg("x"), nb::arg("axes"),
      "x with its axes in the order `axes` (a permutation); lazy, each block transposed as "
      "it is read.");
  m.def(
      "matrix_transpose", [](const Array& x) { return matrix_transpose(x); }, nb::arg("x"),
      "x with its last two axes swapped; lazy.");
  m.def(
      "expand_dims", [](const Array& x, nb::handle axis) { return expand_dims(x, AxesFrom(axis)); },
      nb::arg("x"), nb::kw_only(), nb::arg("axis") = 0,
      "x with an axis of extent 1 inserted at each of `axis` (an int or a tuple); lazy.");
  m.def(
      "squeeze", [](const Array& x, nb::handle axis) { return squeeze(x, AxesFrom(axis)); },
      nb::arg("x"), nb::kw_only(), nb::arg("axis"),
      "x without the axes `axis` (an int or a tuple), each of extent 1; lazy.");
  m.def(
      "broadcast_to",
      [](const Array& x, nb::handle shape) { return broadcast_to(x, ShapeFrom(shape)); },
      nb::arg("x"), nb::arg("shape"),
      "x broadcast to `shape` (numpy's rules); lazy, nothing is copied until a task reads it.");
  m.def(
      "roll",
      [](const Array& x, nb::handle shift, nb::handle axis) {
        if (axis.is_none()) return roll(x, nb::cast<Index>(shift), std::nullopt);
        if (nb::isinstance<nb::int_>(axis)) {
          return roll(x, nb::cast<Index>(shift), nb::cast<int>(axis));
        }
        const std::vector<int> axes = nb::cast<std::vector<int>>(axis);
        std::vector<Index> shifts = nb::isinstance<nb::int_>(shift)
                                        ? std::vector<Index>(axes.size(), nb::cast<Index>(shift))
                                        : nb::cast<std::vector<Index>>(shift);
        return roll(x, std::move(shifts), axes);
      },
      nb::arg("x"), nb::arg("shift"), nb::kw_only(), nb::arg("axis") = nb::none(),
      "x with its elements shifted by `shift` along `axis` (every axis of the flattened array "
      "when None), wrapping around; several shifts and axes roll each axis by its own.");
  m.def(
      "broadcast_arrays", [](const std::vector<Array>& arrays) { return broadcast_arrays(arrays); },
      nb::arg("arrays"), "The arrays broadcast against each other to one shape; lazy.");
  m.def(
      "concat",
      [](const std::vector<Array>& arrays, std::optional<int> axis) {
        return concat(arrays, axis);
      },
      nb::arg("arrays"), nb::kw_only(), nb::arg("axis") = 0,
      "The arrays joined along an existing axis (flattened first when axis is None), "
      "dtypes promoted; lazy.");
  m.def(
      "stack", [](const std::vector<Array>& arrays, int axis) { return stack(arrays, axis); },
      nb::arg("arrays"), nb::kw_only(), nb::arg("axis") = 0,
      "The arrays (of one shape) joined along a new axis; lazy.");
  m.def(
      "flip", [](const Array& x, nb::handle axis) { return flip(x, AxesFrom(axis)); }, nb::arg("x"),
      nb::kw_only(), nb::arg("axis") = nb::none(),
      "x with the order of its elements reversed along `axis` (every axis when None); lazy.");
  m.def(
      "reshape", [](const Array& x, nb::handle shape) { return reshape(x, ShapeFrom(shape)); },
      nb::arg("x"), nb::arg("shape"),
      "x's elements in C order in another shape (one extent may be -1); lazy. The planner "
      "reads each output block from the input blocks it overlaps.");
  m.def(
      "repeat",
      [](const Array& x, Index repeats, std::optional<int> axis) {
        return repeat(x, repeats, axis);
      },
      nb::arg("x"), nb::arg("repeats"), nb::kw_only(), nb::arg("axis") = nb::none(),
      "Each element of x repeated `repeats` times along axis (of the flattened x when None); "
      "lazy.");
  // take's engine half: tessera.array_api.take and integer-array indexing
  // (tessera/_indexing.py) normalize the indices to a 1-d int64 array first.
  m.def(
      "_take",
      [](const Array& x,
         nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> indices,
         int axis) {
        return take(x, std::span<const Index>(indices.data(), indices.shape(0)), axis);
      },
      nb::arg("x"), nb::arg("indices"), nb::arg("axis"),
      "Internal: take with 1-d int64 indices already in range (use tessera.take).");
  m.def(
      "tile", [](const Array& x, nb::handle reps) { return tile(x, ShapeFrom(reps)); },
      nb::arg("x"), nb::arg("repetitions"),
      "x repeated `repetitions` times along each axis (numpy's tile); lazy.");
}

}  // namespace tessera::python
