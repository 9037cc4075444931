"""Where a model runs: the default device, a ``--device`` checked, and a model split over this
machine's devices with accelerate (``--device-map``, ``--max-memory``)."""

from __future__ import annotations

import os
import re
from typing import Any

from ..checks import check_choice
from ..errors import InputError
from ..resources import cache_dir


def input_device(model: Any):
    """Where a model's inputs go: its device, or for a model dispatched over several devices
    (``device_map``), the device of its first module that is not offloaded to disk (else the CPU)."""
    import torch

    placed = getattr(model, "hf_device_map", None)
    if placed:
        for where in placed.values():
            if where not in ("disk", "meta"):
                return torch.device(f"cuda:{where}" if isinstance(where, int) else where)
        return torch.device("cpu")
    return model.device


DEVICE_MAPS = ("auto", "balanced", "balanced_low_0", "sequential")


def placement(device: str | None, device_map: str | None, max_memory: dict | None) -> dict:
    """``from_pretrained`` keywords that place a model: on one ``device`` (the default), or split over
    this machine's devices by accelerate (``device_map``, with ``max_memory`` per device and layers
    that fit nowhere offloaded to ``<lmbias cache>/offload``).

    Raises:
        InputError: ``device_map`` with ``device``, ``max_memory`` without ``device_map``, or
            ``device_map`` in a run of several processes (each would load the whole split model).
    """
    if device_map is None:
        if max_memory:
            raise InputError("--max-memory applies to --device-map; add --device-map auto")
        return {}
    check_choice(device_map, DEVICE_MAPS, "device_map")
    if device is not None:
        raise InputError("give --device or --device-map, not both: --device-map places the model over the devices itself")
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise InputError("--device-map splits one model over this machine's devices and cannot be combined with several "
                         "processes (--num-processes, accelerate launch, torchrun); run one process")
    return {"device_map": device_map, "max_memory": dict(max_memory) if max_memory else None,  # accelerate edits it
            "offload_folder": str(cache_dir() / "offload")}


def parse_max_memory(entries) -> dict | None:
    """``--max-memory`` entries (``0=70GiB``, ``cuda:1=40GiB``, ``cpu=200GiB``) as accelerate's
    ``max_memory`` ({0: "70GiB", 1: "40GiB", "cpu": "200GiB"}); None for none.

    >>> parse_max_memory(["0=70GiB", "cpu=100GB"])
    {0: '70GiB', 'cpu': '100GB'}
    """
    if not entries:
        return None
    parsed = {}
    for entry in entries:
        device, _, size = str(entry).partition("=")
        device = device.strip().removeprefix("cuda:")
        if not size or not re.fullmatch(r"\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", size.strip()):
            raise InputError(f"--max-memory {entry!r}: expected DEVICE=SIZE, e.g. 0=70GiB, cuda:1=40GiB or cpu=200GiB")
        if not (device.isdigit() or device in ("cpu", "mps", "disk")):
            raise InputError(f"--max-memory {entry!r}: the device must be a GPU number, cpu or mps")
        parsed[int(device) if device.isdigit() else device] = size.strip()
    return parsed


def default_device() -> str:
    """``"cuda"`` when a GPU is available, else ``"cpu"``."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def check_device(device: str | None) -> str | None:
    """``device`` if torch can use it here (None: the default); else a one-line error naming ``--device``."""
    import torch

    if device is None:
        return None
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError):
        raise InputError(f"--device {device!r} is not a device torch knows; expected cpu, cuda, cuda:1, mps ...") from None
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise InputError(f"--device {device}: no CUDA GPU is available here (torch {torch.__version__}); use --device cpu "
                         "or leave --device out")
    if parsed.type == "cuda" and parsed.index is not None and parsed.index >= torch.cuda.device_count():
        raise InputError(f"--device {device}: this machine has {torch.cuda.device_count()} CUDA GPU(s), numbered from 0")
    if parsed.type == "mps" and not torch.backends.mps.is_available():
        raise InputError(f"--device {device}: Apple's MPS is not available here; use --device cpu")
    return device
