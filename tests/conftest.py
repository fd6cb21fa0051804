"""Fixtures shared by the Python suites (tests/cli, tests/interop): the built programs.

ctest sets their paths in the environment (see tests/CMakeLists.txt). To run by hand:
  TESSERA_BIN=build/src/cli/tessera TESSERA_ZARR_TOOL=build/tests/tessera_zarr_tool \
  TESSERA_COMPUTE_TOOL=build/tests/tessera_compute_tool .venv/bin/python -m pytest -q tests
"""
import os

import pytest


def built_program(variable, what):
    path = os.environ.get(variable)
    if not path or not os.access(path, os.X_OK):
        pytest.fail(f"{variable} must name the built {what} (run through ctest)")
    return path


@pytest.fixture(scope="session")
def tessera_bin():
    return built_program("TESSERA_BIN", "tessera command")


@pytest.fixture(scope="session")
def zarr_tool():
    return built_program("TESSERA_ZARR_TOOL", "tessera_zarr_tool")


@pytest.fixture(scope="session")
def compute_tool():
    return built_program("TESSERA_COMPUTE_TOOL", "tessera_compute_tool")
