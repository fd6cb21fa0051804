"""The module against numpy: creation, elementwise functions and operators, reductions,
manipulation, and what a computed result is (a numpy array over the engine's memory)."""

import numpy as np
import pytest

import tessera


def random_array(rng, shape, dtype):
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(1, 50, size=shape).astype(dtype)
    return (rng.random(shape) * 10 + 0.5).astype(dtype)


def random_chunks(rng, shape):
    return tuple(int(rng.integers(1, extent + 1)) for extent in shape)


@pytest.mark.parametrize("shape", [(7,), (5, 6), (3, 4, 5)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8"])
def test_asarray_round_trips_any_chunking(rng, spec, shape, dtype):
    values = random_array(rng, shape, dtype)
    x = tessera.asarray(values, chunks=random_chunks(rng, shape), spec=spec)
    assert x.shape == shape and x.dtype == np.dtype(dtype) and x.nbytes == values.nbytes
    result = x.compute()
    assert result.dtype == values.dtype
    np.testing.assert_array_equal(result, values)


def test_asarray_shares_a_numpy_arrays_memory_unless_asked_to_copy(spec):
    values = np.arange(12.0).reshape(3, 4)
    shared = tessera.asarray(values, chunks=(2, 2), spec=spec)
    snapshot = tessera.asarray(values, chunks=(2, 2), spec=spec, copy=True)
    before = values.copy()
    values[1, 2] = -7.0  # before compute: the shared array sees it (copy=None, as numpy)
    np.testing.assert_array_equal(shared.compute(), values)
    np.testing.assert_array_equal(snapshot.compute(), before)
    # The lazy array holds a reference while it lives, and lets go of it afterwards.
    import sys
    held = np.ones(5)
    alone = sys.getrefcount(held)
    x = tessera.asarray(held, spec=spec)
    assert sys.getrefcount(held) == alone + 1
    del x
    assert sys.getrefcount(held) == alone


def test_asarray_copies_what_it_cannot_share_and_copy_false_says_so(spec):
    strided = np.arange(24.0).reshape(4, 6)[:, ::2]
    big_endian = np.arange(6, dtype=">f8").reshape(2, 3)
    unaligned = np.frombuffer(np.arange(4.0).tobytes() + b"\0", dtype="u1")[1:33].view("f8")
    assert not unaligned.flags.aligned
    for values in (strided, big_endian, unaligned, [[1, 2], [3, 4]], np.float32(2.5),
                   np.ones((0, 3))):
        expected = np.asarray(values)
        result = tessera.asarray(values, spec=spec).compute()
        assert result.shape == expected.shape and result.dtype == expected.dtype.newbyteorder("=")
        np.testing.assert_array_equal(result, expected)
    for values, reason in ((strided, "avoid copy"), (big_endian, "byte order"),
                           (unaligned, "not aligned")):
        with pytest.raises(ValueError, match=reason):
            tessera.asarray(values, spec=spec, copy=False)
    contiguous = np.arange(6.0)
    np.testing.assert_array_equal(tessera.asarray(contiguous, copy=False, spec=spec).compute(),
                                  contiguous)


def test_creation_functions_match_numpy(spec):
    np.testing.assert_array_equal(tessera.ones((3, 4), chunks=(2, 2), spec=spec).compute(), np.ones((3, 4)))
    np.testing.assert_array_equal(
        tessera.zeros((5,), dtype="int8", chunks=2, spec=spec).compute(), np.zeros(5, np.int8))
    full = tessera.full((2, 3), 7, chunks=(1, 3), spec=spec).compute()
    assert full.dtype == np.int64
    np.testing.assert_array_equal(full, np.full((2, 3), 7))
    np.testing.assert_array_equal(
        tessera.arange(0, 10, 3.0, chunks=2, spec=spec).compute(), np.arange(0, 10, 3.0))
    assert tessera.arange(5, spec=spec).dtype == np.arange(5).dtype == np.int64
    assert tessera.arange(0, 1, 0.25, spec=spec).dtype == np.float64
    np.testing.assert_array_equal(tessera.arange(5, spec=spec).compute(), np.arange(5))


UNARY = ["negative", "abs", "sqrt", "exp", "log", "log1p", "sin", "cos", "tanh", "floor",
         "ceil", "square", "isnan", "isfinite"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "pow", "atan2",
          "hypot", "equal", "less", "greater_equal"]
NUMPY_NAMES = {"pow": "power", "atan2": "arctan2"}


@pytest.mark.parametrize("name", UNARY)
def test_unary_functions_match_numpy(rng, spec, name):
    values = random_array(rng, (6, 7), "float64")
    x = tessera.asarray(values, chunks=(4, 3), spec=spec)
    expected = getattr(np, NUMPY_NAMES.get(name, name))(values)
    np.testing.assert_allclose(getattr(tessera, name)(x).compute(), expected, rtol=1e-12)


@pytest.mark.parametrize("name", BINARY)
def test_binary_functions_match_numpy_with_broadcasting(rng, spec, name):
    left = random_array(rng, (6, 7), "float64")
    right = random_array(rng, (7,), "float64")
    x = tessera.asarray(left, chunks=(4, 3), spec=spec)
    y = tessera.asarray(right, chunks=(3,), spec=spec)
    expected = getattr(np, NUMPY_NAMES.get(name, name))(left, right)
    np.testing.assert_allclose(getattr(tessera, name)(x, y).compute(), expected, rtol=1e-12)


def test_every_elementwise_function_of_the_engine_is_bound():
    for name in UNARY + BINARY + ["bitwise_and", "logaddexp", "copysign", "trunc", "sign"]:
        assert callable(getattr(tessera, name)), name


def test_operators_and_weak_python_scalars(rng, spec):
    values = random_array(rng, (5, 4), "float32")
    x = tessera.asarray(values, chunks=(2, 2), spec=spec)
    y = (2.0 * x + 1) / 3 - x ** 2
    assert y.dtype == np.float32  # Python numbers are weak: float32 stays float32
    np.testing.assert_allclose(y.compute(), (2.0 * values + 1) / 3 - values**2, rtol=1e-6)
    np.testing.assert_array_equal((x > 5).compute(), values > 5)
    np.testing.assert_array_equal((-x).compute(), -values)
    ints = tessera.asarray(np.arange(10, dtype=np.int32), chunks=3, spec=spec)
    np.testing.assert_array_equal((ints % 3).compute(), np.arange(10, dtype=np.int32) % 3)
    np.testing.assert_array_equal((7 // (ints + 1)).compute(), 7 // (np.arange(10, dtype=np.int32) + 1))
    assert (ints * 2).dtype == np.int32


def test_where_astype_and_matmul(rng, spec):
    a = random_array(rng, (6, 5), "float64")
    b = random_array(rng, (5, 4), "float64")
    x = tessera.asarray(a, chunks=(3, 2), spec=spec)
    y = tessera.asarray(b, chunks=(2, 4), spec=spec)
    np.testing.assert_allclose((x @ y).compute(), a @ b, rtol=1e-12)
    np.testing.assert_array_equal(tessera.where(x > 5, x, 0.0).compute(), np.where(a > 5, a, 0.0))
    np.testing.assert_array_equal(tessera.astype(x, "int16").compute(), a.astype(np.int16))
    np.testing.assert_array_equal(x.astype(np.float32).compute(), a.astype(np.float32))


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(rng, spec, axis, keepdims):
    values = random_array(rng, (9, 8), "float64")
    x = tessera.asarray(values, chunks=(4, 3), spec=spec)
    for name in ["sum", "prod", "mean", "min", "max"]:
        got = getattr(tessera, name)(x, axis=axis, keepdims=keepdims).compute()
        np.testing.assert_allclose(got, getattr(np, name)(values, axis=axis, keepdims=keepdims),
                                   rtol=1e-12, err_msg=name)
    np.testing.assert_allclose(tessera.var(x, axis=axis, correction=1, keepdims=keepdims).compute(),
                               np.var(values, axis=axis, ddof=1, keepdims=keepdims), rtol=1e-10)
    np.testing.assert_allclose(tessera.std(x, axis=axis, keepdims=keepdims).compute(),
                               np.std(values, axis=axis, keepdims=keepdims), rtol=1e-10)


def test_arg_reductions_and_logical_reductions(rng, spec):
    values = random_array(rng, (7, 6), "float64")
    x = tessera.asarray(values, chunks=(3, 4), spec=spec)
    np.testing.assert_array_equal(tessera.argmax(x, axis=0).compute(), np.argmax(values, axis=0))
    np.testing.assert_array_equal(tessera.argmin(x).compute(), np.argmin(values))
    np.testing.assert_array_equal(tessera.all(x > 0.4, axis=1).compute(), np.all(values > 0.4, axis=1))
    np.testing.assert_array_equal(tessera.any(x > 9, axis=0).compute(), np.any(values > 9, axis=0))


def test_manipulation_matches_numpy(rng, spec):
    values = random_array(rng, (4, 6), "float64")
    x = tessera.asarray(values, chunks=(3, 4), spec=spec)
    np.testing.assert_array_equal(tessera.permute_dims(x, (1, 0)).compute(), values.T)
    np.testing.assert_array_equal(tessera.reshape(x, (3, 8)).compute(), values.reshape(3, 8))
    np.testing.assert_array_equal(tessera.concat([x, x], axis=1).compute(), np.concatenate([values, values], axis=1))
    np.testing.assert_array_equal(tessera.stack([x, x]).compute(), np.stack([values, values]))
    np.testing.assert_array_equal(tessera.flip(x, axis=0).compute(), np.flip(values, axis=0))
    np.testing.assert_array_equal(tessera.expand_dims(x, axis=0).compute(), values[None])
    np.testing.assert_array_equal(x.rechunk((1, 6)).compute(), values)
    assert x.rechunk((1, 6)).chunksize == (1, 6)
    assert x.chunks == ((3, 1), (4, 2))


def test_a_computed_result_is_a_numpy_array_over_the_engines_memory(spec):
    x = tessera.ones((100, 100), chunks=(30, 30), spec=spec) * 3
    result = x.compute()
    assert isinstance(result, np.ndarray)
    assert not result.flags["OWNDATA"]  # the engine's buffer, not a copy numpy made
    assert np.shares_memory(result, np.asarray(result))
    del x
    assert float(result.sum()) == 30000.0  # the memory lives as long as the array


def test_compute_of_several_arrays_shares_one_plan(spec):
    x = tessera.arange(12, chunks=5, spec=spec)
    a, b = tessera.compute(x + 1, tessera.sum(x))
    np.testing.assert_array_equal(a, np.arange(12.0) + 1)
    assert float(b) == 66.0


@pytest.mark.parametrize("key", [
    3, -1, slice(1, 5), slice(None, None, 2), slice(None, None, -3), (Ellipsis, 2),
    (None, slice(2, 7), 1), (slice(8, 1, -2), slice(None, None, 4)), (), Ellipsis,
])
def test_basic_indexing_matches_numpy(rng, spec, key):
    values = random_array(rng, (9, 11), "float64")
    x = tessera.asarray(values, chunks=(4, 3), spec=spec)
    expected = values[key]
    got = x[key]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.compute(), expected)


def test_unsupported_indices_say_so(spec):
    x = tessera.ones((4, 4), chunks=2, spec=spec)
    with pytest.raises(NotImplementedError, match="boolean-mask indexing is not implemented yet"):
        x[np.array([True, False, True, False])]
    with pytest.raises(IndexError, match="index 10 is out of bounds for axis 0 with size 4"):
        x[10]
    with pytest.raises(IndexError, match="only integers, slices"):
        x[1.5]


def test_the_array_api_namespace(spec):
    import tessera.array_api as xp

    a = xp.asarray([[1, 2], [3, 4]], chunks=(1, 2), spec=spec)
    assert a.__array_namespace__() is xp and xp.__array_api_version__ == "2024.12"
    b = xp.astype(xp.ones((2, 2), dtype=xp.int8, chunks=(1, 2), spec=spec), xp.float32)
    assert b.dtype == xp.float32
    np.testing.assert_array_equal(xp.add(a, b).compute(), np.array([[2, 3], [4, 5]], np.float32))
    np.testing.assert_array_equal(a.T.compute(), np.array([[1, 3], [2, 4]]))
    assert xp.isdtype(xp.int8, "signed integer") and not xp.isdtype(xp.uint8, "signed integer")
    assert xp.isdtype(xp.float32, ("integral", "real floating"))
    info = xp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == xp.float64
    assert set(info.dtypes(kind="unsigned integer")) == {"uint8", "uint16", "uint32", "uint64"}
    with pytest.raises(NotImplementedError, match="sort.*later"):
        xp.sort(a)


@pytest.mark.parametrize("key", [
    3, -1, slice(1, 5), slice(None, None, 2), slice(8, 1, -3), (Ellipsis, 2),
    (slice(2, 7), 1), (slice(1, None, 4), slice(None, None, -2)), Ellipsis,
])
def test_setitem_is_a_lazy_update_matching_numpy(rng, spec, key):
    values = random_array(rng, (9, 11), "float64")
    x = tessera.asarray(values, chunks=(4, 3), spec=spec)
    derived = x * 1  # built from x before the update
    x[key] = -1.5
    expected = values.copy()
    expected[key] = -1.5
    np.testing.assert_array_equal(x.compute(), expected)
    np.testing.assert_array_equal(derived.compute(), values)  # what was built before keeps its values
    assert x.dtype == np.float64


def test_setitem_with_an_array_and_the_errors(spec):
    x = tessera.zeros((4, 5), dtype="int32", chunks=2, spec=spec)
    x[1:3] = tessera.arange(5, spec=spec)  # broadcasts to the region (2, 5)
    expected = np.zeros((4, 5), np.int32)
    expected[1:3] = np.arange(5)
    np.testing.assert_array_equal(x.compute(), expected)
    assert x.dtype == np.int32
    with pytest.raises(ValueError, match="does not broadcast to the selected region"):
        x[1:3] = tessera.ones((2, 2), spec=spec)
    with pytest.raises(IndexError):
        x[9] = 1
    with pytest.raises(IndexError, match="out of bounds"):
        x[np.array([0, 7])] = 1
    with pytest.raises(NotImplementedError, match="boolean-mask"):
        x[np.array([True, False, True, False])] = 1


def test_clip_moveaxis_diff_and_meshgrid_match_numpy(rng, spec):
    import tessera.array_api as xp

    values = random_array(rng, (4, 5, 6), "float64")
    x = xp.asarray(values, chunks=(2, 3, 4), spec=spec)
    np.testing.assert_array_equal(xp.clip(x, 2.0, 7.5).compute(), np.clip(values, 2.0, 7.5))
    np.testing.assert_array_equal(xp.clip(x, max=3.0).compute(), np.minimum(values, 3.0))
    np.testing.assert_array_equal(xp.moveaxis(x, 0, -1).compute(), np.moveaxis(values, 0, -1))
    np.testing.assert_array_equal(xp.moveaxis(x, (0, 2), (2, 0)).compute(),
                                  np.moveaxis(values, (0, 2), (2, 0)))
    for axis, n in ((-1, 1), (0, 2), (1, 1)):
        np.testing.assert_allclose(xp.diff(x, axis=axis, n=n).compute(),
                                   np.diff(values, axis=axis, n=n))
    a = xp.arange(3, spec=spec)
    b = xp.arange(4, spec=spec)
    for indexing in ("xy", "ij"):
        for got, expected in zip(xp.meshgrid(a, b, indexing=indexing),
                                 np.meshgrid(np.arange(3), np.arange(4), indexing=indexing)):
            np.testing.assert_array_equal(got.compute(), expected)


def test_dlpack_and_the_buffer_protocol_share_the_engines_memory(spec):
    x = tessera.arange(12, dtype="float32", chunks=5, spec=spec) * 2
    result = x.compute()
    # Other libraries see the computed values without a copy: DLPack and the buffer protocol.
    assert np.shares_memory(result, np.from_dlpack(result))
    view = memoryview(result)
    assert view.format == "f" and view.nbytes == 48
    assert np.shares_memory(result, np.frombuffer(view, dtype=np.float32))
    # A lazy array exports too: computed once, then handed out.
    assert x.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(x), np.arange(12, dtype=np.float32) * 2)
    # And imports any exporter.
    imported = tessera.from_dlpack(np.arange(6).reshape(2, 3), chunks=(1, 3), spec=spec)
    assert imported.chunksize == (1, 3)
    np.testing.assert_array_equal(imported.compute(), np.arange(6).reshape(2, 3))
    with pytest.raises(ValueError, match="live on the CPU"):
        tessera.from_dlpack(result, device="cuda")


def test_one_element_arrays_convert_to_python_numbers(spec):
    import operator

    x = tessera.asarray(np.array([[7]], dtype="int16"), spec=spec)
    assert int(x) == 7 and operator.index(x) == 7 and float(x) == 7.0 and bool(x)
    assert complex(tessera.asarray(np.array(2.5), spec=spec)) == 2.5 + 0j
    assert [10, 20, 30, 40, 50, 60, 70, 80][x] == 80  # usable as an index
    with pytest.raises(TypeError, match="index"):
        operator.index(tessera.asarray(np.array(1.5), spec=spec))
    many = tessera.ones((3,), spec=spec)
    with pytest.raises(ValueError, match="1-element"):
        bool(many)  # numpy's error for an ambiguous truth value
    with pytest.raises(TypeError, match="1-element"):
        float(many)
