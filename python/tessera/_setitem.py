"""x[key] = value as a lazy update (Array.__setitem__): x becomes where(mask, placed, x).

mask is true on the elements `key` selects, made per axis (comparisons of aranges for
integers and slices, a small stored bool vector for an integer array) and combined by
broadcasting, so no array of x's size is stored for it. placed is the value in x's
frame: the value broadcast to the selected region's shape (numpy's rule), then spread
over x's extent by a take per indexed axis (element i of the axis reads the region's
element that lands on i). The update costs one elementwise pass, fused with what reads
it; other arrays built from x before keep their values.
"""

import operator

import numpy as np

import tessera

from . import _tessera
from ._indexing import _concrete_indices, _expanded, _normalized, _take


def _items(key, ndim):
    """The key as one item per axis of x (its ellipsis spelled out, the rest padded)."""
    items = key if isinstance(key, tuple) else (key,)
    if any(item is None for item in items):
        raise IndexError("x[...] = value: None (a new axis) cannot be assigned to")
    try:
        return _expanded(items, ndim)
    except IndexError as error:
        raise IndexError(f"x[...] = value: {error}") from None


class _AxisSelection:
    """What one item of the key selects along an axis of `extent`: `mask` (a lazy bool
    vector, None for all of it), `length` (the region's extent, None when the item drops
    the axis) and `table` (per index of the axis, the region's index placed there;
    None when that is the identity)."""

    def __init__(self, item, extent, chunk, spec):
        self.mask, self.table, self.length = None, None, extent
        if isinstance(item, slice):
            start, stop, step = item.indices(extent)
            self.length = len(range(start, stop, step))
            if (start, stop, step) == (0, extent, 1):
                return
            index = tessera.arange(extent, chunks=chunk, spec=spec)
            if step > 0:
                mask = (index >= start) & (index < stop)
                self.mask = mask if step == 1 else mask & ((index - start) % step == 0)
            else:
                mask = (index <= start) & (index > stop)
                self.mask = mask & ((start - index) % (-step) == 0)
            self.table = np.clip((np.arange(extent) - start) // step, 0,
                                 max(self.length - 1, 0))
            return
        if isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
            position = operator.index(item)
            if not -extent <= position < extent:
                raise IndexError(
                    f"x[...] = value: index {position} is out of range for extent {extent}")
            self.mask = tessera.arange(extent, chunks=chunk, spec=spec) == position % extent
            self.table = np.zeros(extent, np.int64)
            self.length = None
            return
        try:
            values = _concrete_indices(item)
        except IndexError:
            raise IndexError("x[...] = value: only integers, slices, ... and integer arrays can "
                             f"be assigned to, got {item!r}") from None
        if values.ndim != 1:
            raise NotImplementedError(
                "x[...] = value: an integer array of more than one dimension in an assignment "
                "comes later; give a 1-d array of indices")
        positions = _normalized(values, extent, "x[...] = value")
        selected = np.zeros(extent, bool)
        selected[positions] = True
        self.mask = tessera.asarray(selected, chunks=chunk, spec=spec)
        # Where an index is given twice, the last value given lands (numpy's order).
        self.table = np.zeros(extent, np.int64)
        self.table[positions] = np.arange(len(positions))
        self.length = len(positions)


def _placed(value, selections, x):
    """The value in x's frame: broadcast to the region, then taken onto every axis."""
    region = tuple(s.length for s in selections if s.length is not None)
    if not isinstance(value, _tessera.Array):
        value = tessera.asarray(np.asarray(value), spec=x.spec)
    try:
        value = tessera.broadcast_to(value, region)
    except ValueError:
        raise ValueError(f"x[...] = value: a value of shape {value.shape} does not broadcast to "
                         f"the selected region's shape {region}") from None
    for axis, selection in enumerate(selections):
        if selection.length is None:
            value = tessera.expand_dims(value, axis=axis)
        if selection.table is not None:
            value = _take(value, np.ascontiguousarray(selection.table, np.int64), axis)
    return value


def updated(x, key, value):
    items = _items(key, x.ndim)
    if sum(1 for item in items if not isinstance(item, (slice, int, np.integer))) > 1:
        raise NotImplementedError(
            "x[...] = value with integer arrays on more than one axis comes later; index "
            "one axis by an array at a time")
    selections = [_AxisSelection(item, x.shape[axis], x.chunksize[axis], x.spec)
                  for axis, item in enumerate(items)]
    mask = None
    for axis, selection in enumerate(selections):
        if selection.mask is None:
            continue
        shape = [1] * x.ndim
        shape[axis] = x.shape[axis]
        selected = tessera.reshape(selection.mask, tuple(shape))
        mask = selected if mask is None else mask & selected
    if isinstance(value, (bool, int, float, complex)):
        placed = value  # a Python scalar: weak, x keeps its dtype
    else:
        placed = _placed(value, selections, x)
    if mask is None:
        mask = tessera.full(x.shape, True, chunks=x.chunksize, spec=x.spec)
    return tessera.astype(tessera.where(mask, placed, x), x.dtype)
