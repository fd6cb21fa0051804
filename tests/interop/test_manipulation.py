"""Manipulation functions and basic indexing against numpy, property style.

Random cases (seeded: TESSERA_TEST_SEED, printed with every failure) build inputs of
0 to 4 dimensions (empty and size-1 dimensions included) in every dtype, as Zarr arrays
(zarr-python) or in-memory arrays, in chunks that need not divide the shape, and apply
random chains of permute_dims, matrix_transpose, expand_dims, squeeze, flip, roll,
reshape, repeat, tile, concat, stack, broadcast_arrays and basic indexing (integers,
slices with any step, ellipsis, new axes) with random parameters, valid or not.
compute_tool (tests/interop/compute_tool.cpp) runs them through Tessera's public API;
numpy computes the same here. Values, dtypes and shapes must be equal exactly; where
numpy raises, Tessera must throw InvalidArgument when the array is built; every op of
every run must measure no more memory than it projected.

Run by hand:
  TESSERA_COMPUTE_TOOL=build/tests/tessera_compute_tool TESSERA_TEST_SEED=7 \
    /usr/bin/python3 -m pytest -q tests/interop/test_manipulation.py
"""
import json
import os

import numpy as np
import pytest

import compute_jobs
from tessera_run import op_memory_problems
import zarr
from zarr_v2 import V2_DEFAULT_COMPRESSOR

SEED = int(os.environ.get("TESSERA_TEST_SEED", "20240611"))
SCALE = float(os.environ.get("TESSERA_TEST_CASES", "1"))
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64"]
NUMPY_ERRORS = (IndexError, ValueError, TypeError, np.exceptions.AxisError
                if hasattr(np, "exceptions") else np.AxisError)


def header():
    return f"TESSERA_TEST_SEED={SEED}"


def run_jobs(tool, jobs):
    return compute_jobs.run_jobs(tool, jobs, header())



def random_values(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind == "f":
        return (rng.standard_normal(shape) * 100).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)


def random_shape(rng, ndim=None):
    ndim = int(rng.integers(0, 5)) if ndim is None else ndim
    return tuple(int(rng.choice([0, 1, 1, 2, 3, 4, 5, 7])) if rng.random() < 0.3
                 else int(rng.integers(1, 9)) for _ in range(ndim))


def random_chunks(rng, shape):
    return [int(rng.integers(1, max(extent, 1) + 2)) for extent in shape]


def random_axis(rng, ndim, extra=0):
    """An axis of an array of ndim (+ extra) dimensions, sometimes out of range."""
    span = ndim + extra
    if rng.random() < 0.08:
        return int(rng.choice([span, -span - 1])) if span >= 0 else 0
    if span == 0:
        return 0
    return int(rng.integers(-span, span))


def random_axes(rng, ndim):
    """None, an int or a list of distinct axes (rarely a repeated one)."""
    pick = rng.random()
    if pick < 0.3:
        return None
    if pick < 0.6 or ndim == 0:
        return random_axis(rng, ndim)
    count = int(rng.integers(1, ndim + 1))
    axes = [int(a) for a in rng.permutation(ndim)[:count]]
    if rng.random() < 0.05:
        axes.append(axes[0])
    return axes


def random_slice(rng, extent):
    def bound():
        return None if rng.random() < 0.3 else int(rng.integers(-extent - 3, extent + 4))
    step = None if rng.random() < 0.3 else int(rng.choice([1, 2, 3, -1, -2, -3, 10, -10]))
    if rng.random() < 0.02:
        step = 0
    return slice(bound(), bound(), step)


def random_index(rng, shape):
    items = []
    axis = 0
    used_ellipsis = False
    while axis < len(shape) and rng.random() < 0.85:
        pick = rng.random()
        if pick < 0.25:
            items.append(int(rng.integers(-shape[axis] - 1, shape[axis] + 1))
                         if rng.random() < 0.1 else
                         int(rng.integers(-shape[axis], shape[axis])) if shape[axis] else 0)
            axis += 1
        elif pick < 0.8:
            items.append(random_slice(rng, shape[axis]))
            axis += 1
        elif pick < 0.9:
            items.append(None)
        elif not used_ellipsis or rng.random() < 0.1:
            items.append(Ellipsis)
            used_ellipsis = True
            axis = len(shape) - int(rng.integers(0, len(shape) - axis + 1))
    if rng.random() < 0.05:
        items.append(0)  # often one too many
    return items


def item_json(item):
    if item is None:
        return None
    if item is Ellipsis:
        return "..."
    if isinstance(item, slice):
        return {"slice": [item.start, item.stop, item.step]}
    return item


