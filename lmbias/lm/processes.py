"""This process's place among the processes of a run, from accelerate's :class:`~accelerate.PartialState`.

``lmbias run --num-processes N`` starts ``torchrun``; ``accelerate launch`` works as well. The
environment either sets (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``)
is what accelerate reads: nccl on GPUs, gloo on CPUs.
"""

from __future__ import annotations

import sys
from typing import Any


def process_state() -> Any:
    """accelerate's ``PartialState`` for this process (one process without a launcher)."""
    import torch
    from accelerate import PartialState

    return PartialState(cpu=not torch.cuda.is_available())


def cpu_threads(requested: int | None = None) -> int:
    """The CPU threads torch should use in this process.

    ``requested`` wins; then ``OMP_NUM_THREADS`` (torchrun sets 1 for several processes); otherwise
    the CPUs this process may run on less those other programs keep busy now (the machine's CPU use
    over a quarter of a second, while this process waits; a load average would count this
    process's own earlier work), divided among the run's processes (``WORLD_SIZE``), and at least 1.
    On a shared machine more threads than free cores make every thread wait: one thread scored
    1.6x faster than two with one of two cores busy (benchmarks/cpu_threads.py, RESULTS.md).
    """
    import os

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


def torchrun(argv: list[str]) -> int:
    """``torchrun ARGV`` in this process, quietly: the exit status of the first process that failed
    (a user mistake: 2, its one-line error printed by the main process), else 0; torchrun's own
    logs and its traceback of a failed process are not shown (each process prints its own errors)."""
    import logging

    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import parse_args, run

    for name in ("torch.distributed", "torch.distributed.run", "torch.distributed.elastic"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        run(parse_args(argv))
    except ChildFailedError as error:
        rank, failure = min(error.failures.items())
        if failure.exitcode != 2 or rank != 0:
            print(f"lmbias: error: process {rank} of the run stopped (exit status {failure.exitcode}); see its output above",
                  file=sys.stderr)
        return failure.exitcode if failure.exitcode > 0 else 1
    return 0
