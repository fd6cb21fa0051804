"""matmul, tensordot, vecdot and outer against numpy, property style.

Random cases (seeded: TESSERA_TEST_SEED, printed with every failure) draw shapes with
batch dimensions that broadcast, 1-d operands, empty and size-1 dimensions, chunks that
need not divide the shape, and every dtype pair (bool and integers included: numpy's
promotion, integer wrap-around, bool's or of ands). compute_tool
(tests/interop/compute_tool.cpp) computes them through Tessera's public API under an
allowed_mem small enough that the contraction streams in several slabs; numpy
computes the same here. Integers and bool must match exactly; floats within rtol 1e-5
(float32) or 1e-12 (float64) of the sum of absolute products (which bounds any
summation order's error); every op must measure no more memory than it projected.

Run by hand:
  TESSERA_COMPUTE_TOOL=build/tests/tessera_compute_tool TESSERA_TEST_SEED=7 \
    /usr/bin/python3 -m pytest -q tests/interop/test_linalg.py
"""
import json
import os
import re

import numpy as np
import pytest

import compute_jobs
from tessera_run import op_memory_problems

SEED = int(os.environ.get("TESSERA_TEST_SEED", "20240611"))
CASES = int(60 * float(os.environ.get("TESSERA_TEST_CASES", "1")))
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64"]
RTOL = {"float32": 1e-5, "float64": 1e-12}


@pytest.fixture(autouse=True)
def print_seed():
    print(f"TESSERA_TEST_SEED={SEED}")


def run_jobs(tool, jobs):
    return compute_jobs.run_jobs(tool, jobs, f"TESSERA_TEST_SEED={SEED}")



