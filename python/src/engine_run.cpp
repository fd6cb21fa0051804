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

ComputeOptions InterruptibleOptions(const std::shared_ptr<RunProgress>& progress) {
  ComputeOptions options;
  options.execute.on_start = [progress](std::int64_t total) { progress->total = total; };
  options.execute.on_task = [progress](const TaskRecord&) {
    ++progress->done;
    if (progress->interrupted) throw Error("interrupted (KeyboardInterrupt)");
  };
  options.execute.on_wait = [progress] {
    if (progress->interrupted) throw Error("interrupted (KeyboardInterrupt)");
  };
  return options;
}

namespace {

// Python's progress bar of a run (tessera._progress), if one is wanted: opened once the
// run's task count is known, moved on at most every 100 ms, closed when the run ends.
class PythonProgressBar {
 public:
  explicit PythonProgressBar(const RunProgress& progress) : progress_(progress) {}
  PythonProgressBar(const PythonProgressBar&) = delete;
  PythonProgressBar& operator=(const PythonProgressBar&) = delete;
  ~PythonProgressBar() {
    if (!bar_.is_valid() || bar_.is_none()) return;
    try {
      Advance();
      bar_.attr("close")();
    } catch (const nb::python_error&) {
      // a broken bar never fails the run it shows
    }
  }

  // REQUIRES: the GIL held.
  void Poll() {
    if (progress_.total < 0) return;
    if (!bar_.is_valid()) {
      bar_ = nb::module_::import_("tessera._progress").attr("open_bar")(progress_.total.load());
    }
    Advance();
  }

 private:
  void Advance() {
    if (bar_.is_none()) return;
    const std::int64_t done = progress_.done.load();
    if (done > shown_) {
      bar_.attr("update")(done - shown_);
      shown_ = done;
    }
  }

  const RunProgress& progress_;
  nb::object bar_;  // None: no bar wanted
  std::int64_t shown_ = 0;
};

}  // namespace

bool WatchSignalsUntil(const std::atomic<bool>& done, RunProgress& progress) {
  bool signalled = false;
  PythonProgressBar bar(progress);
  int polls = 0;
  while (!done) {
    {
      nb::gil_scoped_release release;
      for (int wait = 0; wait < 20 && !done; ++wait) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    if (!signalled && PyErr_CheckSignals() != 0) {
      signalled = true;
      progress.interrupted = true;  // the run stops after the tasks in flight
    }
    if (!signalled && ++polls % 5 == 0) {
      try {
        bar.Poll();
      } catch (const nb::python_error&) {
        // a bar that cannot be drawn is left out; the run goes on
      }
    }
  }
  if (!signalled) {
    try {
      bar.Poll();
    } catch (const nb::python_error&) {
    }
  }
  return signalled;
}

}  // namespace tessera::python
