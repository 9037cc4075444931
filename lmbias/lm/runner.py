"""Resumable generation over many prompts, on one process or many (torch.distributed).

A run directory holds:

* ``config.json``: the generation configuration (model, preset and settings, seed, batch size,
  samples per prompt, a digest of the prompt ids) and the library versions;
* ``shard-<rank>.jsonl``: one line per finished global batch, appended, flushed and fsynced;
* ``generations.jsonl``: written by rank 0 at the end, one line per prompt and sample, in input order.

Global batches go to ranks round-robin (batch ``b`` to rank ``b % world_size``) and are seeded from
``(seed, b)``, so the output does not depend on the number of processes. Running the same command
again skips the batches any shard already holds; a run killed mid-write loses at most the batch it
was writing. Resuming with a different configuration is refused, naming the setting that differs.

Launch several processes with ``lmbias run --num-processes N`` (which starts ``torchrun``), or with
``torchrun`` / ``accelerate launch`` yourself: the environment they set (``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``) is all this module reads.
"""

from __future__ import annotations

from ..errors import InputError, LmbiasError

import hashlib
import json
import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

from .. import __version__
from ..checks import check_texts
from .generation import batch_seed, check_context, generate_batch, plan_batches, prompt_lengths
from .loading import LanguageModel

CONFIG_FILE = "config.json"
GENERATIONS_FILE = "generations.jsonl"


class RunConfigError(InputError):
    """The run directory holds a run with another configuration (or is not a run directory)."""


@dataclass
class Distributed:
    """This process's place among the processes of a run."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        """True on rank 0, the process that logs and merges."""
        return self.rank == 0

    def barrier(self) -> None:
        """Wait for every process (no-op for one process)."""
        if self.world_size > 1:
            import torch.distributed as dist

            dist.barrier()

    def device(self, requested: Optional[str] = None) -> str:
        """``requested``, else this process's GPU (``cuda:<local rank>``) when there is one, else ``"cpu"``."""
        import torch

        return requested or (f"cuda:{self.local_rank}" if torch.cuda.is_available() else "cpu")

    def main_first(self, load: Callable[[], object]):
        """``load()`` on rank 0 first, then on the other ranks (rank 0 may fill a cache they read,
        e.g. the converted embedded model)."""
        if not self.is_main:
            self.barrier()
        result = load()
        if self.is_main:
            self.barrier()
        return result


