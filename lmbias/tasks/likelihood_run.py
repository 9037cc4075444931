"""What the StereoSet and CrowS-Pairs runs share: loading the scoring model, splitting the rows over
the processes and gathering the records, the input checks and the score descriptions."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

from .. import progress
from ..checks import check_scalar
from ..errors import InputError, InputTypeError

SCORES_FILE = "scores.jsonl"
SCORE_DESCRIPTIONS = {
    ("causal", "intrasentence"): "mean log-probability per subword of the option sentence (the first subword given "
    "BOS/EOS, the others given the sentence alone, as the authors' code)",
    ("causal", "intersentence"): "mean log-probability per subword of the option sentence given the context",
    ("masked", "mean-probability"): "mean probability of the option word's subwords at the blank (left to right), as the "
    "authors' code",
    ("masked", "mean-logprob"): "mean log-probability of the option word's subwords at the blank (left to right), the "
    "paper's §7.1 wording",
    ("masked", "intersentence"): "next-sentence-prediction probability of the option sentence after the context",
    ("causal", "crows_pairs"): "log-likelihood of the sentence (sum over subwords, the first given BOS/EOS)",
    ("masked", "crows_pairs"): "pseudo-log-likelihood of the tokens both sentences share",
}



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




def load_and_score(score, rows: list[dict], *, out, benchmark: str, run_config: dict, model, model_type: str, dtype, device,
                   device_map=None, max_memory=None, backend: str = "hf", engine_options: dict | None = None,
                   show_progress: bool = True, label: str = "") -> tuple:
    """The shared start of a likelihood run: check the backend and the run directory ``out`` (a new
    one gets ``config.json`` with ``benchmark`` and ``run_config``; one holding another benchmark's
    run or other settings is refused, before anything is written or loaded), load the model (``hf``:
    the main process first, as it may fill the converted-model cache; ``vllm`` / ``openai``: a causal
    LM through :func:`lmbias.lm.runner.causal_lm_loader`), score ``rows`` split across the processes
    with ``score(lm, kind, part)`` (a progress bar on the main process with ``show_progress``,
    ``label`` naming the benchmark) and gather the records.

    Returns ``(lm, kind, state, records, seconds, placement)``: ``records`` (in row order) is None on
    processes other than the main one; ``placement`` is what results.json's config records of where
    the model ran (device, device map, backend and its options).

    Raises:
        InputError: masked-LM scoring with a backend other than ``hf`` (vLLM and servers score causal LMs).
    """
    from accelerate.utils import gather_object

    from ..lm.backends import check_backend
    from ..lm.loading import check_model_path, detect_model_type, load_scoring_model
    from ..lm.processes import process_device, process_state
    from ..lm.runner import causal_lm_loader, prepare_run_dir

    check_scalar(run_config["batch_size"], "batch_size", minimum=1)  # before the run directory is touched
    state = process_state()
    if backend != "openai":  # a served model's name is the server's (check_backend asks the server)
        check_model_path(model, "model")  # causal or masked
    engine_options = check_backend(backend, engine_options, device_map=device_map, model=model)
    detected = detect_model_type(model) if backend == "vllm" and model_type == "auto" else None  # a served name is no checkpoint
    if backend != "hf" and "masked" in (model_type, detected):
        raise InputError(f"--backend {backend} scores causal LMs only; masked-LM scoring (pseudo-log-likelihood, "
                         "next-sentence prediction) needs --backend hf")
    if backend == "openai":
        from ..lm.backends.openai import check_tokenizer

        check_tokenizer(engine_options.get("tokenizer") or model)
    on_backend = {"backend": backend, **engine_options} if backend != "hf" else {}
    prepare_run_dir(Path(out), {"model": model, "model_type": model_type, "dtype": dtype, **run_config, **on_backend},
                    state, benchmark)
    if backend == "hf":
        with state.main_process_first():
            lm, kind = load_scoring_model(model, model_type=model_type, dtype=dtype, device_map=device_map, max_memory=max_memory,
                                          device=device if device_map else process_device(state, device))
    else:
        lm, kind = causal_lm_loader(model, dtype=dtype, backend=backend, engine_options=engine_options)(state), "causal"
    placement = {"device": str(lm.device) if backend == "hf" else None, **on_backend,
                 **({"device_map": device_map, "max_memory": max_memory} if device_map else {})}
    started = time.perf_counter()
    with state.split_between_processes(rows) as mine, progress.showing(show_progress and state.is_main_process, label):
        records = score(lm, kind, mine) if mine else []
    if state.num_processes > 1:
        records = gather_object(records)
    return lm, kind, state, records if state.is_main_process else None, time.perf_counter() - started, placement


def write_scores_run(out, result, records: list[dict]) -> dict:
    """Write ``<out>/scores.jsonl`` (one line per scored item) and ``<out>/results.json`` from ``result``
    (a :class:`~lmbias.run_result.RunResult`); returns the results dict."""
    from ..run_result import write_run

    result.outputs.setdefault("scores_file", SCORES_FILE)
    return write_run(out, result, files={SCORES_FILE: "".join(json.dumps(record) + "\n" for record in records)})


def check_limit(limit: int | None) -> None:
    """``limit`` is None or an integer >= 1."""
    if limit is not None:
        check_scalar(limit, "limit", minimum=1, expected="an integer >= 1")
