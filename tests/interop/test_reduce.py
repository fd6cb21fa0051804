"""Reductions against numpy, property style.

Random cases (seeded: TESSERA_TEST_SEED) reduce arrays of 0 to 4 dimensions (empty and
size-1 dimensions included, chunks that need not divide the shape, every dtype, values
with NaN, infinities and integer extremes) with every reduction, random axes (none, one,
several, negative), keepdims and dtype, sometimes after an elementwise step that the
first round computes inside its tasks. compute_tool runs them through Tessera's public
API under a random allowed_mem, small ones forcing several rounds. Every result must
have numpy's dtype and shape; integers, bools, min/max, argmin/argmax, all/any and
count_nonzero must equal numpy's exactly; float sums, products, means and moments are
compared with float64 truth within a few units of rounding of their scale (Tessera
accumulates floats in float64, numpy float32 in float32). A plan refused for memory must
name an allowed_mem that then runs it. Every task must measure no more than it projected.

Run by hand:
  TESSERA_COMPUTE_TOOL=build/tests/tessera_compute_tool TESSERA_TEST_SEED=7 \\
    /usr/bin/python3 -m pytest -q tests/interop/test_reduce.py
"""
import os
import re

import numpy as np
import pytest

import compute_jobs
from tessera_run import op_memory_problems

SEED = int(os.environ.get("TESSERA_TEST_SEED", "20261129"))
CASES = int(os.environ.get("TESSERA_TEST_CASES", "1"))
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64"]
REDUCTIONS = ["sum", "prod", "mean", "var", "std", "min", "max", "argmin", "argmax", "all",
              "any", "count_nonzero"]
EXACT = {"min", "max", "argmin", "argmax", "all", "any", "count_nonzero"}
NO_IDENTITY = {"min", "max", "argmin", "argmax"}


def header():
    return f"TESSERA_TEST_SEED={SEED}"


def run_jobs(tool, jobs):
    return compute_jobs.run_jobs(tool, jobs, header())



def random_values(rng, shape, dtype):
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    if dtype.kind == "b":
        return (rng.random(count) < 0.5).reshape(shape)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        small = rng.integers(max(info.min, -9), min(info.max, 9) + 1, count)
        extremes = rng.choice(np.array([info.min, info.max, 0, 1], dtype=dtype), count)
        pick = rng.random(count)
        return np.where(pick < 0.8, small.astype(dtype), extremes).astype(dtype).reshape(shape)
    values = rng.normal(0, 10, count).astype(dtype)
    pick = rng.random(count)
    values[pick < 0.2] = np.round(values[pick < 0.2])  # ties for argmin/argmax
    if rng.random() < 0.3:
        special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype=dtype)
        mask = rng.random(count) < 0.05
        values[mask] = rng.choice(special, int(mask.sum()))
    return values.reshape(shape)


def random_chunks(rng, shape):
    return [int(rng.integers(1, max(extent, 1) + 1)) if rng.random() < 0.85 else max(extent, 1)
            for extent in shape]


def random_axes(rng, ndim, fn):
    if fn in ("argmin", "argmax"):
        if ndim == 0 or rng.random() < 0.3:
            return None
        return int(rng.integers(-ndim, ndim))
    choice = rng.random()
    if choice < 0.25 or ndim == 0:
        return None
    if choice < 0.6:
        return int(rng.integers(-ndim, ndim))
    count = int(rng.integers(0, ndim + 1))
    return sorted(int(a) for a in rng.choice(ndim, count, replace=False))


def numpy_reduce(fn, x, axis, keepdims, dtype, correction):
    axis_arg = tuple(axis) if isinstance(axis, list) else axis
    with np.errstate(all="ignore"):
        if fn in ("argmin", "argmax"):
            return getattr(np, fn)(x, axis=axis_arg, keepdims=keepdims)
        if fn == "count_nonzero":
            result = np.count_nonzero(x, axis=axis_arg, keepdims=keepdims)
            return np.asarray(result, dtype=np.int64)
        kwargs = {"axis": axis_arg, "keepdims": keepdims}
        if dtype is not None:
            kwargs["dtype"] = dtype
        if fn in ("var", "std"):
            kwargs["ddof"] = correction
        return np.asarray(getattr(np, fn)(x, **kwargs))


