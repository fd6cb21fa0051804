// tessera.Array: a lazy chunked array — properties, compute (the GIL released while the
// plan runs; the result a numpy array sharing the engine's memory), rechunk, astype and
// the Python operators (a Python number is weak: x_float32 * 2.0 stays float32).
#include <nanobind/stl/string.h>

#include <string>

#include "bindings.hpp"

namespace tessera::python {
namespace {

nb::object Compute(const Array& array) {
  return ToNumpy(RunPlan([&](const ComputeOptions& options) { return array.compute(options); }));
}

// The one value of a 1-element array as the Python number `kind` ("bool", "int", "index",
// "float", "complex"), as numpy converts it; for other sizes ValueError (bool) or
// TypeError, and TypeError for __float__ of a complex array and __index__ of a
// non-integer one.
nb::object PythonNumber(const Array& x, const std::string& kind) {
  if (x.size() != 1) {
    const std::string message = "only 1-element arrays convert to a Python " + kind +
                                "; this one has shape " + ShapeToString(x.shape()) +
                                " (index or reduce it first, e.g. with any() or all())";
    // numpy's kinds: an ambiguous truth value is a ValueError, a number a TypeError.
    if (kind == "bool") throw nb::value_error(message.c_str());
    throw nb::type_error(message.c_str());
  }
  const DType dtype = x.dtype();
  const bool integer = dtype.kind() == DTypeKind::kSignedInt ||
                       dtype.kind() == DTypeKind::kUnsignedInt || dtype == bool_;
  if ((kind == "index" && !integer) || ((kind == "float" || kind == "int") && dtype.is_complex())) {
    throw nb::type_error(("a " + std::string(dtype.name()) +
                          " array does not convert to a Python " +
                          (kind == "index" ? std::string("index (use an integer array)")
                                           : kind + " (take real(x) or abs(x) first)"))
                             .c_str());
  }
  const nb::object value = Compute(x).attr("reshape")(nb::make_tuple()).attr("item")();
  if (kind == "index") return nb::int_(value);
  return nb::module_::import_("builtins").attr(kind.c_str())(value);
}

nb::tuple DaskChunks(const Array& array) {
  // dask's and Cubed's `chunks`: per dimension, the chunk sizes along it.
  nb::list dims;
  for (std::size_t d = 0; d < array.shape().size(); ++d) {
    nb::list sizes;
    const Index extent = array.shape()[d];
    const Index chunk = array.chunks()[d];
    for (Index start = 0; start < extent; start += chunk)
      sizes.append(std::min(chunk, extent - start));
    if (extent == 0) sizes.append(0);
    dims.append(nb::tuple(sizes));
  }
  return nb::tuple(dims);
}

std::optional<Index> OptionalIndex(nb::handle value) {
  if (value.is_none()) return std::nullopt;
  return nb::cast<Index>(value);
}

// Whether a Python index item is basic: an int (not a bool), a slice, Ellipsis or None.
bool IsBasicIndexItem(nb::handle item) {
  return item.is_none() || item.is(nb::handle(Py_Ellipsis)) || nb::isinstance<nb::slice>(item) ||
         (nb::isinstance<nb::int_>(item) && !nb::isinstance<nb::bool_>(item));
}

// One basic item of a Python index: an int, a slice, Ellipsis or None (a new axis).
IndexItem IndexItemFrom(nb::handle item) {
  if (item.is_none()) return newaxis;
  if (item.is(nb::handle(Py_Ellipsis))) return ellipsis;
  if (nb::isinstance<nb::slice>(item)) {
    return Slice(OptionalIndex(item.attr("start")), OptionalIndex(item.attr("stop")),
                 OptionalIndex(item.attr("step")));
  }
  return nb::cast<Index>(item);
}

// x[key]: basic indexing (api/indexing.hpp) here; keys with integer arrays (or anything
// else) go to tessera._indexing, which makes them of takes or says what is wrong.
nb::object GetItem(const Array& x, nb::handle key) {
  const bool is_tuple = nb::isinstance<nb::tuple>(key);
  bool basic = is_tuple || IsBasicIndexItem(key);
  if (is_tuple) {
    for (nb::handle item : nb::iter(key)) basic = basic && IsBasicIndexItem(item);
  }
  if (!basic) return nb::module_::import_("tessera._indexing").attr("getitem")(nb::cast(x), key);
  std::vector<IndexItem> items;
  if (is_tuple) {
    for (nb::handle item : nb::iter(key)) items.push_back(IndexItemFrom(item));
  } else {
    items.push_back(IndexItemFrom(key));
  }
  try {
    return nb::cast(index(x, items));
  } catch (const InvalidArgument& error) {
    throw nb::index_error(error.what());  // out of bounds, too many indices: numpy's IndexError
  }
}

}  // namespace

void BindArray(nb::module_& m) {
  nb::class_<Array> array(m, "Array",
                          "A lazy N-dimensional array computed chunk by chunk: building it "
                          "runs nothing; compute(), to_zarr() and plan() plan it (and prove "
                          "its memory) first.");
  array
      .def_prop_ro(
          "shape", [](const Array& x) { return ToTuple(x.shape()); },
          nb::for_getter(nb::sig("def shape(self) -> tuple[int, ...]")), "The extent of each axis.")
      .def_prop_ro(
          "chunksize", [](const Array& x) { return ToTuple(x.chunks()); },
          nb::for_getter(nb::sig("def chunksize(self) -> tuple[int, ...]")),
          "The shape of one chunk.")
      .def_prop_ro("chunks", &DaskChunks,
                   nb::for_getter(nb::sig("def chunks(self) -> tuple[tuple[int, ...], ...]")),
                   "Per dimension, the chunk sizes along it (dask's form).")
      .def_prop_ro(
          "dtype", [](const Array& x) { return NumpyDType(x.dtype()); },
          nb::for_getter(nb::sig("def dtype(self) -> numpy.dtype[typing.Any]")),
          "The element type, a numpy dtype.")
      .def_prop_ro("ndim", &Array::ndim)
      .def_prop_ro("size", &Array::size)
      .def_prop_ro("nbytes", &Array::nbytes)
      .def_prop_ro("name", &Array::name)
      .def_prop_ro("spec", &Array::spec)
      .def_prop_ro("device", [](const Array&) { return "cpu"; })
      .def_prop_ro("mT", [](const Array& x) { return matrix_transpose(x); })
      .def_prop_ro("T",
                   [](const Array& x) {
                     std::vector<int> axes(static_cast<std::size_t>(x.ndim()));
                     for (int axis = 0; axis < x.ndim(); ++axis)
                       axes[static_cast<std::size_t>(axis)] = x.ndim() - 1 - axis;
                     return permute_dims(x, axes);
                   })
      .def(
          "__array_function__",
          [](nb::handle self, nb::handle function, nb::handle types, nb::handle args,
             nb::handle kwargs) {
            return nb::module_::import_("tessera._numpy_functions")
                .attr("array_function")(self, function, types, args, kwargs);
          },
          nb::arg("func"), nb::arg("types"), nb::arg("args"), nb::arg("kwargs"),
          "numpy's reductions (np.nanmean, np.sum, ...) planned by Tessera (NEP 18).")
      .def(
          "__array_namespace__",
          [](const Array&, nb::handle api_version) {
            if (!api_version.is_none()) {
              const std::string version = nb::cast<std::string>(api_version);
              if (version != "2023.12" && version != "2024.12") {
                throw InvalidArgument("tessera.array_api implements revision 2024.12, not " +
                                      version);
              }
            }
            return nb::module_::import_("tessera.array_api");
          },
          nb::arg("api_version") = nb::none(), "The array API namespace: tessera.array_api.")
      .def(
          "compute",
          [](const Array& x, const nb::kwargs& keywords) {
            CheckPlanKeywords(keywords, "compute");
            return Compute(x);
          },
          nb::arg("keywords"),
          nb::sig("def compute(self, **keywords: object) -> numpy.typing.NDArray[typing.Any]"),
          "Plans, runs and returns the values as a numpy array.")
      .def(
          "__array__",
          [](const Array& x, nb::handle dtype, nb::handle) {
            nb::object values = Compute(x);
            return dtype.is_none() ? values : values.attr("astype")(dtype);
          },
          nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none(),
          nb::sig("def __array__(self, dtype: object | None = None, copy: bool | None = None) "
                  "-> numpy.typing.NDArray[typing.Any]"),
          "The computed values (numpy's protocol): np.asarray(x) plans and runs x.")
      .def(
          "__dlpack__",
          [](const Array& x, const nb::kwargs& keywords) {
            // The computed values' capsule: numpy's, over the engine's buffer (no copy).
            return Compute(x).attr("__dlpack__")(**keywords);
          },
          nb::arg("keywords"), nb::sig("def __dlpack__(self, **keywords: object) -> object"),
          "DLPack export: computes x (one plan, the memory check first) and hands out its "
          "values without copying them.")
      .def(
          "__dlpack_device__", [](const Array&) { return nb::make_tuple(1, 0); },
          nb::sig("def __dlpack_device__(self) -> tuple[int, int]"),
          "(1, 0): the values are in CPU memory (DLPack's kDLCPU).")
      .def(
          "rechunk",
          [](const Array& x, nb::handle chunks) {
            return x.rechunk(ChunksFrom(chunks, x.shape()));
          },
          nb::arg("chunks"), "The same values on another chunk grid (lazy).")
      .def("astype", &AsTypeChecked, nb::arg("dtype"),
           "x cast to dtype (lazy); a complex array casts to complex dtypes and bool only.")
      .def(
          "__bool__", [](const Array& x) { return PythonNumber(x, "bool"); },
          nb::sig("def __bool__(self) -> bool"),
          "The one value of a 1-element array as a Python bool (computes it).")
      .def(
          "__int__", [](const Array& x) { return PythonNumber(x, "int"); },
          nb::sig("def __int__(self) -> int"),
          "The one value of a 1-element array as a Python int (computes it).")
      .def(
          "__index__", [](const Array& x) { return PythonNumber(x, "index"); },
          nb::sig("def __index__(self) -> int"),
          "The one value of a 1-element integer array as a Python int (computes it).")
      .def(
          "__float__", [](const Array& x) { return PythonNumber(x, "float"); },
          nb::sig("def __float__(self) -> float"),
          "The one value of a 1-element real array as a Python float (computes it).")
      .def(
          "__complex__", [](const Array& x) { return PythonNumber(x, "complex"); },
          nb::sig("def __complex__(self) -> complex"),
          "The one value of a 1-element array as a Python complex (computes it).")
      .def(
          "plan", [](const Array& x) { return RunEngine([&] { return x.plan(); }); },
          "The plan compute() would run (MemoryBudgetError when a task would not fit).")
      .def(
          "visualize",
          [](const Array& x, nb::handle filename, nb::handle format, const nb::kwargs& keywords) {
            CheckPlanKeywords(keywords, "visualize");
            nb::object plan = nb::cast(RunEngine([&] { return x.plan(); }));
            return plan.attr("visualize")(filename, format);
          },
          nb::arg("filename") = nb::none(), nb::arg("format") = nb::none(), nb::arg("keywords"),
          "The plan as Graphviz (FinalizedPlan.visualize); Cubed's optimize_graph= and "
          "optimize_function= are accepted (Tessera always optimizes).")
      .def("to_zarr", &ToZarr, nb::arg("store"), nb::kw_only(),
           nb::arg("zarr_format") = nb::none(), nb::arg("shards") = nb::none(),
           nb::arg("compressor") = "blosc-lz4", nb::arg("checksum") = false,
           nb::arg("dimension_names") = nb::none(), nb::arg("consolidated") = false,
           nb::arg("overwrite") = true, nb::arg("resume") = false, kToZarrDoc)
      .def("__getitem__", &GetItem, nb::arg("key"),
           nb::sig("def __getitem__(self, key: object) -> Array"),
           "x[key]: integers, slices (with steps), ..., None and integer arrays (numpy's "
           "rules); lazy, and a task reads only the chunks its elements are in.")
      .def(
          "__setitem__",
          [](Array& x, nb::handle key, nb::handle value) {
            // A lazy update that rebinds x: every other Array is unchanged.
            x = nb::cast<Array>(
                nb::module_::import_("tessera._setitem").attr("updated")(nb::cast(x), key, value));
          },
          nb::arg("key"), nb::arg("value"),
          "x[key] = value as a lazy update: x becomes where(selected, value, x); scalars, or "
          "arrays broadcasting to x's shape.")
      .def("__len__",
           [](const Array& x) {
             if (x.ndim() == 0) throw nb::type_error("len() of a 0-d array");
             return x.shape()[0];
           })
      .def("__repr__", [](const Array& x) {
        return "tessera.Array<" + x.name() + ", shape=" + ShapeToString(x.shape()) +
               ", dtype=" + std::string(x.dtype().name()) +
               ", chunksize=" + ShapeToString(x.chunks()) + ">";
      });

  // The binary operators: (python name, op, reflected name).
  struct Operator {
    const char* forward;
    const char* reflected;
    const char* op;
  };
  static constexpr Operator kOperators[] = {
      {"__add__", "__radd__", "add"},
      {"__sub__", "__rsub__", "subtract"},
      {"__mul__", "__rmul__", "multiply"},
      {"__truediv__", "__rtruediv__", "divide"},
      {"__floordiv__", "__rfloordiv__", "floor_divide"},
      {"__mod__", "__rmod__", "remainder"},
      {"__pow__", "__rpow__", "pow"},
      {"__and__", "__rand__", "bitwise_and"},
      {"__or__", "__ror__", "bitwise_or"},
      {"__xor__", "__rxor__", "bitwise_xor"},
      {"__lshift__", "__rlshift__", "bitwise_left_shift"},
      {"__rshift__", "__rrshift__", "bitwise_right_shift"},
  };
  for (const Operator& op : kOperators) {
    const char* name = op.op;
    array.def(op.forward, [name](nb::handle x, nb::handle y) { return ElementwiseOf(name, x, y); });
    array.def(op.reflected,
              [name](nb::handle x, nb::handle y) { return ElementwiseOf(name, y, x); });
  }
  static constexpr std::pair<const char*, const char*> kComparisons[] = {
      {"__eq__", "equal"},      {"__ne__", "not_equal"}, {"__lt__", "less"},
      {"__le__", "less_equal"}, {"__gt__", "greater"},   {"__ge__", "greater_equal"},
  };
  for (const auto& [method, op] : kComparisons) {
    const char* name = op;
    array.def(method, [name](nb::handle x, nb::handle y) { return ElementwiseOf(name, x, y); });
  }
  array.def("__neg__", [](const Array& x) { return negative(x); })
      .def("__pos__", [](const Array& x) { return positive(x); })
      .def("__abs__", [](const Array& x) { return abs(x); })
      .def("__invert__", [](const Array& x) { return bitwise_invert(x); })
      .def("__matmul__", [](const Array& x, const Array& y) { return matmul(x, y); })
      .def("__rmatmul__", [](const Array& x, const Array& y) { return matmul(y, x); });
}

}  // namespace tessera::python
