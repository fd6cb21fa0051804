// Array creation: asarray (from numpy or anything numpy.asarray takes), ones, zeros,
// full, arange, the random submodule, and their *_like forms. Every function takes
// chunks= and spec= as Cubed's do (spec None: allowed_mem "auto").
#include <nanobind/stl/string.h>

#include <algorithm>
#include <cmath>

#include "bindings.hpp"

namespace tessera::python {
namespace {

// numpy's dtype for a Python number: bool, int64 (uint64 above INT64_MAX), float64 or
// complex128.
DType DefaultDType(const Scalar& value) {
  switch (value.kind()) {
    case ScalarKind::kBool:
      return bool_;
    case ScalarKind::kInt:
      return std::holds_alternative<std::uint64_t>(value.value()) ? uint64 : int64;
    case ScalarKind::kComplex:
      return complex128;
    case ScalarKind::kFloat:
      break;
  }
  return float64;
}

DType DTypeOr(nb::handle dtype, DType otherwise) {
  return dtype.is_none() ? otherwise : DTypeFrom(dtype);
}

}  // namespace

void BindCreation(nb::module_& m) {
  m.def(
      "asarray",
      [](nb::handle data, nb::handle dtype, nb::handle copy, nb::handle chunks, nb::handle spec) {
        if (nb::isinstance<Array>(data)) {
          // A lazy array is never written in place: copy=True has nothing to protect.
          const Array& x = nb::cast<const Array&>(data);
          return dtype.is_none() ? x : x.astype(DTypeFrom(dtype));
        }
        nb::object values = nb::module_::import_("numpy").attr("asarray")(
            data, nb::arg("dtype") = dtype.is_none() ? nb::none() : NumpyDType(DTypeFrom(dtype)),
            nb::arg("copy") = copy);
        NDArray array = SharedFromNumpy(values, copy);
        const Shape shape = array.shape();
        return asarray(std::move(array), ChunksFrom(chunks, shape), SpecOr(spec));
      },
      nb::arg("obj"), nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none(),
      nb::arg("chunks") = nb::none(), nb::arg("spec") = nb::none(),
      "A lazy array of the values of `obj` (numpy's asarray). copy=None (the default, as "
      "in the Array API) shares a numpy array's memory when its layout allows: writes to "
      "it before compute() are seen. copy=True takes a snapshot; copy=False raises "
      "ValueError where a copy is needed.");
  struct Constant {
    const char* name;
    Array (*make)(Shape, DType, Shape, const Spec&);
    const char* doc;
  };
  for (const auto& [name, make, doc] :
       {Constant{"ones", &ones,
                 "An array of ones of shape (float64 unless dtype), chunked as chunks under "
                 "spec; lazy, nothing stored."},
        Constant{"zeros", &zeros,
                 "An array of zeros of shape (float64 unless dtype), chunked as chunks under "
                 "spec; lazy, nothing stored."}}) {
    const auto constant = make;
    m.def(
        name,
        [constant](nb::handle shape, nb::handle dtype, nb::handle chunks, nb::handle spec) {
          const Shape extents = ShapeFrom(shape);
          return constant(extents, DTypeOr(dtype, float64), ChunksFrom(chunks, extents),
                          SpecOr(spec));
        },
        nb::arg("shape"), nb::kw_only(), nb::arg("dtype") = nb::none(),
        nb::arg("chunks") = nb::none(), nb::arg("spec") = nb::none(), doc);
  }
  m.def(
      "full",
      [](nb::handle shape, nb::handle fill_value, nb::handle dtype, nb::handle chunks,
         nb::handle spec) {
        const Shape extents = ShapeFrom(shape);
        const Scalar value = ScalarFrom(fill_value);
        const DType type = dtype.is_none() ? DefaultDType(value) : DTypeFrom(dtype);
        return full(extents, value, type, ChunksFrom(chunks, extents), SpecOr(spec));
      },
      nb::arg("shape"), nb::arg("fill_value"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("chunks") = nb::none(), nb::arg("spec") = nb::none(),
      "An array of shape holding fill_value everywhere (dtype: numpy's for the Python number "
      "unless given); lazy, nothing stored.");
  m.def(
      "arange",
      [](nb::handle start, nb::handle stop, nb::handle step, nb::handle dtype, nb::handle chunks,
         nb::handle spec) {
        const auto is_int = [](nb::handle value) {
          return value.is_none() ||
                 (nb::isinstance<nb::int_>(value) && !nb::isinstance<nb::bool_>(value));
        };
        const double begin = stop.is_none() ? 0 : nb::cast<double>(start);
        const double end = nb::cast<double>(stop.is_none() ? start : stop);
        const double stride = nb::cast<double>(step);
        if (stride == 0) throw InvalidArgument("arange: step must not be 0");
        // numpy's default: int64 when start, stop and step are all integers.
        const DType type =
            DTypeOr(dtype, is_int(start) && is_int(stop) && is_int(step) ? int64 : float64);
        const Index length =
            std::max<Index>(0, static_cast<Index>(std::ceil((end - begin) / stride)));
        const Shape chunk = ChunksFrom(chunks, Shape{length});
        return arange(begin, end, stride, type, chunk.empty() ? length : chunk[0], SpecOr(spec));
      },
      nb::arg("start"), nb::arg("stop") = nb::none(), nb::arg("step") = 1, nb::kw_only(),
      nb::arg("dtype") = nb::none(), nb::arg("chunks") = nb::none(), nb::arg("spec") = nb::none(),
      "Evenly spaced values in [start, stop) by step (arange(n): 0 .. n - 1), as numpy's "
      "arange; int64 when all three are ints, float64 otherwise. Lazy, nothing stored.");
  m.def(
      "ones_like",
      [](const Array& x, nb::handle dtype) {
        return dtype.is_none() ? ones_like(x) : ones_like(x, DTypeFrom(dtype));
      },
      nb::arg("x"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      "Ones of x's shape, chunks and spec (x's dtype unless given); lazy.");
  m.def(
      "zeros_like",
      [](const Array& x, nb::handle dtype) {
        return dtype.is_none() ? zeros_like(x) : zeros_like(x, DTypeFrom(dtype));
      },
      nb::arg("x"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      "Zeros of x's shape, chunks and spec (x's dtype unless given); lazy.");
  m.def(
      "full_like",
      [](const Array& x, nb::handle fill_value, nb::handle dtype) {
        const Scalar value = ScalarFrom(fill_value);
        return dtype.is_none() ? full_like(x, value) : full_like(x, value, DTypeFrom(dtype));
      },
      nb::arg("x"), nb::arg("fill_value"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      "fill_value everywhere, in x's shape, chunks and spec (x's dtype unless given); lazy.");

  nb::module_ random_module = m.def_submodule("random", "Random arrays (Cubed's cubed.random).");
  random_module.def(
      "random",
      [](nb::handle size, nb::handle chunks, nb::handle spec, std::uint64_t seed) {
        const Shape shape = ShapeFrom(size);
        return random::random(shape, ChunksFrom(chunks, shape), SpecOr(spec), seed);
      },
      nb::arg("size"), nb::kw_only(), nb::arg("chunks") = nb::none(), nb::arg("spec") = nb::none(),
      nb::arg("seed") = 0,
      "Uniform values in [0, 1), float64, counter-based: the same seed "
      "gives the same values whatever the chunks.");
}

}  // namespace tessera::python
