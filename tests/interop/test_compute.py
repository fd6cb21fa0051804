"""Computed values of lazy arrays against numpy, property style.

Random cases (seeded: TESSERA_TEST_SEED, printed with every failure) build inputs -
Zarr arrays written by zarr-python in every dtype and compressor, random, full, ones,
zeros, arange and in-memory arrays, of 0 to 4 dimensions (empty ones and size-1
dimensions included) in chunks that need not divide the shape - and random chains of
elementwise steps on them: unary and binary functions (operands of different ranks
broadcast, chunks that do not line up), scalars of every kind on either side, where,
astype and broadcast_to. compute_tool (tests/interop/compute_tool.cpp) runs the chains
through Tessera's public API, many jobs per process (batch), and reports every plan and
what each op projected and measured. numpy computes the same chains here (the Model
below) and every value, dtype, shape and chunking must agree; every op of every run
must measure no more memory than it projected.

numpy is the truth except where Tessera documents a different rule
(src/plan/kernels/elementwise_kernels.hpp, include/tessera/core/type_promotion.hpp):
each such place in the Model says so ("Tessera's rule"). Inputs whose numpy result is
platform-defined are never generated: float->int casts of NaN or out-of-range values
(Tessera saturates; the Model applies that documented rule, and only to exact values),
integer pow that overflows or has a negative exponent, shifts by a count outside
[0, bits). Integer division by zero is included (numpy gives 0 with a warning, as does
Tessera).

Floats are compared bit for bit (signed zeros too; NaN where NaN, whatever its payload)
when every step is correctly rounded (+, -, *, /, sqrt, floor, casts, ...). exp, sin, pow, ... differ between libm and numpy's SIMD
loops by a few ulps, so a value computed through them is "inexact": it is compared
with a relative tolerance (float32 1e-6, float64 1e-12, widened by the error its chain
can have accumulated), and only well-conditioned steps (products, quotients, sqrt, abs,
max, where, float casts) are applied to it: never a comparison, rounding, integer cast
or another transcendental function, whose results a one-ulp difference can change.

Library bugs these tests found stay as regression tests (test_regression_*).

Run by hand:
  TESSERA_COMPUTE_TOOL=build/tests/tessera_compute_tool TESSERA_TEST_SEED=7 \
    /usr/bin/python3 -m pytest -q tests/interop/test_compute.py
"""
import copy
import json
import os
import re
import subprocess
from dataclasses import dataclass, field

import numcodecs
import numpy as np
import pytest

import compute_jobs
from tessera_run import op_memory_problems
import zarr
from zarr_v2 import V2_DEFAULT_COMPRESSOR

SEED = int(os.environ.get("TESSERA_TEST_SEED", "20240611"))
# The numbers of random cases; TESSERA_TEST_CASES scales them (e.g. 10 for a long soak).
SCALE = float(os.environ.get("TESSERA_TEST_CASES", "1"))

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64"]
COMPRESSORS = {"none": None, "blosc-lz4": numcodecs.Blosc(cname="lz4", clevel=5),
               "zstd": numcodecs.Zstd(level=3)}
# compute_tool's codec spec for each (to_zarr outputs).
TOOL_CODECS = {"none": "none", "blosc-lz4": "blosc:lz4:5:shuffle", "zstd": "zstd:3"}

# Every elementwise op, in the order of the table they are all made from (its rows, in
# include/tessera/plan/internal/elementwise_ops.def), so that a new op is property-tested at once.
# The type rules below stay the Model's own: they are the truth the rows are checked by.
ELEMENTWISE_TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                 os.pardir, "include", "tessera", "plan", "internal",
                                 "elementwise_ops.def")
with open(ELEMENTWISE_TABLE, encoding="utf-8") as table:
    TABLE_ROWS = re.findall(r"^TESSERA_(UNARY|BINARY)_OP\((\w+),", table.read(), re.MULTILINE)
UNARY = [name for arity, name in TABLE_ROWS if arity == "UNARY"]
BINARY = [name for arity, name in TABLE_ROWS if arity == "BINARY"]
NUMPY_NAMES = {"abs": "absolute", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
               "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh",
               "atan2": "arctan2", "pow": "power", "divide": "true_divide",
               "bitwise_invert": "invert", "bitwise_left_shift": "left_shift",
               "bitwise_right_shift": "right_shift"}

# Functions computed in floating point whatever the operands (Tessera: in
# FloatingResultType of each operand).
FLOAT_UNARY = {"sqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan",
               "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh"}
FLOAT_BINARY = {"atan2", "hypot", "logaddexp", "copysign"}
ROUNDING = {"floor", "ceil", "trunc", "round"}
# Not correctly rounded: libm and numpy's SIMD loops may differ by a few ulps.
TRANSCENDENTAL = (FLOAT_UNARY - {"sqrt"}) | {"atan2", "hypot", "logaddexp", "pow"}
# What may be applied to an inexact value (see the module docstring): the relative error
# stays bounded and no discrete decision depends on it.
CONDITIONED_UNARY = {"negative", "positive", "abs", "square", "sqrt"}
CONDITIONED_BINARY = {"multiply", "divide", "maximum", "minimum", "hypot"}

RTOL = {"float32": 1e-6, "float64": 1e-12}
ULPS_PER_TRANSCENDENTAL = 4  # numpy's float32 SIMD loops document up to ~4 ulp


def unit_roundoff(dtype):
    """Half an ulp at 1, relative; 0 for integers and bool (their values are exact)."""
    return float(np.finfo(dtype).eps) / 2 if np.dtype(dtype).kind == "f" else 0.0


def failure_header():
    return f"TESSERA_TEST_SEED={SEED}"


# ---- Tessera's type rules, in numpy terms -----------------------------------------------

SCALAR_KIND_RANK = {"bool": 0, "int": 1, "float": 2}


def array_kind(dtype):
    return {"b": "bool", "i": "int", "u": "int", "f": "float"}[np.dtype(dtype).kind]


def result_type_with_scalar(dtype, scalar_kind):
    """Tessera's rule for an array with a C++ scalar (ResultTypeWithScalar): the scalar is
    weak (array API, NEP 50) - it takes the array's dtype unless its kind (bool < int <
    float) is higher, and then the default dtype of its kind (int64, float64).

    numpy 1.24 instead casts Python scalars by value (np.add(int8_array, 300) is int16,
    np.add(int8_array, 2.5) is float16), and it treats 0-d arrays the same way. So the
    Model never gives numpy a Python scalar or a 0-d array next to a larger one: it
    converts the scalar to this dtype (scalar_array) and broadcasts every operand to
    the result's shape first, which leaves numpy's array-array promotion
    (np.result_type of the dtypes, Tessera's ResultType) as the only rule in play."""
    dtype = np.dtype(dtype)
    if SCALAR_KIND_RANK[scalar_kind] <= SCALAR_KIND_RANK[array_kind(dtype)]:
        return dtype
    return np.dtype({"int": "int64", "float": "float64"}[scalar_kind])


