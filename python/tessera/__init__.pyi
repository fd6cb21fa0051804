# The typed surface of `import tessera`: the compiled module's functions and classes
# (_tessera.pyi, made by nanobind's stubgen) and the functions written in Python.
# python/tests/test_typing.py checks these names against the package's and runs
# mypy --strict on python/examples with them.
from . import array_api as array_api
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
from .array_api import clip as clip
from .array_api import diff as diff
from .array_api import meshgrid as meshgrid
from .array_api import moveaxis as moveaxis

__version__: str
