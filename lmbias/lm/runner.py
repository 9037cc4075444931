"""Resumable generation over many prompts, on one process or many (accelerate).

A run directory holds:

* ``config.json``: the benchmark, the generation configuration (model, preset and settings, seed, batch size,
  samples per prompt, a digest of the prompt ids) and the library versions;
* ``shard-<rank>.jsonl``: one line per finished global batch, appended, flushed and fsynced;
* ``generations.jsonl``: written by rank 0 at the end, one line per prompt and sample, in input order.

Global batches go to ranks round-robin (batch ``b`` to rank ``b % world_size``) and are seeded from
``(seed, b)``, so the output does not depend on the number of processes. Running the same command
again skips the batches any shard already holds; a run killed mid-write loses at most the batch it
was writing. Resuming with a different configuration is refused, naming the setting that differs.

Launch several processes with ``lmbias run --num-processes N`` (which starts ``torchrun``), or with
``torchrun`` / ``accelerate launch`` yourself (:mod:`lmbias.lm.processes`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..checks import check_scalar, check_texts
from ..errors import InputError, LmbiasError
from ..files import write_atomic
from ..run_lock import LOCK_FILE
from ..run_result import library_versions
from .generation import batch_seed, check_context, plan_batches, prompt_lengths
from .loading import LanguageModel
from .processes import process_state

CONFIG_FILE = "config.json"
GENERATIONS_FILE = "generations.jsonl"


class RunConfigError(InputError):
    """The run directory holds a run with another configuration (or is not a run directory)."""


def ids_digest(ids: Sequence[str]) -> str:
    """A short digest of the prompt ids, to recognise a run over the same prompts."""
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]


def prepare_run_dir(run_dir: Path, config: dict, state: Any, benchmark: str | None = None) -> None:
    """Create ``run_dir`` with ``config.json``, or check that the existing run has the same configuration."""
    path = run_dir / CONFIG_FILE
    if state.is_main_process:
        if path.is_file():
            try:
                saved = json.loads(path.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as error:
                raise RunConfigError(f"{path} is not valid JSON ({type(error).__name__}); it is not an lmbias run "
                                     "configuration: move the directory away or use another --out") from None
            if not isinstance(saved, dict) or not isinstance(saved.get("config"), dict):
                raise RunConfigError(f"{path} is not an lmbias run configuration (expected an object with 'config'); "
                                     "use another --out")
            if saved.get("benchmark") not in (None, benchmark):
                raise RunConfigError(f"{run_dir} holds a {saved['benchmark']} run, not {benchmark}: use another --out directory")
            recorded = saved["config"]
            differing = sorted(k for k in set(recorded) | set(config) if recorded.get(k) != config.get(k))
            if differing:
                details = "; ".join(f"{k}: recorded {recorded.get(k)!r}, now {config.get(k)!r}" for k in differing)
                raise RunConfigError(
                    f"{run_dir} holds a run with another configuration ({details}). "
                    "Use another --out directory, or the same settings to resume."
                )
        elif run_dir.is_dir() and any(entry.name != LOCK_FILE for entry in run_dir.iterdir()):
            raise RunConfigError(f"{run_dir} is not empty and holds no {CONFIG_FILE}: it is not an lmbias run directory")
        else:
            run_dir.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps({"benchmark": benchmark, "config": config, "versions": library_versions()}, indent=2) + "\n")
    state.wait_for_everyone()


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
        lines = shard.read_text(encoding="utf-8", errors="replace").splitlines()
        for number, line in enumerate(lines, 1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                if number == len(lines):
                    continue  # the partial last line of a killed process
                record = None
            if not (isinstance(record, dict) and isinstance(record.get("batch"), int) and isinstance(record.get("items"), list)):
                raise RunConfigError(f"{shard} line {number} is not a batch record of an lmbias run (edited, or another "
                                     "program's file); move the run directory away and run again")
            done.setdefault(record["batch"], record["items"])
    return done


def run_generation(
    lm_loader: Callable[[Any], LanguageModel],
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
    after_batch: Callable[[int], None] | None = None,
    benchmark: str | None = None,
    backend: str = "hf",
) -> list[dict] | None:
    """Generate for every prompt, resumably, on this process's share of the global batches.

    Args:
        lm_loader: ``lm_loader(state)`` returns the model for this process (``state``: accelerate's
            ``PartialState``), called after the run directory is checked.
        ids, prompts: one id and one prompt per item.
        run_dir: the run directory (created if missing).
        settings: generation settings (see :func:`lmbias.lm.generation.generation_settings`).
        model_name, preset: recorded in the configuration.
        seed, batch_size, num_return_sequences: see the module docstring.
        progress: show a progress bar (rank 0 only).
        after_batch: called with the batch index after each batch is saved (tests use it to stop mid-run).
        benchmark: the benchmark the run belongs to, recorded in ``config.json`` (so that an unfinished
            run is never guessed from its preset).
        backend: the inference backend (:mod:`lmbias.lm.backends`); recorded, so that a run is never
            resumed on another backend (their samples differ).

    Returns:
        On rank 0, one record per prompt and sample in input order (``id``, ``sample``, ``prompt``,
        ``continuation``, ``num_tokens``, ``stop_reason``); None on other ranks.
    """
    prompts = check_texts(prompts, "prompts")
    if len(ids) != len(prompts) or len(set(ids)) != len(ids):
        raise InputError(f"ids must be {len(prompts)} unique ids, one per prompt; got {len(ids)} ids, {len(set(ids))} unique")
    check_scalar(num_return_sequences, "num_return_sequences", minimum=1)
    check_scalar(batch_size, "batch_size", minimum=1)  # before the run directory is touched
    state = process_state()
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
        **({"backend": backend} if backend != "hf" else {}),
    }
    prepare_run_dir(run_dir, config, state, benchmark)
    lm = lm_loader(state)
    lengths = prompt_lengths(lm, prompts)
    check_context(lm, lengths, int(settings["max_new_tokens"]), ids)
    batches = plan_batches(lengths, batch_size)
    done = finished_batches(run_dir)
    if done and state.is_main_process:
        already = sum(len(batches[b]) for b in done if b < len(batches))
        print(f"resuming {run_dir}: {already:,} of {len(prompts):,} prompts already done", file=sys.stderr, flush=True)
    state.wait_for_everyone()  # every rank has read what is done before anyone appends
    mine = [b for b in range(len(batches)) if b % state.num_processes == state.process_index and b not in done]

    shard = run_dir / f"shard-{state.process_index}.jsonl"
    _repair_tail(shard)
    bar = None
    if progress and state.is_main_process:
        from tqdm.auto import tqdm

        bar = tqdm(total=sum(len(batches[b]) for b in mine), unit="prompt", desc=f"generating ({state.num_processes} proc)")
    started, new_tokens = time.perf_counter(), 0
    with open(shard, "a", encoding="utf-8") as handle:
        for b in mine:
            items = lm.generate([prompts[i] for i in batches[b]], settings, seed=batch_seed(seed, b),
                                num_return_sequences=num_return_sequences, ids=[ids[i] for i in batches[b]])
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
    state.wait_for_everyone()
    if not state.is_main_process:
        return None
    return merge_shards(run_dir, ids, prompts, len(batches))


def causal_lm_loader(model: str | None, *, dtype=None, device=None, device_map=None, max_memory=None,
                     described: dict | None = None, backend: str = "hf", engine_options: dict | None = None,
                     seed: int = 0) -> Callable[[Any], LanguageModel]:
    """The ``lm_loader`` of :func:`run_generation` for a causal LM: on this process's device, or split
    over the machine's devices (``device_map``, one process), or a vLLM engine (``backend="vllm"``,
    ``engine_options``: :data:`lmbias.lm.backends.VLLM_OPTIONS`); the main process loads first (it may
    fill the converted-model cache), or a model on an OpenAI-compatible server (``backend="openai"``,
    ``engine_options``: :data:`lmbias.lm.backends.SERVER_OPTIONS`). ``described`` receives
    :func:`~lmbias.run_result.model_description`."""
    from ..run_result import model_description
    from .loading import load_causal_lm
    from .processes import process_device

    def loader(state) -> LanguageModel:
        if backend != "hf" and state.num_processes > 1:
            raise InputError(f"--backend {backend} runs its own workers; start one lmbias process")
        if backend == "vllm":
            from .backends.vllm import load_vllm

            lm = load_vllm(model, dtype=dtype, seed=seed, **(engine_options or {}))
        elif backend == "openai":
            from .backends.openai import connect

            lm = connect(model=model, seed=seed, **(engine_options or {}))
        else:
            with state.main_process_first():
                lm = load_causal_lm(model, dtype=dtype, device=device if device_map else process_device(state, device),
                                    device_map=device_map, max_memory=max_memory)
        if described is not None:
            described.update(model_description(lm))
        return lm

    return loader


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
        {"id": item["id"], "sample": item["sample"], "prompt": prompt_of[item["id"]],
         **{k: item[k] for k in ("continuation", "num_tokens", "stop_reason")}}
        for prompt_id in ids
        for item in sorted(by_id[prompt_id], key=lambda record: record["sample"])
    ]
    write_atomic(run_dir / GENERATIONS_FILE, "".join(json.dumps(record) + "\n" for record in merged))
    return merged
