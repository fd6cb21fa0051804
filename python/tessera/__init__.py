"""Tessera: N-dimensional arrays larger than memory, computed chunk by chunk under a
memory budget proven before anything runs.

    import tessera as cubed                 # Cubed's scripts run with this import
    spec = cubed.Spec(work_dir="tmp", allowed_mem="400MB")
    a = cubed.asarray([[1, 2], [3, 4]], chunks=(1, 2), spec=spec)
    p = cubed.plan(a + 1)                   # memory proven here; runs nothing
    p.max_projected_mem, p.required_allowed_mem
    (a + 1).compute()                       # a numpy array sharing the engine's memory

Building arrays never raises for memory; plan(), compute() and to_zarr() raise
MemoryBudgetError (a ValueError) when a task would not fit allowed_mem.
"""

from . import _tessera
from ._tessera import (  # noqa: F401  (the public names)
    Array,
    Error,
    FinalizedPlan,
    FormatError,
    InvalidArgument,
    MemoryBudgetError,
    OpInfo,
    Spec,
    StorageError,
    __version__,
    arange,
    asarray,
    astype,
    broadcast_arrays,
    compute,
    concat,
    expand_dims,
    flip,
    from_zarr,
    history,
    full,
    full_like,
    map_blocks,
    matmul,
    matrix_transpose,
    ones,
    ones_like,
    outer,
    permute_dims,
    plan,
    rechunk,
    reshape,
    squeeze,
    stack,
    tensordot,
    tile,
    to_zarr,
    vecdot,
    where,
    zeros,
    zeros_like,
)

random = _tessera.random
from . import array_api  # noqa: E402,F401  (Array.__array_namespace__() returns it)
from .array_api import (  # noqa: E402,F401
    clip, diff, empty, empty_like, eye, from_dlpack, linspace, meshgrid, moveaxis, nextafter,
    reciprocal, repeat, signbit, take, take_along_axis, tril, triu, unstack,
)

# The elementwise functions and reductions, one per row of the engine's tables.
_FUNCTIONS = [
    name
    for name in dir(_tessera)
    if not name.startswith("_") and callable(getattr(_tessera, name))
    and name not in globals()
]
for _name in _FUNCTIONS:
    globals()[_name] = getattr(_tessera, _name)
del _name

__all__ = sorted(
    name for name in globals() if not name.startswith("_") and name != "annotations"
)
