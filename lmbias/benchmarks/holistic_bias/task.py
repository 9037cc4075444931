"""HolisticBias (Smith et al. 2022) scored with a language model: the perplexity of each sentence
the authors compare (:func:`lmbias.benchmarks.holistic_bias.data.likelihood_bias_rows`), then
Likelihood Bias per axis (:func:`lmbias.benchmarks.holistic_bias.measure.likelihood_bias`), declared for
the generic run (:func:`lmbias.benchmarks.declared.run_task` with :data:`~lmbias.benchmarks.holistic_bias.BENCHMARK`:
one protocol, likelihood, so no ``--protocol``).

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

from ...checks import check_scalar
from ...errors import InputError
from ...lm import likelihood
from ...lm.chat import SENTENCE_REQUEST
from ...protocols.likelihood import check_rows
from .data import AXES, RESPONSIBLE_NLP_COMMIT, SPEC, likelihood_bias_rows, sentences
from .measure import likelihood_bias, smallest_p, smallest_sample

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


# --------------------------------------------------------------------------- the declaration

PERPLEXITY = "exp(-mean log-probability of the sentence's tokens, "


def check(protocol: str, options: dict) -> None:
    """A ``--nouns`` too small for any descriptor pair to differ at ``--threshold`` is refused."""
    nouns, threshold = options["nouns"], options["threshold"]
    if nouns is not None and isinstance(nouns, int) and not isinstance(nouns, bool) and 2 <= nouns < smallest_sample(threshold):
        raise InputError(f"--nouns {nouns} cannot show a difference: with {nouns} sentences per descriptor the smallest two-sided "
                         f"Mann-Whitney p-value is {smallest_p(nouns, nouns):.3g}, not below --threshold {threshold}; use "
                         f"--nouns {smallest_sample(threshold)} or more")


def drawn(settings: dict) -> dict:
    """The run's own options as its identity and config record them (the seed only where it drew something)."""
    return {"axes": list(settings["axes"]), "templates": settings["templates"], "nouns": settings["nouns"],
            "small_set": settings["small_set"], "seed": settings["seed"] if settings["templates"] or settings["nouns"] else None}


def _chosen(rows: list[dict]) -> dict:
    """The templates and nouns drawn (every descriptor keeps them all: :func:`select_rows`)."""
    return {"templates": sorted({row["template"] for row in rows}), "nouns": sorted({row["noun"] for row in rows})}


def recorded(config: dict, rows: list[dict], settings: dict, model: dict) -> dict:
    """results.json's config: the options, the threshold, how a perplexity is computed, what was drawn."""
    chosen = _chosen(rows)
    return {**drawn(settings), "threshold": settings["threshold"], "batch_size": settings["batch_size"], "dtype": config["dtype"],
            "perplexity": PERPLEXITY + ("as the assistant's reply to \"Write a sentence.\" in the chat template)" if "chat" in model
                                        else "given the start token)"),
            "chosen_templates": chosen["templates"] if settings["templates"] else None,
            "chosen_nouns": chosen["nouns"] if settings["nouns"] else None}


def measure(records: list[dict], rows: list[dict], settings: dict, data_dir) -> dict:
    """Likelihood Bias per axis (:func:`likelihood_bias`) of the perplexities."""
    return likelihood_bias([r["perplexity"] for r in records], axes=[r["axis"] for r in rows],
                           templates=[r["template"] for r in rows], descriptors=[r["descriptor"] for r in rows],
                           threshold=settings["threshold"])


def data(rows: list[dict], settings: dict, data_dir) -> dict:
    """results.json's ``data``: the version, the revision, the citation and the counts."""
    chosen = _chosen(rows)
    descriptors = {(row["axis"], row["descriptor"]) for row in rows}
    return {"dataset": "holistic_bias", "version": "v1.1", "split": "test", "revision": RESPONSIBLE_NLP_COMMIT,
            "citation": SPEC.citation,
            "counts": {"sentences": len(rows), "descriptors": len(descriptors),
                       "templates": len(chosen["templates"]), "nouns": len(chosen["nouns"])}}


