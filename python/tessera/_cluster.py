"""Running a plan's tasks on the cluster the user already has: Dask distributed or Ray.

    client = distributed.Client(cluster)            # or: ray.init(num_cpus=8)
    spec = tessera.Spec(allowed_mem="500MB", executor="dask")   # or executor="ray"
    x.compute()                                      # each task one Dask (Ray) task

Each Tessera task is one scheduler task that calls the engine in its worker process: the
plan travels once per worker (scattered to every Dask worker, put once in Ray's object
store) and is remade there once per process (tessera/exec/remote_tasks.hpp); this process
prepares and commits every op, records each task's measured memory in the report and the
history database, and decides retries.

Memory placement: each task carries the memory the plan counts for it (its op's
memory_tiers size, else its projection or history's larger figure):

* Dask: as the resource ``resources={"MEMORY": bytes}``. Start workers that declare their
  memory as that resource, and Dask gives a worker only what fits it:
  ``dask worker SCHEDULER --nthreads 4 --resources "MEMORY=16e9"``
  (``LocalCluster(resources={"MEMORY": 16e9})``). On a cluster whose workers declare no
  MEMORY, Dask places tasks by threads alone.
* Ray: as ``memory=bytes``, which Ray's scheduler admits against each node's memory.

A task larger than every worker's memory is refused before anything is submitted. A task
whose worker dies is submitted again (Tessera's retries, ExecuteOptions); neither
scheduler retries a failing task on its own.
"""

from __future__ import annotations

import collections
import itertools
import threading
import time
import uuid
import weakref

from . import _tessera

MEMORY = "MEMORY"
# How long a failed Dask run waits for its running tasks to end before it returns.
_DRAIN_SECONDS = 60.0

# ---- options that are Python objects (Spec(executor_options={"client": c})) ----------

# Held weakly where the object allows it (a Client): a Spec does not keep it alive.
_kept_weakly: weakref.WeakValueDictionary[str, object] = weakref.WeakValueDictionary()
_kept: dict[str, object] = {}
_tokens = itertools.count(1)


def keep_option(value: object) -> str:
    """A token standing for `value` in Spec.executor_options (whose values are strings)."""
    token = f"python-object:{next(_tokens)}"
    try:
        _kept_weakly[token] = value
    except TypeError:
        _kept[token] = value
    return token


def _resolve(value: str) -> object:
    if not value.startswith("python-object:"):
        return value
    found = _kept_weakly.get(value, _kept.get(value))
    if found is None:
        raise _tessera.InvalidArgument(
            "an executor option's object is gone (the Spec outlived it): make the Spec again"
        )
    return found


def make_launcher(executor: str, options: dict[str, str]):
    """The launcher of a run of `executor` (called by the engine as the run starts)."""
    resolved = {name: _resolve(value) for name, value in options.items()}
    if executor == "dask":
        return DaskLauncher(resolved)
    if executor == "ray":
        return RayLauncher(resolved)
    raise _tessera.InvalidArgument(f'no launcher for executor "{executor}"')


def _refuse_unknown(executor: str, options: dict, known: set[str]) -> None:
    unknown = sorted(set(options) - known)
    if unknown:
        raise _tessera.InvalidArgument(
            f'executor "{executor}" has no option {", ".join(map(repr, unknown))}; '
            f"its options are {', '.join(sorted(known)) or 'none'}"
        )


