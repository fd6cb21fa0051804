"""Property tests (hypothesis): the module's functions against numpy on random shapes,
chunkings and dtypes, and type promotion and special values against array_api_strict.
Replay a failure with TESSERA_TEST_SEED=<the seed in the header> (conftest.py), which
seeds hypothesis too."""

import array_api_strict as strict
import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import tessera
import tessera.array_api as xp
from conftest import SEED

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64", "complex64", "complex128"]
REAL = [d for d in DTYPES if d != "bool" and not d.startswith("complex")]
COMPLEX = ["complex64", "complex128"]
SPEC = tessera.Spec(allowed_mem="50MB", max_workers=2)
SETTINGS = settings(max_examples=40, deadline=None, derandomize=False,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def shapes_and_chunks(draw, max_dims=3):
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=0, max_size=max_dims)))
    chunks = tuple(draw(st.integers(1, extent)) for extent in shape)
    return shape, chunks


def values_of(rng, shape, dtype):
    kind = np.dtype(dtype).kind
    if kind == "b":
        return rng.random(shape) > 0.5
    if kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100) + 1, size=shape).astype(dtype)
    if kind == "c":
        parts = rng.standard_normal((2, *shape)) * 10
        return (parts[0] + 1j * parts[1]).astype(dtype)
    return (rng.standard_normal(shape) * 10).astype(dtype)


@seed(SEED)
@SETTINGS
@given(layout=shapes_and_chunks(), dtype=st.sampled_from(REAL),
       name=st.sampled_from(["add", "subtract", "multiply", "maximum", "minimum", "equal",
                             "less", "greater_equal"]),
       data_seed=st.integers(0, 2**32 - 1))
def test_binary_functions_match_numpy(layout, dtype, name, data_seed):
    shape, chunks = layout
    rng = np.random.default_rng(data_seed)
    a, b = values_of(rng, shape, dtype), values_of(rng, shape, dtype)
    x = tessera.asarray(a, chunks=chunks, spec=SPEC)
    y = tessera.asarray(b, chunks=chunks, spec=SPEC)
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(a, b)
    assert_special_values_equal(getattr(tessera, name)(x, y).compute(), expected)


@seed(SEED)
@SETTINGS
@given(layout=shapes_and_chunks(), dtype=st.sampled_from(["float32", "float64"]),
       name=st.sampled_from(["exp", "log1p", "sqrt", "sin", "tanh", "abs", "floor", "square"]),
       data_seed=st.integers(0, 2**32 - 1))
def test_unary_functions_match_numpy(layout, dtype, name, data_seed):
    shape, chunks = layout
    values = np.abs(values_of(np.random.default_rng(data_seed), shape, dtype)) / 4
    x = tessera.asarray(values, chunks=chunks, spec=SPEC)
    expected = getattr(np, name)(values)
    got = getattr(tessera, name)(x).compute()
    assert got.dtype == expected.dtype
    rtol = 1e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(got, expected, rtol=rtol)


@seed(SEED)
@SETTINGS
@given(layout=shapes_and_chunks(), dtype=st.sampled_from(REAL),
       name=st.sampled_from(["sum", "max", "min", "mean"]), data=st.data())
def test_reductions_match_numpy(layout, dtype, name, data):
    shape, chunks = layout
    axis = data.draw(st.one_of(st.none(), st.integers(0, len(shape) - 1)) if shape else st.none())
    keepdims = data.draw(st.booleans())
    values = values_of(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), shape, dtype)
    x = tessera.asarray(values, chunks=chunks, spec=SPEC)
    expected = getattr(np, name)(values, axis=axis, keepdims=keepdims)
    got = getattr(tessera, name)(x, axis=axis, keepdims=keepdims).compute()
    assert got.shape == np.shape(expected)
    assert got.dtype == np.asarray(expected).dtype
    rtol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got, expected, rtol=rtol)


def assert_complex_close(got, expected):
    assert got.dtype == expected.dtype
    rtol = 2e-5 if expected.dtype in (np.complex64, np.float32) else 1e-12
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


@seed(SEED)
@SETTINGS
@given(layout=shapes_and_chunks(), dtypes=st.tuples(st.sampled_from(COMPLEX),
                                                    st.sampled_from(COMPLEX + ["float32"])),
       name=st.sampled_from(["add", "subtract", "multiply", "divide", "pow", "equal",
                             "not_equal", "vecdot"]),
       data_seed=st.integers(0, 2**32 - 1))
