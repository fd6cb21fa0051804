"""Shared fixtures of the Python module's tests: a seeded random generator (replay a
failure with TESSERA_TEST_SEED=<seed printed in the header>) and a small Spec."""

import os

import numpy as np
import pytest

import tessera

SEED = int(os.environ.get("TESSERA_TEST_SEED", np.random.SeedSequence().entropy % 2**32))


def pytest_report_header(config):
    return f"tessera python tests: TESSERA_TEST_SEED={SEED}"


@pytest.fixture
def rng(request):
    # One stream per test, derived from the session seed and the test's name.
    return np.random.default_rng([SEED, abs(hash(request.node.nodeid)) % 2**32])


@pytest.fixture
def spec(tmp_path):
    return tessera.Spec(work_dir=tmp_path, allowed_mem="100MB", max_workers=2)
