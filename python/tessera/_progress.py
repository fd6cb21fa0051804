"""A progress bar for runs started from Python where the engine's own (a line redrawn
on stderr, shown when stderr is a terminal) cannot be seen: in a notebook, tqdm's bar,
when tqdm is installed. TESSERA_PROGRESS=0 turns both off; TESSERA_PROGRESS=tqdm asks
for tqdm's bar wherever the run is."""

import os
import sys


def _wanted():
    setting = os.environ.get("TESSERA_PROGRESS", "")
    if setting == "0":
        return False
    if setting == "tqdm":
        return True
    if sys.stderr is not None and hasattr(sys.stderr, "isatty") and sys.stderr.isatty():
        return False  # the engine draws its own line there
    return "ipykernel" in sys.modules  # a notebook (Jupyter, VS Code)


def open_bar(total):
    """A bar for a run of `total` tasks, or None (not wanted, or no tqdm)."""
    if not _wanted():
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="task", desc="tessera", leave=True)
