// Remote executors from Python (tessera/exec/remote_tasks.hpp): "dask" and "ray" run a
// plan's tasks through a launcher written in Python (tessera._cluster), and each worker
// process runs its tasks through _run_remote_task.
#include <nanobind/stl/string.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "bindings.hpp"

namespace tessera::python {
namespace {

nb::dict RecordToDict(const TaskRecord& record) {
  nb::dict out;
  out["op"] = record.op;
  out["op_name"] = record.op_name;
  out["task"] = record.task;
  out["projected_mem"] = record.projected_mem;
  out["measured_mem"] = record.measured_mem;
  out["unaccounted_mem"] = record.unaccounted_mem;
  out["start_seconds"] = record.start_seconds;
  out["seconds"] = record.seconds;
  out["worker"] = record.worker;
  out["attempts"] = record.attempts;
  out["skipped"] = record.skipped;
  return out;
}

TaskRecord RecordFromDict(nb::handle values) {
  const nb::dict in = nb::borrow<nb::dict>(values);
  TaskRecord record;
  record.op = nb::cast<int>(in["op"]);
  record.op_name = nb::cast<std::string>(in["op_name"]);
  record.task = nb::cast<std::int64_t>(in["task"]);
  record.projected_mem = nb::cast<std::int64_t>(in["projected_mem"]);
  record.measured_mem = nb::cast<std::int64_t>(in["measured_mem"]);
  record.unaccounted_mem = nb::cast<std::int64_t>(in["unaccounted_mem"]);
  record.start_seconds = nb::cast<double>(in["start_seconds"]);
  record.seconds = nb::cast<double>(in["seconds"]);
  record.worker = nb::cast<int>(in["worker"]);
  record.attempts = nb::cast<int>(in["attempts"]);
  record.skipped = nb::cast<bool>(in["skipped"]);
  return record;
}

// The exception a worker raised, kept to be raised as itself when the run ends
// (RaiseKernelErrorOr); the engine stops the run with an Error of its text.
std::exception_ptr KeepRemoteError(nb::handle exception) {
  if (!PyExceptionInstance_Check(exception.ptr())) {  // a launcher's defect, not a task's
    return std::make_exception_ptr(
        Error("a remote task failed without an exception (launcher answered " +
              nb::cast<std::string>(nb::repr(exception)) + ")"));
  }
  const std::string text = nb::cast<std::string>(nb::str(exception));
  const std::string type = nb::cast<std::string>(nb::str(nb::type_name(exception.type())));
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception.ptr())), exception.ptr());
  KeepKernelError(nb::python_error());
  return std::make_exception_ptr(Error(type + ": " + text));
}

// Runs `work`; a Python exception becomes an Error of its text (the exception itself kept
// to be raised to the caller, as a kernel's is).
template <class Work>
auto Call(Work&& work) {
  try {
    return work();
  } catch (nb::python_error& error) {
    const std::string text = error.what();
    KeepKernelError(std::move(error));
    throw Error(text);
  }
}

// A TaskLauncher over a Python object of tessera._cluster (workers(), start(), submit(),
// wait_any(), finish()); each call holds the GIL.
class PythonLauncher : public TaskLauncher {
 public:
  explicit PythonLauncher(nb::object launcher) : launcher_(std::move(launcher)) {}
  ~PythonLauncher() override {
    if (!Py_IsInitialized()) {
      launcher_.release();  // at exit: leak rather than touch a finalized interpreter
      return;
    }
    nb::gil_scoped_acquire acquire;
    launcher_.reset();
  }
  PythonLauncher(const PythonLauncher&) = delete;
  PythonLauncher& operator=(const PythonLauncher&) = delete;

