"""Seed 000: memory is checked when the plan is finalized, after fusion, not while the
array is built. Cubed's example but for the import."""

import tessera as cubed
import tessera.array_api as xp


def main() -> None:
    spec = cubed.Spec(work_dir="tmp", allowed_mem=100)  # not enough memory!
    a = xp.asarray([[1, 2, 3], [4, 5, 6], [7, 8, 9]], chunks=(2, 2), spec=spec)
    b = xp.asarray([[1, 1, 1], [1, 1, 1], [1, 1, 1]], chunks=(2, 2), spec=spec)
    try:
        c = xp.add(a, b)
        c.compute()
    except ValueError as e:
        print(e)

    # this should pass, since c can be fused into an op that takes 700 bytes
    # (ones is 100, conversion to int32 is 400, conversion to int8 is 100, write is 100)
    spec = cubed.Spec(allowed_mem=800, reserved_mem=0)
    a = xp.ones((100,), dtype=xp.int8, chunks=(100,), spec=spec)
    b = xp.astype(a, xp.int32)
    c = xp.astype(b, xp.int8)
    c.compute()
    print(f"fused: {cubed.plan(c).max_projected_mem} bytes per task")


if __name__ == "__main__":
    main()
