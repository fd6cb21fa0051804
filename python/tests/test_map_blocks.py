"""map_blocks with Python functions: run on the engine's threads, block by block, their
memory counted, their exceptions surfacing as themselves with the op and block named."""

import threading

import numpy as np
import pytest

import tessera


def test_a_python_function_runs_on_every_block(rng, spec):
    values = rng.random((9, 10))
    x = tessera.asarray(values, chunks=(4, 3), spec=spec)
    y = tessera.asarray(values * 2, chunks=(4, 3), spec=spec)
    seen = []

    def kernel(a, b, block_id=None):
        seen.append(block_id)
        assert a.shape == b.shape
        return np.sqrt(a) + b

    z = tessera.map_blocks(kernel, x, y, dtype="float64")
    np.testing.assert_allclose(z.compute(), np.sqrt(values) + values * 2)
    assert sorted(seen) == [(i, j) for i in range(3) for j in range(4)]


def test_a_function_may_keep_its_blocks(spec):
    kept = []

    def keep(block):
        kept.append(block)
        return block + 1

    tessera.map_blocks(keep, tessera.arange(10, chunks=5, spec=spec)).compute()
    # Each block handed to it is its own array: still valid after the run.
    np.testing.assert_array_equal(np.sort(np.concatenate(kept)), np.arange(10.0))


def test_the_gil_is_released_while_a_plan_runs(tmp_path):
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="50MB", max_workers=2)
    x = tessera.sum(tessera.sqrt(tessera.random.random((6000, 6000), chunks=(1000, 1000), spec=spec)))
    done = threading.Event()
    runner = threading.Thread(target=lambda: (x.compute(), done.set()))
    runner.start()
    spins = 0
    while not done.is_set():  # runs only while the engine has let go of the GIL
        spins += 1
    runner.join()
    assert spins > 1000, spins


def test_declared_memory_is_counted_in_the_plan(spec):
    x = tessera.ones((100, 100), chunks=(50, 50), spec=spec)
    plain = tessera.map_blocks(lambda b: b * 2, x).plan().max_projected_mem
    declared = tessera.map_blocks(lambda b: b * 2, x, extra_projected_mem=10_000_000)
    assert declared.plan().max_projected_mem == plain + 10_000_000


def test_a_raising_kernel_surfaces_as_its_own_exception_naming_op_and_block(spec):
    def fail(block, block_id=None):
        if block_id == (1,):
            raise KeyError("no such station")
        return block

    x = tessera.map_blocks(fail, tessera.arange(10, chunks=5, spec=spec))
    with pytest.raises(KeyError, match="no such station") as caught:
        x.compute()
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    assert "map_blocks" in notes and "block (1,)" in notes, notes
    # Not retried: a Python exception fails alike every time.
    assert "after 1 attempt" in notes and "KeyError('no such station')" in notes, notes
