"""The processes of a run: this process's place among them (accelerate's :class:`~accelerate.PartialState`),
its device and CPU threads, starting several under torchrun, and stopping cleanly on SIGTERM.

``lmbias run --num-processes N`` starts ``torchrun``; ``accelerate launch`` works as well. The
environment either sets (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``)
is what accelerate reads: nccl on GPUs, gloo on CPUs.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def process_state() -> Any:
    """accelerate's ``PartialState`` for this process (one process without a launcher)."""
    import torch
    from accelerate import PartialState

    return PartialState(cpu=not torch.cuda.is_available())


def leave_together() -> None:
    """Wait for every process of the run, then close the process group (nothing to do in one process).

    A process that exits while another still writes aborts in gloo's teardown ("terminate called
    without an active exception"), failing a run whose results were fine.
    """
    import torch

    if torch.distributed.is_available() and torch.distributed.is_initialized():
        state = process_state()
        state.wait_for_everyone()
        state.destroy_process_group()


def cpu_threads(requested: int | None = None) -> int:
    """The CPU threads torch should use in this process.

    ``requested`` wins; then ``OMP_NUM_THREADS`` (torchrun sets 1 for several processes); otherwise
    the CPUs this process may run on less those other programs keep busy now (the machine's CPU use
    over a quarter of a second, while this process waits; a load average would count this
    process's own earlier work), divided among the run's processes (``WORLD_SIZE``), and at least 1.
    On a shared machine more threads than free cores make every thread wait: one thread scored
    1.6x faster than two with one of two cores busy (bench/cpu_threads.py, RESULTS.md).
    """
    import psutil  # a dependency of accelerate

    if requested is not None:
        return requested
    if os.environ.get("OMP_NUM_THREADS", "").strip().isdigit():
        return max(1, int(os.environ["OMP_NUM_THREADS"]))
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    busy = round(psutil.cpu_percent(interval=0.25) / 100 * (psutil.cpu_count() or cpus))
    return max(1, (cpus - min(busy, cpus - 1)) // max(1, int(os.environ.get("WORLD_SIZE", "1"))))


def process_device(state: Any, requested: str | None = None) -> str:
    """``requested``, else this process's accelerator (``cuda:<local rank>``), else ``"cpu"``."""
    if requested:
        return requested
    return "cpu" if state.device.type == "cpu" else str(state.device)


# Where the processes of a run started by :func:`torchrun` leave their one-line errors (the launcher prints them once).
ERRORS_VARIABLE = "LMBIAS_PROCESS_ERRORS"


def report_error(message: str) -> None:
    """Print a user mistake's one line, or, in a process started by :func:`torchrun`, leave it for the
    launcher, which prints it once for all the processes (each meets the same mistake)."""
    folder = os.environ.get(ERRORS_VARIABLE)
    if folder and os.path.isdir(folder):
        (Path(folder) / f"{os.environ.get('RANK', '0')}.txt").write_text(message, encoding="utf-8")
    else:
        print(message, file=sys.stderr)


def torchrun(argv: list[str]) -> int:
    """``torchrun ARGV`` in this process, quietly: torchrun's own logs and its traceback of a failed
    process are not shown. A user mistake (exit status 2) is printed once, whichever processes met
    it; returns the exit status of the run (the first failed process's, else 0)."""
    import logging
    import tempfile

    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import parse_args, run

    for name in ("torch.distributed", "torch.distributed.run", "torch.distributed.elastic"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    with tempfile.TemporaryDirectory(prefix="lmbias-errors-") as folder:
        os.environ[ERRORS_VARIABLE] = folder
        try:
            run(parse_args(argv))
        except ChildFailedError as error:
            messages = [path.read_text(encoding="utf-8") for path in sorted(Path(folder).glob("*.txt"))]
            for message in dict.fromkeys(messages):
                print(message, file=sys.stderr)
            if messages:
                return 2
            rank, failure = min(error.failures.items())
            print(f"lmbias: error: process {rank} of the run stopped (exit status {failure.exitcode}); see its output above",
                  file=sys.stderr)
            return failure.exitcode if failure.exitcode > 0 else 1
    return 0


def relaunch(num_processes: int, argv: Sequence[str]) -> int:
    """Start ``num_processes`` copies of this command under torchrun (gloo on CPU, nccl on GPU)."""
    import socket
    import subprocess

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    rest = [a for i, a in enumerate(argv) if a != "--num-processes" and (i == 0 or argv[i - 1] != "--num-processes")]
    rest = [a for a in rest if not a.startswith("--num-processes=")]
    command = [
        sys.executable, "-c", "import sys; from lmbias.lm.processes import torchrun; sys.exit(torchrun(sys.argv[1:]))",
        "--nproc_per_node", str(num_processes), "--master_addr", "127.0.0.1", "--master_port", str(port),
        "--module", "lmbias", *rest,
    ]
    return subprocess.call(command)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


@contextlib.contextmanager
def stop_cleanly_on_sigterm():
    """Within the block SIGTERM (``kill``, a scheduler's time limit) stops like Ctrl-C: finished work
    stays, temporary files and the run directory's lock are removed, and the run resumes when
    started again. The previous handler is restored after."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def set_threads(requested: int | None) -> None:
    """Set torch's CPU threads for a run (:func:`cpu_threads`)."""
    import torch

    from ..checks import check_scalar

    if requested is not None:
        check_scalar(requested, "--threads", minimum=1)
    torch.set_num_threads(cpu_threads(requested))
