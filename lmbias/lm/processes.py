"""This process's place among the processes of a run, from accelerate's :class:`~accelerate.PartialState`.

``lmbias run --num-processes N`` starts ``torchrun``; ``accelerate launch`` works as well. The
environment either sets (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``)
is what accelerate reads: nccl on GPUs, gloo on CPUs.
"""

from __future__ import annotations

from typing import Any


def process_state() -> Any:
    """accelerate's ``PartialState`` for this process (one process without a launcher)."""
    import torch
    from accelerate import PartialState

    return PartialState(cpu=not torch.cuda.is_available())


def process_device(state: Any, requested: str | None = None) -> str:
    """``requested``, else this process's accelerator (``cuda:<local rank>``), else ``"cpu"``."""
    if requested:
        return requested
    return "cpu" if state.device.type == "cpu" else str(state.device)