def floating_result_type(dtype):
    """Tessera's FloatingResultType: where exp, atan2, ... compute for integer and bool
    operands. numpy's is float16 for bool and 8-bit integers; Tessera has no float16 and
    uses float32 (documented in type_promotion.hpp)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return dtype
    return np.dtype("float32") if dtype.itemsize <= 2 else np.dtype("float64")


@dataclass(frozen=True)
class Scalar:
    value: object  # bool, int or float
    kind: str      # "bool", "int" or "float"

    def to_json(self):
        if self.kind == "float":
            if np.isnan(self.value):
                return {"scalar": "nan"}
            if np.isinf(self.value):
                return {"scalar": "inf" if self.value > 0 else "-inf"}
            return {"scalar": float(self.value)}
        if self.kind == "int":
            return {"scalar": int(self.value), "kind": "uint" if self.value > 2**63 - 1 else "int"}
        return {"scalar": bool(self.value)}


def scalar_array(scalar, dtype):
    """The scalar converted to `dtype` as Tessera's Scalar::As does (integers wrap, to
    float rounds to nearest, nonzero is true), as a 0-d array. Never float -> integer:
    a weak float scalar never meets an integer dtype."""
    dtype = np.dtype(dtype)
    if scalar.kind == "bool":
        source = np.array(scalar.value, dtype=bool)
    elif scalar.kind == "int":
        source = np.array(scalar.value, dtype=np.uint64 if scalar.value > 2**63 - 1 else np.int64)
    else:
        assert dtype.kind == "f" or dtype.kind == "b"
        source = np.array(scalar.value, dtype=np.float64)
    with np.errstate(all="ignore"):
        return source.astype(dtype)


def cast(values, dtype):
    """astype as Tessera documents it (CastElement): numpy's, except that float ->
    integer maps NaN to 0 and saturates values outside the target's range (numpy's
    result is platform-defined there). In range, both truncate toward zero."""
    dtype = np.dtype(dtype)
    values = np.asarray(values)
    if values.dtype.kind != "f" or dtype.kind not in "iu":
        with np.errstate(all="ignore"):
            return values.astype(dtype)
    info = np.iinfo(dtype)
    wide = values.astype(np.float64)
    limit = 2.0 ** (info.bits - 1 if dtype.kind == "i" else info.bits)
    lowest = -limit if dtype.kind == "i" else 0.0
    inside = (wide > lowest) & (wide < limit)
    result = np.where(inside, np.trunc(np.where(inside, wide, 0)), 0).astype(dtype)
    result[wide >= limit] = info.max
    result[wide <= lowest] = info.min
    return result


def transcendental_error(dtype):
    """The relative error a transcendental function may add (libm vs numpy's loops)."""
    return ULPS_PER_TRANSCENDENTAL * 2 * unit_roundoff(dtype)


def numpy_function(name):
    return getattr(np, NUMPY_NAMES.get(name, name))


def reference_unary(name, x):
    """numpy's value of Tessera's unary `name`; raises TypeError where numpy has no loop."""
    x = np.asarray(x)
    if name in FLOAT_UNARY:
        x = x.astype(floating_result_type(x.dtype))
    if name in ROUNDING and x.dtype.kind != "f":
        # Tessera's rule (the array API's): the identity on integers and bool. numpy
        # 1.24's floor/ceil/trunc return floats for them.
        numpy_function("floor" if name == "round" else name)(x)  # TypeError as numpy
        return x.copy()
    with np.errstate(all="ignore"):
        if name == "round":
            return np.asarray(np.rint(x))  # half to even, numpy's np.round for floats
        return np.asarray(numpy_function(name)(x))


def reference_binary(name, x, y):
    """numpy's value of Tessera's binary `name` on two arrays; TypeError where numpy has
    no loop for the promoted dtypes."""
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))  # see result_type_with_scalar
    if name in FLOAT_BINARY:
        x, y = x.astype(floating_result_type(x.dtype)), y.astype(floating_result_type(y.dtype))
    with np.errstate(all="ignore"):
        return np.asarray(numpy_function(name)(x, y))


_DEFINED = {}


def defined(name, *dtypes):
    """Does numpy define `name` for these dtypes (under Tessera's rules)?"""
    key = (name,) + tuple(np.dtype(d).name for d in dtypes)
    if key not in _DEFINED:
        samples = [np.ones(1, dtype=d) for d in dtypes]
        try:
            (reference_unary if len(samples) == 1 else reference_binary)(name, *samples)
            _DEFINED[key] = True
        except TypeError:
            _DEFINED[key] = False
    return _DEFINED[key]


def reference_where(condition, x, y):
    condition, x, y = np.broadcast_arrays(np.asarray(condition), np.asarray(x), np.asarray(y))
    dtype = np.result_type(x.dtype, y.dtype)
    return np.where(condition.astype(bool), x.astype(dtype), y.astype(dtype))


