"""Integer-array indexing, take and take_along_axis, made of the engine's take (a gather
whose tasks read only the chunks their indices fall in) and basic indexing.

numpy's rules: integer arrays (and integers, when arrays are present) are advanced
indices, broadcast together to a shape B; the result has B where the first of them
was when they are next to each other in the key, else B first. Index arrays are
concrete: numpy arrays, lists, or Tessera arrays (computed first: their values decide
which chunks are read).
"""

import math
import operator

from typing import Any, Callable

import numpy as np
import numpy.typing as npt

from . import _tessera
from ._tessera import Array

IntArray = npt.NDArray[np.integer[Any]]

# The engine's take (x, a 1-d C-contiguous int64 array of indices in range, axis);
# private to the module, so its stub leaves it out.
_take: Callable[[Array, npt.NDArray[np.int64], int], Array] = getattr(_tessera, "_take")


def _concrete_indices(item: Any) -> IntArray:
    """An index item as an integer numpy array; IndexError for anything else."""
    if isinstance(item, _tessera.Array):
        item = item.compute()
    values = np.asarray(item)
    if values.dtype == np.bool_:
        raise NotImplementedError(
            "boolean-mask indexing is not implemented yet: it makes data-dependent shapes, "
            "which come with a later release of Tessera (use where(mask, x, fill) meanwhile)")
    if values.size == 0 and values.dtype.kind not in "iu":
        values = values.astype(np.int64)  # [] indexes nothing
    if values.dtype.kind not in "iu":
        raise IndexError(
            "only integers, slices, ..., None and integer arrays index a tessera array, got "
            f"{item!r} (of dtype {values.dtype})")
    return values


def _normalized(values: IntArray, extent: int, what: str) -> npt.NDArray[np.int64]:
    """values in [0, extent) as int64 (negatives count from the end); IndexError else."""
    values = values.astype(np.int64, copy=False)
    if values.size and (values.min() < -extent or values.max() >= extent):
        bad = values[(values < -extent) | (values >= extent)].flat[0]
        raise IndexError(f"{what}: index {bad} is out of bounds for an axis of size {extent} "
                         f"(use {-extent} to {extent - 1})")
    return np.where(values < 0, values + extent, values)


def take(x: Array, indices: Any, /, *, axis: int | None = None) -> Array:
    """The elements of x at `indices` (a 1-d integer array) along `axis` (needed unless x is
    1-d); lazy: a task reads only the chunks its indices are in."""
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"take: x has {x.ndim} dimensions; give the axis to take along")
        axis = 0
    axis = operator.index(axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"take: axis {axis} is out of range for an array of {x.ndim} "
                         f"dimensions (use {-x.ndim} to {x.ndim - 1})")
    axis %= x.ndim
    values = _concrete_indices(indices)
    if values.ndim != 1:
        raise ValueError(f"take: indices must be 1-d, got an array of shape {values.shape}")
    flat = np.ascontiguousarray(_normalized(values, x.shape[axis], "take"))
    return _take(x, flat, axis)


def take_along_axis(x: Array, indices: Any, /, *, axis: int = -1) -> Array:
    """out[..., j, ...] = x[..., indices[..., j, ...], ...] along `axis`: indices has x's
    number of dimensions and broadcasts with x on the other axes (numpy's
    take_along_axis)."""
    values = _concrete_indices(indices)
    if values.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices have {values.ndim} dimensions, x has "
                         f"{x.ndim}; give indices with as many")
    axis = operator.index(axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"take_along_axis: axis {axis} is out of range for an array of "
                         f"{x.ndim} dimensions")
    axis %= x.ndim
    key = []
    for d in range(x.ndim):
        if d == axis:
            key.append(values)
        else:
            shape = [1] * x.ndim
            shape[d] = x.shape[d]
            key.append(np.arange(x.shape[d]).reshape(shape))
    try:
        np.broadcast_shapes(*(k.shape for k in key))
    except ValueError:
        raise ValueError(f"take_along_axis: indices of shape {values.shape} do not broadcast "
                         f"with x of shape {x.shape} on the axes other than {axis}") from None
    return _advanced(x, tuple(key), list(range(x.ndim)), adjacent=True)


def _expanded(key: Any, ndim: int) -> tuple[Any, ...]:
    """The key as a tuple with its ellipsis spelled out as slices."""
    items: tuple[Any, ...] = key if isinstance(key, tuple) else (key,)
    ellipses = [at for at, item in enumerate(items) if item is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for item in items if item is not None and item is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"too many indices for an array of {ndim} dimensions: {consumed} "
                         "were indexed")
    fill = (slice(None),) * (ndim - consumed)
    if ellipses:
        at = ellipses[0]
        return items[:at] + fill + items[at + 1:]
    return items + fill


