// Running the engine from Python (bindings.hpp, RunPlan): the exceptions Python kernels
// raise while a plan runs, and Ctrl-C.
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

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

ComputeOptions InterruptibleOptions(const std::shared_ptr<std::atomic<bool>>& interrupted) {
  ComputeOptions options;
  options.execute.on_task = [interrupted](const TaskRecord&) {
    if (*interrupted) throw Error("interrupted (KeyboardInterrupt)");
  };
  return options;
}

bool WatchSignalsUntil(const std::atomic<bool>& done, std::atomic<bool>& interrupted) {
  bool signalled = false;
  while (!done) {
    {
      nb::gil_scoped_release release;
      for (int wait = 0; wait < 20 && !done; ++wait) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    if (!signalled && PyErr_CheckSignals() != 0) {
      signalled = true;
      interrupted = true;  // the run stops after the tasks in flight
    }
  }
  return signalled;
}

}  // namespace tessera::python
