// The elementwise functions of the array API, one Python function per row of the
// engine's table (tessera::elementwise_function_names), and where.
#include <nanobind/stl/string.h>

#include <deque>
#include <string>

#include "bindings.hpp"

namespace tessera::python {

Array ElementwiseOf(const std::string& op, nb::handle x1, nb::handle x2) {
  const bool first = nb::isinstance<Array>(x1);
  const bool second = nb::isinstance<Array>(x2);
  if (first && second) {
    return elementwise(op, nb::cast<const Array&>(x1), nb::cast<const Array&>(x2));
  }
  if (first) return elementwise(op, nb::cast<const Array&>(x1), ScalarFrom(x2));
  if (second) return elementwise(op, ScalarFrom(x1), nb::cast<const Array&>(x2));
  throw InvalidArgument(op + ": give at least one tessera array");
}

// The docstring of elementwise function `op`, kept for the life of the module (nanobind
// keeps the pointer it is given).
const char* DocOf(const std::string& op) {
  static std::deque<std::string> docs;
  return docs.emplace_back(elementwise_function_doc(op)).c_str();
}

void BindElementwise(nb::module_& m) {
  for (const std::string_view name : elementwise_function_names(1)) {
    const std::string op(name);
    m.def(
        op.c_str(), [op](const Array& x) { return elementwise(op, x); }, nb::arg("x"), DocOf(op));
  }
  for (const std::string_view name : elementwise_function_names(2)) {
    const std::string op(name);
    m.def(
        op.c_str(), [op](nb::handle x1, nb::handle x2) { return ElementwiseOf(op, x1, x2); },
        nb::arg("x1"), nb::arg("x2"), DocOf(op));
  }
  m.def(
      "where",
      [](const Array& condition, nb::handle x1, nb::handle x2) {
        const bool first = nb::isinstance<Array>(x1);
        const bool second = nb::isinstance<Array>(x2);
        if (first && second)
          return where(condition, nb::cast<const Array&>(x1), nb::cast<const Array&>(x2));
        if (first) return where(condition, nb::cast<const Array&>(x1), ScalarFrom(x2));
        if (second) return where(condition, ScalarFrom(x1), nb::cast<const Array&>(x2));
        throw InvalidArgument("where: give x1 or x2 as a tessera array");
      },
      nb::arg("condition"), nb::arg("x1"), nb::arg("x2"),
      "x1 where condition is true, x2 elsewhere (either may be a Python number), all three "
      "broadcast, dtypes promoted; lazy.");
  m.def("astype", &AsTypeChecked, nb::arg("x"), nb::arg("dtype"),
        "x cast to dtype (lazy); a complex array casts to complex dtypes and bool only.");
}

}  // namespace tessera::python
