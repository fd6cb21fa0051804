"""Integer-array indexing, take, take_along_axis, x[key] = region-shaped values, the
cumulative functions and the functions made of others, against numpy on random shapes,
chunkings and keys (hypothesis; replay a failure with the seed it prints)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tessera
import tessera.array_api as xp


def test_integer_array_keys_match_numpy(spec):
    values = np.arange(60.0).reshape(3, 4, 5)
    x = tessera.asarray(values, chunks=(2, 3, 2), spec=spec)
    keys = [
        np.array([2, 0, 2]),
        (slice(None), [3, 1]),
        (0, slice(None), [4, 0, 1]),        # not adjacent: the broadcast axes go first
        ([0, 2], [1, 3]),                   # two arrays: pointwise pairs
        (slice(None), [[0, 1], [2, 3]], [0, 4]),
        ([1, 2], slice(None), [0, 3]),
        (Ellipsis, [1, -1]),
        (1, [0, 2], slice(1, 3)),
        ([[1], [2]], 0, [0, 1, 2]),
        (None, [2, 1], slice(None, None, -2)),
        np.int64(1),
        ([], slice(None)),
    ]
    for key in keys:
        result = x[key].compute()
        assert result.shape == values[key].shape, key
        np.testing.assert_array_equal(result, values[key])


def test_index_arrays_may_be_tessera_arrays_and_errors_say_what_was_wrong(spec):
    values = np.arange(10) * 3
    x = tessera.asarray(values, chunks=4, spec=spec)
    where = tessera.asarray(np.array([9, 0, 4]), chunks=2, spec=spec)
    np.testing.assert_array_equal(x[where].compute(), values[[9, 0, 4]])
    with pytest.raises(IndexError, match="index 10 is out of bounds for an axis of size 10"):
        x[[1, 10]]
    with pytest.raises(IndexError, match="do not broadcast"):
        tessera.ones((3, 3), spec=spec)[[0, 1], [0, 1, 2]]
    with pytest.raises(NotImplementedError, match="boolean-mask indexing"):
        x[values > 5]
    with pytest.raises(IndexError, match="integer arrays"):
        x[np.array([0.5])]


def test_take_reads_one_block_and_one_chunk_per_task(spec):
    values = np.arange(1000.0)
    x = tessera.asarray(values, chunks=100, spec=spec)
    indices = np.random.default_rng(0).permutation(1000)[:300]
    taken = xp.take(x, indices, axis=0)
    np.testing.assert_array_equal(taken.compute(), values[indices])
    # Whatever the order of the indices, the plan gives a task its output block (100
    # float64) and at most one input chunk at a time (100 float64), not the whole input.
    (op,) = tessera.plan(taken).ops
    assert op.kind == "gather" and 100 * 8 < op.projected_mem <= 2 * 100 * 8
    with pytest.raises(ValueError, match="give the axis"):
        xp.take(tessera.ones((2, 2), spec=spec), [0])


def test_take_along_axis_matches_numpy(rng, spec):
    values = rng.random((4, 6, 5))
    x = tessera.asarray(values, chunks=(3, 4, 2), spec=spec)
    for axis in (0, 1, -1):
        order = np.argsort(values, axis=axis)
        np.testing.assert_array_equal(xp.take_along_axis(x, order, axis=axis).compute(),
                                      np.take_along_axis(values, order, axis=axis))
    first = np.zeros((4, 1, 5), np.int64)  # broadcasts along the taken axis's length
    np.testing.assert_array_equal(xp.take_along_axis(x, first, axis=1).compute(),
                                  np.take_along_axis(values, first, axis=1))


@pytest.mark.parametrize("key, value_shape", [
    ((slice(None), 1), (4,)),                       # a column: not x's broadcast
    ((slice(1, 3), slice(None, None, 2)), (2, 3)),
    ((slice(None, None, -1), slice(3, 0, -2)), (4, 2)),
    ((Ellipsis, 0), (1,)),
    (([3, 0],), (2, 5)),
    ((slice(None), [4, 0, 4]), (3,)),               # repeated index: the last value lands
])
def test_setitem_places_region_shaped_values_as_numpy(rng, spec, key, value_shape):
    values = rng.integers(0, 100, (4, 5)).astype(np.int32)
    x = tessera.asarray(values, chunks=(3, 2), spec=spec)
    value = rng.integers(100, 200, value_shape)
    x[key] = tessera.asarray(value, spec=spec)
    expected = values.copy()
    expected[key] = value
    np.testing.assert_array_equal(x.compute(), expected)
    y = tessera.asarray(values, chunks=(3, 2), spec=spec)
    y[key] = value  # a numpy value too
    np.testing.assert_array_equal(y.compute(), expected)


@pytest.mark.parametrize("function, reference", [
    (tessera.cumulative_sum, np.cumsum), (tessera.cumulative_prod, np.cumprod)])
def test_cumulative_functions_match_numpy(rng, spec, function, reference):
    values = rng.random((7, 9, 4)) + 0.5
    x = tessera.asarray(values, chunks=(2, 4, 3), spec=spec)
    for axis in (0, 1, 2, -1):
        np.testing.assert_allclose(function(x, axis=axis).compute(), reference(values, axis=axis),
                                   rtol=1e-12)
    ints = rng.integers(-3, 4, 40).astype(np.int8)
    small = tessera.asarray(ints, chunks=3, spec=spec)
    result = function(small).compute()
    assert result.dtype == np.int64  # as sum's, not int8's
    np.testing.assert_array_equal(result, reference(ints, dtype=np.int64))
    initial = function(small, include_initial=True).compute()
    assert initial.shape == (41,) and initial[0] == (0 if function is tessera.cumulative_sum else 1)
    np.testing.assert_array_equal(initial[1:], result)
    with pytest.raises(ValueError, match="give the axis"):
        function(x)


def test_composed_functions_match_numpy(rng, spec):
    values = rng.random((5, 6)) - 0.5
    x = tessera.asarray(values, chunks=(2, 4), spec=spec)
    for k in (-2, 0, 3):
        np.testing.assert_array_equal(xp.tril(x, k=k).compute(), np.tril(values, k=k))
        np.testing.assert_array_equal(xp.triu(x, k=k).compute(), np.triu(values, k=k))
        np.testing.assert_array_equal(xp.eye(4, 6, k=k, chunks=3, spec=spec).compute(),
                                      np.eye(4, 6, k=k))
    np.testing.assert_allclose(xp.linspace(-1, 2, 13, spec=spec).compute(), np.linspace(-1, 2, 13))
    np.testing.assert_allclose(xp.linspace(0, 1, 4, endpoint=False, spec=spec).compute(),
                               np.linspace(0, 1, 4, endpoint=False))
    assert xp.linspace(0, 1, 7, spec=spec).compute()[-1] == 1.0
    for got, want in zip(xp.unstack(x, axis=1), np.moveaxis(values, 1, 0)):
        np.testing.assert_array_equal(got.compute(), want)
    np.testing.assert_array_equal(xp.reciprocal(x).compute(), 1 / values)
    special = xp.asarray(np.array([-0.0, 0.0, -1.5, np.inf, -np.nan, np.nan]), spec=spec)
    np.testing.assert_array_equal(xp.signbit(special).compute(),
                                  np.signbit(np.array([-0.0, 0.0, -1.5, np.inf, -np.nan, np.nan])))
    toward = xp.asarray(np.array([2.0, -np.inf, 0.0, 1.0, 0.0, 1.0]), spec=spec)
    np.testing.assert_array_equal(xp.nextafter(special, toward).compute(),
                                  np.nextafter(special.compute(), toward.compute()))
    np.testing.assert_array_equal(xp.roll(x, (2, -1), axis=(0, 1)).compute(),
                                  np.roll(values, (2, -1), axis=(0, 1)))
    np.testing.assert_array_equal(xp.broadcast_to(x[0], (3, 6)).compute(),
                                  np.broadcast_to(values[0], (3, 6)))


@st.composite
def indexed_arrays(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, n)) for n in shape)
    key = []
    for extent in shape:
        kind = draw(st.sampled_from(["slice", "int", "array"]))
        if kind == "slice":
            start = draw(st.none() | st.integers(-extent, extent))
            stop = draw(st.none() | st.integers(-extent, extent))
            step = draw(st.none() | st.sampled_from([1, 2, -1, -3]))
            key.append(slice(start, stop, step))
        elif kind == "int":
            key.append(draw(st.integers(-extent, extent - 1)))
        else:
            key.append(draw(st.lists(st.integers(-extent, extent - 1), min_size=1, max_size=4)))
    return shape, chunks, tuple(key)


@settings(max_examples=60, deadline=None)
@given(indexed_arrays())
def test_random_keys_with_one_array_match_numpy(case):
    shape, chunks, key = case
    spec = tessera.Spec(allowed_mem="100MB")
    values = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
    x = tessera.asarray(values, chunks=chunks, spec=spec)
    arrays = [at for at, item in enumerate(key) if isinstance(item, list)]
    if len(arrays) > 1:
        # numpy pairs several arrays pointwise: they must broadcast together.
        lengths = {len(key[at]) for at in arrays}
        if len(lengths - {1}) > 1:
            return
    expected = values[key]
    np.testing.assert_array_equal(x[key].compute(), expected)


def test_repeat_with_a_count_per_element_matches_numpy(spec):
    values = np.arange(12).reshape(3, 4)
    x = tessera.asarray(values, chunks=(2, 3), spec=spec)
    counts = np.array([2, 0, 1, 3])
    np.testing.assert_array_equal(xp.repeat(x, counts, axis=1).compute(),
                                  np.repeat(values, counts, axis=1))
    np.testing.assert_array_equal(xp.repeat(x, 2, axis=0).compute(), np.repeat(values, 2, axis=0))
    np.testing.assert_array_equal(xp.repeat(x, np.arange(12) % 3).compute(),
                                  np.repeat(values, np.arange(12) % 3))
    with pytest.raises(ValueError, match="one count per element"):
        xp.repeat(x, np.array([1, 2]), axis=0)
