"""Seed 002: a rechunk whose intermediate fits in memory stays in memory. Cubed's
example but for the import."""

import tessera as cubed


def main() -> None:
    spec = cubed.Spec(work_dir="tmp", allowed_mem="400MB")
    a = cubed.random.random((10000, 10000), chunks=(10000, 1000), spec=spec)  # 80MB chunks
    b = a.rechunk((1000, 10000))
    b.visualize(optimize_graph=True)
    b.compute()
    plan = cubed.plan(b)
    print([op.tier for op in plan.ops], plan.max_projected_mem)


if __name__ == "__main__":
    main()
