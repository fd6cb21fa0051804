"""The Python API with its types: a map_blocks kernel, a plan's figures, a reduction,
indexing and an in-place update, checked by mypy --strict (python/tests/test_typing.py)."""

import numpy as np
import numpy.typing as npt

import tessera
import tessera.array_api as xp


def smooth(block: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return (block + np.roll(block, 1, axis=0)) / 2


def main() -> None:
    spec = tessera.Spec(allowed_mem="200MB", reserved_mem="10MB")
    x = xp.linspace(0.0, 1.0, 1_000_000, chunks=100_000, spec=spec)
    y = tessera.map_blocks(smooth, xp.reshape(x, (1000, 1000)), dtype=xp.float64)
    total: tessera.Array = xp.sum(y, axis=0)
    plan: tessera.FinalizedPlan = tessera.plan(total)
    print(plan.max_projected_mem, plan.required_allowed_mem, len(plan.ops))
    y[0, :] = 0.0
    picked = xp.take(y, xp.asarray([3, 1, 4], spec=spec), axis=1)
    running = xp.cumulative_sum(picked, axis=0)
    values: npt.NDArray[np.float64] = running.compute()
    print(values.shape, float(xp.max(total).compute()))


if __name__ == "__main__":
    main()
