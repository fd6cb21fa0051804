// Tessera's errors as Python exceptions (API.md "Errors"): tessera.Error and its kinds.
// MemoryBudgetError and InvalidArgument are ValueErrors (`except ValueError` catches a
// plan that does not fit), StorageError an OSError, FormatError a ValueError.
#include "bindings.hpp"

namespace tessera::python {

void BindErrors(nb::module_& m) {
  // nanobind tries the translators registered last first: the base goes first.
  nb::exception<Error>(m, "Error", PyExc_RuntimeError).attr("__doc__") =
      "Every error of Tessera's engine (a RuntimeError); the kinds below subclass it.";
  nb::exception<InvalidArgument>(m, "InvalidArgument", PyExc_ValueError).attr("__doc__") =
      "A bad argument (shape, dtype, axis, chunks, key): the message says what was wrong and "
      "what to give instead. Raised when the array is built.";
  nb::exception<MemoryBudgetError>(m, "MemoryBudgetError", PyExc_ValueError).attr("__doc__") =
      "A task of the plan would need more than allowed_mem: the message names the op, the "
      "projected and allowed bytes, and the setting that would fit. Raised by plan() and "
      "compute(), never while building arrays; a ValueError.";
  nb::exception<StorageError>(m, "StorageError", PyExc_OSError).attr("__doc__") =
      "Reading or writing a store failed (missing, unreadable, full); an OSError.";
  nb::exception<FormatError>(m, "FormatError", PyExc_ValueError).attr("__doc__") =
      "Stored metadata or a chunk is not valid Zarr: the message names the document and the "
      "key; a ValueError.";
}

}  // namespace tessera::python
