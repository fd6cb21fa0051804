"""Fixtures for the CLI tests: the path of the built `tessera` command.

ctest sets TESSERA_BIN (see tests/CMakeLists.txt). To run by hand:
  TESSERA_BIN=build/src/cli/tessera /usr/bin/python3 -m pytest -q tests/cli
"""
import os

import pytest


@pytest.fixture(scope="session")
def tessera_bin():
    path = os.environ.get("TESSERA_BIN")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("TESSERA_BIN must name the built tessera command (run through ctest)")
    return path
