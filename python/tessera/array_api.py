"""The array API standard's namespace (revision 2024.12) over Tessera's arrays:

    import tessera.array_api as xp
    a = xp.asarray([[1, 2], [3, 4]], chunks=(1, 2), spec=spec)
    b = xp.astype(xp.ones((2, 2), dtype=xp.int8, chunks=(1, 2), spec=spec), xp.float32)
    x.__array_namespace__() is xp

Dtypes are numpy's dtype objects (xp.float32 == numpy.dtype("float32")). Functions the
engine does not have yet raise NotImplementedError saying so.
"""

import builtins as _builtins

import numpy as _np

from . import _tessera
from ._tessera import Array

__array_api_version__ = "2024.12"

bool = _np.dtype("bool")  # noqa: A001 (the standard's name)
int8, int16, int32, int64 = (_np.dtype(f"int{bits}") for bits in (8, 16, 32, 64))
uint8, uint16, uint32, uint64 = (_np.dtype(f"uint{bits}") for bits in (8, 16, 32, 64))
float32, float64 = _np.dtype("float32"), _np.dtype("float64")
complex64, complex128 = _np.dtype("complex64"), _np.dtype("complex128")

e, pi, inf, nan = _np.e, _np.pi, _np.inf, _np.nan
newaxis = None

_DTYPES = {
    "bool": bool, "int8": int8, "int16": int16, "int32": int32, "int64": int64,
    "uint8": uint8, "uint16": uint16, "uint32": uint32, "uint64": uint64,
    "float32": float32, "float64": float64, "complex64": complex64, "complex128": complex128,
}

random = _tessera.random  # random.random(shape, chunks=, spec=), as tessera.random

# Every function of the engine, under its standard name.
for _name in dir(_tessera):
    if not _name.startswith("_") and callable(getattr(_tessera, _name)):
        globals()[_name] = getattr(_tessera, _name)
del _name


def _later(name, what):
    def not_yet(*args, **kwargs):
        raise NotImplementedError(
            f"tessera.array_api.{name} is not implemented yet: {what} comes with a later "
            "release of Tessera (sorting and data-dependent shapes)")
    not_yet.__name__ = name
    not_yet.__doc__ = (f"Not implemented yet: {what} comes with a later release of Tessera; "
                       "raises NotImplementedError.")
    return not_yet


sort = _later("sort", "sorting")
argsort = _later("argsort", "sorting")
searchsorted = _later("searchsorted", "sorting")
unique_all = _later("unique_all", "unique values")
unique_counts = _later("unique_counts", "unique values")
unique_inverse = _later("unique_inverse", "unique values")
unique_values = _later("unique_values", "unique values")
nonzero = _later("nonzero", "data-dependent output shapes")


def clip(x, /, min=None, max=None):  # noqa: A002 (the standard's names)
    """x limited to [min, max] (either may be None); the result keeps x's dtype."""
    result = x
    if min is not None:
        result = _tessera.maximum(result, min)
    if max is not None:
        result = _tessera.minimum(result, max)
    return _tessera.astype(result, x.dtype)


def moveaxis(x, source, destination, /):
    """x with axes `source` moved to `destination` (ints or tuples), the others in order."""
    source = (source,) if isinstance(source, int) else tuple(source)
    destination = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(source) != len(destination):
        raise ValueError("moveaxis: source and destination need the same number of axes")
    source = tuple(a % x.ndim for a in source)
    destination = tuple(a % x.ndim for a in destination)
    order = [a for a in range(x.ndim) if a not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return _tessera.permute_dims(x, tuple(order))


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """The n-th discrete difference along `axis` (x[1:] - x[:-1], n times)."""
    if prepend is not None or append is not None:
        parts = [p for p in (prepend, x, append) if p is not None]
        x = _tessera.concat(parts, axis=axis)
    axis = axis % x.ndim
    for _ in range(n):
        upper = tuple(slice(1, None) if a == axis else slice(None) for a in range(x.ndim))
        lower = tuple(slice(None, -1) if a == axis else slice(None) for a in range(x.ndim))
        x = x[upper] - x[lower]
    return x


def meshgrid(*arrays, indexing="xy"):
    """Coordinate arrays from 1-d arrays, as numpy's meshgrid (indexing "xy" or "ij")."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', not {indexing!r}")
    shape = [a.shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    grids = []
    for index, array in enumerate(arrays):
        axis = index
        if indexing == "xy" and len(arrays) >= 2 and index < 2:
            axis = 1 - index
        view = [1] * len(arrays)
        view[axis] = array.shape[0]
        grids.append(_tessera.reshape(array, tuple(view)))
    return _tessera.broadcast_arrays(grids)


def isdtype(dtype, kind):
    """The standard's isdtype: whether `dtype` is of `kind` (a dtype, a kind name or a
    tuple of them)."""
    if isinstance(kind, tuple):
        return _builtins.any(isdtype(dtype, k) for k in kind)
    dtype = _np.dtype(dtype)
    if not isinstance(kind, str):
        return dtype == _np.dtype(kind)
    kinds = {
        "bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
        "real floating": "f", "complex floating": "c", "numeric": "iufc",
    }
    if kind not in kinds:
        raise ValueError(f"isdtype: unknown kind {kind!r}; valid: {', '.join(kinds)}")
    return dtype.kind in kinds[kind]


def result_type(*arrays_and_dtypes):
    """numpy's promotion of the dtypes of arrays, dtypes and Python scalars (weak)."""
    dtypes = [a.dtype if isinstance(a, Array) else a for a in arrays_and_dtypes]
    return _np.result_type(*dtypes)


def can_cast(from_, to):
    """Whether from_ (an array or dtype) casts to dtype `to` by numpy's safe casting."""
    return _np.can_cast(from_.dtype if isinstance(from_, Array) else from_, to)


def finfo(type):  # noqa: A002 (the standard's name)
    """numpy's finfo of a floating dtype or array: eps, max, min, smallest_normal, bits."""
    return _np.finfo(type.dtype if isinstance(type, Array) else type)


def iinfo(type):  # noqa: A002
    """numpy's iinfo of an integer dtype or array: min, max, bits."""
    return _np.iinfo(type.dtype if isinstance(type, Array) else type)


class _Info:
    """__array_namespace_info__(): what this namespace offers."""

    def capabilities(self):
        return {"boolean indexing": False, "data-dependent shapes": False, "max dimensions": 64}

    def default_device(self):
        return "cpu"

    def devices(self):
        return ["cpu"]

    def default_dtypes(self, *, device=None):
        return {"real floating": float64, "complex floating": complex128, "integral": int64,
                "indexing": int64}

    def dtypes(self, *, device=None, kind=None):
        if kind is None:
            return dict(_DTYPES)
        return {name: dtype for name, dtype in _DTYPES.items() if isdtype(dtype, kind)}


def __array_namespace_info__():
    return _Info()


# Made of other lazy functions (tessera/_composed.py) and of take (tessera/_indexing.py).
from ._composed import (  # noqa: E402,F401
    empty, empty_like, eye, from_dlpack, linspace, nextafter, reciprocal, signbit, tril, triu,
    unstack,
)
from ._indexing import repeat, take, take_along_axis  # noqa: E402,F401
