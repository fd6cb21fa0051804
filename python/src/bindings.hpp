// The Python module `tessera._tessera`: one Bind* function per part of the public C++
// surface (tessera/tessera.hpp), called once by module.cpp, and the conversions between
// Python values and Tessera's (shapes, dtypes, scalars, NDArrays as numpy arrays) they
// share (with the STL type casters every file uses). A front end: it includes only
// tessera/tessera.hpp (tests/check_layers.sh).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "tessera/tessera.hpp"

namespace tessera::python {

namespace nb = nanobind;

void BindErrors(nb::module_& m);
void BindSpec(nb::module_& m);
void BindArray(nb::module_& m);
void BindCreation(nb::module_& m);
void BindElementwise(nb::module_& m);
void BindReductions(nb::module_& m);
void BindManipulation(nb::module_& m);
void BindPlan(nb::module_& m);
void BindStorage(nb::module_& m);
void BindHistory(nb::module_& m);
void BindMapBlocks(nb::module_& m);
void BindRemote(nb::module_& m);

// What numpy.dtype(value) names ("float32", np.float32, a numpy dtype, ...) as a DType.
// InvalidArgument for a dtype Tessera does not hold.
DType DTypeFrom(nb::handle value);
// The numpy dtype of `dtype`.
nb::object NumpyDType(DType dtype);

// x.astype(dtype) as the array API allows it: a complex array casts to complex dtypes and
// to bool, never to a real dtype (TypeError saying to take real() or abs() first).
Array AsTypeChecked(const Array& x, nb::handle dtype);
// An int or a sequence of ints.
Shape ShapeFrom(nb::handle value);
// Chunks for an array of `shape`: an int (every dimension), a sequence of ints (-1 or
// None: the whole dimension), or dask's tuple of tuples of regular chunks (their first).
Shape ChunksFrom(nb::handle value, const Shape& shape);
// None (every axis), an int, or a sequence of ints.
Axes AxesFrom(nb::handle value);
// op(x1, x2) for a binary elementwise function, each operand a tessera Array or a Python
// number (weak); the functions and the Array operators. InvalidArgument when neither is
// an Array.
Array ElementwiseOf(const std::string& op, nb::handle x1, nb::handle x2);
// A Python bool, int or float (weak: it takes the array's dtype, as the standard says).
Scalar ScalarFrom(nb::handle value);
// `array` as a numpy array sharing its memory (the numpy array owns it from now on).
nb::object ToNumpy(NDArray array);
// A copy of a numpy array (any layout, any byte order) as an NDArray.
NDArray FromNumpy(nb::handle value);
// numpy.asarray(value, copy=copy) as an NDArray that shares the numpy array's memory and
// keeps it alive (read-only; copied only where the layout, byte order or alignment needs
// it and copy is not False).
NDArray SharedFromNumpy(nb::handle value, nb::handle copy);
// The Spec a function was given: `spec` when not None, else the default Spec
// (allowed_mem "auto").
Spec SpecOr(nb::handle spec);
// x.to_zarr(store, ...) (a directory path), the GIL released while it runs: the method and
// the module's function (storage_binding.cpp documents the keywords).
void ToZarr(const Array& x, nb::handle store, std::optional<int> zarr_format,
            std::optional<std::vector<Index>> shards, const std::optional<std::string>& compressor,
            bool checksum, std::optional<std::vector<std::string>> dimension_names,
            bool consolidated, bool overwrite, bool resume);
// Its docstring.
extern const char* const kToZarrDoc;
// A Python kernel (map_blocks) that raised: its exception is kept, and the kernel stops
// the run with a tessera::Error (not retried: it would fail alike).
void KeepKernelError(nb::python_error error);
// Called in a catch block of a tessera::Error: raises the exception a Python kernel
// raised during the run, as itself, with the engine's message (op, block) as a note;
// rethrows the current exception when no kernel raised.
[[noreturn]] void RaiseKernelErrorOr(const Error& engine_error);

// Runs `work` (planning) with the GIL released; a Python kernel's exception surfaces as
// itself (RaiseKernelErrorOr).
template <class Work>
auto RunEngine(Work&& work) {
  try {
    nb::gil_scoped_release release;
    return work();
  } catch (const Error& error) {
    RaiseKernelErrorOr(error);
  }
}

// What a run started from Python shares with the thread watching it: its task count
// (-1 until the run starts), the tasks done, and whether Ctrl-C asked it to stop.
struct RunProgress {
  std::atomic<std::int64_t> total{-1};
  std::atomic<std::int64_t> done{0};
  std::atomic<bool> interrupted{false};
};
// The options of a run that Ctrl-C stops and that counts its tasks into `progress`:
// once `interrupted` is set, the run stops after the tasks in flight (the next task to
// finish ends it), as for a failed task: a to_zarr target is not put in place.
ComputeOptions InterruptibleOptions(const std::shared_ptr<RunProgress>& progress);
// Waits, the GIL released between checks, until `done`; every 20 ms it runs Python's
// signal handlers, and sets `progress.interrupted` when one raised (KeyboardInterrupt
// pending); every 100 ms it moves on Python's progress bar (tessera._progress), when
// one is wanted. Returns whether a handler raised. REQUIRES: the GIL held.
bool WatchSignalsUntil(const std::atomic<bool>& done, RunProgress& progress);

// Runs `work(options)` (computing, writing) on a thread of its own while this one keeps
// answering Python's signals: Ctrl-C stops the run promptly and raises KeyboardInterrupt
// here; a Python kernel's exception surfaces as itself. `work` returns a value.
template <class Work>
auto RunPlan(Work&& work) {
  auto progress = std::make_shared<RunProgress>();
  const ComputeOptions options = InterruptibleOptions(progress);
  std::optional<decltype(work(options))> result;
  std::exception_ptr failure;
  std::atomic<bool> done{false};
  std::thread engine([&] {
    try {
      result.emplace(work(options));
    } catch (...) {
      failure = std::current_exception();
    }
    done = true;
  });
  const bool signalled = WatchSignalsUntil(done, *progress);
  {
    nb::gil_scoped_release release;
    engine.join();
  }
  if (signalled) throw nb::python_error();  // the KeyboardInterrupt the handler raised
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const Error& error) {
      RaiseKernelErrorOr(error);
    }
  }
  return std::move(*result);
}

// Refuses (TypeError) keywords other than Cubed's planning ones (optimize_graph,
// optimize_function, compile_function), which change nothing: Tessera always optimizes.
void CheckPlanKeywords(const nb::kwargs& keywords, const char* function);
// A tuple of ints.
nb::tuple ToTuple(const Shape& shape);

}  // namespace tessera::python
