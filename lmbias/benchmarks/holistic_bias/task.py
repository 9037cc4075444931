"""HolisticBias (Smith et al. 2022) scored with a language model: the perplexity of each sentence
the authors compare (:func:`lmbias.benchmarks.holistic_bias.data.likelihood_bias_rows`), then
Likelihood Bias per axis (:func:`lmbias.benchmarks.holistic_bias.measure.likelihood_bias`).

A sentence's perplexity is exp(- mean log-probability of its tokens), each token given the start
token and the tokens before it (:func:`lmbias.lm.likelihood.token_logprobs`). The authors scored
BlenderBot's replies with ParlAI, whose perplexity also counts the end-of-reply token after a
conversational context; a causal LM reading plain text has no such end, so lmbias scores the
sentence alone (documented in the metric card). A chat run (``--chat``) scores it as the assistant's
reply to :data:`~lmbias.lm.chat.SENTENCE_REQUEST` in the model's chat template instead.

The full comparison set is 549,120 sentences (660 descriptors x 26 templates x 32 nouns): about two
and a half hours for a 135M model on two CPU cores (65 sentences/s). ``templates`` / ``nouns`` / ``axes`` / ``small_set`` run a
deterministic part of it (the run is marked partial); every descriptor of an axis keeps the same
templates and nouns, so the tests stay balanced.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...checks import check_choices, check_scalar
from ...errors import InputError
from ...lm import likelihood
from ...lm.chat import SENTENCE_REQUEST
from ...lm.spec import ModelSpec
from ...protocols.likelihood import check_rows, load_and_score, scoring_timing, with_scores
from ...run_lock import holds_run_directory
from ...run_result import RunResult, coverage, model_description
from .data import AXES, RESPONSIBLE_NLP_COMMIT, SPEC, likelihood_bias_rows, sentences
from .measure import THRESHOLD, likelihood_bias, smallest_p, smallest_sample

FULL_SET = 549_120  # the sentences Likelihood Bias compares in v1.1
TEMPLATES, NOUNS = 26, 32


def score_holistic_bias(lm: Any, rows: Sequence[dict], *, batch_size: int = 64) -> list[dict]:
    """The perplexity of each row's ``text`` (a causal LM); in a chat run (``lm.chat``) of the text as
    the assistant's reply to :data:`~lmbias.lm.chat.SENTENCE_REQUEST` in the chat template.

    Returns:
        One record per row: ``id``, ``logprob`` (the summed log-probability), ``tokens`` and ``perplexity``.
    """
    rows = check_rows(rows, ("id", "text"), "HolisticBias")
    texts = [row["text"] for row in rows]
    if getattr(lm, "chat", None) is not None:
        values = likelihood.reply_logprobs(lm, [SENTENCE_REQUEST] * len(texts), texts, batch_size=batch_size)
    else:
        values = likelihood.token_logprobs(lm.model, lm.tokenizer, texts, batch_size=batch_size, prefix="bos")
    sums, counts = values.sum.astype(np.float64), values.n_tokens
    return [{"id": row["id"], "logprob": float(total), "tokens": int(count), "perplexity": math.exp(-total / count)}
            for row, total, count in zip(rows, sums, counts)]


def _sample(values: list[str], size: int | None, rng: np.random.Generator, what: str) -> list[str]:
    if size is None:
        return values
    check_scalar(size, what, minimum=2, maximum=len(values), expected=f"an integer from 2 to {len(values)} (the {what} there are)")
    chosen = set(rng.choice(len(values), size=size, replace=False).tolist())
    return [value for index, value in enumerate(values) if index in chosen]


def select_rows(*, axes: Sequence[str] = AXES, templates: int | None = None, nouns: int | None = None,
                small_set: bool = False, seed: int = 0, data_dir=None) -> tuple[list[dict], dict]:
    """The compared sentences of ``axes``, of ``templates`` templates and ``nouns`` nouns drawn
    without replacement with ``numpy.random.default_rng(seed)`` (None: all), or of the authors' small
    set of 100 descriptors; returns the rows and what was chosen."""
    rows = likelihood_bias_rows(sentences(data_dir, small_set=small_set))
    all_templates = list(dict.fromkeys(row["template"] for row in rows))
    all_nouns = list(dict.fromkeys(row["noun"] for row in rows))
    rng = np.random.default_rng(seed)
    kept_templates = set(_sample(all_templates, templates, rng, "templates"))
    kept_nouns = set(_sample(all_nouns, nouns, rng, "nouns"))
    rows = [row for row in rows if row["axis"] in axes and row["template"] in kept_templates and row["noun"] in kept_nouns]
    descriptors: dict = {}
    for row in rows:
        descriptors.setdefault(row["axis"], set()).add(row["descriptor"])
    if not any(len(found) >= 2 for found in descriptors.values()):
        raise InputError(f"no pair of descriptors to compare with --axes {' '.join(axes)}"
                         + (" and --small-set" if small_set else "") + ": Likelihood Bias compares descriptors within an "
                         f"axis, and these have {', '.join(f'{axis}: {len(found)}' for axis, found in descriptors.items()) or 'none'}")
    return rows, {"templates": sorted(kept_templates), "nouns": sorted(kept_nouns)}


@holds_run_directory
def run_holistic_bias(
    *,
    model: ModelSpec | str | None = None,
    out="runs/holistic_bias",
    axes: Sequence[str] = AXES,
    templates: int | None = None,
    nouns: int | None = None,
    small_set: bool = False,
    threshold: float = THRESHOLD,
    batch_size: int = 64,
    seed: int = 0,
    progress: bool = True,
    data_dir=None,
) -> RunResult | None:
    """HolisticBias's Likelihood Bias with a model; writes the perplexities to ``out`` as it goes (a
    rerun resumes) and returns the run.

    Args:
        model: a :class:`~lmbias.lm.spec.ModelSpec` (or a model name; None: the embedded default).
        axes: the demographic axes to run (default all 13).
        templates, nouns: run this many of the 26 templates / 32 nouns, drawn with ``seed`` (None: all).
        small_set: only the authors' small set of 100 descriptors.
        threshold: the Mann-Whitney p-value below which a descriptor pair differs (the authors' 0.05).
        batch_size: sentences per forward pass.

    Returns:
        The run (:class:`~lmbias.run_result.RunResult`) on the main process, None on the others.
    """
    spec = ModelSpec.of(model)
    axes = check_choices(axes, list(AXES), "axes")
    check_scalar(threshold, "threshold", minimum=0, maximum=1, integer=False, expected="a p-value threshold between 0 and 1")
    if not isinstance(small_set, bool):
        raise InputError(f"small_set must be True or False, got {small_set!r}")
    if nouns is not None and isinstance(nouns, int) and not isinstance(nouns, bool) and 2 <= nouns < smallest_sample(threshold):
        raise InputError(f"--nouns {nouns} cannot show a difference: with {nouns} sentences per descriptor the smallest two-sided "
                         f"Mann-Whitney p-value is {smallest_p(nouns, nouns):.3g}, not below --threshold {threshold}; use "
                         f"--nouns {smallest_sample(threshold)} or more")
    check_scalar(batch_size, "batch_size", minimum=1)
    check_scalar(seed, "seed", minimum=0)
    rows, chosen = select_rows(axes=axes, templates=templates, nouns=nouns, small_set=small_set, seed=seed, data_dir=data_dir)
    settings = {"axes": list(axes), "templates": templates, "nouns": nouns, "small_set": small_set,
                "seed": seed if templates or nouns else None}
    lm, kind, _, records, timing, placement = load_and_score(
        lambda lm, kind, part: score_holistic_bias(lm, part, batch_size=batch_size), rows, out=out, benchmark="holistic_bias",
        run_config={**settings, "batch_size": batch_size}, model=spec, model_type="auto", kinds=("causal",),
        show_progress=progress, label="HolisticBias: scoring", unit="sentence", chat_scoring=True)
    if records is None:
        return None
    results = likelihood_bias([r["perplexity"] for r in records], axes=[r["axis"] for r in rows],
                              templates=[r["template"] for r in rows], descriptors=[r["descriptor"] for r in rows],
                              threshold=threshold)
    reason = " ".join(part for part in (
        f"--templates {templates}" if templates else "", f"--nouns {nouns}" if nouns else "", "--small-set" if small_set else "",
        f"--axes {' '.join(axes)}" if len(axes) < len(AXES) else "") if part)
    result = RunResult(
        benchmark="holistic_bias", out=str(out), model=model_description(lm, type=kind),
        data={"dataset": "holistic_bias", "version": "v1.1", "split": "test", "revision": RESPONSIBLE_NLP_COMMIT,
              "citation": SPEC.citation,
              "counts": {"sentences": len(rows), "descriptors": sum(b["descriptors"] for b in results["axes"].values()),
                         "templates": len(chosen["templates"]), "nouns": len(chosen["nouns"])}},
        config={**settings, "threshold": threshold, "batch_size": batch_size, "dtype": spec.dtype,
                "perplexity": "exp(-mean log-probability of the sentence's tokens, " + (
                    "as the assistant's reply to \"Write a sentence.\" in the chat template)" if lm.chat is not None
                    else "given the start token)"),
                "chosen_templates": chosen["templates"] if templates else None, "chosen_nouns": chosen["nouns"] if nouns else None,
                **placement},
        results=results,
        partial=coverage({"sentences": (len(rows), FULL_SET)}, reason or "short data files"),
        timing=scoring_timing(timing, 1),
    )
    return with_scores(out, result, records)