def test_complex_binary_functions_match_numpy(layout, dtypes, name, data_seed):
    shape, chunks = layout
    if name == "vecdot" and not shape:
        shape, chunks = (3,), (2,)
    rng = np.random.default_rng(data_seed)
    a, b = values_of(rng, shape, dtypes[0]) / 10, values_of(rng, shape, dtypes[1]) / 10
    x = tessera.asarray(a, chunks=chunks, spec=SPEC)
    y = tessera.asarray(b, chunks=chunks, spec=SPEC)
    expected = np.asarray(getattr(np, name)(a, b))
    assert_complex_close(getattr(tessera, name)(x, y).compute(), expected)


@seed(SEED)
@SETTINGS
@given(layout=shapes_and_chunks(), dtype=st.sampled_from(COMPLEX),
       name=st.sampled_from(["exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin",
                             "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
                             "arcsinh", "arccosh", "arctanh", "abs", "square", "sign",
                             "negative", "positive", "round", "conj", "real", "imag"]),
       data_seed=st.integers(0, 2**32 - 1))
def test_complex_unary_functions_match_numpy(layout, dtype, name, data_seed):
    shape, chunks = layout
    values = values_of(np.random.default_rng(data_seed), shape, dtype) / 10
    x = tessera.asarray(values, chunks=chunks, spec=SPEC)
    expected = np.asarray(getattr(np, name)(values))
    tessera_name = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
                    "arccosh": "acosh", "arctanh": "atanh"}.get(name, name)
    assert_complex_close(getattr(tessera, tessera_name)(x).compute(), expected)


@seed(SEED)
@SETTINGS
@given(layout=shapes_and_chunks(), dtype=st.sampled_from(COMPLEX),
       name=st.sampled_from(["sum", "prod", "mean", "any", "all", "count_nonzero",
                             "cumulative_sum", "cumulative_prod"]), data=st.data())
def test_complex_reductions_match_numpy(layout, dtype, name, data):
    shape, chunks = layout
    axis = data.draw(st.one_of(st.none(), st.integers(0, len(shape) - 1)) if shape else st.none())
    values = values_of(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), shape, dtype)
    values = values / 10
    x = tessera.asarray(values, chunks=chunks, spec=SPEC)
    if name.startswith("cumulative"):
        if axis is None:
            axis = 0
            if not shape:
                return
        expected = (np.cumsum if name == "cumulative_sum" else np.cumprod)(values, axis=axis)
        got = getattr(tessera, name)(x, axis=axis).compute()
    else:
        expected = np.asarray(getattr(np, name)(values, axis=axis))
        got = getattr(tessera, name)(x, axis=axis).compute()
    if expected.dtype.kind == "c":
        assert_complex_close(got, expected)
    else:
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == expected.dtype


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_arrays_refuse_what_has_no_complex_meaning(dtype):
    x = tessera.asarray(np.array([1 + 2j, 3 - 1j], dtype=dtype), spec=SPEC)
    with pytest.raises(TypeError, match="real\\(x\\)"):
        xp.astype(x, "float64")
    assert xp.astype(x, "bool").compute().tolist() == [True, True]
    for name in ["max", "min", "argmax", "var", "std"]:
        with pytest.raises(ValueError, match="complex"):
            getattr(tessera, name)(x)
    for name in ["less", "maximum", "atan2", "floor_divide"]:
        with pytest.raises(ValueError, match="complex numbers have no order"):
            getattr(tessera, name)(x, x)
    for name in ["floor", "ceil", "trunc"]:
        with pytest.raises(ValueError, match=name):
            getattr(tessera, name)(x)
    with pytest.raises(TypeError):
        float(tessera.sum(x))
    assert complex(tessera.sum(x)) == 4 + 1j


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_complex_python_scalars_are_weak(dtype):
    x = tessera.ones((3,), dtype=dtype, spec=SPEC)
    expected = strict.ones((3,), dtype=getattr(strict, dtype)) + 2j
    got = x + 2j
    assert got.dtype == np.dtype(str(expected.dtype).split(".")[-1])
    np.testing.assert_array_equal(got.compute(), np.asarray(expected))


@seed(SEED)
@SETTINGS
@given(layout=shapes_and_chunks(max_dims=2), data=st.data())
def test_rechunk_keeps_every_value(layout, data):
    shape, chunks = layout
    target = tuple(data.draw(st.integers(1, extent)) for extent in shape)
    values = np.arange(int(np.prod(shape)), dtype="float64").reshape(shape)
    x = tessera.asarray(values, chunks=chunks, spec=SPEC).rechunk(target)
    assert x.chunksize == target
    np.testing.assert_array_equal(x.compute(), values)


