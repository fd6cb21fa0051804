// The exceptions Python kernels raise while a plan runs (bindings.hpp, RunEngine).
#include <mutex>
#include <memory>

#include "bindings.hpp"

namespace tessera::python {
namespace {

struct PendingError {
  std::mutex mutex;
  std::unique_ptr<nb::python_error> error;  // GUARDED_BY(mutex); set and taken with the GIL
};

PendingError& Pending() {
  static PendingError* pending = new PendingError();  // never destroyed: see Numpy()
  return *pending;
}

}  // namespace

void KeepKernelError(nb::python_error error) {
  PendingError& pending = Pending();
  const std::lock_guard<std::mutex> lock(pending.mutex);
  if (!pending.error) pending.error = std::make_unique<nb::python_error>(std::move(error));
}

void RaiseKernelErrorOr(const Error& engine_error) {
  std::unique_ptr<nb::python_error> kept;
  {
    PendingError& pending = Pending();
    const std::lock_guard<std::mutex> lock(pending.mutex);
    kept = std::move(pending.error);
  }
  if (!kept) throw;  // the engine's own error, translated as registered
  nb::object exception = nb::borrow(kept->value());
  if (nb::hasattr(exception, "add_note"))
    exception.attr("add_note")(std::string(engine_error.what()));
  throw std::move(*kept);
}

}  // namespace tessera::python
