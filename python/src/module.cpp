// tessera._tessera: the compiled half of the `tessera` Python package (python/tessera/
// is the other, which re-exports these names).
#include <nanobind/stl/string.h>

#include "bindings.hpp"

NB_MODULE(_tessera, m) {
  using namespace tessera::python;
  m.doc() = "Tessera's engine: lazy chunked arrays computed under a proven memory budget.";
  m.attr("__version__") = std::string(tessera::version());
  BindErrors(m);
  BindSpec(m);
  BindArray(m);
  BindCreation(m);
  BindElementwise(m);
  BindReductions(m);
  BindManipulation(m);
  BindPlan(m);
  BindStorage(m);
  BindHistory(m);
  BindMapBlocks(m);
  BindRemote(m);
}