def strict_result_type(a, b):
    try:
        return strict.result_type(getattr(strict, a), getattr(strict, b))
    except TypeError:
        return None  # the standard leaves the pair undefined (int and uint of 64 bits, ...)


@pytest.mark.parametrize("left", DTYPES)
@pytest.mark.parametrize("right", DTYPES)
def test_type_promotion_follows_the_standards_table(left, right):
    expected = strict_result_type(left, right)
    if expected is None:
        pytest.skip(f"the standard does not define {left} with {right}")
    x = tessera.ones((2,), dtype=left, spec=SPEC)
    y = tessera.ones((2,), dtype=right, spec=SPEC)
    assert tessera.add(x, y).dtype == np.dtype(str(expected).split(".")[-1]), (left, right)
    assert xp.result_type(x, y) == np.dtype(str(expected).split(".")[-1])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint16", "int64"])
def test_python_scalars_are_weak(dtype):
    x = tessera.ones((3,), dtype=dtype, spec=SPEC)
    assert (x + 1).dtype == np.dtype(dtype)
    assert (2 * x).dtype == np.dtype(dtype)
    if np.dtype(dtype).kind == "f":
        assert (x * 0.5).dtype == np.dtype(dtype)


def assert_special_values_equal(got, expected):
    """NaN where NaN, infinities and signed zeros exactly; finite values within 2 ulp (the
    accuracy numpy's own libm gives, not the special case's). Complex values part by part."""
    assert got.dtype == expected.dtype
    if got.dtype.kind == "c":
        assert_special_values_equal(got.real, expected.real)
        assert_special_values_equal(got.imag, expected.imag)
        return
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, expected)
        return
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    exact = np.isinf(expected) | (expected == 0)  # a NaN's sign bit means nothing
    np.testing.assert_array_equal(got[exact], expected[exact])
    np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(expected[exact]))
    np.testing.assert_array_max_ulp(got[~exact], expected[~exact], maxulp=2)


SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-310, 1e308])


@pytest.mark.parametrize("name", ["sqrt", "exp", "log", "log1p", "expm1", "sin", "cos",
                                  "tanh", "floor", "ceil", "trunc", "round", "abs", "sign",
                                  "isnan", "isinf", "isfinite", "negative", "square"])
def test_special_values_match_array_api_strict(name):
    x = tessera.asarray(SPECIAL, chunks=4, spec=SPEC)
    with np.errstate(all="ignore"):
        expected = np.asarray(getattr(strict, name)(strict.asarray(SPECIAL)))
    assert_special_values_equal(getattr(tessera, name)(x).compute(), expected)


COMPLEX_SPECIAL = np.empty(SPECIAL.size ** 2, dtype="complex128")
COMPLEX_SPECIAL.real = np.repeat(SPECIAL, SPECIAL.size)
COMPLEX_SPECIAL.imag = np.tile(SPECIAL, SPECIAL.size)


@pytest.mark.parametrize("name", ["sqrt", "exp", "log", "abs", "sign", "isnan", "isinf",
                                  "isfinite", "negative", "conj", "real", "imag", "square",
                                  "sinh", "tanh", "asinh", "round"])
def test_complex_special_values_match_array_api_strict(name):
    """Complex numbers with every pair of special parts, as array_api_strict (numpy, C99's
    Annex G) gives them; sign as numpy's np.sign, which array_api_strict's own x / |x|
    differs from (it overflows to NaN below |x| = 1e-308)."""
    x = tessera.asarray(COMPLEX_SPECIAL, chunks=10, spec=SPEC)
    with np.errstate(all="ignore"):
        if name == "sign":
            expected = np.sign(COMPLEX_SPECIAL)
        else:
            expected = np.asarray(getattr(strict, name)(strict.asarray(COMPLEX_SPECIAL)))
    assert_special_values_equal(getattr(tessera, name)(x).compute(), expected)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "equal"])
