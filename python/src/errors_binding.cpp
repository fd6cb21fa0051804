// Tessera's errors as Python exceptions (API.md "Errors"): tessera.Error and its kinds.
// MemoryBudgetError and InvalidArgument are ValueErrors (`except ValueError` catches a
// plan that does not fit), StorageError an OSError, FormatError a ValueError.
#include "bindings.hpp"

namespace tessera::python {

void BindErrors(nb::module_& m) {
  // nanobind tries the translators registered last first: the base goes first.
  nb::exception<Error>(m, "Error", PyExc_RuntimeError);
  nb::exception<InvalidArgument>(m, "InvalidArgument", PyExc_ValueError);
  nb::exception<MemoryBudgetError>(m, "MemoryBudgetError", PyExc_ValueError);
  nb::exception<StorageError>(m, "StorageError", PyExc_OSError);
  nb::exception<FormatError>(m, "FormatError", PyExc_ValueError);
}

}  // namespace tessera::python
