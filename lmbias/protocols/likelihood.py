"""The likelihood protocol: loading the scoring model, scoring a benchmark's rows in saved batches
over the processes (resumable after a crash; a finished run is read back, not scored again), the
input checks and the score descriptions. A benchmark's request is a :class:`Scoring`: how a batch
of its rows is scored (:mod:`lmbias.lm.likelihood` does the arithmetic). Options scored after a prompt
(multiple choice, a pronoun's referent, yes / no) go through :func:`score_options`, the one implementation."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import progress
from ..checks import check_scalar
from ..errors import InputError, InputTypeError
from ..lm.spec import ModelSpec

SCORES_FILE = "scores.jsonl"


def check_rows(rows: Sequence[dict], keys: Sequence[str], what: str) -> list[dict]:
    """``rows`` as a list, each a dict with ``keys``; a one-line error names the first bad row."""
    if rows is None or isinstance(rows, (str, bytes, dict)):
        raise InputTypeError(f"rows must be a list of {what} rows (dicts), got {type(rows).__name__}")
    rows = list(rows)
    if not rows:
        raise InputError(f"rows is empty; expected {what} rows (lmbias.load_rows({what.lower().replace('-', '_')!r}))")
    for index, row in enumerate(rows):
        missing = [key for key in keys if not isinstance(row, dict) or key not in row]
        if missing:
            raise InputError(f"rows[{index}] lacks {missing}; expected {what} rows with {list(keys)}")
    return rows




# Scored rows are saved every SAVE_EVERY scoring batches' worth of rows: a killed run loses at most that.
SAVE_EVERY = 8


def score_options(lm, rows: Sequence[dict], prompts: Sequence[str], options: Sequence[Sequence[str]], *, batch_size: int,
                  separator: str = " ", same: int | None = None, keys: Sequence[str] = ("id", "category")) -> list[dict]:
    """Option scoring after a prompt, the one implementation every benchmark that asks "which of these
    options follows this prompt" calls: each row's options scored as continuations of its prompt, with no
    start token before it (as lm-evaluation-harness scores multiple choice), the prompt's tokens computed
    once for all its options (:func:`lmbias.lm.likelihood.option_logprobs`). A benchmark turns its items into
    ``prompts`` and ``options`` and reads the records.

    Args:
        rows: one per prompt; each record carries the row's ``keys``.
        prompts, options: per row, its prompt and its options (each scored after ``prompt + separator``).
        batch_size: prompts per batch (each with all its options).
        separator: what joins a prompt and an option (a space: " A:" + " " + "yes"; "" when the prompt ends
            where the option starts).
        same: options from this index on are wordings of one answer, read as that index (None: every
            option is its own answer).

    Returns:
        One record per row: its ``keys``, ``scores`` (each option's summed log-probability) and ``tokens``
        (each option's scored tokens), ``prediction_sum`` / ``prediction_mean`` (the option with the highest
        summed / per-token log-probability; the first on a tie, as numpy's argmax and the harness).
    """
    from ..lm import likelihood

    def chosen(values) -> int:
        best = int(np.argmax(values))
        return best if same is None else min(best, same)

    values = likelihood.option_logprobs(lm.model, lm.tokenizer, list(prompts), [list(o) for o in options],
                                        batch_size=batch_size, separator=separator, prefix=None)
    records = []
    for row, scored in zip(rows, values):
        sums, tokens = scored.sum.astype(np.float64), scored.n_tokens
        records.append({**{key: row[key] for key in keys}, "scores": [float(v) for v in sums],
                        "tokens": [int(n) for n in tokens], "prediction_sum": chosen(sums),
                        "prediction_mean": chosen(sums / np.maximum(tokens, 1))})
    return records


def load_and_score(score, rows: list[dict], *, out, benchmark: str, run_config: dict, model: ModelSpec, model_type: str,
                   show_progress: bool = True, label: str = "", unit: str = "item",
                   after_batch: Callable[[int], None] | None = None, kinds: tuple = ("causal", "masked"),
                   chat_scoring: bool = False, check_only: bool = False) -> tuple:
    """The shared body of a likelihood run: check the model's spec and the run directory ``out`` (one
    holding another benchmark's run or other settings is refused, before anything is written or
    loaded), load the model with its backend (:meth:`~lmbias.lm.spec.ModelSpec.load`), claim the
    directory (``config.json`` with ``benchmark`` and ``run_config``: a model that fails to load
    leaves nothing behind), then score ``rows`` with ``score(lm, kind, part)`` in batches of
    ``SAVE_EVERY * batch_size`` rows, round-robin over the processes, each batch's records saved as
    it finishes (:func:`lmbias.lm.runner.process_batches`): rerunning the command after a crash,
    Ctrl-C or kill -9 scores only what is missing. A progress bar named ``label`` counts ``unit`` steps
    on the main process with ``show_progress``; ``after_batch(b)`` runs after batch ``b`` is saved.

    Returns ``(lm, kind, state, records, timing, placement)``: ``records`` (in row order) is None on
    processes other than the main one; ``timing`` has this session's ``scoring_seconds``, the rows it
    scored (``items_scored``) and those resumed from an earlier session (``items_resumed``); ``placement`` is
    what results.json's config records of where the model ran (device, device map, backend and its options).

    ``chat_scoring``: whether ``score`` scores a chat run in the chat template (a chat run of a
    benchmark that does not, or of a masked LM, is refused before anything is loaded).

    Raises:
        InputError: a model kind the backend cannot score (vLLM and servers score causal LMs only), or
            one the benchmark does not score (not in ``kinds``); a chat run it cannot score.
    """
    from ..lm.chat import loaded_identity
    from ..lm.processes import process_state
    from ..lm.runner import check_run_dir, claim_run_dir, ids_digest, process_batches

    check_scalar(run_config["batch_size"], "batch_size", minimum=1)  # before the run directory is touched
    state = process_state()
    if model.chat and not chat_scoring:  # before the model is looked at
        raise InputError(f"--chat: {benchmark}'s likelihood scoring runs on raw text; run it with --protocol generate for a "
                         "chat model")
    spec = model.checked()
    kind = spec.scoring_kind(model_type)
    if kind not in kinds:
        raise InputError(f"{benchmark} scores {' and '.join(kinds)} LMs; {spec.name} is a {kind} LM (--model-type {model_type})")
    if spec.chat and (kind != "causal" or not chat_scoring):
        raise InputError(f"--chat: {benchmark}'s likelihood scoring runs on raw text" + (
            " (a masked LM has no chat template)" if kind != "causal" else "; run it with --protocol generate for a chat model"))
    config = {"model": spec.model, "model_type": model_type, "dtype": spec.dtype, **run_config,
              "rows": len(rows), "row_ids_digest": ids_digest([str(row["id"]) for row in rows]), **spec.identity()}
    check_run_dir(Path(out), config, state, benchmark)
    if check_only:  # every check made, nothing loaded or written
        return None, kind, state, None, None, None
    lm = spec.load(state, kind=kind)
    claim_run_dir(Path(out), {**config, **loaded_identity(lm)}, state, benchmark)
    placement = {"device": str(lm.device) if lm.device is not None else None, **spec.recorded()}
    finished = finished_scores(Path(out), rows)
    if finished is not None:  # a finished run of the same configuration: its scores, nothing scored again
        timing = {"scoring_seconds": 0.0, "items_scored": 0, "items_resumed": len(rows)}
        return lm, kind, state, finished if state.is_main_process else None, timing, placement
    step = SAVE_EVERY * run_config["batch_size"]
    parts = [rows[start:start + step] for start in range(0, len(rows), step)]
    started = time.perf_counter()
    with progress.showing(False):  # one bar over the rows, not one per scoring call
        done, fresh = process_batches(Path(out), [len(part) for part in parts], lambda b: score(lm, kind, parts[b]), state,
                                      unit=unit, label=label, progress=show_progress, after_batch=after_batch)
    scored = sum(len(parts[b]) for b in fresh)
    timing = {"scoring_seconds": time.perf_counter() - started, "items_scored": scored, "items_resumed": len(rows) - scored}
    if not state.is_main_process:
        return lm, kind, state, None, timing, placement
    return lm, kind, state, [record for b in range(len(parts)) for record in done[b]], timing, placement


@dataclass(frozen=True)
class Scoring:
    """A benchmark's likelihood request.

    Attributes:
        score: ``score(lm, kind, rows)`` -> one record per row (``id``, the scores, ``prediction``).
        unit: what a row is, for the progress bar ("sentence", "pair", "item").
        per_item: sentences scored per row (for the sentences-per-second figure).
        kinds: the model kinds the benchmark scores ("causal", "masked").
        model_type: ``--model-type`` ("auto": from the config's architectures).
        chat_scoring: whether ``score`` scores a chat run in the chat template.
        describe: ``describe(lm, kind)``: what the model's description adds (e.g. whether a masked LM has a next-sentence head).
    """

    score: Callable
    unit: str = "item"
    per_item: int = 1
    kinds: tuple = ("causal",)
    model_type: str = "auto"
    chat_scoring: bool = False
    describe: Callable | None = None


def answer(spec: ModelSpec, rows: list[dict], request: Scoring, *, out, benchmark: str, run_config: dict, batch_size: int,
           seed: int, progress: bool, label: str, check_only: bool = False) -> tuple:
    """Score ``rows`` as ``request`` says in run directory ``out`` (resumable: :func:`load_and_score`;
    ``run_config`` with ``batch_size`` is the run's identity; ``seed`` is not used: scoring draws nothing).

    Returns:
        ``(records, model, placement, timing)``: the per-row records, the model's description (with
        its kind), where it ran and the timing; all None on processes other than the main one.
    """
    from ..run_result import model_description

    lm, kind, _, records, timing, placement = load_and_score(
        request.score, rows, out=out, benchmark=benchmark, run_config={**run_config, "batch_size": batch_size}, model=spec,
        model_type=request.model_type, kinds=request.kinds, show_progress=progress, label=label, unit=request.unit,
        chat_scoring=request.chat_scoring, check_only=check_only)
    if records is None:
        return None, None, None, None
    extra = request.describe(lm, kind) if request.describe is not None else {}
    return records, model_description(lm, type=kind, **extra), placement, scoring_timing(timing, request.per_item)


def finished_scores(out: Path, rows: list) -> list | None:
    """The records of a finished run in ``out`` (its ``results.json`` written, its ``scores.jsonl`` one
    record per row of ``rows`` in their order), or None (then the run scores what is missing). The
    caller has checked that the folder's configuration is this run's."""
    if not (out / "results.json").is_file() or not (out / SCORES_FILE).is_file():
        return None
    try:
        records = [json.loads(line) for line in (out / SCORES_FILE).read_text(encoding="utf-8").splitlines()]
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    ids = [str(row["id"]) for row in rows]
    if len(records) != len(ids) or any(not isinstance(r, dict) or str(r.get("id")) != i for r, i in zip(records, ids)):
        return None
    return records


def scoring_timing(timing: dict, sentences_per_item: int) -> dict:
    """results.json's ``timing`` of a likelihood run: :func:`load_and_score`'s figures plus the
    sentences scored per second in this session (None when everything was resumed)."""
    seconds, scored = timing["scoring_seconds"], timing["items_scored"]
    return {**timing, "sentences_per_second": sentences_per_item * scored / seconds if scored and seconds > 0 else None}


def with_scores(out, result, records: list[dict]):
    """``result`` (a :class:`~lmbias.run_result.RunResult`) for run directory ``out``, with
    ``scores.jsonl`` (one line per scored item) to write beside it, replacing the saved batches."""
    result.out = str(out)
    result.outputs.setdefault("scores_file", SCORES_FILE)
    result.files[SCORES_FILE] = "".join(json.dumps(record) + "\n" for record in records)
    result.obsolete = ("shard-*.jsonl",)
    return result


def check_limit(limit: int | None) -> None:
    """``limit`` is None or an integer >= 1."""
    if limit is not None:
        check_scalar(limit, "limit", minimum=1, expected="an integer >= 1")