# Tessera's documented random generator (src/plan/kernels/generators.cpp): element i of
# seed s is (Mix(Mix(s) + (i + 1) * golden) >> 11) * 2^-53, Mix being SplitMix64's.
def _mix(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def reference_random(shape, seed):
    count = int(np.prod(shape, dtype=np.int64))
    with np.errstate(all="ignore"):
        state = _mix(np.array([seed], dtype=np.uint64))[0]
        counter = np.arange(1, count + 1, dtype=np.uint64)
        bits = _mix(state + counter * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(11)
    return (bits.astype(np.float64) * 2.0**-53).reshape(shape)


# ---- running compute_tool -------------------------------------------------------------

@pytest.fixture(autouse=True)
def print_seed():
    """pytest shows a failing test's output: the seed that reproduces it."""
    print(f"{failure_header()} (set it to reproduce; TESSERA_TEST_CASES scales the cases)")


def run_jobs(tool, jobs):
    return compute_jobs.run_jobs(tool, jobs, failure_header())



# ---- random cases ---------------------------------------------------------------------

@dataclass
class Var:
    """A value of a case: its numpy reference and how exactly Tessera must match it."""
    name: str
    value: np.ndarray
    exact: bool = True
    error: float = 0.0  # bound on the relative error of an inexact value
    constant: bool = False  # ones/zeros/full, or broadcast_to of one (BUG 1)

    @property
    def dtype(self):
        return self.value.dtype

    @property
    def shape(self):
        return self.value.shape


@dataclass
class Case:
    index: int
    job: dict = field(default_factory=dict)
    variables: dict = field(default_factory=dict)  # name -> Var
    outputs: dict = field(default_factory=dict)    # name -> ("raw" | "zarr", path, codec)
    description: list = field(default_factory=list)


def random_values(rng, shape, dtype):
    """Values that exercise the edges: small numbers, the whole range, the extremes; for
    floats also NaN, infinities, signed zeros, halves (rounding ties) and huge values."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    if dtype.kind == "b":
        return (rng.random(count) < 0.5).reshape(shape)
    pick = rng.random(count)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        small = rng.integers(max(info.min, -12), min(info.max, 12) + 1, count)
        whole = rng.integers(info.min, info.max, count, dtype=dtype, endpoint=True)
        extremes = rng.choice(np.array([info.min, info.max, 0, 1, info.max - 1], dtype=dtype),
                              count)
        values = np.where(pick < 0.5, small.astype(dtype), np.where(pick < 0.85, whole, extremes))
        return values.astype(dtype).reshape(shape)
    normal = rng.normal(0, 20, count)
    halves = rng.integers(-12, 13, count) / 2.0
    specials = rng.choice(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 1e-30,
                                    0.5, -1.5, 1.0, -1.0, 2.5]), count)
    values = np.where(pick < 0.6, normal, np.where(pick < 0.85, halves, specials))
    with np.errstate(all="ignore"):
        return values.astype(dtype).reshape(shape)


def random_universe(rng):
    """The shape every array of a case broadcasts to: 0-4 dimensions, sizes 0-9."""
    ndim = int(rng.choice(5, p=[0.1, 0.2, 0.25, 0.25, 0.2]))
    limit = [9, 9, 8, 6, 5][ndim]
    dims = []
    for _ in range(ndim):
        pick = rng.random()
        dims.append(0 if pick < 0.05 else 1 if pick < 0.25 else int(rng.integers(2, limit + 1)))
    return tuple(dims)


def sub_shape(rng, universe, full=False):
    """A shape that broadcasts to `universe`: its last k dimensions, some of them 1."""
    ndim = len(universe)
    k = ndim if full or rng.random() < 0.7 else int(rng.integers(0, ndim + 1))
    return tuple(1 if (not full and rng.random() < 0.2) else d for d in universe[ndim - k:])


def random_chunks(rng, shape):
    """Chunks that need not divide the shape (and may exceed it)."""
    return [int(rng.integers(1, max(d, 1) + 2)) for d in shape]


def random_scalar(rng, kind):
    if kind == "bool":
        return Scalar(bool(rng.random() < 0.5), "bool")
    if kind == "int":
        values = [0, 1, 2, 3, -1, -7, 5, 100, 300, -129, 2**31, 2**40 + 3, -2**63, 2**64 - 1]
        weights = np.array([4, 4, 4, 3, 3, 2, 3, 2, 1, 1, 1, 1, 1, 1], dtype=float)
        return Scalar(values[rng.choice(len(values), p=weights / weights.sum())], "int")
    values = [2.5, -0.5, 0.1, 3.0, -2.0, 1e10, -1e-3, 0.0, -0.0, np.nan, np.inf, -np.inf, 1e300]
    weights = np.array([4, 4, 3, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1], dtype=float)
    return Scalar(values[rng.choice(len(values), p=weights / weights.sum())], "float")


class Model:
    """Builds one case: inputs, then steps, each computed by numpy as it is added."""

    def __init__(self, rng, case, tmp):
        self.rng = rng
        self.case = case
        self.tmp = tmp
        self.universe = random_universe(rng)
        self.counter = 0
        case.job.update({"inputs": {}, "steps": [], "outputs": {}})

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def add(self, var, description):
        self.case.variables[var.name] = var
        self.case.description.append(description)
        return var

    # -- inputs

    def add_input(self, dtype=None, shape=None, chunks=None, source=None):
        rng = self.rng
        dtype = np.dtype(dtype or rng.choice(DTYPES))
        shape = tuple(shape if shape is not None else sub_shape(rng, self.universe))
        chunks = chunks or random_chunks(rng, shape)
        name = self.fresh("in")
        pick = rng.random()
        if source is None:
            source = ("zarr" if pick < 0.6 else "raw" if pick < 0.7 else "random" if pick < 0.8
                      else "full" if pick < 0.9 else "arange" if len(shape) == 1 else "zarr")
        if source == "random":
            dtype = np.dtype("float64")
            seed = [0, 1, 42, 2**64 - 1, int(rng.integers(0, 2**63))][rng.integers(0, 5)]
            spec = {"random": {"shape": list(shape), "chunks": chunks, "seed": seed}}
            value = reference_random(shape, seed)
        elif source == "full":
            kind = rng.choice(["bool", "int", "float"] if dtype.kind == "f" else ["bool", "int"])
            scalar = random_scalar(rng, kind)
            which = rng.choice(["full", "ones", "zeros"])
            spec = {which: {"shape": list(shape), "chunks": chunks, "dtype": dtype.name}}
            if which == "full":
                spec["full"]["value"] = scalar.to_json()
                value = np.broadcast_to(scalar_array(scalar, dtype), shape).copy()
            else:
                value = np.full(shape, 1 if which == "ones" else 0, dtype=dtype)
        elif source == "arange":
            if dtype.kind == "b":
                dtype = np.dtype("int16")
            count = shape[0]
            if dtype.kind == "f":
                start = float(rng.choice([0.0, -2.5, 0.1]))
                step = float(rng.choice([0.5, 0.1, -0.25]))
                stop = start + (count - 0.5) * step
                value = np.arange(start, stop, step, dtype=dtype)
            else:
                step = int(rng.choice([1, 2, 3, -1, -2]))
                start = int(rng.integers(-5, 6)) if dtype.kind == "i" else int(rng.integers(0, 6))
                if dtype.kind == "u" and step < 0:
                    start += (count - 1) * -step
                stop = start + count * step
                value = np.arange(start, stop, step, dtype=dtype)
            assert value.shape == shape, (start, stop, step, dtype, shape)
            spec = {"arange": {"start": start, "stop": stop, "step": step, "dtype": dtype.name,
                               "chunk": chunks[0]}}
        elif source == "raw":
            value = random_values(rng, shape, dtype)
            path = str(self.tmp / f"{name}.bin")
            np.ascontiguousarray(value).tofile(path)
            spec = {"raw": {"path": path, "dtype": dtype.name, "shape": list(shape),
                            "chunks": chunks}}
        else:
            value = random_values(rng, shape, dtype)
            codec = rng.choice(list(COMPRESSORS))
            path = str(self.tmp / f"{name}.zarr")
            array = zarr.open_array(path, mode="w", zarr_format=2, shape=shape, chunks=tuple(chunks),
                                    dtype=dtype, compressor=COMPRESSORS[codec])
            array[...] = value
            spec = {"zarr": path}
            source = f"zarr({codec})"
        self.case.job["inputs"][name] = spec
        return self.add(Var(name, np.asarray(value), constant=source == "full"),
                        f"{name} = {source} {dtype.name}{list(shape)} chunks {chunks}")

    # -- steps

    def emit(self, fn, args, reference, exact, error=0.0, **extra):
        """Adds step `fn(args)` whose numpy value is reference() (TypeError: undefined)."""
        value = np.asarray(reference())
        name = self.fresh("v")
        step = {"out": name, "fn": fn,
                "args": [a.to_json() if isinstance(a, Scalar) else a.name for a in args]}
        step.update(extra)
        self.case.job["steps"].append(step)
        text = ", ".join(repr(a.value) + "(" + a.kind + ")" if isinstance(a, Scalar) else a.name
                         for a in args)
        extras = "".join(f", {k}={v}" for k, v in extra.items())
        return self.add(Var(name, value, exact, error if not exact else 0.0),
                        f"{name} = {fn}({text}{extras}) -> {value.dtype}{list(value.shape)}"
                        + ("" if exact else f" inexact {error:.2g}"))

    def guard(self, var, modulus):
        """var % modulus: values in [0, modulus) for integers (pow, shift operands)."""
        scalar = Scalar(modulus, "int")
        constant = np.broadcast_to(scalar_array(scalar, result_type_with_scalar(var.dtype, "int")),
                                   var.shape)
        return self.emit("remainder", [var, scalar],
                         lambda: reference_binary("remainder", var.value, constant), exact=True)

    def pick_var(self):
        names = list(self.case.variables)
        # Prefer recent values: chains grow deeper.
        weights = np.arange(1, len(names) + 1, dtype=float) ** 2
        pick = int(self.rng.choice(len(names), p=weights / weights.sum()))
        return self.case.variables[names[pick]]

    def try_step(self):
        """Adds one random step; returns False when the drawn one is not allowed."""
        rng = self.rng
        pick = rng.random()
        x = self.pick_var()
        try:
            if pick < 0.3:
                return self.unary(str(rng.choice(UNARY)), x)
            if pick < 0.6:
                return self.binary(str(rng.choice(BINARY)), x, self.pick_var())
            if pick < 0.8:
                kind = str(rng.choice(["bool", "int", "float"]))
                return self.binary_scalar(str(rng.choice(BINARY)), x, random_scalar(rng, kind),
                                          scalar_first=rng.random() < 0.4)
            if pick < 0.88:
                return self.where(x, self.pick_var(), self.pick_var())
            if pick < 0.96:
                return self.astype(x, np.dtype(rng.choice(DTYPES)))
            return self.broadcast(x)
        except TypeError:  # numpy has no loop for these dtypes: not a valid step
            return False

    def unary(self, name, x):
        if not x.exact and name not in CONDITIONED_UNARY:
            return None
        value = reference_unary(name, x.value)  # TypeError: undefined
        if x.exact:
            exact = name not in TRANSCENDENTAL
            error = 0.0 if exact else transcendental_error(value.dtype)
        else:
            u = unit_roundoff(value.dtype)
            exact = False
            error = {"square": 2 * x.error + u, "sqrt": x.error / 2 + u}.get(name, x.error)
        return self.emit(name, [x], lambda: value, exact, error)

    def operand_error(self, var, dtype):
        """Relative error of `var` once cast to the float `dtype`."""
        if var.exact:
            return 0.0 if var.dtype == dtype else unit_roundoff(dtype)
        return var.error + (unit_roundoff(dtype) if var.dtype != dtype else 0.0)

    def inexact_binary(self, name, x, y, reference):
        """A well-conditioned step on an inexact operand (y may be a Scalar), or None."""
        if name not in CONDITIONED_BINARY or (name == "divide" and not getattr(y, "exact", True)):
            return None
        value = reference()
        u = unit_roundoff(value.dtype)
        errors = [self.operand_error(v, value.dtype) for v in (x, y) if isinstance(v, Var)]
        error = {"multiply": sum(errors) + u, "divide": sum(errors) + u,
                 "hypot": max(errors) + 2 * u}.get(name, max(errors))
        return self.emit(name, [x, y], reference, False, error)

    def binary(self, name, x, y):
        if not defined(name, x.dtype, y.dtype):
            return None
        if not (x.exact and y.exact):
            return self.inexact_binary(name, x, y, lambda: reference_binary(name, x.value, y.value))
        if np.result_type(x.dtype, y.dtype).kind in "biu":
            if name == "pow":
                # Small bases and exponents only: numpy raises for negative exponents and
                # its integer overflow in pow is platform-defined.
                x, y = self.guard(x, 4), self.guard(y, 3)
            elif name in ("bitwise_left_shift", "bitwise_right_shift"):
                y = self.guard(y, 8)  # numpy is platform-defined outside [0, bits)
        return self.exact_step(name, [x, y], lambda: reference_binary(name, x.value, y.value))

    def exact_step(self, name, args, reference):
        """A step on exact operands: exact unless it is transcendental on floats."""
        value = reference()
        exact = name not in TRANSCENDENTAL or value.dtype.kind != "f"
        return self.emit(name, args, reference, exact,
                         0.0 if exact else transcendental_error(value.dtype))

    def binary_scalar(self, name, x, scalar, scalar_first):
        weak = result_type_with_scalar(x.dtype, scalar.kind)
        if not defined(name, *((weak, x.dtype) if scalar_first else (x.dtype, weak))):
            return None
        if x.exact and np.result_type(x.dtype, weak).kind in "biu":  # as in binary()
            if name == "pow":
                x = self.guard(x, 3)
                if scalar.kind == "int":
                    scalar = Scalar(int(self.rng.integers(0, 4)), "int")
            elif name in ("bitwise_left_shift", "bitwise_right_shift"):
                if scalar_first:
                    x = self.guard(x, 8)
                elif scalar.kind == "int":
                    scalar = Scalar(int(self.rng.integers(0, 8)), "int")

        def reference():
            constant = np.broadcast_to(
                scalar_array(scalar, result_type_with_scalar(x.dtype, scalar.kind)), x.shape)
            return reference_binary(name, *((constant, x.value) if scalar_first
                                            else (x.value, constant)))

        args = [scalar, x] if scalar_first else [x, scalar]
        if not x.exact:
            return self.inexact_binary(name, *args, reference)
        return self.exact_step(name, args, reference)

    def where(self, condition, x, y):
        if not condition.exact:
            return None
        pick = self.rng.random()
        constant = None
        if pick < 0.4:  # a scalar on one side: weak, as in binary ops
            scalar = random_scalar(self.rng, str(self.rng.choice(["bool", "int", "float"])))
            constant = scalar_array(scalar, result_type_with_scalar(x.dtype, scalar.kind))
            args = [condition, scalar, x] if pick < 0.2 else [condition, x, scalar]
            operands = [x]
        else:
            args, operands = [condition, x, y], [x, y]

        def reference():
            return reference_where(*(constant if isinstance(a, Scalar) else a.value for a in args))

        value = reference()
        if all(v.exact for v in operands):
            return self.emit("where", args, reference, True)
        if value.dtype.kind != "f":
            return None
        error = max(self.operand_error(v, value.dtype) for v in operands)
        return self.emit("where", args, reference, False, error)

    def astype(self, x, dtype):
        if not x.exact and dtype.kind != "f":
            return None
        return self.emit("astype", [x], lambda: cast(x.value, dtype), x.exact,
                         self.operand_error(x, dtype), dtype=dtype.name)

    def broadcast(self, x):
        target = list(self.universe)
        # Keep some of x's size-1 dimensions, and maybe fewer leading dimensions.
        offset = len(target) - x.value.ndim
        for d in range(x.value.ndim):
            if x.shape[d] == 1 and self.rng.random() < 0.5:
                target[offset + d] = 1
        keep = int(self.rng.integers(x.value.ndim, len(target) + 1))
        target = tuple(target[len(target) - keep:])
        value = np.broadcast_to(x.value, target).copy()
        var = self.emit("broadcast_to", [x], lambda: value, x.exact, x.error, shape=list(target))
        var.constant = x.constant
        return var

    # -- the case

    def build(self, steps, outputs_mode="mixed"):
        rng = self.rng
        for _ in range(int(rng.integers(1, 4))):
            self.add_input()
        added = 0
        for _ in range(steps * 20):
            if added == steps:
                break
            added += bool(self.try_step())
        names = list(self.case.variables)
        others = rng.choice(names, size=min(2, len(names)), replace=False)
        chosen = {names[-1]} | {str(n) for n in others if rng.random() < 0.5}
        for name in sorted(chosen):
            mode = outputs_mode
            if mode == "mixed":
                mode = "raw" if rng.random() < 0.5 else "zarr"
            if mode == "raw":
                path = str(self.tmp / f"out-{name}.bin")
                self.case.job["outputs"][name] = {"raw": path}
                self.case.outputs[name] = ("raw", path, None)
            else:
                codec = str(rng.choice(list(TOOL_CODECS)))
                path = str(self.tmp / f"out-{name}.zarr")
                self.case.job["outputs"][name] = {"zarr": path, "compressor": TOOL_CODECS[codec]}
                self.case.outputs[name] = ("zarr", path, codec)
        return self.case


def random_config(rng):
    # Small budgets make the planner split fused groups, or fail (then the case runs again
    # with plenty, see test_random_chains_match_numpy).
    return {"allowed_mem": str(rng.choice(["100000000", "100000000", "20000", "4000", "1500"])),
            "reserved_mem": str(rng.choice(["0", "0", "1000"])),
            "executor": str(rng.choice(["threads", "sync"])),
            "max_workers": int(rng.choice([0, 1, 3])),
            "fuse": bool(rng.random() < 0.7),
            "tile_elements": int(rng.choice([4096, 4096, 64, 7, 1])),
            "tier": str(rng.choice(["auto", "memory", "disk"]))}


def make_cases(seed_offset, count, tmp, steps=(1, 8), outputs_mode="mixed", config=True):
    rng = np.random.default_rng([SEED, seed_offset])
    cases = []
    for index in range(count):
        case_dir = tmp / f"case{index}"
        case_dir.mkdir()
        case = Case(index)
        if config:
            case.job.update(random_config(rng))
        Model(rng, case, case_dir).build(int(rng.integers(*steps)), outputs_mode)
        cases.append(case)
    return cases


# ---- checking results -------------------------------------------------------------------

def compressor_name(array):
    """The id of a Zarr array's compressor (v2) or first bytes-to-bytes codec (v3)."""
    if array.metadata.zarr_format == 2:
        return array.compressor.codec_id if array.compressor is not None else None
    return array.compressors[0].to_dict()["name"] if array.compressors else None


def read_output(case, name):
    kind, path, codec = case.outputs[name]
    reported = case.result["steps"].get(name)
    var = case.variables[name]
    if reported is None:  # an input given as output
        reported = {"dtype": var.dtype.name, "shape": list(var.shape)}
    if kind == "raw":
        return np.fromfile(path, dtype=reported["dtype"]).reshape(reported["shape"])
    array = zarr.open_array(path, mode="r")
    problems = []
    if array.dtype != np.dtype(reported["dtype"]) or list(array.shape) != reported["shape"]:
        problems.append(f"zarr-python reads {array.dtype}{list(array.shape)}, "
                        f"Tessera reported {reported['dtype']}{reported['shape']}")
    if "chunks" in reported and list(array.chunks) != reported["chunks"]:
        problems.append(f"zarr chunks {list(array.chunks)}, "
                        f"the array's chunks {reported['chunks']}")
    expected_codec = {"none": None, "blosc-lz4": "blosc", "zstd": "zstd"}[codec]
    if compressor_name(array) != expected_codec:
        problems.append(f"zarr compressors {array.compressors}, asked for {codec}")
    if problems:
        raise AssertionError("; ".join(problems))
    return array[...]


def tolerance(var):
    """The relative tolerance of an inexact value: its dtype's, or the error its chain may
    have accumulated (twice over)."""
    return max(RTOL[var.dtype.name], 2 * var.error)


def compare(var, actual):
    """None when `actual` matches the reference, else what differs."""
    expected = var.value
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        return (f"got {actual.dtype}{list(actual.shape)}, "
                f"numpy {expected.dtype}{list(expected.shape)}")
    if expected.dtype.kind != "f":
        bad = actual != expected
    elif var.exact:  # bit for bit but for NaN payloads: signed zeros too
        bad = ~(((actual == expected) & (np.signbit(actual) == np.signbit(expected)))
                | (np.isnan(actual) & np.isnan(expected)))
    else:
        rtol = tolerance(var)
        atol = float(np.finfo(expected.dtype).tiny)
        with np.errstate(all="ignore"):
            close = np.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
        bad = ~close
    if not bad.any():
        return None
    where = np.argwhere(bad) if bad.ndim else [()]
    first = tuple(int(i) for i in where[0])
    exactly = var.exact or expected.dtype.kind != "f"
    mode = "exactly" if exactly else f"within rtol {tolerance(var):.2g}"
    return (f"{int(bad.sum())} of {bad.size} values differ ({mode}); first at {list(first)}: "
            f"Tessera {actual[first]!r}, numpy {expected[first]!r}")


def check_memory(result):
    problems = []
    for plan in result.get("plans", []):
        for op in plan["report"]:
            problems += [f"{p} ({op['kind']})" for p in op_memory_problems(op)]
        for op in plan["ops"]:
            if op["projected_mem"] > plan["max_projected_mem"]:
                problems.append(f"op {op['name']} projects {op['projected_mem']} above the plan's "
                                f"max_projected_mem {plan['max_projected_mem']}")
    return problems


def check_case(case, result):
    """Every problem of one case (empty: it passed)."""
    case.result = result
    problems = []
    if "error" in result:
        return [f"Tessera threw {result['error']}"]
    for name, reported in result["steps"].items():
        var = case.variables[name]
        if reported["dtype"] != var.dtype.name or tuple(reported["shape"]) != var.shape:
            problems.append(f"{name}: Tessera {reported['dtype']}{reported['shape']}, "
                            f"numpy {var.dtype}{list(var.shape)}")
    problems += check_memory(result)
    allowed = case.job.get("allowed_mem", "100000000")
    for plan in result["plans"]:
        if allowed.isdigit() and plan["max_projected_mem"] > int(allowed):
            problems.append(f"plan projects {plan['max_projected_mem']} "
                            f"above allowed_mem {allowed}")
    for name in case.outputs:
        try:
            difference = compare(case.variables[name], read_output(case, name))
        except AssertionError as error:
            difference = str(error)
        if difference:
            problems.append(f"output {name}: {difference}")
    return problems


def report(cases, results, check=check_case, limit=3):
    """Fails with every failing case's problems, and the first `limit` in full."""
    failed = []
    for case, result in zip(cases, results):
        problems = check(case, result)
        if problems:
            failed.append((case, problems))
    if not failed:
        return
    lines = [f"{failure_header()}: {len(failed)} of {len(cases)} cases failed"]
    for number, (case, problems) in enumerate(failed):
        lines.append(f"-- case {case.index}: " + " | ".join(problems))
        if number < limit:
            lines += ["   " + line for line in case.description]
            lines.append("   job: " + json.dumps(case.job))
    pytest.fail("\n".join(lines))


# ---- the tests --------------------------------------------------------------------------

def test_random_chains_match_numpy(compute_tool, tmp_path):
    """Random inputs, chains of steps and configurations (fusion, executor, tile size,
    intermediate tier, allowed_mem) against numpy; to_zarr outputs read by zarr-python."""
    cases = make_cases(1, int(160 * SCALE), tmp_path)
    results = run_jobs(compute_tool, [case.job for case in cases])
    retry = []

    def check(case, result):
        """A MemoryBudgetError is right when the plan does not fit the small budget: the
        case runs again with plenty."""
        error = result.get("error")
        if error and error["type"] == "MemoryBudgetError" and error["stage"] == "plan":
            numbers = budget_numbers(error["what"])
            allowed, reserved = int(case.job["allowed_mem"]), int(case.job["reserved_mem"])
            if numbers and numbers[1:3] == (allowed, reserved) and numbers[0] > allowed:
                retry.append(case)
                return []
        return check_case(case, result)

    report(cases, results, check)
    for case in retry:
        case.job["allowed_mem"] = "100000000"
    if retry:
        report(retry, run_jobs(compute_tool, [case.job for case in retry]))


def test_configurations_agree_bit_for_bit(compute_tool, tmp_path):
    """The same chains with fusion on and off, sync and threads executors, tiles of 1, 7
    and 4096 elements, intermediates in memory and on disk: identical bytes, and numpy's
    values."""
    configs = [{"fuse": True, "executor": "threads"},
               {"fuse": False, "executor": "threads", "tier": "memory"},
               {"fuse": True, "executor": "sync", "tile_elements": 7},
               {"fuse": False, "executor": "sync", "tier": "disk"},
               {"fuse": True, "executor": "threads", "tile_elements": 1, "max_workers": 3}]
    cases = make_cases(2, int(30 * SCALE), tmp_path, steps=(3, 9), outputs_mode="raw",
                       config=False)
    jobs, variants = [], []
    for case in cases:
        for number, config in enumerate(configs):
            variant = copy.deepcopy(case)
            variant.job.update(config, allowed_mem="100MB")
            for name, (kind, path, codec) in list(variant.outputs.items()):
                path = f"{path}.{number}"
                variant.outputs[name] = (kind, path, codec)
                variant.job["outputs"][name] = {"raw": path}
            variants.append(variant)
            jobs.append(variant.job)
    results = run_jobs(compute_tool, jobs)
    report(variants, results)
    mismatches = []
    for first in range(0, len(variants), len(configs)):
        group = variants[first:first + len(configs)]
        for name in group[0].outputs:
            blobs = [open(v.outputs[name][1], "rb").read() for v in group]
            differing = [configs[i] for i, blob in enumerate(blobs) if blob != blobs[0]]
            if differing:
                mismatches.append(f"case {group[0].index} output {name}: {differing} differ "
                                  f"from {configs[0]}; job {json.dumps(group[0].job)}")
    assert not mismatches, f"{failure_header()}\n" + "\n".join(mismatches)


def test_misaligned_chunks(compute_tool, tmp_path):
    """Binary ops whose operands are chunked differently (Tessera stores one operand and
    reads regions of it), across dtypes and ranks, fused and not."""
    rng = np.random.default_rng([SEED, 3])
    layouts = [((7, 5), (2, 3), (3, 2)), ((7, 5), (7, 5), (1, 1)), ((10,), (3,), (4,)),
               ((6, 4, 5), (4, 3, 2), (5, 1, 5)), ((2, 3, 4, 5), (1, 2, 3, 4), (2, 3, 1, 2)),
               ((9, 1), (4, 1), (2, 1)), ((0, 4), (1, 3), (2, 2)), ((13,), (13,), (5,))]
    cases = []
    for index, (shape, chunks_a, chunks_b) in enumerate(layouts * 3):
        case_dir = tmp_path / f"case{index}"
        case_dir.mkdir()
        case = Case(index)
        case.job.update(fuse=index % 2 == 0, executor="threads" if index % 3 else "sync")
        model = Model(rng, case, case_dir)
        model.universe = shape
        a = model.add_input(shape=shape, chunks=list(chunks_a), source="zarr")
        b = model.add_input(shape=shape, chunks=list(chunks_b), source="zarr")
        c = model.add_input(shape=shape[1:], chunks=list(chunks_b[1:]), source="raw")
        for name in ["add", "multiply", "maximum", "less", "bitwise_xor", "floor_divide"]:
            try:
                model.binary(name, a, b)
                model.binary(name, case.variables[f"v{model.counter}"], c)
            except TypeError:
                pass
        greater = model.binary("greater", a, b)
        if greater is not None:
            model.where(greater, b, a)
        for name in list(case.variables)[3:]:
            path = str(case_dir / f"{name}.bin")
            case.job["outputs"][name] = {"raw": path}
            case.outputs[name] = ("raw", path, None)
        cases.append(case)
    report(cases, run_jobs(compute_tool, [case.job for case in cases]))


def test_wide_and_large(compute_tool, tmp_path):
    """Chains reading more stored arrays than one fused task may (max_fused_sources is
    8), and arrays of many blocks larger than a tile (tile_elements is 4096)."""
    rng = np.random.default_rng([SEED, 5])
    cases = []
    for index in range(int(8 * SCALE)):
        case_dir = tmp_path / f"case{index}"
        case_dir.mkdir()
        case = Case(index)
        case.job.update(random_config(rng), allowed_mem="100000000")
        model = Model(rng, case, case_dir)
        if index % 2 == 0:  # wide: 9 to 12 inputs added up, each chunked its own way
            model.universe = (int(rng.integers(3, 12)), int(rng.integers(3, 12)))
            total = model.add_input(shape=sub_shape(rng, model.universe, full=True))
            for _ in range(int(rng.integers(8, 12))):
                term = model.add_input()
                name = str(rng.choice(["add", "maximum", "multiply"]))
                total = model.binary(name, total, term) or total
        else:  # large: blocks of thousands of elements, each many tiles
            model.universe = [(300, 257), (40, 30, 50), (5000,)][index // 2 % 3]
            for _ in range(int(rng.integers(2, 4))):
                shape = sub_shape(rng, model.universe, full=True)
                chunks = [int(rng.integers(max(1, d // 4), d + 2)) for d in shape]
                model.add_input(shape=shape, chunks=chunks,
                                source=str(rng.choice(["zarr", "random"])))
            added = 0
            for _ in range(200):
                if added == 6:
                    break
                added += bool(model.try_step())
        last = list(case.variables)[-1]
        path = str(case_dir / "out.bin")
        case.job["outputs"][last] = {"raw": path}
        case.outputs[last] = ("raw", path, None)
        cases.append(case)
    report(cases, run_jobs(compute_tool, [case.job for case in cases]))


def test_random_is_chunking_invariant(compute_tool, tmp_path):
    """random::random: the same seed gives the same values whatever the chunking - the
    generator's documented formula, bit for bit - uniform in [0, 1)."""
    shapes = [((), [()]), ((17,), [(17,), (1,), (5,), (40,)]),
              ((6, 9), [(6, 9), (1, 1), (4, 2), (5, 7)]),
              ((3, 4, 5), [(3, 4, 5), (2, 3, 4), (1, 4, 1)]), ((0, 3), [(1, 1), (2, 2)]),
              ((2, 2, 3, 3), [(1, 2, 2, 3), (2, 1, 3, 1)])]
    seeds = [0, 1, 12345, 2**63, 2**64 - 1]
    jobs, expected = [], []
    for shape, chunkings in shapes:
        for seed in seeds:
            outputs, inputs = {}, {}
            for number, chunks in enumerate(chunkings):
                name = f"r{number}"
                inputs[name] = {"random": {"shape": list(shape), "chunks": list(chunks),
                                           "seed": seed}}
                outputs[name] = {"raw": str(tmp_path / f"random-{len(jobs)}-{number}.bin")}
            jobs.append({"inputs": inputs, "outputs": outputs, "executor": "threads"})
            expected.append((shape, seed, reference_random(shape, seed)))
    results = run_jobs(compute_tool, jobs)
    problems = []
    for job, result, (shape, seed, values) in zip(jobs, results, expected):
        if "error" in result:
            problems.append(f"shape {shape} seed {seed}: {result['error']}")
            continue
        problems += check_memory(result)
        for name, out in job["outputs"].items():
            actual = np.fromfile(out["raw"], dtype=np.float64).reshape(shape)
            chunks = job["inputs"][name]["random"]["chunks"]
            if not np.array_equal(actual, values):
                problems.append(f"shape {shape} chunks {chunks} seed {seed}: values differ from "
                                "the formula (and so between chunkings)")
            if actual.size and not ((actual >= 0) & (actual < 1)).all():
                problems.append(f"shape {shape} chunks {chunks} seed {seed}: values outside [0, 1)")
    assert not problems, f"{failure_header()}\n" + "\n".join(problems)


def test_promotion_matrix(compute_tool):
    """Every function on every dtype (and pair of dtypes, and dtype with each scalar kind
    on either side): defined exactly where numpy defines it, with numpy's result dtype
    under Tessera's rules. Builds the arrays only (nothing is computed)."""
    jobs, expected = [], []

    def job(inputs, step, reference):
        try:
            value = np.asarray(reference())
            expected.append(value.dtype.name)
        except TypeError:
            expected.append("InvalidArgument")
        jobs.append({"inputs": inputs, "steps": [dict(step, out="y")]})

    def ones(dtype):
        return {"ones": {"shape": [2], "chunks": [1], "dtype": dtype}}

    sample = {dtype: np.ones(2, dtype=dtype) for dtype in DTYPES}
    for name in UNARY:
        for dtype in DTYPES:
            job({"a": ones(dtype)}, {"fn": name, "args": ["a"]},
                lambda: reference_unary(name, sample[dtype]))
    for name in BINARY:
        for a in DTYPES:
            for b in DTYPES:
                job({"a": ones(a), "b": ones(b)}, {"fn": name, "args": ["a", "b"]},
                    lambda: reference_binary(name, sample[a], sample[b]))
            for kind, value in [("bool", True), ("int", 3), ("float", 2.5)]:
                scalar = Scalar(value, kind)
                constant = np.broadcast_to(
                    scalar_array(scalar, result_type_with_scalar(a, kind)), (2,))
                job({"a": ones(a)}, {"fn": name, "args": ["a", scalar.to_json()]},
                    lambda: reference_binary(name, sample[a], constant))
                job({"a": ones(a)}, {"fn": name, "args": [scalar.to_json(), "a"]},
                    lambda: reference_binary(name, constant, sample[a]))
    for a in DTYPES:
        for b in DTYPES:
            job({"c": ones("bool"), "a": ones(a), "b": ones(b)},
                {"fn": "where", "args": ["c", "a", "b"]},
                lambda: reference_where(sample["bool"], sample[a], sample[b]))
        for kind, value in [("bool", True), ("int", 3), ("float", 2.5)]:
            scalar = Scalar(value, kind)
            constant = scalar_array(scalar, result_type_with_scalar(a, kind))
            job({"c": ones("int8"), "a": ones(a)},
                {"fn": "where", "args": ["c", "a", scalar.to_json()]},
                lambda: reference_where(sample["int8"], sample[a], constant))
    results = run_jobs(compute_tool, jobs)
    problems = []
    for job_, result, want in zip(jobs, results, expected):
        if "error" in result:
            error = result["error"]
            got = error["type"] if error["stage"] == "build" else str(error)
        else:
            got = result["steps"]["y"]["dtype"]
        if got != want:
            step = job_["steps"][0]
            dtypes = [job_["inputs"][a]["ones"]["dtype"] if isinstance(a, str) else a
                      for a in step["args"]]
            problems.append(f"{step['fn']}{tuple(map(str, dtypes))}: Tessera {got}, numpy {want}")
    assert not problems, (f"{len(problems)} of {len(jobs)} signatures differ:\n"
                          + "\n".join(problems))


def budget_numbers(what):
    """(projected, allowed_mem, reserved_mem, what the plan needs) from a MemoryBudgetError's
    message, or None when it does not have the documented form."""
    match = re.search(r"Projected [\w ]+ memory \((\d+)\) exceeds allowed_mem \((\d+)\), "
                      r"including reserved_mem \((\d+)\)", what)
    smallest = re.search(r"the smallest allowed_mem that would run it is (\d+)", what)
    whole = re.search(r"the whole plan needs (\d+)", what)
    if not match or not smallest:
        return None
    projected, allowed, reserved = (int(group) for group in match.groups())
    if int(smallest.group(1)) != projected:
        return None
    return projected, allowed, reserved, int(whole.group(1)) if whole else projected


def test_memory_budget_is_exact(compute_tool, tmp_path):
    """The smallest allowed_mem that plans a computation is found by descending (plan at
    one below the last plan's required_allowed_mem until planning fails); the
    MemoryBudgetError there, and the one at allowed_mem = reserved_mem + 1, must name
    it as "the smallest allowed_mem that would run it". The computation then runs - with
    numpy's values and measured <= projected in every op - at that smallest budget, at
    the generous plan's required_allowed_mem and at the number the errors named.
    (Fusion backs off under a tight budget, so plans differ between budgets.)"""
    cases = make_cases(4, int(20 * SCALE), tmp_path, steps=(2, 7), outputs_mode="raw", config=False)
    for case in cases:
        case.job.update(reserved_mem=str(case.index % 3 * 100), plan_only=True)

    def plan_at(pairs):
        return run_jobs(compute_tool,
                        [dict(case.job, allowed_mem=str(allowed)) for case, allowed in pairs])

    def required_of(result):
        return max(plan["required_allowed_mem"] for plan in result["plans"])

    def named(case, allowed, result):
        """The smallest allowed_mem a MemoryBudgetError at `allowed` names, or a problem."""
        error = result.get("error")
        if not error or error["type"] != "MemoryBudgetError" or error["stage"] != "plan":
            return f"case {case.index} at allowed_mem {allowed}: {error or 'no error'}"
        numbers = budget_numbers(error["what"])
        if numbers is None or numbers[1:3] != (allowed, int(case.job["reserved_mem"])) \
                or numbers[3] <= allowed:
            return f"case {case.index} at allowed_mem {allowed}: {error or 'no error'}"
        return numbers[3]

    problems = []
    reserved = {case.index: int(case.job["reserved_mem"]) for case in cases}
    results = plan_at([(case, "1GB") for case in cases]
                      + [(case, reserved[case.index] + 1) for case in cases])
    required, lowest, tight_named = {}, {}, {}
    for case, generous, tight in zip(cases, results[:len(cases)], results[len(cases):]):
        if "error" in generous:
            problems.append(f"case {case.index} at 1GB: {generous['error']}")
            continue
        required[case.index] = lowest[case.index] = required_of(generous)
        for plan in generous["plans"]:
            # allowed_mem must also exceed reserved_mem: an empty plan requires reserved + 1.
            floor = reserved[case.index] + 1
            if plan["required_allowed_mem"] != max(plan["max_projected_mem"], floor):
                problems.append(f"case {case.index}: required_allowed_mem "
                                f"{plan['required_allowed_mem']}, max_projected_mem "
                                f"{plan['max_projected_mem']}, reserved {floor - 1}")
        if "error" in tight:
            tight_named[case.index] = named(case, reserved[case.index] + 1, tight)
    # Descend to the smallest allowed_mem that plans.
    below = {}  # case index -> the result of planning at lowest - 1
    pending = [case for case in cases
               if case.index in lowest and lowest[case.index] - 1 > reserved[case.index]]
    for _ in range(20):
        if not pending:
            break
        results = plan_at([(case, lowest[case.index] - 1) for case in pending])
        still = []
        for case, result in zip(pending, results):
            if "error" in result:
                below[case.index] = result
                continue
            if required_of(result) >= lowest[case.index]:
                problems.append(f"case {case.index}: planned at allowed_mem "
                                f"{lowest[case.index] - 1} "
                                f"but requires {required_of(result)}")
                continue
            lowest[case.index] = required_of(result)
            if lowest[case.index] - 1 > reserved[case.index]:
                still.append(case)
        pending = still
    assert not pending, "the descent did not end"
    variants = []
    for case in cases:
        if case.index not in lowest:
            continue
        smallest = lowest[case.index]
        claims = []
        if case.index in below:
            claims.append((smallest - 1, named(case, smallest - 1, below[case.index])))
        if case.index in tight_named:
            claims.append((reserved[case.index] + 1, tight_named[case.index]))
        for allowed, claim in claims:
            if isinstance(claim, str):
                problems.append(claim)
            elif claim != smallest:
                problems.append(f"case {case.index}: at allowed_mem {allowed} the error names "
                                f"{claim} as the smallest allowed_mem, but {smallest} runs")
        runs = {smallest, required[case.index]} | {c for _, c in claims if isinstance(c, int)}
        for allowed in sorted(runs):
            variant = copy.deepcopy(case)
            variant.job.update(allowed_mem=str(allowed), plan_only=False)
            variants.append(variant)
    results = run_jobs(compute_tool, [variant.job for variant in variants])
    for variant, result in zip(variants, results):
        problems += [f"case {variant.index} at allowed_mem {variant.job['allowed_mem']}: {problem}"
                     for problem in check_case(variant, result)]
    assert not problems, f"{failure_header()}\n" + "\n".join(problems)


def test_invalid_jobs_raise_invalid_argument(compute_tool):
    """Shapes that do not broadcast, bitwise ops on floats, bad broadcast_to targets."""
    def ones(shape, dtype="float64"):
        return {"ones": {"shape": shape, "chunks": [1] * len(shape), "dtype": dtype}}
    def job(inputs, fn, args, **extra):
        return {"inputs": inputs, "steps": [dict(out="y", fn=fn, args=args, **extra)]}
    jobs = [
        job({"a": ones([3]), "b": ones([4])}, "add", ["a", "b"]),
        job({"a": ones([2, 3]), "b": ones([3, 2])}, "less", ["a", "b"]),
        job({"a": ones([3])}, "bitwise_and", ["a", "a"]),
        job({"a": ones([3])}, "bitwise_invert", ["a"]),
        job({"a": ones([3], "bool")}, "negative", ["a"]),
        job({"a": ones([3], "bool")}, "subtract", ["a", "a"]),
        job({"a": ones([3])}, "broadcast_to", ["a"], shape=[4]),
        job({"a": ones([2, 3])}, "broadcast_to", ["a"], shape=[3]),
        job({"a": ones([3]), "c": ones([2], "bool")}, "where", ["c", "a", "a"]),
        job({"a": ones([3])}, "no_such_function", ["a"]),
        job({"a": ones([3], "uint64"), "b": ones([3], "int64")}, "bitwise_or", ["a", "b"]),
    ]
    results = run_jobs(compute_tool, jobs)
    problems = [f"{job['steps']}: {result}" for job, result in zip(jobs, results)
                if result.get("error", {}).get("type") != "InvalidArgument"
                or result["error"]["stage"] != "build"]
    assert not problems, "\n".join(problems)


def test_tool_forms(compute_tool, tmp_path):
    """compute_tool's other forms: one job (not a batch), outputs as plain paths (Zarr,
    or raw with "compute": true), every way of writing a scalar."""
    x = np.arange(12, dtype=np.int16).reshape(3, 4) - 5
    zarr.open_array(str(tmp_path / "x.zarr"), mode="w", zarr_format=2, compressor=V2_DEFAULT_COMPRESSOR, shape=x.shape, chunks=(2, 3),
                    dtype=x.dtype)[...] = x
    steps = [{"out": "a", "fn": "add", "args": ["x", {"scalar": 3, "kind": "int"}]},
             {"out": "b", "fn": "multiply", "args": [{"scalar": 2.5}, "a"]},
             {"out": "c", "fn": "logical_and", "args": ["x", {"scalar": True}]},
             {"out": "d", "fn": "maximum", "args": ["b", {"scalar": "nan"}]},
             {"out": "e", "fn": "add", "args": ["x", {"scalar": 2**64 - 1, "kind": "uint"}]},
             {"out": "f", "fn": "broadcast_to", "args": ["x"], "shape": [2, 3, 4]}]
    expected = {"a": x + np.int16(3), "b": 2.5 * (x + 3).astype(np.float64),
                "c": x != 0, "d": np.full(x.shape, np.nan), "e": x - np.int16(1),
                "f": np.broadcast_to(x, (2, 3, 4))}
    jobs = [{"inputs": {"x": {"zarr": str(tmp_path / "x.zarr")}}, "steps": steps,
             "outputs": {name: str(tmp_path / f"{name}.zarr") for name in expected}},
            {"inputs": {"x": {"zarr": str(tmp_path / "x.zarr")}}, "steps": steps, "compute": True,
             "outputs": {name: str(tmp_path / f"{name}.bin") for name in expected}}]
    for job in jobs:
        process = subprocess.run([compute_tool, "job"], input=json.dumps(job), capture_output=True,
                                 text=True, timeout=120)
        assert process.returncode == 0, process.stderr
        result = json.loads(process.stdout)
        assert "error" not in result, result["error"]
        assert len(result["plans"]) == (len(expected) if "compute" not in job else 1)
        assert not check_memory(result)
        for name, want in expected.items():
            if "compute" in job:
                step = result["steps"][name]
                got = np.fromfile(tmp_path / f"{name}.bin", dtype=step["dtype"])
                got = got.reshape(step["shape"])
            else:
                got = zarr.open_array(str(tmp_path / f"{name}.zarr"), mode="r")[...]
            assert got.dtype == want.dtype, name
            assert np.array_equal(got, want, equal_nan=want.dtype.kind == "f"), name


# ---- library bugs found by these tests (each fails until fixed) --------------------------

def test_regression_constant_output_with_consumer(compute_tool, tmp_path):
    """Was a crash: computing a constant array (ones/zeros/full) together with an array computed
    from it - tessera::compute({a, negative(a)}) - crashes (SIGSEGV in FillConstant via
    FusedEvaluator::EvaluateElementwise, fused_evaluator.cpp:230: a null output tile),
    whatever fusion or executor. arange or random in place of ones work."""
    job = {"inputs": {"a": {"ones": {"shape": [2], "chunks": [1], "dtype": "float32"}}},
           "steps": [{"out": "b", "fn": "negative", "args": ["a"]}],
           "outputs": {"a": {"raw": str(tmp_path / "a.bin")},
                       "b": {"raw": str(tmp_path / "b.bin")}}}
    process = subprocess.run([compute_tool, "job"], input=json.dumps(job), capture_output=True,
                             text=True, timeout=60)
    assert process.returncode == 0, f"exited {process.returncode}: {json.dumps(job)}"
    assert "error" not in json.loads(process.stdout)
    assert np.array_equal(np.fromfile(tmp_path / "b.bin", dtype=np.float32), [-1, -1])


def test_regression_budget_error_names_the_true_minimum(compute_tool, tmp_path):
    """Was wrong: under a tight allowed_mem the planner splits fused groups, and the split plan
    can need more than the fused one; the MemoryBudgetError then names the split plan's
    need as "the smallest allowed_mem that would run it", though less runs.
    c = add(b, a), a: float64 [1] chunks [2], b: float32 [1] chunks [2], both Zarr,
    uncompressed: fused, the plan needs 28 bytes and runs at allowed_mem 28; at 27 the
    error says "the smallest allowed_mem that would run it is 32" (and at 1: "the whole
    plan needs 32")."""
    for name, dtype in [("a", "float64"), ("b", "float32")]:
        zarr.open_array(str(tmp_path / f"{name}.zarr"), mode="w", zarr_format=2, shape=(1,), chunks=(2,),
                        dtype=dtype, compressor=None)[...] = 3
    base = {"inputs": {name: {"zarr": str(tmp_path / f"{name}.zarr")} for name in "ab"},
            "steps": [{"out": "c", "fn": "add", "args": ["b", "a"]}],
            "outputs": {"c": {"raw": str(tmp_path / "c.bin")}}, "plan_only": True}
    generous, tight = run_jobs(compute_tool,
                               [dict(base, allowed_mem="1GB"), dict(base, allowed_mem="1")])
    required = generous["plans"][0]["required_allowed_mem"]
    [below] = run_jobs(compute_tool, [dict(base, allowed_mem=str(required - 1))])
    assert below["error"]["type"] == "MemoryBudgetError"
    assert budget_numbers(below["error"]["what"])[3] == required, below["error"]["what"]
    assert budget_numbers(tight["error"]["what"])[3] == required, tight["error"]["what"]
