// map_blocks with a Python function (Cubed's signature): called on the engine's worker
// threads, holding the GIL only for the call, once per output block, with numpy arrays of
// the input blocks of the same index; returns the output block. What it allocates beyond
// its result is declared with extra_projected_mem and counted in every task.
#include <nanobind/ndarray.h>

#include <string>

#include "bindings.hpp"

namespace tessera::python {
namespace {

// The Python function, shared by every copy of the kernel: copied and dropped without the
// GIL (std::function copies it on worker threads), released with the GIL.
using PythonFunction = std::shared_ptr<nb::object>;

PythonFunction Share(nb::object function) {
  return PythonFunction(new nb::object(std::move(function)), [](nb::object* held) {
    if (!Py_IsInitialized()) return;  // at exit: leak rather than touch a finalized interpreter
    nb::gil_scoped_acquire acquire;
    delete held;
  });
}

// Whether `function` takes a `block_id` keyword (Cubed and dask pass the block's index).
bool TakesBlockId(const nb::object& function) {
  try {
    const nb::object signature = nb::module_::import_("inspect").attr("signature")(function);
    return nb::cast<bool>(signature.attr("parameters").attr("__contains__")("block_id"));
  } catch (const nb::python_error&) {
    return false;  // builtins without a signature
  }
}

BlockFunction Kernel(PythonFunction function, bool block_id, DType dtype) {
  return [function, block_id, dtype](std::span<const NDArray> inputs, const BlockInfo& info) {
    nb::gil_scoped_acquire acquire;
    try {
      nb::list blocks;
      // Each input block as a numpy array of its own (a copy, charged to the task and
      // counted in its projection): the function may keep it.
      for (const NDArray& input : inputs) blocks.append(ToNumpy(NDArray(input)));
      nb::dict keywords;
      if (block_id) keywords["block_id"] = ToTuple(info.block_index);
      const nb::object result = (*function)(*nb::tuple(blocks), **keywords);
      nb::object values = nb::module_::import_("numpy").attr("asarray")(result, NumpyDType(dtype));
      return FromNumpy(values);
    } catch (nb::python_error& error) {
      const std::string raised = nb::cast<std::string>(nb::repr(error.value()));
      KeepKernelError(std::move(error));
      throw Error("map_blocks: the Python function raised " + raised);
    }
  };
}

// What another process rebuilds the kernel from (the dask and ray executors' workers):
// cloudpickle of (function, block_id), made only when a plan is sent.
FunctionRecipe Recipe(PythonFunction function, bool block_id) {
  return [function, block_id]() -> std::string {
    nb::gil_scoped_acquire acquire;
    try {
      const nb::bytes pickled = nb::cast<nb::bytes>(
          nb::module_::import_("cloudpickle").attr("dumps")(nb::make_tuple(*function, block_id)));
      return std::string(pickled.c_str(), pickled.size());
    } catch (nb::python_error& error) {
      throw InvalidArgument(std::string("map_blocks: the function cannot be sent to worker "
                                        "processes (it must be picklable by cloudpickle): ") +
                            error.what());
    }
  };
}

// Rebuilds a kernel from its Recipe in a worker process.
BlockFunction LoadKernel(std::string_view recipe, DType dtype) {
  nb::gil_scoped_acquire acquire;
  try {
    const nb::tuple loaded = nb::cast<nb::tuple>(
        nb::module_::import_("cloudpickle").attr("loads")(nb::bytes(recipe.data(), recipe.size())));
    return Kernel(Share(nb::borrow(loaded[0])), nb::cast<bool>(loaded[1]), dtype);
  } catch (nb::python_error& error) {
    throw FormatError(std::string("map_blocks: the function sent with the plan could not be "
                                  "loaded here (install the modules it uses on every worker): ") +
                      error.what());
  }
}

}  // namespace

void BindMapBlocks(nb::module_& m) {
  SetFunctionLoader(LoadKernel);
  m.def(
      "map_blocks",
      [](nb::object function, const nb::args& arrays, nb::handle dtype,
         std::int64_t extra_projected_mem) {
        std::vector<Array> inputs;
        for (nb::handle array : arrays) inputs.push_back(nb::cast<Array>(array));
        if (inputs.empty()) throw InvalidArgument("map_blocks: give at least one input array");
        const DType type = dtype.is_none() ? inputs.front().dtype() : DTypeFrom(dtype);
        // The copies of the input blocks the function is handed.
        std::int64_t copies = 0;
        for (const Array& input : inputs)
          copies += ShapeSize(input.chunks()) * input.dtype().itemsize();
        std::string identity =
            nb::cast<std::string>(nb::str(nb::getattr(function, "__module__", nb::str("?")))) +
            "." +
            nb::cast<std::string>(
                nb::str(nb::getattr(function, "__qualname__", nb::repr(function))));
        const PythonFunction shared = Share(function);
        const bool block_id = TakesBlockId(function);
        return map_blocks(Kernel(shared, block_id, type), inputs, type,
                          extra_projected_mem + copies, std::move(identity),
                          Recipe(shared, block_id));
      },
      nb::arg("func"), nb::arg("arrays"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("extra_projected_mem") = 0,
      "func(*blocks) (and block_id= when it takes it) for every block: the output has the "
      "first array's shape and chunks. extra_projected_mem: the bytes func allocates beyond "
      "its result, counted in every task.");
}

}  // namespace tessera::python