def random_values(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.4
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    return (rng.random(shape) * 2 - 1).astype(dtype)


def random_chunks(rng, shape):
    return [int(rng.integers(1, extent + 1)) if extent > 0 else 1 for extent in shape]


def extent(rng):
    return int(rng.choice([0, 1, 1, 2, 3, 5, 7, 13]))


class Case:
    def __init__(self, tmp, index, fn, a, b, params, allowed_mem="4KB", chunks=None):
        self.fn, self.a, self.b, self.params = fn, a, b, params
        rng = np.random.default_rng([SEED, index, 1])
        inputs = {}
        for name, value in (("a", a), ("b", b)):
            path = str(tmp / f"{index}-{name}.bin")
            np.ascontiguousarray(value).tofile(path)
            inputs[name] = {"raw": {"path": path, "dtype": value.dtype.name,
                                    "shape": list(value.shape),
                                    "chunks": (chunks or {}).get(name)
                                    or random_chunks(rng, value.shape)}}
        self.out = str(tmp / f"{index}-out.bin")
        self.job = {"allowed_mem": allowed_mem, "reserved_mem": "0", "max_workers": 2,
                    "inputs": inputs,
                    "steps": [dict({"out": "r", "fn": fn, "args": ["a", "b"]}, **params)],
                    "outputs": {"r": {"raw": self.out}}, "compute": True}

    def expected(self):
        a, b = self.a, self.b
        if self.fn == "matmul":
            return np.matmul(a, b), np.matmul(abs_of(a), abs_of(b))
        if self.fn == "outer":
            return np.outer(a, b), np.outer(abs_of(a), abs_of(b))
        if self.fn == "tensordot":
            axes = self.params["axes"]
            return np.tensordot(a, b, axes), np.tensordot(abs_of(a), abs_of(b), axes)
        axis = self.params["axis"]  # vecdot: numpy 1.24 has none; its definition
        dtype = np.result_type(a, b)
        x, y = np.broadcast_arrays(a.astype(dtype), b.astype(dtype))
        if dtype == np.bool_:
            value = np.logical_and(x, y).any(axis=axis)
        else:
            value = (x * y).sum(axis=axis, dtype=dtype)
        return value, (abs_of(x) * abs_of(y)).sum(axis=axis)


def abs_of(x):
    return np.abs(x.astype(np.float64))


def random_case(tmp, index):
    rng = np.random.default_rng([SEED, index])
    dtype_a = rng.choice(DTYPES)
    dtype_b = dtype_a if rng.random() < 0.5 else rng.choice(DTYPES)
    fn = rng.choice(["matmul", "matmul", "tensordot", "vecdot", "outer"])
    k = int(rng.choice([0, 1, 3, 17, 40]))
    if fn == "matmul":
        batch = [extent(rng) for _ in range(int(rng.integers(0, 3)))]
        a_batch = [e if rng.random() < 0.7 else 1 for e in batch]
        b_batch = [e if rng.random() < 0.7 else 1 for e in batch][int(rng.integers(0, len(batch) + 1)):]
        a_shape = [k] if rng.random() < 0.2 else a_batch + [extent(rng), k]
        b_shape = [k] if rng.random() < 0.2 else b_batch + [k, extent(rng)]
        params = {}
    elif fn == "outer":
        a_shape, b_shape, params = [extent(rng) * 3], [extent(rng) * 2], {}
    elif fn == "vecdot":
        rest = [extent(rng) for _ in range(int(rng.integers(0, 3)))]
        position = int(rng.integers(0, len(rest) + 1))
        a_shape = rest[:position] + [k] + rest[position:]
        b_rest = [e if rng.random() < 0.7 else 1 for e in rest][int(rng.integers(0, len(rest) + 1)):]
        b_position = len(b_rest) - (len(rest) - position)
        if b_position < 0:
            b_rest, b_position = rest[position:], 0
        b_shape = b_rest[:b_position] + [k] + b_rest[b_position:]
        params = {"axis": position - len(a_shape)}
    else:
        summed = int(rng.integers(0, 3))
        ks = [int(rng.choice([1, 3, 7])) for _ in range(summed)]
        free_a = [extent(rng) for _ in range(int(rng.integers(0, 3)))]
        free_b = [extent(rng) for _ in range(int(rng.integers(0, 3)))]
        a_axes = list(rng.permutation(len(free_a) + summed)[:summed])
        b_axes = list(rng.permutation(len(free_b) + summed)[:summed])
        a_shape, b_shape = [0] * (len(free_a) + summed), [0] * (len(free_b) + summed)
        for axis, value in zip(a_axes, ks):
            a_shape[axis] = value
        for axis, value in zip(b_axes, ks):
            b_shape[axis] = value
        for shape, free in ((a_shape, free_a), (b_shape, free_b)):
            slots = [i for i, v in enumerate(shape) if v == 0]
            for slot, value in zip(slots, free):
                shape[slot] = value
        a_axes = [int(axis) - (len(a_shape) if rng.random() < 0.3 else 0) for axis in a_axes]
        params = {"axes": [a_axes, [int(axis) for axis in b_axes]]}
        if summed and rng.random() < 0.3 and a_axes == list(range(len(a_shape) - summed, len(a_shape))) \
                and b_axes == list(range(summed)):
            params = {"axes": summed}
    a = random_values(rng, a_shape, dtype_a)
    b = random_values(rng, b_shape, dtype_b)
    return Case(tmp, index, fn, a, b, params, allowed_mem=str(rng.choice(["2KB", "4KB", "1MB"])))


def check(case, result):
    assert "error" not in result, (case.job, result["error"])
    expected, bound = case.expected()
    reported = result["steps"]["r"]
    assert reported["dtype"] == expected.dtype.name, case.job
    assert tuple(reported["shape"]) == expected.shape, case.job
    actual = np.fromfile(case.out, dtype=expected.dtype).reshape(expected.shape)
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(actual, expected, err_msg=json.dumps(case.job))
    else:
        tolerance = RTOL[expected.dtype.name] * (bound + 1e-30)
        assert np.all(np.abs(actual.astype(np.float64) - expected) <= tolerance), case.job
    ran = [op for plan in result["plans"] for op in plan["report"]]
    kind = "reduce" if case.fn == "vecdot" else "contract"  # vecdot: sum of a product
    assert any(op["kind"] == kind for op in ran) or not expected.size, case.job
    for op in ran:
        assert not op_memory_problems(op), (case.job, op_memory_problems(op))


def test_random_contractions_match_numpy(compute_tool, tmp_path):
    cases = [random_case(tmp_path, index) for index in range(CASES)]
    results = run_jobs(compute_tool, [case.job for case in cases])
    # A budget below one output block is refused at planning, naming the allowed_mem that
    # runs it: rerun those cases with exactly that figure.
    refused = [i for i, result in enumerate(results)
               if result.get("error", {}).get("type") == "MemoryBudgetError"]
    for i in refused:
        found = re.search(r"the smallest allowed_mem that would run it is (\d+)",
                          results[i]["error"]["what"])
        assert found, results[i]["error"]
        cases[i].job["allowed_mem"] = found.group(1)
    if refused:
        for i, result in zip(refused, run_jobs(compute_tool, [cases[i].job for i in refused])):
            results[i] = result
    streamed = 0
    for case, result in zip(cases, results):
        check(case, result)
        for plan in result["plans"]:
            # A contraction in several slabs, or vecdot's reduction in several rounds.
            streamed += any(op.get("contraction_steps", 0) > 1 for op in plan["ops"]) or \
                sum(op["kind"] == "reduce" for op in plan["ops"]) > 1
    assert streamed > 0, "no case streamed its contraction in several slabs or rounds"


def test_large_contraction_streams_in_slabs(compute_tool, tmp_path):
    rng = np.random.default_rng([SEED, 99])
    a = rng.random((60, 500))
    b = rng.random((2, 500, 30)).astype(np.float32)
    # Blocks of the result (1, 32, 16) hold 4 kB; whole slabs of a (32, 500) 128 kB.
    case = Case(tmp_path, 0, "matmul", a, b, {}, allowed_mem="128KB",
                chunks={"a": [32, 70], "b": [1, 90, 16]})
    [result] = run_jobs(compute_tool, [case.job])
    check(case, result)
    [contract] = [op for op in result["plans"][0]["ops"] if op["kind"] == "contract"]
    assert contract["contraction_steps"] > 1


@pytest.mark.parametrize("fn, a_shape, b_shape, params, message", [
    ("matmul", [2, 3], [4, 5], {}, "must equal x2's second-to-last dimension"),
    ("matmul", [2, 3, 4], [3, 4, 5], {}, "do not broadcast"),
    ("tensordot", [2, 3], [2, 3], {"axes": [[0], [1]]}, "must have one extent"),
    ("vecdot", [2, 3], [2, 4], {"axis": -1}, "it does not broadcast"),
    ("outer", [2, 3], [3], {}, "must be 1-d"),
])
def test_bad_arguments_are_refused(compute_tool, tmp_path, fn, a_shape, b_shape, params,
                                   message):
    case = Case(tmp_path, 0, fn, np.zeros(a_shape), np.zeros(b_shape), params)
    [result] = run_jobs(compute_tool, [case.job])
    assert result["error"]["type"] == "InvalidArgument", result
    assert message in result["error"]["what"], result
