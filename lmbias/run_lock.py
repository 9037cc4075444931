"""One process per run directory: ``lmbias run`` locks its ``--out`` for as long as it works in it.

The lock is an exclusive ``flock`` on ``<out>/.lmbias.lock``, which holds the PID and host of the
holder. The operating system drops the lock when its process ends, however it ends, so a lock left
by a killed run is free for the next one (no stale-lock guessing by PID). A second run on the same
directory stops at once with one line naming the holder. Only the main process of a multi-process
run (``RANK`` 0) takes the lock; the other ranks work under it. A directory the lock created and
left empty (a command refused before it wrote anything) is removed again. ``flock`` is advisory
and local: on a network file system shared by several hosts, use one ``--out`` per host.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import InputError

LOCK_FILE = ".lmbias.lock"


class RunDirectoryInUse(InputError):
    """Another process is running in this directory."""


def _holder(path: Path) -> str:
    try:
        holder = json.loads(path.read_text(encoding="utf-8") or "{}")
        return f"PID {holder['pid']} on host {holder['host']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


@contextmanager
def locked(out: str | os.PathLike) -> Iterator[Path]:
    """Hold the lock of run directory ``out`` (created if missing) for the ``with`` block.

    Raises:
        RunDirectoryInUse: another live process holds it (the message names its PID and host).
        InputError: ``out`` exists and is not a directory.
    """
    try:
        import fcntl
    except ImportError:  # no flock (Windows): no locking
        yield Path(out)
        return
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file, not a directory; give a directory for the run")
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"--out {out} cannot be created ({error.strerror or error}); give a writable directory") from None
    path = out / LOCK_FILE
    while True:
        try:
            handle = open(path, "a+", encoding="utf-8")
        except OSError as error:
            raise InputError(f"--out {out} is not writable ({error.strerror or error}); give a writable directory") from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise RunDirectoryInUse(f"{out} is in use by {_holder(path)} (another lmbias run); wait for it to finish, "
                                    "or use another --out") from None
        try:
            same = os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
        except FileNotFoundError:
            same = False
        if same:  # not a file the previous holder unlinked after we opened it
            break
        handle.close()
    try:
        handle.seek(0)
        handle.truncate()
        try:  # who holds it, for a second run's message; unbuffered, so that closing never writes again
            os.write(handle.fileno(), json.dumps({"pid": os.getpid(), "host": socket.gethostname()}).encode())
        except OSError:  # a full disk: the lock holds without it, and the run's first write names the disk
            pass
        yield out
    finally:
        path.unlink(missing_ok=True)
        handle.close()
        if created and not any(out.iterdir()):
            out.rmdir()


def holds_run_directory(run: Callable) -> Callable:
    """Decorate a ``run_<benchmark>(..., out=...)`` function so that it runs under :func:`locked`
    (on the main process of a multi-process run)."""
    signature = inspect.signature(run)

    @functools.wraps(run)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        if os.environ.get("RANK", "0") != "0":
            return run(*args, **kwargs)
        with locked(bound.arguments["out"]):
            return run(*args, **kwargs)

    return wrapper
