"""Seed 003: find the memory a pipeline needs before running it. The user's loop, as
written for Cubed but for the import, then Tessera's answer: allowed_mem="auto"."""

import sys

import tessera as cubed
import tessera.array_api as xp


def _create_spec(memory_mb: int) -> tuple[cubed.Spec, None]:
    return cubed.Spec(work_dir="tmp", allowed_mem=f"{memory_mb}MB"), None


def dew_point(t2: cubed.Array, rh: cubed.Array) -> cubed.Array:
    es = 0.611 * xp.exp(5423 * ((1 / 273) - (1 / t2)))  # saturation vapor pressure
    e_vap = (es * rh) / 100.0  # vapor pressure
    return ((1 / 273) - 0.0001844 * xp.log(e_vap / 0.611)) ** -1  # dew point in K


def main(t2_store: str, rh_store: str) -> None:
    opt_fn = None
    max_retries = 3
    memory_mb = 100
    for attempt in range(max_retries):
        spec, _ = _create_spec(memory_mb)
        print(f"Attempt {attempt + 1}: Using {memory_mb} MB memory")
        t2 = cubed.from_zarr(t2_store, spec=spec)
        rh = cubed.from_zarr(rh_store, spec=spec)
        tdps = dew_point(t2, rh)
        finalized_plan = cubed.plan(tdps, optimize_function=opt_fn)
        max_projected = finalized_plan.max_projected_mem
        allowed = memory_mb * 1024 * 1024  # Convert MB to bytes
        if max_projected <= allowed:
            print(f"Memory OK: projected {max_projected / 1024 / 1024:.1f} MB <= allowed "
                  f"{memory_mb} MB")
            break
        needed_mb = (max_projected / 1024 / 1024) + 512
        new_memory = int((needed_mb + 99) // 100 * 100)
        print(f"Scaling up: {memory_mb} MB → {new_memory} MB")
        memory_mb = new_memory
    else:
        raise RuntimeError(f"Failed after {max_retries} attempts to find sufficient memory")

    # Tessera's answer: the smallest budget that plans, found before anything runs.
    spec = cubed.Spec(work_dir="tmp", allowed_mem="auto")
    tdps = dew_point(cubed.from_zarr(t2_store, spec=spec), cubed.from_zarr(rh_store, spec=spec))
    plan = cubed.plan(tdps)
    print(f"allowed_mem='auto' plans at {plan.allowed_mem} bytes "
          f"(required_allowed_mem {plan.required_allowed_mem})")
    cubed.to_zarr(tdps, "tdps.zarr")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
