"""Fixtures for the interop tests: the path of the built zarr_tool.

ctest sets TESSERA_ZARR_TOOL (see tests/CMakeLists.txt). To run by hand:
  TESSERA_ZARR_TOOL=build/tests/tessera_zarr_tool /usr/bin/python3 -m pytest -q tests/interop
"""
import os

import pytest


@pytest.fixture(scope="session")
def zarr_tool():
    path = os.environ.get("TESSERA_ZARR_TOOL")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("TESSERA_ZARR_TOOL must name the built tessera_zarr_tool (run through ctest)")
    return path