def _bytes_text(size: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{int(size)} B"


def _too_large(executor: str, memory: int, largest: float, how: str) -> Exception:
    return _tessera.MemoryBudgetError(
        f"a task needs {_bytes_text(memory)} ({memory} bytes), but the largest {executor} "
        f"worker offers {_bytes_text(largest)}: {how}, or lower allowed_mem"
    )


# ---- in the worker process -----------------------------------------------------------

_KEEP_PLANS = 4  # plans a worker process holds at once (the most recent runs')
_held_plans: collections.deque[str] = collections.deque()
_held_lock = threading.Lock()


_running: collections.Counter[str] = collections.Counter()  # tasks in flight, by plan


def run_task(key, recipe, op, task, start_unix, retries, resume):
    """Runs one task in this worker process: (record dict, [(block, ndarray), ...])."""
    with _held_lock:
        if key not in _held_plans:
            _held_plans.append(key)
            while len(_held_plans) > _KEEP_PLANS:
                _tessera._forget_remote_plan(_held_plans.popleft())
        _running[key] += 1
    try:
        return _tessera._run_remote_task(key, recipe, op, task, start_unix, retries, resume, 0)
    finally:
        with _held_lock:
            _running[key] -= 1


def tasks_running(key: str) -> int:
    """How many tasks of the plan `key` this worker process is running now."""
    with _held_lock:
        return _running[key]


def forget_plan(key: str) -> bool:
    with _held_lock:
        if key in _held_plans:
            _held_plans.remove(key)
    return _tessera._forget_remote_plan(key)


def _dask_task(key, recipe, op, task, start_unix, retries, resume):
    from distributed import get_worker

    record, blocks = run_task(key, recipe, op, task, start_unix, retries, resume)
    return get_worker().address, record, blocks


def _ray_task(key, recipe, op, task, start_unix, retries, resume):
    import ray

    record, blocks = run_task(key, recipe, op, task, start_unix, retries, resume)
    return ray.get_runtime_context().get_worker_id(), record, blocks


# ---- Dask ----------------------------------------------------------------------------


class DaskLauncher:
    """Tasks as Dask futures on a distributed.Client (tessera/exec/remote_tasks.hpp)."""

    def __init__(self, options: dict) -> None:
        import distributed

        _refuse_unknown("dask", options, {"client", "memory_resource"})
        self._distributed = distributed
        client = options.get("client")
        if client is None:
            try:
                client = distributed.get_client()
            except ValueError:
                raise _tessera.InvalidArgument(
                    'executor "dask" needs a distributed.Client: make one '
                    "(distributed.Client(cluster)) before computing, or pass it as "
                    'Spec(executor="dask", executor_options={"client": client})'
                ) from None
        if not isinstance(client, distributed.Client):
            raise _tessera.InvalidArgument(
                f'executor_options "client" must be a distributed.Client, got {client!r}'
            )
        self._client = client
        self._resource = str(options.get("memory_resource", MEMORY))
        self._workers: dict[str, int] = {}  # address -> TaskRecord.worker

    def workers(self) -> int:
        info = self._client.scheduler_info(n_workers=-1)["workers"]
        return max(1, sum(worker["nthreads"] for worker in info.values()))

    def start(self, key, recipe, start_unix, retries, resume, largest_task_memory) -> None:
        info = self._client.scheduler_info(n_workers=-1)["workers"]
        if not info:
            raise _tessera.InvalidArgument(
                'executor "dask": the client\'s cluster has no workers; start some first'
            )
        declared = [w.get("resources", {}).get(self._resource) for w in info.values()]
        declared = [amount for amount in declared if amount]
        self._declares = bool(declared)
        if declared and largest_task_memory > max(declared):
            raise _too_large(
                "Dask",
                largest_task_memory,
                max(declared),
                f'start workers declaring more (--resources "{self._resource}=<bytes>")',
            )
        self._task_args = (key, start_unix, retries, resume)
        self._run = f"tessera-{uuid.uuid4().hex[:12]}"  # keys no other run shares
        self._recipe = self._client.scatter(recipe, broadcast=True, hash=False)
        self._futures: dict = {}
        self._done = self._distributed.as_completed(loop=self._client.loop)

    def submit(self, op, task, memory, attempt) -> None:
        key, start_unix, retries, resume = self._task_args
        future = self._client.submit(
            _dask_task,
            key,
            self._recipe,
            op,
            task,
            start_unix,
            retries,
            resume,
            key=f"{self._run}-{op}-{task}-{attempt}",
            resources={self._resource: memory} if self._declares else None,
            pure=False,
            retries=0,
        )
        self._futures[future] = (op, task)
        self._done.add(future)

    def wait_any(self, timeout):
        # Woken by as_completed's own notice of a finished future, as its __next__ is.
        deadline = time.monotonic() + timeout
        woken = getattr(self._done, "thread_condition", None)
        while not self._done.has_ready():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if woken is None:
                time.sleep(min(remaining, 0.005))
                continue
            with woken:
                woken.wait(timeout=min(remaining, 0.1))
        future = next(self._done)
        op, task = self._futures.pop(future)
        lost = (self._distributed.KilledWorker, self._distributed.comm.CommClosedError)
        # A finished future whose worker died before its result was fetched is lost, or
        # pending again (Dask recomputes it and result() waits): never an error.
        if future.status == "finished":
            try:
                address, record, blocks = future.result()
            except lost as error:
                return op, task, "lost", repr(error)
            record["worker"] = self._workers.setdefault(address, len(self._workers))
            return op, task, "ok", (record, blocks)
        if future.status != "error":
            return op, task, "lost", f"the future is {future.status}"
        error = future.exception()
        if error is None or isinstance(error, lost):
            return op, task, "lost", repr(error)
        return op, task, "error", error

    def finish(self, failed) -> None:
        if not hasattr(self, "_task_args"):
            return  # start() refused the run: nothing was sent
        key = self._task_args[0]
        try:
            if failed and self._futures:
                # Nothing queued starts; what is running ends before the client cleans up
                # the outputs it writes into.
                self._client.cancel(list(self._futures), force=True)
                deadline = time.monotonic() + _DRAIN_SECONDS
                while time.monotonic() < deadline:
                    running = self._client.run(tasks_running, key, on_error="ignore")
                    if not any(running.values()):
                        break
                    time.sleep(0.05)
            self._futures = {}
            self._client.cancel([self._recipe], force=True)
            self._client.run(forget_plan, key, on_error="ignore")
        except Exception:  # noqa: BLE001  (cleanup is best effort)
            pass


# ---- Ray -----------------------------------------------------------------------------

_ray_remote = None


def _ray_lost(exceptions) -> tuple:
    """Ray's errors that say a task's worker (or its memory) went away, not the task failed:
    the memory monitor's kills included."""
    names = (
        "WorkerCrashedError",
        "NodeDiedError",
        "ObjectLostError",
        "TaskCancelledError",
        "OutOfMemoryError",
        "OwnerDiedError",
        "LocalRayletDiedError",
    )
    return tuple(getattr(exceptions, name) for name in names if hasattr(exceptions, name))


class RayLauncher:
    """Tasks as Ray remote functions, each with memory= (tessera/exec/remote_tasks.hpp)."""

    def __init__(self, options: dict) -> None:
        import ray

        _refuse_unknown("ray", options, set())
        if not ray.is_initialized():
            raise _tessera.InvalidArgument(
                'executor "ray" needs Ray started in this process: call ray.init() '
                "(or ray.init(address=...) for a running cluster) before computing"
            )
        self._ray = ray
        global _ray_remote
        if _ray_remote is None:
            _ray_remote = ray.remote(_ray_task)
        self._workers: dict[str, int] = {}

    def workers(self) -> int:
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def start(self, key, recipe, start_unix, retries, resume, largest_task_memory) -> None:
        nodes = [node for node in self._ray.nodes() if node.get("Alive")]
        largest = max((int(node["Resources"].get("memory", 0)) for node in nodes), default=0)
        if largest and largest_task_memory > largest:
            how = "give the nodes more memory (ray start --memory)"
            raise _too_large("Ray", largest_task_memory, largest, how)
        self._task_args = (key, start_unix, retries, resume)
        self._recipe = self._ray.put(recipe)
        self._pending: dict = {}

    def submit(self, op, task, memory, attempt) -> None:
        key, start_unix, retries, resume = self._task_args
        ref = _ray_remote.options(
            memory=memory,
            num_cpus=1,
            max_retries=0,
            retry_exceptions=False,
            name=f"tessera-{op}-{task}-{attempt}",
        ).remote(key, self._recipe, op, task, start_unix, retries, resume)
        self._pending[ref] = (op, task)

    def wait_any(self, timeout):
        exceptions = self._ray.exceptions
        ready, _ = self._ray.wait(list(self._pending), num_returns=1, timeout=timeout)
        if not ready:
            return None
        ref = ready[0]
        op, task = self._pending.pop(ref)
        try:
            worker, record, blocks = self._ray.get(ref)
        except exceptions.RayTaskError as error:
            cause = getattr(error, "cause", None)
            return op, task, "error", cause if cause is not None else error
        except _ray_lost(exceptions) as error:
            return op, task, "lost", repr(error)
        record["worker"] = self._workers.setdefault(worker, len(self._workers))
        return op, task, "ok", (record, blocks)

    def finish(self, failed) -> None:
        if failed:
            for ref in getattr(self, "_pending", {}):
                try:
                    self._ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001  (cleanup is best effort)
                    pass
        self._pending = {}
