"""numpy's functions on Tessera arrays (NEP 18, Array.__array_function__): the
reductions xarray calls through numpy (np.nanmean for skipna=True, np.sum, ...) planned
lazily by Tessera instead of loading the array. Other numpy functions raise TypeError
rather than silently computing the whole array (np.asarray(x) computes it on purpose)."""

import numpy as np

import tessera


def _count(x, axis, keepdims):
    return tessera.sum(tessera.logical_not(tessera.isnan(x)), axis=axis, keepdims=keepdims)


def _zero_nans(x):
    return tessera.where(tessera.isnan(x), 0.0, x) if x.dtype.kind == "f" else x


def _nansum(a, axis=None, dtype=None, out=None, keepdims=False, **_):
    return tessera.sum(_zero_nans(a), axis=axis, dtype=dtype, keepdims=keepdims)


def _nanmean(a, axis=None, dtype=None, out=None, keepdims=False, **_):
    if a.dtype.kind != "f":
        return tessera.mean(a, axis=axis, keepdims=keepdims)
    return _nansum(a, axis=axis, keepdims=keepdims) / _count(a, axis, keepdims)


def _nan_extreme(reduce, fill):
    def extreme(a, axis=None, out=None, keepdims=False, **_):
        if a.dtype.kind != "f":
            return reduce(a, axis=axis, keepdims=keepdims)
        result = reduce(tessera.where(tessera.isnan(a), fill, a), axis=axis, keepdims=keepdims)
        return tessera.where(_count(a, axis, keepdims) == 0, float("nan"), result)
    return extreme


def _nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **_):
    if a.dtype.kind != "f":
        return tessera.var(a, axis=axis, correction=ddof, keepdims=keepdims)
    deviations = _zero_nans(a - _nanmean(a, axis=axis, keepdims=True))
    return (tessera.sum(deviations * deviations, axis=axis, keepdims=keepdims)
            / (_count(a, axis, keepdims) - ddof))


def _nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **_):
    return tessera.sqrt(_nanvar(a, axis=axis, ddof=ddof, keepdims=keepdims))


def _plain(reduce, takes_dtype=False):
    def plain(a, axis=None, dtype=None, out=None, keepdims=False, ddof=None, **_):
        kwargs = {"axis": axis, "keepdims": keepdims}
        if takes_dtype and dtype is not None:
            kwargs["dtype"] = dtype
        if ddof is not None:
            kwargs["correction"] = ddof
        return reduce(a, **kwargs)
    return plain


_FUNCTIONS = {
    np.nansum: _nansum,
    np.nanmean: _nanmean,
    np.nanmax: _nan_extreme(tessera.max, float("-inf")),
    np.nanmin: _nan_extreme(tessera.min, float("inf")),
    np.nanvar: _nanvar,
    np.nanstd: _nanstd,
    np.sum: _plain(tessera.sum, takes_dtype=True),
    np.prod: _plain(tessera.prod, takes_dtype=True),
    np.mean: _plain(tessera.mean, takes_dtype=True),
    np.max: _plain(tessera.max),
    np.amax: _plain(tessera.max),
    np.min: _plain(tessera.min),
    np.amin: _plain(tessera.min),
    np.var: _plain(tessera.var),
    np.std: _plain(tessera.std),
    np.all: _plain(tessera.all),
    np.any: _plain(tessera.any),
    np.where: lambda condition, x, y: tessera.where(condition, x, y),
    np.isnan: lambda x, **_: tessera.isnan(x),
    np.transpose: lambda a, axes=None: tessera.permute_dims(
        a, tuple(reversed(range(a.ndim))) if axes is None else tuple(axes)),
}


def array_function(array, func, types, args, kwargs):
    implementation = _FUNCTIONS.get(func)
    if implementation is None:
        return NotImplemented
    return implementation(*args, **kwargs)