class Case:
    def __init__(self, rng, tmp, number):
        self.rng = rng
        self.tmp = tmp
        self.number = number
        self.job = {"allowed_mem": "10MB", "executor": "threads", "max_workers": 2,
                    "inputs": {}, "steps": [], "outputs": {}}
        self.lines = []
        self.count = 0
        self.error = False

    def fresh(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def add_input(self, shape=None, dtype=None):
        rng = self.rng
        shape = random_shape(rng) if shape is None else tuple(shape)
        dtype = np.dtype(dtype or rng.choice(DTYPES))
        chunks = random_chunks(rng, shape)
        value = np.asarray(random_values(rng, shape, dtype), dtype=dtype)
        name = self.fresh("in")
        if rng.random() < 0.5:
            path = str(self.tmp / f"c{self.number}_{name}.zarr")
            array = zarr.open_array(path, mode="w", zarr_format=2, compressor=V2_DEFAULT_COMPRESSOR, shape=shape, chunks=tuple(chunks),
                                    dtype=dtype)
            array[...] = value
            self.job["inputs"][name] = {"zarr": path}
        else:
            path = str(self.tmp / f"c{self.number}_{name}.bin")
            np.ascontiguousarray(value).tofile(path)
            self.job["inputs"][name] = {"raw": {"path": path, "dtype": dtype.name,
                                                "shape": list(shape), "chunks": chunks}}
        self.lines.append(f"{name} = {dtype.name}{list(shape)} chunks {chunks}")
        return name, value

    def step(self, name, x):
        """One random step on (name, x): the new (name, value), or None after an error."""
        rng = self.rng
        ndim = x.ndim
        fn = rng.choice(["permute_dims", "matrix_transpose", "expand_dims", "squeeze", "flip",
                         "roll", "reshape", "repeat", "tile", "concat", "stack",
                         "broadcast_arrays", "index", "index", "index", "double"])
        if fn == "double":
            # x.astype(float64) + itself: an elementwise op the next steps gather through.
            cast = self.fresh("s")
            self.job["steps"].append({"out": cast, "fn": "astype", "args": [name],
                                      "dtype": "float64"})
            out = self.fresh("s")
            self.job["steps"].append({"out": out, "fn": "add", "args": [cast, cast]})
            self.lines.append(f"{out} = float64({name}) * 2")
            value = x.astype(np.float64)
            return out, value + value
        step = {"fn": str(fn), "args": [name]}
        others = []
        if fn == "permute_dims":
            axes = [int(a) for a in rng.permutation(ndim)]
            if rng.random() < 0.1:
                axes = axes[:-1] if axes else [0]
            step["axes"] = axes
            reference = lambda: np.transpose(x, axes)
        elif fn == "matrix_transpose":
            reference = lambda: np.swapaxes(x, -1, -2) if ndim >= 2 else needs_two_axes()
        elif fn == "expand_dims":
            axis = random_axis(rng, ndim, 1)
            step["axis"] = axis
            reference = lambda: np.expand_dims(x, axis)
        elif fn == "squeeze":
            ones = [d for d in range(ndim) if x.shape[d] == 1]
            axis = (int(rng.choice(ones)) if ones and rng.random() < 0.6
                    else random_axes(rng, ndim))
            if ndim == 0:
                axis = None  # numpy squeezes axis 0 of a 0-d array; the standard has no axis
            step["axis"] = axis
            reference = lambda: np.squeeze(x, None if axis is None else
                                           tuple(axis) if isinstance(axis, list) else axis)
        elif fn == "flip":
            axis = random_axes(rng, ndim)
            step["axis"] = axis
            reference = lambda: np.flip(x, None if axis is None else
                                        tuple(axis) if isinstance(axis, list) else axis)
        elif fn == "roll":
            shift = int(rng.integers(-12, 13))
            axis = None if rng.random() < 0.3 or ndim == 0 else random_axis(rng, ndim)
            step["shift"] = shift
            step["axis"] = axis
            reference = lambda: np.roll(x, shift, axis)
        elif fn == "reshape":
            shape = list(random_shape(rng)) if rng.random() < 0.2 else reshaped(rng, x.shape)
            step["shape"] = shape
            reference = lambda: np.reshape(x, shape)
        elif fn == "repeat":
            # numpy accepts a negative count for an empty array; the standard does not.
            repeats = int(rng.integers(-1 if rng.random() < 0.05 and x.size else 0, 4))
            axis = None if rng.random() < 0.3 or ndim == 0 else random_axis(rng, ndim)
            step["repeats"] = repeats
            step["axis"] = axis
            reference = lambda: np.repeat(x, repeats, axis)
        elif fn == "tile":
            reps = [int(r) for r in rng.integers(0 if rng.random() < 0.1 else 1, 3,
                                                 size=int(rng.integers(0, 4)))]
            step["reps"] = reps
            reference = lambda: np.tile(x, reps)
        elif fn in ("concat", "stack"):
            axis = None if fn == "concat" and rng.random() < 0.2 else random_axis(
                rng, ndim, 1 if fn == "stack" else 0)
            shape = list(x.shape)
            if fn == "concat" and axis is not None and ndim and -ndim <= axis < ndim:
                shape[axis] = int(rng.integers(0, 4))
            if rng.random() < 0.1 and shape:
                shape[0] += 1  # mismatched
            dtype = x.dtype.name if rng.random() < 0.5 else rng.choice(DTYPES)
            for _ in range(int(rng.integers(1, 3))):
                others.append(self.add_input(shape, dtype))
            step["args"] = [name] + [o[0] for o in others]
            step["axis"] = axis
            arrays = [x] + [o[1] for o in others]
            reference = (lambda: np.concatenate(arrays, axis)) if fn == "concat" else (
                lambda: np.stack(arrays, axis))
        elif fn == "broadcast_arrays":
            shape = list(x.shape[int(rng.integers(0, ndim + 1)):])
            shape = [1 if rng.random() < 0.3 else s for s in shape]
            if rng.random() < 0.5:
                shape = [int(rng.integers(1, 4))] + shape
            other = self.add_input(shape)
            step["args"] = [name, other[0]]
            which = int(rng.integers(0, 2))
            step["which"] = which
            reference = lambda: np.broadcast_arrays(x, other[1])[which]
        else:
            items = random_index(rng, x.shape)
            step["fn"] = "index"
            step["items"] = [item_json(item) for item in items]
            reference = lambda: x[tuple(items)]
        out = self.fresh("s")
        step["out"] = out
        self.job["steps"].append(step)
        self.lines.append(f"{out} = {json.dumps(step)}")
        try:
            with np.errstate(all="ignore"):
                value = np.asarray(reference())
        except NUMPY_ERRORS as error:
            self.lines.append(f"  numpy raises {type(error).__name__}: {error}")
            self.error = True
            return None
        return out, value


def needs_two_axes():
    raise ValueError("matrix_transpose needs at least 2 dimensions")


def reshaped(rng, shape):
    """A random shape of the same size, one extent sometimes -1."""
    size = int(np.prod(shape))
    extents = []
    rest = size
    for _ in range(int(rng.integers(0, 4))):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0] if rest else [0, 1, 2]
        extents.append(int(rng.choice(divisors)))
        rest = rest // extents[-1] if extents[-1] else rest
    extents.append(rest if size else 0)
    rng.shuffle(extents)
    if size and rng.random() < 0.4:
        extents[int(rng.integers(0, len(extents)))] = -1
    return extents