def _is_basic(item: Any) -> bool:
    return (item is None or isinstance(item, slice)
            or (isinstance(item, int) and not isinstance(item, bool)))


def getitem(x: Array, key: Any) -> Array:
    """x[key] with integer arrays among the items (Array.__getitem__ hands them here)."""
    key = _expanded(key, x.ndim)
    advanced = [at for at, item in enumerate(key) if not _is_basic(item)]
    integers = [at for at, item in enumerate(key)
                if isinstance(item, int) and not isinstance(item, bool)]
    positions = sorted(advanced + integers)
    adjacent = positions == list(range(positions[0], positions[-1] + 1))
    if adjacent:
        # Integers next to the arrays index as basic ones do, with the same result.
        advanced_items = set(advanced)
    else:
        advanced_items = set(positions)
    # Basic indexing first, every advanced item kept as a whole axis; then the advanced
    # items index the axes they stand on.
    basic: list[Any] = []
    axes: list[int] = []  # the axis of the basic result each advanced item indexes
    arrays: list[IntArray] = []
    axis = 0
    for at, item in enumerate(key):
        if at in advanced_items:
            basic.append(slice(None))
            axes.append(axis)
            arrays.append(np.asarray(item) if isinstance(item, int) else _concrete_indices(item))
            axis += 1
        elif isinstance(item, int):
            basic.append(item)  # drops its axis
        else:
            basic.append(item)
            axis += 1
    y = x[tuple(basic)] if any(not (isinstance(b, slice) and b == slice(None)) for b in basic) \
        else x
    return _advanced(y, tuple(arrays), axes, adjacent)


def _advanced(y: Array, arrays: tuple[IntArray, ...], axes: list[int],
              adjacent: bool) -> Array:
    """y indexed by integer arrays `arrays` on its axes `axes` (every other axis whole)."""
    try:
        broadcast = np.broadcast_arrays(*arrays)
    except ValueError:
        shapes = ", ".join(str(np.shape(a)) for a in arrays)
        raise IndexError(f"the index arrays do not broadcast together: shapes {shapes}") from None
    shape_b = broadcast[0].shape if broadcast else ()
    normalized = [_normalized(values, y.shape[axis], "index")
                  for values, axis in zip(broadcast, axes)]
    rest = [d for d in range(y.ndim) if d not in axes]
    rest_shape = tuple(y.shape[d] for d in rest)
    if len(axes) == 1:
        (axis,) = axes
        flat = np.ascontiguousarray(normalized[0].reshape(-1))
        taken = _take(y, flat, axis)
        shape = y.shape[:axis] + shape_b + y.shape[axis + 1:]
        if len(shape_b) == 1:
            return taken
        return _tessera.reshape(taken, shape)
    # Several: the indexed axes first, merged into one, indexed by the flat positions.
    front = _tessera.permute_dims(y, list(axes) + rest) if list(axes) != list(range(len(axes))) \
        else y
    extents = tuple(y.shape[axis] for axis in axes)
    merged = _tessera.reshape(front, (math.prod(extents),) + rest_shape)
    flat = np.ascontiguousarray(
        np.ravel_multi_index(tuple(n.reshape(-1) for n in normalized), extents)
        if math.prod(extents) else np.zeros(0, np.int64), dtype=np.int64)
    taken = _take(merged, flat, 0)
    result = _tessera.reshape(taken, shape_b + rest_shape)
    if not adjacent or axes[0] == 0:
        return result
    # Adjacent arrays put B where the first of them was.
    nb, first = len(shape_b), axes[0]
    order = list(range(nb, nb + first)) + list(range(nb)) + list(range(nb + first, result.ndim))
    return _tessera.permute_dims(result, order)


def repeat(x: Array, repeats: Any, /, *, axis: int | None = None) -> Array:
    """Each element of x repeated `repeats` times along `axis` (x flattened when None):
    an int for all, or a 1-d integer array with one count per element (a take)."""
    if isinstance(repeats, int) and not isinstance(repeats, bool):
        return _tessera.repeat(x, repeats, axis=axis)
    counts = _concrete_indices(repeats)
    if axis is None:
        x = _tessera.reshape(x, (x.size,))
        axis = 0
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"repeat: axis {axis} is out of range for {x.ndim} dimensions")
    axis %= x.ndim
    extent = x.shape[axis]
    if counts.ndim == 0 or counts.shape == (1,):
        return _tessera.repeat(x, int(counts.reshape(())), axis=axis)
    if counts.shape != (extent,):
        raise ValueError(f"repeat: {counts.shape[0] if counts.ndim == 1 else counts.shape} "
                         f"counts for an axis of {extent} elements; give one count per element")
    if (counts < 0).any():
        raise ValueError("repeat: counts must be 0 or more")
    positions = np.repeat(np.arange(extent, dtype=np.int64), counts)
    return _take(x, np.ascontiguousarray(positions), axis)