def distributed_from_environment() -> Distributed:
    """Join the process group described by ``WORLD_SIZE`` / ``RANK`` (gloo on CPU, nccl on GPU)."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size <= 1:
        return Distributed()
    import torch
    import torch.distributed as dist

    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")
    rank = dist.get_rank()
    return Distributed(rank=rank, world_size=world_size, local_rank=int(os.environ.get("LOCAL_RANK", rank)))


def library_versions() -> dict:
    """Versions of Python, lmbias, torch and transformers (recorded in every run directory)."""
    import torch
    import transformers

    return {"python": platform.python_version(), "lmbias": __version__, "torch": torch.__version__, "transformers": transformers.__version__}


def ids_digest(ids: Sequence[str]) -> str:
    """A short digest of the prompt ids, to recognise a run over the same prompts."""
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]


def prepare_run_dir(run_dir: Path, config: dict, dist: Distributed) -> None:
    """Create ``run_dir`` with ``config.json``, or check that the existing run has the same configuration."""
    path = run_dir / CONFIG_FILE
    if dist.is_main:
        if path.is_file():
            recorded = json.loads(path.read_text())["config"]
            differing = sorted(k for k in set(recorded) | set(config) if recorded.get(k) != config.get(k))
            if differing:
                details = "; ".join(f"{k}: recorded {recorded.get(k)!r}, now {config.get(k)!r}" for k in differing)
                raise RunConfigError(
                    f"{run_dir} holds a run with another configuration ({details}). "
                    "Use another --out directory, or the same settings to resume."
                )
        elif run_dir.is_dir() and any(run_dir.iterdir()):
            raise RunConfigError(f"{run_dir} is not empty and holds no {CONFIG_FILE}: it is not an lmbias run directory")
        else:
            run_dir.mkdir(parents=True, exist_ok=True)
            _write_atomic(path, json.dumps({"config": config, "versions": library_versions()}, indent=2) + "\n")
    dist.barrier()


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def _repair_tail(path: Path) -> None:
    """Cut a partial last line (a process killed mid-write) so that appends start on a fresh line."""
    if not path.is_file():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as handle:
            handle.truncate(data.rfind(b"\n") + 1)


def finished_batches(run_dir: Path) -> dict[int, list[dict]]:
    """Batch index -> its results, from every shard of the run (a truncated last line is ignored)."""
    done: dict[int, list[dict]] = {}
    for shard in sorted(run_dir.glob("shard-*.jsonl")):
        for line in shard.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # the partial line of a killed process
            done.setdefault(record["batch"], record["items"])
    return done


def run_generation(
    lm_loader: Callable[[Distributed], LanguageModel],
    ids: Sequence[str],
    prompts: Sequence[str],
    run_dir,
    *,
    settings: dict,
    model_name: str,
    preset: str,
    seed: int = 0,
    batch_size: int = 32,
    num_return_sequences: int = 1,
    progress: bool = True,
    after_batch: Optional[Callable[[int], None]] = None,
) -> Optional[list[dict]]:
    """Generate for every prompt, resumably, on this process's share of the global batches.

    Args:
        lm_loader: returns the model for this process (called after the run directory is checked).
        ids, prompts: one id and one prompt per item.
        run_dir: the run directory (created if missing).
        settings: generation settings (see :func:`lmbias.lm.generation.generation_settings`).
        model_name, preset: recorded in the configuration.
        seed, batch_size, num_return_sequences: see the module docstring.
        progress: show a progress bar (rank 0 only).
        after_batch: called with the batch index after each batch is saved (tests use it to stop mid-run).

    Returns:
        On rank 0, one record per prompt and sample in input order (``id``, ``sample``, ``prompt``,
        ``continuation``, ``num_tokens``, ``stop_reason``); None on other ranks.
    """
    prompts = check_texts(prompts, "prompts")
    if len(ids) != len(prompts) or len(set(ids)) != len(ids):
        raise InputError(f"ids must be {len(prompts)} unique ids, one per prompt; got {len(ids)} ids, {len(set(ids))} unique")
    if num_return_sequences < 1:
        raise InputError(f"num_return_sequences must be >= 1, got {num_return_sequences}")
    dist = distributed_from_environment()
    run_dir = Path(run_dir)
    config = {
        "model": model_name,
        "preset": preset,
        "settings": settings,
        "seed": seed,
        "batch_size": batch_size,
        "num_return_sequences": num_return_sequences,
        "prompts": len(prompts),
        "prompt_ids_digest": ids_digest(ids),
    }
    prepare_run_dir(run_dir, config, dist)
    lm = lm_loader(dist)
    lengths = prompt_lengths(lm, prompts)
    check_context(lm, lengths, int(settings["max_new_tokens"]), ids)
    batches = plan_batches(lengths, batch_size)
    done = finished_batches(run_dir)
    dist.barrier()  # every rank has read what is done before anyone appends
    mine = [b for b in range(len(batches)) if b % dist.world_size == dist.rank and b not in done]

    shard = run_dir / f"shard-{dist.rank}.jsonl"
    _repair_tail(shard)
    bar = None
    if progress and dist.is_main:
        from tqdm.auto import tqdm

        bar = tqdm(total=sum(len(batches[b]) for b in mine), unit="prompt", desc=f"generating ({dist.world_size} proc)")
    started, new_tokens = time.perf_counter(), 0
    with open(shard, "a", encoding="utf-8") as handle:
        for b in mine:
            items = generate_batch(
                lm, [prompts[i] for i in batches[b]], settings, seed=batch_seed(seed, b), num_return_sequences=num_return_sequences
            )
            records = [
                {"id": ids[i], "sample": k, **items[j * num_return_sequences + k]}
                for j, i in enumerate(batches[b])
                for k in range(num_return_sequences)
            ]
            handle.write(json.dumps({"batch": b, "items": records}) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
            if bar is not None:
                new_tokens += sum(r["num_tokens"] for r in records)
                bar.update(len(batches[b]))
                bar.set_postfix(tokens_per_s=f"{new_tokens / (time.perf_counter() - started):.0f}")
            if after_batch is not None:
                after_batch(b)
    if bar is not None:
        bar.close()
    dist.barrier()
    if not dist.is_main:
        return None
    return merge_shards(run_dir, ids, prompts, len(batches))


def merge_shards(run_dir: Path, ids: Sequence[str], prompts: Sequence[str], n_batches: int) -> list[dict]:
    """Rank 0: every batch's results in input order (prompt, then sample), written to ``generations.jsonl``."""
    done = finished_batches(run_dir)
    missing = [b for b in range(n_batches) if b not in done]
    if missing:
        raise LmbiasError(f"{run_dir}: batches {missing[:10]} are missing after every process finished; run again to resume")
    by_id: dict[str, list[dict]] = {}
    for items in done.values():
        for item in items:
            by_id.setdefault(item["id"], []).append(item)
    prompt_of = dict(zip(ids, prompts))
    merged = [
        {"id": item["id"], "sample": item["sample"], "prompt": prompt_of[item["id"]], **{k: item[k] for k in ("continuation", "num_tokens", "stop_reason")}}
        for prompt_id in ids
        for item in sorted(by_id[prompt_id], key=lambda record: record["sample"])
    ]
    _write_atomic(run_dir / GENERATIONS_FILE, "".join(json.dumps(record) + "\n" for record in merged))
    return merged