def float64_truth(fn, x, axis, keepdims, dtype, correction):
    """The float sums, products, means and moments computed in float64, and the scale
    their rounding error is relative to."""
    axis_arg = tuple(axis) if isinstance(axis, list) else axis
    if dtype is not None and fn in ("sum", "prod"):
        x = x.astype(dtype)
    wide = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if fn == "sum":
            return wide.sum(axis=axis_arg, keepdims=keepdims), \
                np.abs(wide).sum(axis=axis_arg, keepdims=keepdims)
        if fn == "prod":
            value = wide.prod(axis=axis_arg, keepdims=keepdims)
            return value, np.abs(value)
        if fn == "mean":
            return wide.mean(axis=axis_arg, keepdims=keepdims), \
                np.abs(wide).mean(axis=axis_arg, keepdims=keepdims)
        value = wide.var(axis=axis_arg, keepdims=keepdims, ddof=correction)
        scale = (wide * wide).mean(axis=axis_arg, keepdims=keepdims) * \
            np.maximum(x.size, 1) / np.maximum(np.size(value), 1)
        if fn == "std":
            return np.sqrt(value), np.sqrt(scale)
        return value, scale


def compare(fn, expected, actual, truth):
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        return f"got {actual.dtype}{list(actual.shape)}, numpy {expected.dtype}{list(expected.shape)}"
    if fn in EXACT or expected.dtype.kind != "f":
        if expected.dtype.kind == "f":
            bad = ~((actual == expected) | (np.isnan(actual) & np.isnan(expected)))
        else:
            bad = actual != expected
    else:
        value, scale = truth
        value = np.asarray(value).astype(expected.dtype)
        eps = float(np.finfo(expected.dtype).eps)
        tol = 8 * eps * np.asarray(scale) + float(np.finfo(expected.dtype).tiny)
        with np.errstate(all="ignore"):
            special = ~np.isfinite(value)
            close = np.abs(actual.astype(np.float64) - value.astype(np.float64)) <= tol
            same_special = (actual == value) | (np.isnan(actual) & np.isnan(value))
        bad = np.where(special, ~same_special, ~close)
    if not np.any(bad):
        return None
    first = tuple(int(i) for i in np.argwhere(bad)[0]) if np.ndim(bad) else ()
    return (f"{int(np.sum(bad))} of {np.size(bad)} values differ; first at {list(first)}: "
            f"Tessera {actual[first]!r}, numpy {expected[first]!r}")


def make_case(rng, index, tmp):
    ndim = int(rng.integers(0, 5))
    shape = [int(rng.choice([0, 1, 2, 3, 5, 7, 12])) if rng.random() < 0.2
             else int(rng.integers(1, 14)) for _ in range(ndim)]
    dtype = str(rng.choice(DTYPES))
    fn = str(rng.choice(REDUCTIONS))
    values = random_values(rng, shape, dtype)
    if fn == "prod" and values.dtype.kind == "f":
        values = np.where(np.isfinite(values), np.clip(np.abs(values) / 10, 0.5, 2.0), values)
        values = values.astype(dtype)
    axis = random_axes(rng, ndim, fn)
    keepdims = bool(rng.random() < 0.3)
    requested = None
    if fn in ("sum", "prod") and rng.random() < 0.25:
        # float -> integer casts of out-of-range values are platform-defined in numpy
        # (Tessera saturates): integer dtypes only for integer inputs.
        choices = ["float64", "float32"] if dtype.startswith("float") else \
            ["int64", "uint8", "float64", "float32", "int16"]
        requested = str(rng.choice(choices))
    if fn in ("mean", "var", "std") and rng.random() < 0.25:
        requested = str(rng.choice(["float32", "float64"]))
    correction = float(rng.choice([0, 1])) if fn in ("var", "std") else 0.0
    chunks = random_chunks(rng, shape)
    path = os.path.join(tmp, f"in{index}.bin")
    values.tofile(path)
    out = os.path.join(tmp, f"out{index}.bin")
    steps = []
    source = "a"
    reduced_values = values
    if rng.random() < 0.3 and values.dtype.kind in "fi":
        steps.append({"out": "n", "fn": "negative", "args": ["a"]})
        source = "n"
        with np.errstate(all="ignore"):
            reduced_values = np.negative(values)
    step = {"out": "r", "fn": fn, "args": [source], "axis": axis, "keepdims": keepdims}
    if requested is not None:
        step["dtype"] = requested
    if fn in ("var", "std"):
        step["correction"] = correction
    steps.append(step)
    allowed = str(rng.choice(["64MB", "4000", "2000", "600"]))
    job = {"allowed_mem": allowed, "max_workers": int(rng.integers(1, 4)),
           "executor": str(rng.choice(["threads", "sync"])),
           "inputs": {"a": {"raw": {"path": path, "dtype": dtype, "shape": shape,
                                    "chunks": chunks}}},
           "steps": steps, "outputs": {"r": {"raw": out}}, "compute": True}
    reduce_args = (fn, reduced_values, axis, keepdims, requested, correction)
    description = (f"case {index}: {fn}(x{shape} {dtype} chunks {chunks}, axis={axis}, "
                   f"keepdims={keepdims}, dtype={requested}, correction={correction}), "
                   f"{'negated first, ' if source == 'n' else ''}allowed_mem {allowed}")
    return job, reduce_args, out, description


