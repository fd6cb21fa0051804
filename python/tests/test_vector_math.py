"""The vector math kernels (SLEEF, chosen at run time for the CPU) against numpy's own
results: every function they cover, float32 and float64, random values spread evenly
over each function's usual range and over every magnitude the type has, and the values
C99 fixes results for. numpy documents its SIMD versions within 4 ulp and SLEEF's are
within 1, so results may be 5 ulp apart; sqrt is correctly rounded in both. NaN matches
NaN and infinities match exactly. Replay with TESSERA_TEST_SEED."""

import numpy as np
import pytest

import tessera

# (tessera name, numpy name, evenly spread range)
UNARY = [
    ("exp", "exp", (-80, 80)),
    ("expm1", "expm1", (-20, 20)),
    ("log", "log", (0, 1e6)),
    ("log1p", "log1p", (-1, 1e6)),
    ("log2", "log2", (0, 1e6)),
    ("log10", "log10", (0, 1e6)),
    ("sin", "sin", (-10, 10)),
    ("cos", "cos", (-10, 10)),
    ("tan", "tan", (-1.5, 1.5)),
    ("asin", "arcsin", (-1, 1)),
    ("acos", "arccos", (-1, 1)),
    ("atan", "arctan", (-100, 100)),
    ("sinh", "sinh", (-80, 80)),
    ("cosh", "cosh", (-80, 80)),
    ("tanh", "tanh", (-20, 20)),
    ("asinh", "arcsinh", (-1e6, 1e6)),
    ("acosh", "arccosh", (1, 1e6)),
    ("atanh", "arctanh", (-1, 1)),
    ("sqrt", "sqrt", (0, 1e6)),
]
BINARY = [
    ("pow", "power", (-10, 10)),
    ("atan2", "arctan2", (-100, 100)),
    ("hypot", "hypot", (-1e6, 1e6)),
]
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, np.inf, -np.inf, np.nan]


def inputs(rng, dtype, low, high, count=3000):
    info = np.finfo(dtype)
    even = rng.uniform(low, high, count)
    top = np.log10(float(info.max)) - 0.01
    magnitude = 10.0 ** rng.uniform(np.log10(float(info.tiny)), top, count)
    signs = np.where(rng.random(count) < 0.5, -1.0, 1.0) if low < 0 else 1.0
    values = np.concatenate([SPECIAL, even, magnitude * signs])
    return values.astype(dtype)


def assert_within_ulps(got, want, ulps, what):
    assert got.dtype == want.dtype, what
    both_nan = np.isnan(got) & np.isnan(want)
    infinite = np.isinf(got) | np.isinf(want)
    exact_inf = infinite & (got == want)
    finite = ~(np.isnan(got) | np.isnan(want) | infinite)
    bad = ~(both_nan | exact_inf | finite)
    assert not bad.any(), f"{what}: {got[bad][:5]} instead of {want[bad][:5]}"
    np.testing.assert_array_max_ulp(got[finite], want[finite], maxulp=ulps, dtype=got.dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,numpy_name,domain", UNARY, ids=[u[0] for u in UNARY])
def test_unary_vector_math_within_numpys_accuracy(rng, spec, dtype, name, numpy_name, domain):
    values = inputs(rng, dtype, *domain)
    x = tessera.asarray(values, chunks=(1000,), spec=spec)
    with np.errstate(all="ignore"):
        want = getattr(np, numpy_name)(values)
    got = getattr(tessera, name)(x).compute()
    assert_within_ulps(got, want, 0 if name == "sqrt" else 5, f"{name} {dtype}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,numpy_name,domain", BINARY, ids=[b[0] for b in BINARY])
def test_binary_vector_math_within_numpys_accuracy(rng, spec, dtype, name, numpy_name, domain):
    left = inputs(rng, dtype, *domain)
    right = rng.permutation(inputs(rng, dtype, *domain))
    if name == "pow":  # integer exponents too: a negative base has a real power then
        right[::2] = np.round(right[::2])
    x = tessera.asarray(left, chunks=(1000,), spec=spec)
    y = tessera.asarray(right, chunks=(1000,), spec=spec)
    with np.errstate(all="ignore"):
        want = getattr(np, numpy_name)(left, right)
    got = getattr(tessera, name)(x, y).compute()
    assert_within_ulps(got, want, 5, f"{name} {dtype}")
