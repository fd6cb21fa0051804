"""The package's types: mypy --strict passes on python/examples with the stubs
(_tessera.pyi from nanobind, __init__.pyi and array_api.pyi by hand) and fails on a
typing mistake, and the hand-written stubs name every public name of the package."""

import ast
import os
import pathlib
import subprocess
import sys

import pytest

import tessera
import tessera.array_api

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "python" / "examples"
PACKAGE = pathlib.Path(tessera.__file__).parent  # the built package, stubs beside it


def run_mypy(paths, tmp_path):
    pytest.importorskip("mypy")
    environment = dict(os.environ, MYPYPATH=str(PACKAGE.parent))
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(tmp_path / "mypy-cache"), *map(str, paths)],
        capture_output=True, text=True, env=environment, timeout=600)


def test_the_examples_pass_mypy_strict_and_a_mistake_does_not(tmp_path):
    examples = sorted(EXAMPLES.glob("*.py"))
    assert len(examples) >= 4
    checked = run_mypy(examples, tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "import tessera\n"
        "spec = tessera.Spec(allowed_mem='10MB')\n"
        "count: int = tessera.ones((2, 2), spec=spec).compute()\n"   # an array, not an int
        "tessera.array_api.take(tessera.ones((3,), spec=spec))\n")   # indices missing
    refused = run_mypy([wrong], tmp_path)
    assert refused.returncode == 1
    assert "wrong.py:3: error: Incompatible types in assignment" in refused.stdout
    assert "wrong.py:4: error: Too few arguments for \"take\"" in refused.stdout


def stub_names(stub):
    """The names a stub defines or re-exports; star imports contribute the names of the
    stub they import."""
    names = set()
    for node in ast.parse(stub.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    names |= stub_names(stub.parent / (node.module + ".pyi"))
                elif alias.asname == alias.name:
                    names.add(alias.name)
        elif isinstance(node, ast.Import):
            names |= {a.asname for a in node.names if a.asname}
    return {name for name in names if not name.startswith("_") or name.startswith("__a")}


@pytest.mark.parametrize("module, stub", [(tessera, "__init__.pyi"),
                                          (tessera.array_api, "array_api.pyi")])
def test_the_stubs_name_every_public_name(module, stub):
    public = {name for name in dir(module) if not name.startswith("_")}
    public -= {"annotations"}
    typed = stub_names(PACKAGE / stub)
    assert public - typed == set(), f"{stub} leaves out {sorted(public - typed)}"
    assert typed - public - {"builtins", "np", "Any", "NoReturn", "Array"} <= set(dir(module))


def test_the_typed_example_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = subprocess.run([sys.executable, str(EXAMPLES / "typed_pipeline.py")],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, TESSERA_HISTORY="off"))
    assert done.returncode == 0, done.stderr
    assert "(1000, 3)" in done.stdout
