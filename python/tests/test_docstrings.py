"""Every public function and class of tessera and tessera.array_api says what it does:
a docstring beyond the signature nanobind writes, naming what a reader needs."""

import inspect

import numpy as np
import pytest

import tessera
import tessera.array_api as xp


def documentation(obj):
    """obj's docstring without nanobind's first line (the signature)."""
    text = (getattr(obj, "__doc__", None) or "").strip()
    lines = text.split("\n")
    if lines and lines[0].startswith(getattr(obj, "__name__", "?") + "("):
        lines = lines[1:]
    return "\n".join(lines).strip()


def public_callables():
    seen = []
    for prefix, module in [("tessera", tessera), ("tessera.array_api", xp),
                           ("tessera.random", tessera.random)]:
        for name in sorted(dir(module)):
            value = getattr(module, name)
            if name.startswith("_") or inspect.ismodule(value) or isinstance(value, np.dtype):
                continue
            if callable(value):
                seen.append((f"{prefix}.{name}", value))
            if isinstance(value, type):
                for member in sorted(dir(value)):
                    attribute = getattr(value, member)
                    if not member.startswith("_") and callable(attribute):
                        seen.append((f"{prefix}.{name}.{member}", attribute))
    return seen


PUBLIC = public_callables()


def test_the_public_surface_is_large_enough_to_mean_something():
    assert len(PUBLIC) > 250


@pytest.mark.parametrize("name,obj", PUBLIC, ids=[name for name, _ in PUBLIC])
def test_every_public_callable_has_a_docstring(name, obj):
    text = documentation(obj)
    assert len(text) >= 20, f"{name} has no docstring beyond its signature: {text!r}"


def test_elementwise_docstrings_say_what_they_compute_and_which_dtypes():
    assert "sine" in documentation(tessera.sin)
    assert "complex" in documentation(tessera.sin)
    assert "Not defined for complex dtypes" in documentation(tessera.floor)
    assert "real dtype of their parts" in documentation(tessera.abs)
    assert "Python numbers" in documentation(tessera.add)
    assert "Gives bool" in documentation(tessera.less)


def test_errors_say_when_they_are_raised():
    assert "plan()" in tessera.MemoryBudgetError.__doc__
    assert issubclass(tessera.MemoryBudgetError, ValueError)
    for error in (tessera.Error, tessera.InvalidArgument, tessera.StorageError,
                  tessera.FormatError):
        assert len(error.__doc__) > 30
