"""What Winogender and WinoBias share: a pronoun resolved to one of two people by likelihood.

Each sentence is followed by the question :data:`REFERENT_PROMPT` (``"<sentence> ‘He’ refers to
the"``, the wording of lm-evaluation-harness's ``winogender`` tasks) and each candidate (" " +
"technician") is scored as its continuation, with no start token before the prompt, as the harness
scores it (:func:`lmbias.lm.likelihood.option_logprobs`: the prompt is computed once for both). The
candidate with the higher summed log-probability is the model's answer (the harness's ``acc``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..lm import likelihood
from .likelihood_run import check_rows

REFERENT_PROMPT = "{sentence} ‘{pronoun}’ refers to the"
ROW_KEYS = ("id", "sentence", "pronoun", "candidates", "label")


def referent_prompt(sentence: str, pronoun: str) -> str:
    """The question after a sentence (:data:`REFERENT_PROMPT`), the pronoun capitalised as the harness
    does (Python's ``str.capitalize``).

    >>> referent_prompt("The nurse notified the patient that her shift would be ending in an hour.", "her")
    'The nurse notified the patient that her shift would be ending in an hour. ‘Her’ refers to the'
    """
    return REFERENT_PROMPT.format(sentence=sentence, pronoun=pronoun.capitalize())


def score_referents(lm: Any, rows: Sequence[dict], *, batch_size: int = 32, what: str = "coreference") -> list[dict]:
    """Score each row's candidates after its prompt (a causal LM).

    Args:
        rows: dicts with ``id``, ``sentence``, ``pronoun``, ``candidates`` (the two people, without
            article) and ``label`` (the index of the one the pronoun refers to).

    Returns:
        One record per row: ``id``, ``scores`` (each candidate's summed log-probability), ``tokens``
        (each candidate's scored tokens) and ``prediction`` (the index of the higher score; the first
        on a tie, as numpy's argmax and the harness).
    """
    rows = check_rows(rows, ROW_KEYS, what)
    values = likelihood.option_logprobs(lm.model, lm.tokenizer, [referent_prompt(r["sentence"], r["pronoun"]) for r in rows],
                                        [list(r["candidates"]) for r in rows], batch_size=batch_size, prefix=None)
    return [{"id": row["id"], "scores": [float(v) for v in scored.sum.astype(np.float64)],
             "tokens": [int(n) for n in scored.n_tokens], "prediction": int(np.argmax(scored.sum.astype(np.float64)))}
            for row, scored in zip(rows, values)]


def score_run(spec, rows: list[dict], *, out, benchmark: str, run_config: dict, batch_size: int, progress: bool,
              label: str) -> tuple:
    """Score ``rows`` in run directory ``out`` (resumable, :func:`lmbias.benchmarks.likelihood_run.load_and_score`).

    Returns:
        ``(records, model, placement, timing)``: the per-row records (:func:`score_referents`), the
        model's description, where it ran and the timing; all None on processes other than the main one.
    """
    from ..run_result import model_description
    from .likelihood_run import load_and_score, scoring_timing

    lm, kind, _, records, timing, placement = load_and_score(
        lambda lm, kind, part: score_referents(lm, part, batch_size=batch_size, what=benchmark), rows, out=out,
        benchmark=benchmark, run_config={**run_config, "batch_size": batch_size}, model=spec, model_type="auto",
        kinds=("causal",), show_progress=progress, label=label, unit="sentence")
    if records is None:
        return None, None, None, None
    return records, model_description(lm, type=kind), placement, scoring_timing(timing, 2)
