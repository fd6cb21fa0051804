// Conversions between Python values and Tessera's (bindings.hpp).
#include <nanobind/ndarray.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <string>

#include "bindings.hpp"

namespace tessera::python {
namespace {

// Imported per call (a lookup in sys.modules): a static reference would be released
// after the interpreter has finalized.
nb::module_ Numpy() { return nb::module_::import_("numpy"); }

nb::dlpack::dtype DlpackDType(DType dtype) {
  nb::dlpack::dtype result;
  result.bits = static_cast<std::uint8_t>(dtype.itemsize() * 8);
  result.lanes = 1;
  switch (dtype.kind()) {
    case DTypeKind::kBool:
      result.code = static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bool);
      break;
    case DTypeKind::kSignedInt:
      result.code = static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int);
      break;
    case DTypeKind::kUnsignedInt:
      result.code = static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt);
      break;
    case DTypeKind::kFloat:
      result.code = static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float);
      break;
    case DTypeKind::kComplex:
      result.code = static_cast<std::uint8_t>(nb::dlpack::dtype_code::Complex);
      break;
  }
  return result;
}

Index IndexFrom(nb::handle value, const char* what) {
  if (!nb::isinstance<nb::int_>(value) || nb::isinstance<nb::bool_>(value)) {
    throw InvalidArgument(std::string(what) + " must be whole numbers, got " +
                          nb::cast<std::string>(nb::repr(value)));
  }
  return nb::cast<Index>(value);
}

}  // namespace

DType DTypeFrom(nb::handle value) {
  nb::object dtype;
  try {
    dtype = Numpy().attr("dtype")(value);
  } catch (const nb::python_error&) {
    throw InvalidArgument("not a dtype: " + nb::cast<std::string>(nb::repr(value)));
  }
  return DType::FromName(nb::cast<std::string>(dtype.attr("name")));
}

nb::object NumpyDType(DType dtype) { return Numpy().attr("dtype")(std::string(dtype.name())); }

Array AsTypeChecked(const Array& x, nb::handle dtype) {
  const DType to = DTypeFrom(dtype);
  if (x.dtype().is_complex() && !to.is_complex() && to != bool_) {
    throw nb::type_error(("astype: a " + std::string(x.dtype().name()) +
                          " array does not cast to " + std::string(to.name()) +
                          " (the imaginary parts would be lost); take real(x), imag(x) or abs(x) "
                          "first")
                             .c_str());
  }
  return x.astype(to);
}

Shape ShapeFrom(nb::handle value) {
  if (nb::isinstance<nb::int_>(value)) return Shape{IndexFrom(value, "shape")};
  Shape shape;
  for (nb::handle item : nb::iter(value)) shape.push_back(IndexFrom(item, "a shape's extents"));
  return shape;
}

Shape ChunksFrom(nb::handle value, const Shape& shape) {
  // A whole dimension is one chunk; an empty dimension too (a chunk of 1, as no chunk is
  // smaller).
  const auto whole_of = [&](std::size_t dim) {
    return dim < shape.size() ? std::max<Index>(shape[dim], 1) : 0;
  };
  if (value.is_none()) {
    Shape whole;
    for (std::size_t dim = 0; dim < shape.size(); ++dim) whole.push_back(whole_of(dim));
    return whole;
  }
  if (nb::isinstance<nb::int_>(value)) return Shape(shape.size(), IndexFrom(value, "chunks"));
  Shape chunks;
  std::size_t dim = 0;
  for (nb::handle item : nb::iter(value)) {
    const Index whole = whole_of(dim);
    if (item.is_none()) {
      chunks.push_back(whole);
    } else if (nb::isinstance<nb::tuple>(item) || nb::isinstance<nb::list>(item)) {
      // dask's form: the chunk sizes along the dimension, regular but the last.
      const nb::sequence sizes = nb::borrow<nb::sequence>(item);
      chunks.push_back(nb::len(sizes) == 0 ? whole : IndexFrom(sizes[0], "chunks"));
    } else {
      const Index chunk = IndexFrom(item, "chunks");
      chunks.push_back(chunk == -1 ? whole : chunk);
    }
    ++dim;
  }
  return chunks;
}

Axes AxesFrom(nb::handle value) {
  if (value.is_none()) return Axes();
  if (nb::isinstance<nb::int_>(value)) return Axes(nb::cast<int>(value));
  std::vector<int> axes;
  for (nb::handle item : nb::iter(value)) axes.push_back(nb::cast<int>(item));
  return Axes(std::move(axes));
}

