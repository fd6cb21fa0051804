"""What the comparison scripts (compare_*.py) share: sizes, stored bytes, this process's
peak RSS and CPU time."""
import os
import resource


def format_size(num_bytes, digits=2):
    for unit, factor in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if num_bytes >= factor:
            return f"{num_bytes / factor:.{digits}f} {unit}"
    return f"{num_bytes:.0f} B"


def stored_bytes(path):
    """Bytes of the chunk files under `path` (metadata files, starting with '.', left out)."""
    total = 0
    for directory, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(directory, name))
                     for name in files if not name.startswith("."))
    return total


def peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def cpu_seconds():
    """User + system CPU time of this process (all its threads) so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
