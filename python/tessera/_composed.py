"""Functions of the array API standard made of other lazy functions: no kernel of their
own, so they fuse with what reads them and are planned like any other array.

    xp.eye(4, k=1, chunks=2, spec=spec)     # (i + 1 == j) as float64, never stored
    xp.linspace(0, 1, 11, spec=spec)
    xp.tril(x, k=-1); xp.unstack(x, axis=1)
"""

from typing import Any, Optional

import numpy as np

from . import _tessera
from ._tessera import Array, Spec

DTypeLike = Any  # a numpy dtype, its name or a numpy scalar type
Chunks = Any     # an int, a tuple of ints, or None (the engine's choice)


def _spec_of(spec: Optional[Spec]) -> Spec:
    return spec if spec is not None else _tessera.Spec()


def _float_dtype(dtype: DTypeLike) -> np.dtype[Any]:
    return np.dtype("float64") if dtype is None else np.dtype(dtype)


def empty(shape: Any, *, dtype: DTypeLike = None, device: Any = None, chunks: Chunks = None,
          spec: Optional[Spec] = None) -> Array:
    """An array of `shape` whose values are unspecified (Tessera gives zeros, never stored)."""
    return _tessera.zeros(shape, dtype=_float_dtype(dtype), chunks=chunks, spec=spec)


def empty_like(x: Array, /, *, dtype: DTypeLike = None, device: Any = None) -> Array:
    """An array like x (shape, chunks, spec; dtype unless given) of unspecified values (zeros)."""
    return _tessera.zeros_like(x, dtype=dtype)


def eye(n_rows: int, n_cols: Optional[int] = None, /, *, k: int = 0, dtype: DTypeLike = None,
        device: Any = None, chunks: Chunks = None, spec: Optional[Spec] = None) -> Array:
    """Ones on the k-th diagonal (k > 0 above, k < 0 below), zeros elsewhere: a lazy
    comparison of two aranges, so no block of it is stored."""
    n_cols = n_rows if n_cols is None else n_cols
    spec = _spec_of(spec)
    shape = (n_rows, n_cols)
    grid = _tessera.zeros(shape, dtype="int64", chunks=chunks, spec=spec)
    row_chunk, col_chunk = grid.chunksize
    rows = _tessera.reshape(_tessera.arange(n_rows, chunks=row_chunk, spec=spec), (n_rows, 1))
    cols = _tessera.reshape(_tessera.arange(n_cols, chunks=col_chunk, spec=spec), (1, n_cols))
    return _tessera.astype((rows + k) == cols, _float_dtype(dtype))


def linspace(start: complex, stop: complex, /, num: int, *, dtype: DTypeLike = None,
             device: Any = None, endpoint: bool = True, chunks: Chunks = None,
             spec: Optional[Spec] = None) -> Array:
    """num evenly spaced values from start to stop (included when endpoint); lazy. Complex
    start or stop give complex128 (or the complex dtype asked for)."""
    if num < 0:
        raise ValueError(f"linspace: num must be 0 or more, got {num}")
    is_complex = isinstance(start, complex) or isinstance(stop, complex)
    if dtype is None and is_complex:
        dtype = "complex128"
    dtype = _float_dtype(dtype)
    if is_complex and dtype.kind != "c":
        raise TypeError(f"linspace: complex start or stop need a complex dtype, not {dtype}")
    divisions = (num - 1 if endpoint else num) or 1
    step = (stop - start) / divisions
    index = _tessera.arange(num, dtype="float64", chunks=chunks, spec=_spec_of(spec))
    values = index * step + start
    if endpoint and num > 1:
        # The last value is stop exactly, as numpy's.
        values = _tessera.where(index == num - 1, stop, values)
    return _tessera.astype(values, dtype)


def _triangle_mask(x: Array, k: int, lower: bool) -> Array:
    rows, cols = x.shape[-2], x.shape[-1]
    row_chunk, col_chunk = x.chunksize[-2], x.chunksize[-1]
    i = _tessera.reshape(_tessera.arange(rows, chunks=row_chunk, spec=x.spec), (rows, 1))
    j = _tessera.reshape(_tessera.arange(cols, chunks=col_chunk, spec=x.spec), (1, cols))
    return (j <= i + k) if lower else (j >= i + k)


def tril(x: Array, /, *, k: int = 0) -> Array:
    """x with the elements above the k-th diagonal of its last two axes zeroed."""
    if x.ndim < 2:
        raise ValueError(f"tril: x needs two or more dimensions, it has {x.ndim}")
    return _tessera.where(_triangle_mask(x, k, lower=True), x, 0)


def triu(x: Array, /, *, k: int = 0) -> Array:
    """x with the elements below the k-th diagonal of its last two axes zeroed."""
    if x.ndim < 2:
        raise ValueError(f"triu: x needs two or more dimensions, it has {x.ndim}")
    return _tessera.where(_triangle_mask(x, k, lower=False), x, 0)


def unstack(x: Array, /, *, axis: int = 0) -> tuple[Array, ...]:
    """The arrays x[..., i, ...] along `axis`, as a tuple (lazy views of x)."""
    if x.ndim == 0:
        raise ValueError("unstack: x is 0-dimensional; give an array of one or more dimensions")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"unstack: axis {axis} is out of range for {x.ndim} dimensions")
    axis %= x.ndim
    prefix = (slice(None),) * axis
    return tuple(x[prefix + (i,)] for i in range(x.shape[axis]))


def reciprocal(x: Array, /) -> Array:
    """1 / x elementwise; integers and bool give float64, as true division does."""
    return _tessera.divide(1.0, x)


def signbit(x: Array, /) -> Array:
    """Whether the sign bit of each element is set: true for -0.0 and negative NaNs as for
    negative numbers (floats); x < 0 for integers; false for bool."""
    dtype = np.dtype(x.dtype)
    if dtype.kind == "f":
        return _tessera.copysign(1.0, x) < 0
    if dtype.kind == "i":
        return x < 0
    if dtype.kind == "c":
        raise TypeError(f"signbit: takes real arrays, got {x.dtype}; take real(x) first")
    return _tessera.zeros_like(x, dtype="bool")


def nextafter(x1: Array, x2: Array, /) -> Array:
    """The next float after x1 towards x2, elementwise (floats; numpy's nextafter per
    block, run on the engine's worker threads)."""
    x1, x2 = _tessera.broadcast_arrays([x1, x2])
    dtype = np.result_type(np.dtype(x1.dtype), np.dtype(x2.dtype))
    if dtype.kind != "f":
        raise TypeError(f"nextafter: takes floating-point arrays, got {x1.dtype} and {x2.dtype}")
    x1, x2 = _tessera.astype(x1, dtype), _tessera.astype(x2, dtype)
    if x2.chunksize != x1.chunksize:
        x2 = _tessera.rechunk(x2, x1.chunksize)
    return _tessera.map_blocks(np.nextafter, x1, x2, dtype=dtype)


def from_dlpack(x: Any, /, *, device: Any = None, copy: Optional[bool] = None,
                chunks: Chunks = None, spec: Optional[Spec] = None) -> Array:
    """A Tessera array of the values of any DLPack exporter (numpy, torch, jax, a computed
    Tessera result), chunked as `chunks` under `spec`."""
    if device not in (None, "cpu") and device != (1, 0):
        raise ValueError(f"from_dlpack: Tessera arrays live on the CPU, not {device!r}")
    values = np.from_dlpack(x)
    return _tessera.asarray(values, copy=copy, chunks=chunks, spec=spec)