Scalar ScalarFrom(nb::handle value) {
  if (nb::isinstance<nb::bool_>(value)) return Scalar(nb::cast<bool>(value));
  if (nb::isinstance<nb::int_>(value)) return Scalar(nb::cast<std::int64_t>(value));
  if (nb::isinstance<nb::float_>(value)) return Scalar(nb::cast<double>(value));
  if (PyComplex_Check(value.ptr())) {
    return Scalar(std::complex<double>(PyComplex_RealAsDouble(value.ptr()),
                                       PyComplex_ImagAsDouble(value.ptr())));
  }
  throw InvalidArgument("expected an array or a Python bool, int, float or complex, got " +
                        nb::cast<std::string>(nb::repr(value)));
}

nb::object ToNumpy(NDArray array) {
  auto* owned = new NDArray(std::move(array));
  nb::capsule owner(owned, [](void* held) noexcept { delete static_cast<NDArray*>(held); });
  std::vector<std::size_t> shape(owned->shape().begin(), owned->shape().end());
  nb::ndarray<nb::numpy> view(owned->mutable_bytes().data(), shape.size(), shape.data(), owner,
                              nullptr, DlpackDType(owned->dtype()));
  return nb::cast(view, nb::rv_policy::reference);
}

namespace {

// `value` as a C-contiguous numpy array in native byte order (numpy.asarray's `copy`:
// None copies only when it must, True always, False never: numpy raises ValueError).
nb::object NativeContiguous(nb::handle value, nb::handle copy) {
  nb::object contiguous =
      Numpy().attr("asarray")(value, nb::arg("order") = "C", nb::arg("copy") = copy);
  if (nb::cast<bool>(contiguous.attr("dtype").attr("isnative"))) return contiguous;
  if (copy.ptr() == Py_False) {
    throw nb::value_error(
        "asarray(copy=False): the array is not in this machine's byte order, so Tessera "
        "needs a copy; pass copy=None or True");
  }
  const nb::object native = contiguous.attr("dtype").attr("newbyteorder")("=");
  return contiguous.attr("astype")(native);
}

// Keeps a Python object alive for an NDArray that borrows its memory; released with the
// GIL taken, from whichever thread drops the last reference (not after the interpreter
// has begun to finalize: the object goes with it).
bool PythonFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

std::shared_ptr<const void> HoldPythonObject(nb::object object) {
  return std::shared_ptr<const void>(object.release().ptr(), [](const void* held) noexcept {
    if (!Py_IsInitialized() || PythonFinalizing()) return;
    const PyGILState_STATE state = PyGILState_Ensure();
    Py_DECREF(static_cast<PyObject*>(const_cast<void*>(held)));
    PyGILState_Release(state);
  });
}

}  // namespace

NDArray FromNumpy(nb::handle value) {
  // asarray(order="C"), not ascontiguousarray, which makes a 0-d array 1-d.
  const nb::object contiguous = NativeContiguous(value, nb::none());
  const DType dtype = DTypeFrom(contiguous.attr("dtype"));
  NDArray array(ShapeFrom(contiguous.attr("shape")), dtype);
  const std::span<std::byte> into = array.mutable_bytes();
  if (into.empty()) return array;
  const auto source = nb::cast<nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>>(contiguous);
  if (source.nbytes() != into.size()) throw Error("numpy array of unexpected size");
  std::memcpy(into.data(), source.data(), into.size());
  return array;
}

NDArray SharedFromNumpy(nb::handle value, nb::handle copy) {
  nb::object contiguous = NativeContiguous(value, copy);
  if (!nb::cast<bool>(contiguous.attr("flags").attr("aligned"))) {
    if (copy.ptr() == Py_False) {
      throw nb::value_error(
          "asarray(copy=False): the array's elements are not aligned in memory, so Tessera "
          "needs a copy; pass copy=None or True");
    }
    return FromNumpy(contiguous);
  }
  const DType dtype = DTypeFrom(contiguous.attr("dtype"));
  Shape shape = ShapeFrom(contiguous.attr("shape"));
  const auto source = nb::cast<nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>>(contiguous);
  const auto* data = static_cast<const std::byte*>(source.data());
  return NDArray::Borrow(std::move(shape), dtype, data, HoldPythonObject(std::move(contiguous)));
}

Spec SpecOr(nb::handle spec) {
  if (spec.is_none()) {
    Spec automatic;
    automatic.allowed_mem = Spec::kAutoAllowedMem;
    return automatic;
  }
  return nb::cast<Spec>(spec);
}

nb::tuple ToTuple(const Shape& shape) {
  nb::list items;
  for (const Index extent : shape) items.append(extent);
  return nb::tuple(items);
}

}  // namespace tessera::python