def expected_error(fn, values, axis):
    """numpy's refusal: min/max/argmin/argmax over an empty axis with a non-empty result."""
    if fn not in NO_IDENTITY:
        return False
    try:
        numpy_reduce(fn, values, axis, False, None, 0)
    except ValueError:
        return True
    return False


def check(job, result, reduce_args, out, tool):
    fn, values, axis, keepdims, requested, correction = reduce_args
    problems = []
    error = result.get("error")
    if error and error["type"] == "MemoryBudgetError":
        found = re.search(r"smallest allowed_mem that would run it is (\d+)", error["what"])
        if not found:
            return [f"a MemoryBudgetError without the smallest allowed_mem: {error['what']}"]
        retry = dict(job, allowed_mem=found.group(1))
        result = run_jobs(tool, [retry])[0]
        error = result.get("error")
        if error:
            return [f"refused under allowed_mem {job['allowed_mem']}, then failed at the "
                    f"{found.group(1)} it named: {error['what']}"]
    if expected_error(fn, values, axis):
        if not error or error["type"] != "InvalidArgument":
            problems.append(f"numpy refuses an empty reduction; Tessera gave {error}")
        return problems
    if error:
        return [f"{error['type']} at {error['stage']}: {error['what']}"]
    expected = numpy_reduce(fn, values, axis, keepdims, requested, correction)
    reported = result["steps"]["r"]
    actual = np.fromfile(out, dtype=reported["dtype"]).reshape(reported["shape"])
    truth = None
    if fn not in EXACT and expected.dtype.kind == "f":
        truth = float64_truth(fn, values, axis, keepdims, requested, correction)
    problem = compare(fn, expected, actual, truth)
    if problem:
        problems.append(problem)
    for plan in result.get("plans", []):
        for op in plan.get("report", []):
            problems += op_memory_problems(op)
    return problems


def test_random_reductions_match_numpy(compute_tool, tmp_path):
    rng = np.random.default_rng(SEED)
    cases = [make_case(rng, i, str(tmp_path)) for i in range(300 * CASES)]
    results = run_jobs(compute_tool, [job for job, _, _, _ in cases])
    failures = []
    rounds = 0
    for (job, reduce_args, out, description), result in zip(cases, results):
        for plan in result.get("plans", []):
            rounds = max(rounds, sum(1 for op in plan["ops"] if op["kind"] == "reduce"))
        problems = check(job, result, reduce_args, out, compute_tool)
        if problems:
            failures.append(description + ": " + "; ".join(problems))
    assert not failures, f"{header()}: {len(failures)} of {len(cases)} cases fail:\n" + \
        "\n".join(failures[:8])
    assert rounds >= 2, "the small budgets never forced several rounds"


def test_nan_handling_is_numpys(compute_tool, tmp_path):
    """NaN: sum/mean/var/min/max propagate it, argmin/argmax point at the first one,
    all/any/count_nonzero count it as true."""
    values = np.array([[1.0, np.nan, -2.0, np.nan], [3.0, 0.0, 5.0, -1.0]])
    path = str(tmp_path / "nan.bin")
    values.tofile(path)
    jobs, expectations = [], []
    for fn in REDUCTIONS:
        for axis in (None, 0, 1):
            out = str(tmp_path / f"{fn}-{axis}.bin")
            jobs.append({"allowed_mem": "1MB", "inputs": {"a": {"raw": {
                "path": path, "dtype": "float64", "shape": [2, 4], "chunks": [1, 3]}}},
                "steps": [{"out": "r", "fn": fn, "args": ["a"], "axis": axis}],
                "outputs": {"r": {"raw": out}}, "compute": True})
            expectations.append((fn, axis, out))
    results = run_jobs(compute_tool, jobs)
    for (fn, axis, out), result in zip(expectations, results):
        assert "error" not in result, (fn, axis, result)
        expected = numpy_reduce(fn, values, axis, False, None, 0)
        reported = result["steps"]["r"]
        actual = np.fromfile(out, dtype=reported["dtype"]).reshape(reported["shape"])
        truth = None
        if fn not in EXACT and expected.dtype.kind == "f":
            truth = float64_truth(fn, values, axis, False, None, 0)
        assert compare(fn, expected, actual, truth) is None, (fn, axis, actual, expected)