  int workers() const override {
    nb::gil_scoped_acquire acquire;
    return Call([&] { return nb::cast<int>(launcher_.attr("workers")()); });
  }
  void Start(const RemoteRun& run, const std::string& recipe) override {
    nb::gil_scoped_acquire acquire;
    Call([&] {
      launcher_.attr("start")(run.key, nb::bytes(recipe.data(), recipe.size()),
                              run.start_unix_seconds, run.retries, run.resume,
                              run.largest_task_memory);
      return 0;
    });
  }
  void Submit(const RemoteTask& task) override {
    nb::gil_scoped_acquire acquire;
    Call([&] {
      launcher_.attr("submit")(task.op, task.task, task.memory, task.attempt);
      return 0;
    });
  }
  std::optional<RemoteOutcome> WaitAny(double timeout_seconds) override {
    nb::gil_scoped_acquire acquire;
    return Call([&]() -> std::optional<RemoteOutcome> {
      // None (timed out) | (op, task, "ok", (record, blocks)) | (op, task, "lost", reason) |
      // (op, task, "error", exc)
      const nb::object answer = launcher_.attr("wait_any")(timeout_seconds);
      if (answer.is_none()) return std::nullopt;
      const nb::tuple ended = nb::cast<nb::tuple>(answer);
      RemoteOutcome outcome;
      outcome.op = nb::cast<int>(ended[0]);
      outcome.task = nb::cast<std::int64_t>(ended[1]);
      const std::string how = nb::cast<std::string>(ended[2]);
      if (how == "lost") {
        outcome.worker_lost = true;
      } else if (how == "error") {
        outcome.error = KeepRemoteError(ended[3]);
      } else {
        const nb::tuple result = nb::cast<nb::tuple>(ended[3]);
        outcome.record = RecordFromDict(result[0]);
        for (nb::handle block : nb::iter(result[1])) {
          const nb::tuple pair = nb::cast<nb::tuple>(block);
          outcome.blocks.emplace_back(nb::cast<Index>(pair[0]),
                                      std::make_shared<const NDArray>(FromNumpy(pair[1])));
        }
      }
      return outcome;
    });
  }
  void Finish(bool failed) noexcept override {
    nb::gil_scoped_acquire acquire;
    try {
      launcher_.attr("finish")(failed);
    } catch (const nb::python_error&) {
      // best effort: a run's end never fails for its cleanup
    }
  }

 private:
  nb::object launcher_;
};

std::unique_ptr<TaskLauncher> MakeLauncher(const Spec& spec) {
  nb::gil_scoped_acquire acquire;
  try {
    nb::dict options;
    for (const auto& [name, value] : spec.executor_options) options[name.c_str()] = value;
    nb::object launcher =
        nb::module_::import_("tessera._cluster").attr("make_launcher")(spec.executor, options);
    return std::make_unique<PythonLauncher>(std::move(launcher));
  } catch (nb::python_error& error) {
    const std::string text = error.what();
    KeepKernelError(std::move(error));
    throw Error(text);
  }
}

}  // namespace

void BindRemote(nb::module_& m) {
  RegisterRemoteExecutor("dask", "tasks on a Dask distributed cluster", MakeLauncher);
  RegisterRemoteExecutor("ray", "tasks on a Ray cluster", MakeLauncher);
  m.def(
      "_run_remote_task",
      [](const std::string& key, nb::bytes recipe, int op, std::int64_t task,
         double start_unix_seconds, int retries, bool resume, int worker) {
        RemoteTaskOptions options;
        options.start_unix_seconds = start_unix_seconds;
        options.retries = retries;
        options.resume = resume;
        options.worker = worker;
        const std::string_view bytes(static_cast<const char*>(recipe.data()), recipe.size());
        RemoteTaskResult result =
            RunEngine([&] { return RunRemoteTask(key, bytes, op, task, options); });
        nb::list blocks;
        for (auto& [block, values] : result.blocks) {
          blocks.append(nb::make_tuple(block, ToNumpy(NDArray(*values))));
        }
        return nb::make_tuple(RecordToDict(result.record), blocks);
      },
      nb::arg("key"), nb::arg("recipe"), nb::arg("op"), nb::arg("task"),
      nb::arg("start_unix_seconds"), nb::arg("retries"), nb::arg("resume"), nb::arg("worker"),
      "Runs one task of a plan sent by the dask or ray executor, in a worker process.");
  m.def("_forget_remote_plan", &ForgetRemotePlan, nb::arg("key"),
        nb::call_guard<nb::gil_scoped_release>(),
        "Drops a plan a worker process remade (after its run).");
}

}  // namespace tessera::python