def test_complex_binary_special_values_match_array_api_strict(name):
    a = np.repeat(COMPLEX_SPECIAL[::3], COMPLEX_SPECIAL[::3].size)
    b = np.tile(COMPLEX_SPECIAL[::3], COMPLEX_SPECIAL[::3].size)
    x = tessera.asarray(a, chunks=50, spec=SPEC)
    y = tessera.asarray(b, chunks=50, spec=SPEC)
    with np.errstate(all="ignore"):
        expected = np.asarray(getattr(strict, name)(strict.asarray(a), strict.asarray(b)))
    assert_special_values_equal(getattr(tessera, name)(x, y).compute(), expected)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "pow", "maximum",
                                  "minimum", "atan2", "hypot", "copysign", "floor_divide",
                                  "remainder", "less", "equal"])
def test_binary_special_values_match_array_api_strict(name):
    a = np.repeat(SPECIAL, SPECIAL.size)
    b = np.tile(SPECIAL, SPECIAL.size)
    x = tessera.asarray(a, chunks=7, spec=SPEC)
    y = tessera.asarray(b, chunks=7, spec=SPEC)
    with np.errstate(all="ignore"):
        expected = np.asarray(getattr(strict, name)(strict.asarray(a), strict.asarray(b)))
    assert_special_values_equal(getattr(tessera, name)(x, y).compute(), expected)


# Every manipulation, cumulative, indexing and linear-algebra function: (name, how to
# call it on tessera, the same on numpy) for an array of at least one dimension; `axis`
# is drawn in range, `other` is a second axis (or the same one).
def _cases(shape, axis, other):
    n = len(shape)
    perm = tuple(reversed(range(n)))
    picks = [0, shape[axis] - 1, shape[axis] // 2, 0]
    return [
        ("permute_dims", lambda m, x: m.permute_dims(x, perm), lambda v: np.transpose(v, perm)),
        ("reshape", lambda m, x: m.reshape(x, (-1,)), lambda v: v.reshape(-1)),
        ("flip", lambda m, x: m.flip(x, axis=axis), lambda v: np.flip(v, axis=axis)),
        ("roll", lambda m, x: m.roll(x, 2, axis=axis), lambda v: np.roll(v, 2, axis=axis)),
        ("repeat", lambda m, x: m.repeat(x, 2, axis=axis), lambda v: np.repeat(v, 2, axis=axis)),
        ("tile", lambda m, x: m.tile(x, (2,) * n), lambda v: np.tile(v, (2,) * n)),
        ("expand_dims", lambda m, x: m.expand_dims(x, axis=axis),
         lambda v: np.expand_dims(v, axis)),
        ("concat", lambda m, x: m.concat([x, x], axis=axis),
         lambda v: np.concatenate([v, v], axis=axis)),
        ("stack", lambda m, x: m.stack([x, x], axis=other), lambda v: np.stack([v, v], axis=other)),
        ("moveaxis", lambda m, x: xp.moveaxis(x, axis, other) if m is tessera else
         np.moveaxis(x, axis, other), None),
        ("take", lambda m, x: xp.take(x, np.array(picks), axis=axis),
         lambda v: np.take(v, picks, axis=axis)),
        ("cumulative_sum", lambda m, x: m.cumulative_sum(x, axis=axis),
         lambda v: np.cumsum(v, axis=axis, dtype=np.result_type(v.dtype, np.int64)
                             if v.dtype.kind in "biu" else v.dtype)),
        ("diff", lambda m, x: xp.diff(x, axis=axis), lambda v: np.diff(v, axis=axis)),
        ("tensordot", lambda m, x: m.tensordot(x, x, axes=([axis], [axis])),
         lambda v: np.tensordot(v, v, axes=([axis], [axis]))),
    ]


@seed(SEED)
@SETTINGS
@given(layout=shapes_and_chunks(), dtype=st.sampled_from(["int32", "float64"]),
       data=st.data())
def test_manipulation_indexing_and_linalg_functions_match_numpy(layout, dtype, data):
    shape, chunks = layout
    if not shape:
        shape, chunks = (3,), (2,)
    axis = data.draw(st.integers(0, len(shape) - 1))
    other = data.draw(st.integers(0, len(shape) - 1))
    values = values_of(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), shape, dtype)
    x = tessera.asarray(values, chunks=chunks, spec=SPEC)
    for name, ours, theirs in _cases(shape, axis, other):
        got = ours(tessera, x).compute()
        expected = ours(np, values) if theirs is None else theirs(values)
        assert got.shape == expected.shape, name
        if dtype == "float64" and name in ("tensordot", "cumulative_sum"):
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-9, err_msg=name)
        else:
            np.testing.assert_array_equal(got, expected, err_msg=name)
