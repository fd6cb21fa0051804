"""x[key] = value as a lazy update (Array.__setitem__): x becomes where(mask, value, x),
mask being true on the elements `key` selects, made from comparisons of aranges (no
array of the mask is ever stored), so the update costs one elementwise pass, fused with
what reads it."""

import operator

import tessera


def _items(key, ndim):
    key = key if isinstance(key, tuple) else (key,)
    if any(item is None for item in key):
        raise IndexError("x[...] = value: None (a new axis) cannot be assigned to")
    if sum(item is Ellipsis for item in key) > 1:
        raise IndexError("x[...] = value: an index can have only one ellipsis")
    ellipses = [at for at, item in enumerate(key) if item is Ellipsis]
    if ellipses:
        at = ellipses[0]
        key = key[:at] + (slice(None),) * (ndim - len(key) + 1) + key[at + 1:]
    if len(key) > ndim:
        raise IndexError(f"x[...] = value: too many indices ({len(key)}) for {ndim} dimensions")
    return key + (slice(None),) * (ndim - len(key))


def _selected(item, extent, chunk, spec):
    """The elements of one dimension `item` selects, as a lazy bool array (None: all)."""
    if isinstance(item, slice):
        start, stop, step = item.indices(extent)
        if (start, stop, step) == (0, extent, 1):
            return None
        index = tessera.arange(extent, chunks=chunk, spec=spec)
        if step > 0:
            mask = (index >= start) & (index < stop)
            return mask if step == 1 else mask & ((index - start) % step == 0)
        mask = (index <= start) & (index > stop)
        return mask & ((start - index) % (-step) == 0)
    try:
        position = operator.index(item)
    except TypeError:
        raise IndexError(
            "x[...] = value: only integers, slices and ... can be assigned to (integer-array "
            f"and boolean indexing are not supported yet), got {item!r}") from None
    if not -extent <= position < extent:
        raise IndexError(f"x[...] = value: index {position} is out of range for extent {extent}")
    return tessera.arange(extent, chunks=chunk, spec=spec) == position % extent


def updated(x, key, value):
    mask = None
    for axis, item in enumerate(_items(key, x.ndim)):
        selected = _selected(item, x.shape[axis], x.chunksize[axis], x.spec)
        if selected is None:
            continue
        shape = [1] * x.ndim
        shape[axis] = x.shape[axis]
        selected = tessera.reshape(selected, tuple(shape))
        mask = selected if mask is None else mask & selected
    if isinstance(value, tessera.Array):
        try:
            tessera.broadcast_arrays([value, x])
        except ValueError:
            raise NotImplementedError(
                "x[...] = array: the array must broadcast to x's whole shape; placing an array "
                "of the selected region's shape comes later (assign a scalar, or an array "
                "of x's shape)") from None
    if mask is None:
        mask = tessera.full(x.shape, True, chunks=x.chunksize, spec=x.spec)
    return tessera.astype(tessera.where(mask, value, x), x.dtype)
