"""What worker processes write down as map_blocks functions run on them: one JSON line
per start and per end (appends of a few bytes are atomic), read back by the tests."""

import json
import os
import time


def _worker_name():
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        pass
    try:
        import ray

        if ray.is_initialized():
            context = ray.get_runtime_context()
            return {"id": context.get_worker_id(), "resources": context.get_assigned_resources()}
    except ImportError:
        pass
    return None


def _claim(path):
    """Whether this call created `path` (only one call of all processes does); it writes
    its process's pid there."""
    try:
        descriptor = os.open(path + ".tmp-" + str(os.getpid()), os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(descriptor, str(os.getpid()).encode())
        os.close(descriptor)
        os.link(path + ".tmp-" + str(os.getpid()), path)  # atomic: the first link wins
    except FileExistsError:
        return False
    return True


class Log:
    def __init__(self, path):
        self.path = str(path)

    def _write(self, entry):
        line = (json.dumps(entry) + "\n").encode()
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, line)
        finally:
            os.close(descriptor)

    def wrap(self, function, label="task", seconds=0.0, first_waits_to_be_killed=False):
        """`function` logging each call's start and end, sleeping `seconds` in between;
        with first_waits_to_be_killed, the run's first call (the first to create the
        marker) sleeps up to 120 s instead: long enough for a test to kill its process."""
        log = self
        marker = self.path + ".first"

        def logged(*blocks):
            entry = {"label": label, "pid": os.getpid(), "worker": _worker_name()}
            log._write({**entry, "event": "start", "time": time.time()})
            if first_waits_to_be_killed and _claim(marker):
                time.sleep(120)
            if seconds:
                time.sleep(seconds)
            result = function(*blocks)
            log._write({**entry, "event": "end", "time": time.time()})
            return result

        return logged

    def waiting_to_be_killed(self):
        """The pid of the process whose call waits to be killed (wrap's
        first_waits_to_be_killed), once one does; else None."""
        try:
            with open(self.path + ".first") as marker:
                return int(marker.read())
        except (FileNotFoundError, ValueError):
            return None

    def entries(self, label=None, started=False):
        """One entry per call that ended (or, with started, per call that began)."""
        if not os.path.exists(self.path):
            return []
        with open(self.path) as lines:
            events = [json.loads(line) for line in lines if line.strip()]
        wanted = "start" if started else "end"
        calls = []
        starts = {}
        for event in events:
            if label is not None and event["label"] != label:
                continue
            key = (event["pid"], event["label"])
            if event["event"] == "start":
                starts.setdefault(key, []).append(event["time"])
                if started:
                    calls.append(event)
            elif wanted == "end" and starts.get(key):
                calls.append({**event, "start": starts[key].pop(0), "end": event["time"]})
        return calls


def most_at_once(calls):
    """The most calls whose [start, end] spans overlap at one instant."""
    events = sorted([(c["start"], 1) for c in calls] + [(c["end"], -1) for c in calls],
                    key=lambda e: (e[0], e[1]))
    running = most = 0
    for _, change in events:
        running += change
        most = max(most, running)
    return most


def cluster_spec(executor, work_dir, allowed_mem, **settings):
    """A Spec of `executor` for the cluster tests: intermediates under `work_dir`, no
    history unless asked."""
    import tessera

    settings.setdefault("history", "off")
    return tessera.Spec(work_dir=work_dir, allowed_mem=allowed_mem, executor=executor, **settings)


def small_then_large(log, spec, data, rows, small_mem, large_mem, seconds=0.0):
    """Two ops of different memory over `data`: (data + 1) by blocks of `rows` rows, each
    task declaring `small_mem` bytes of scratch, then that doubled by blocks of `rows`
    columns, declaring `large_mem`; logged as "small" and "large". Returns the second."""
    import tessera

    n = data.shape[0]
    x = tessera.asarray(data, chunks=(rows, data.shape[1]), spec=spec)
    small = tessera.map_blocks(log.wrap(lambda b: b + 1, "small", seconds), x,
                               extra_projected_mem=small_mem)
    return tessera.map_blocks(log.wrap(lambda b: b * 2, "large", seconds),
                              small.rechunk((n, rows)), extra_projected_mem=large_mem)


def kill_when_running(log, label, pick=None, timeout=60.0):
    """A started thread that SIGKILLs a process running a `label` call as soon as there is
    one: the pid `pick` chooses among those that started one (None: keep waiting), by
    default the one waiting to be killed (Log.wrap's first_waits_to_be_killed).
    .killed lists what it killed."""
    if pick is None:
        pick = lambda pids: log.waiting_to_be_killed()  # noqa: E731
    import signal
    import threading

    def run():
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid = pick([entry["pid"] for entry in log.entries(label, started=True)] or [None])
            if pid is not None:
                os.kill(pid, signal.SIGKILL)
                thread.killed.append(pid)
                return
            time.sleep(0.02)

    thread = threading.Thread(target=run)
    thread.killed = []
    thread.start()
    return thread
