# The typed surface of `import tessera.array_api as xp` (see __init__.pyi).
import builtins
from typing import Any, NoReturn

import numpy as np

from ._composed import empty as empty
from ._composed import empty_like as empty_like
from ._composed import eye as eye
from ._composed import from_dlpack as from_dlpack
from ._composed import linspace as linspace
from ._composed import nextafter as nextafter
from ._composed import reciprocal as reciprocal
from ._composed import signbit as signbit
from ._composed import tril as tril
from ._composed import triu as triu
from ._composed import unstack as unstack
from ._indexing import repeat as repeat
from ._indexing import take as take
from ._indexing import take_along_axis as take_along_axis
from ._tessera import *  # noqa: F403 (every engine function and class)
from ._tessera import Array

__array_api_version__: str

def clip(x: Array, /, min: float | Array | None = None, max: float | Array | None = None) -> Array: ...
def moveaxis(x: Array, source: int | tuple[int, ...], destination: int | tuple[int, ...], /) -> Array: ...
def diff(x: Array, /, *, axis: int = -1, n: int = 1, prepend: Array | None = None,
         append: Array | None = None) -> Array: ...
def meshgrid(*arrays: Array, indexing: str = "xy") -> list[Array]: ...
def isdtype(dtype: Any, kind: Any) -> builtins.bool: ...
def result_type(*arrays_and_dtypes: Any) -> np.dtype[Any]: ...
def can_cast(from_: Any, to: Any) -> builtins.bool: ...
def finfo(type: Any) -> np.finfo[Any]: ...
def iinfo(type: Any) -> np.iinfo[Any]: ...
def __array_namespace_info__() -> Any: ...

# Later releases (sorting, data-dependent shapes): each raises NotImplementedError.
def sort(*args: Any, **kwargs: Any) -> NoReturn: ...
def argsort(*args: Any, **kwargs: Any) -> NoReturn: ...
def searchsorted(*args: Any, **kwargs: Any) -> NoReturn: ...
def unique_all(*args: Any, **kwargs: Any) -> NoReturn: ...
def unique_counts(*args: Any, **kwargs: Any) -> NoReturn: ...
def unique_inverse(*args: Any, **kwargs: Any) -> NoReturn: ...
def unique_values(*args: Any, **kwargs: Any) -> NoReturn: ...
def nonzero(*args: Any, **kwargs: Any) -> NoReturn: ...

e: float
pi: float
inf: float
nan: float
newaxis: None

bool: np.dtype[np.bool_]
int8: np.dtype[np.int8]
int16: np.dtype[np.int16]
int32: np.dtype[np.int32]
int64: np.dtype[np.int64]
uint8: np.dtype[np.uint8]
uint16: np.dtype[np.uint16]
uint32: np.dtype[np.uint32]
uint64: np.dtype[np.uint64]
float32: np.dtype[np.float32]
float64: np.dtype[np.float64]
complex64: np.dtype[np.complex64]
complex128: np.dtype[np.complex128]