def make_case(rng, tmp, number):
    case = Case(rng, tmp, number)
    name, value = case.add_input()
    for _ in range(int(rng.integers(1, 4))):
        result = case.step(name, value)
        if result is None:
            break
        name, value = result
    case.output = name
    case.value = value
    if not case.error:
        case.job["outputs"][name] = {"raw": str(tmp / f"c{number}_{name}.out")}
    return case


def test_manipulation_against_numpy(compute_tool, tmp_path):
    print(f"{header()} (set it to reproduce; TESSERA_TEST_CASES scales the cases)")
    rng = np.random.default_rng(SEED)
    cases = [make_case(rng, tmp_path, n) for n in range(int(300 * SCALE))]
    results = run_jobs(compute_tool, [case.job for case in cases])
    checked = errors = 0
    for number, (case, result) in enumerate(zip(cases, results)):
        where = f"{header()} case {number}:\n  " + "\n  ".join(case.lines)
        if case.error:
            assert "error" in result, f"{where}\nnumpy raises, Tessera does not"
            assert result["error"]["type"] == "InvalidArgument", f"{where}\n{result}"
            assert result["error"]["stage"] == "build", f"{where}\n{result}"
            errors += 1
            continue
        assert "error" not in result, f"{where}\nTessera raised {result['error']}"
        described = result["steps"].get(case.output)
        expected = case.value
        if described is not None:
            assert described["dtype"] == expected.dtype.name, f"{where}\n{described}"
            assert tuple(described["shape"]) == expected.shape, f"{where}\n{described}"
        path = case.job["outputs"][case.output]["raw"]
        actual = np.fromfile(path, dtype=expected.dtype).reshape(expected.shape)
        assert np.array_equal(actual, expected), f"{where}\ngot {actual}\nwant {expected}"
        for plan in result["plans"]:
            for op in plan["report"]:
                assert not op_memory_problems(op), f"{where}\n{op_memory_problems(op)}"
        checked += 1
    assert checked > 100 * SCALE and errors > 5 * SCALE, (checked, errors)
