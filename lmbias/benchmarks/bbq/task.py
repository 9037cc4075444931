"""BBQ (Parrish et al. 2022) answered by a language model, two ways:

* ``likelihood`` (default; hf, vllm, and servers that return prompt log-probabilities): each item's
  prompt (:data:`PROMPT`: the context, then "Q: <question>" and "A:", the wording of
  lm-evaluation-harness's ``bbq`` task) is followed by each of its three answers (" " + answer),
  scored as a continuation of the prompt alone, with no start token before it, as the harness
  scores it (:func:`lmbias.lm.likelihood.option_logprobs`: the prompt is computed once for the
  three). The answer with the highest summed log-probability is the model's (``--decision sum``, the
  default: it is the probability of the answer as a string, and the harness's ``acc``); the one with
  the highest log-probability per token (``--decision mean``) is recorded beside it, and both sets of
  scores are in results.json.
* ``generate`` (a model without log-probabilities): the three answers as lettered options
  (:data:`LETTERED_PROMPT`) in an order shuffled per item from the seed, the answer generated
  greedily and read as a letter or as an answer's text (:func:`parse_answer`); one that is neither
  is invalid, counted and reported beside the scores, never taken as wrong or unknown.

The unknown answer is each item's own (its ``answer_info`` label), never a position; the scores are
:func:`lmbias.benchmarks.bbq.measure.bbq_scores`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...checks import check_choice, check_choices, check_scalar
from ...errors import InputError
from ...lm import likelihood
from ...lm.spec import ModelSpec
from ...protocols import choice, get_protocol
from ...protocols.choice import Questions
from ...protocols.likelihood import Scoring, check_limit, check_rows
from ...run_lock import holds_run_directory
from ...run_result import RunResult, coverage
from .data import ANSWERS, BBQ_COMMIT, CATEGORIES, SPEC
from .measure import bbq_scores

DECISIONS = ("sum", "mean")  # --decision: how a scored answer is chosen (a protocol that reads replies has no choice)
PROMPT = "{context}\n\nQ: {question}\nA:"
LETTERS = choice.LETTERS[:3]
LETTERED_PROMPT = ("{context}\n\nQuestion: {question}\nA. {A}\nB. {B}\nC. {C}\n"
                   "Answer with the letter of the correct option.\nAnswer:")
GENERATED_TOKENS = choice.GENERATED_TOKENS
PROMPTS = {"likelihood": PROMPT, "generate": LETTERED_PROMPT}  # results.json's config.prompt, per protocol
SETTINGS = {"generate": {"max_new_tokens": GENERATED_TOKENS}}  # what else results.json's config records, per protocol
ROW_KEYS = ("id", "category", "context", "question", *ANSWERS, "label", "target_loc", "unknown_loc", "question_polarity",
            "context_condition")


def prompt(row: dict) -> str:
    """The likelihood prompt of a BBQ row (:data:`PROMPT`)."""
    return PROMPT.format(context=row["context"], question=row["question"])


def score_bbq(lm: Any, rows: Sequence[dict], *, batch_size: int = 32) -> list[dict]:
    """Score the three answers of each row after its prompt (a causal LM).

    Returns:
        One record per row: ``id``, ``category``, ``scores`` (the summed log-probability of each answer),
        ``tokens`` (each answer's scored tokens), ``prediction_sum`` / ``prediction_mean`` (the answer
        index with the highest sum / mean per token).
    """
    rows = check_rows(rows, ROW_KEYS, "BBQ")
    values = likelihood.option_logprobs(lm.model, lm.tokenizer, [prompt(row) for row in rows],
                                        [[row[key] for key in ANSWERS] for row in rows], batch_size=batch_size, prefix=None)
    records = []
    for row, answers in zip(rows, values):
        sums, tokens = answers.sum.astype(np.float64), answers.n_tokens
        records.append({"id": row["id"], "category": row["category"], "scores": [float(v) for v in sums],
                        "tokens": [int(n) for n in tokens], "prediction_sum": int(np.argmax(sums)),
                        "prediction_mean": int(np.argmax(sums / np.maximum(tokens, 1)))})
    return records


def option_order(row_id: str, seed: int) -> list[int]:
    """The order the three answers are shown in for ``row_id`` (answer indices by letter A, B, C): a
    permutation that depends on the seed and the item only."""
    return choice.option_order(row_id, 3, seed, "lmbias-bbq")


def lettered_prompt(row: dict, order: Sequence[int]) -> str:
    """The generative prompt of a BBQ row with its answers in ``order`` (:data:`LETTERED_PROMPT`)."""
    return LETTERED_PROMPT.format(context=row["context"], question=row["question"],
                                  **{letter: row[ANSWERS[index]] for letter, index in zip(LETTERS, order)})


parse_answer = choice.parse_choice  # a reply read as a letter or an answer's text


def request(protocol: str, rows: list[dict], *, batch_size: int, seed: int):
    """What ``protocol`` is asked for ``rows``: the three answers scored after each prompt
    (:func:`score_bbq`, three sentences per item), or the lettered question (:func:`lettered_prompt`),
    its answers in an order shuffled per item from the seed (:func:`option_order`)."""
    def scoring() -> Scoring:
        return Scoring(lambda lm, kind, part: score_bbq(lm, part, batch_size=batch_size), unit="item", per_item=3)

    def questions() -> Questions:
        orders = [option_order(row["id"], seed) for row in rows]
        return Questions([row["id"] for row in rows], [lettered_prompt(row, order) for row, order in zip(rows, orders)],
                         [[row[key] for key in ANSWERS] for row in rows], orders)

    return {"likelihood": scoring, "generate": questions}[protocol]()


def select_rows(categories: Sequence[str], limit: int | None, data_dir=None) -> list[dict]:
    """The rows of ``categories``: each whole, or the first ``limit`` items of each context condition
    and polarity (the files hold groups of four, one of each, so these are the first ``limit``
    groups: a sample keeps the set's balance)."""
    from .data import read_category

    rows = []
    for category in categories:
        taken: Counter = Counter()
        for row in read_category(category, data_dir):
            taken[row["context_condition"], row["question_polarity"]] += 1
            if limit is None or taken[row["context_condition"], row["question_polarity"]] <= limit:
                rows.append(row)
    return rows


def score_group(row: dict) -> str:
    """The category a row is scored under: its own, or "<category> (names)" for the items about proper
    names, which the authors' script scores apart (:func:`lmbias.benchmarks.bbq.data.label_type`)."""
    return f"{row['category']} (names)" if row.get("label_type") == "name" else row["category"]


def aggregate_bbq(rows: Sequence[dict], predictions: Sequence[int | None], *, bootstrap: int = 0, seed: int = 0) -> dict:
    """:func:`bbq_scores` of the rows' answers per category as the authors' script keys it
    (:func:`score_group`), with their subcategory (Disability, Physical appearance) or
    intersectional comparison as the subgroup."""
    def subgroup(row):
        if row.get("subcategory") not in (None, "None"):
            return row["subcategory"][:1].upper() + row["subcategory"][1:]  # "pregnancy" and "Pregnancy" are one
        return row.get("comparison") if row.get("comparison") not in (None, "None") else None

    return bbq_scores(predictions, labels=[r["label"] for r in rows], target_locs=[r["target_loc"] for r in rows],
                      unknown_locs=[r["unknown_loc"] for r in rows], question_polarities=[r["question_polarity"] for r in rows],
                      context_conditions=[r["context_condition"] for r in rows], categories=[score_group(r) for r in rows],
                      subgroups=[subgroup(r) for r in rows], bootstrap=bootstrap, seed=seed)


@holds_run_directory
def run_bbq(
    *,
    model: ModelSpec | str | None = None,
    out="runs/bbq",
    categories: Sequence[str] = tuple(CATEGORIES),
    protocol: str = "likelihood",
    decision: str = "sum",
    limit: int | None = None,
    batch_size: int = 32,
    bootstrap: int = 0,
    seed: int = 0,
    progress: bool = True,
    data_dir=None,
) -> RunResult | None:
    """BBQ with a model; writes its answers to ``out`` as it goes (a rerun resumes) and returns the run.

    Args:
        model: a :class:`~lmbias.lm.spec.ModelSpec` (or a model name; None: the embedded default).
        categories: the category files to run (default all 11).
        protocol: "likelihood" (the three answers scored as continuations) or "generate" (lettered
            options, the answer generated greedily); see the module docstring.
        decision: with "likelihood", the answer chosen by summed ("sum") or per-token ("mean") log-probability.
        limit: at most this many items per category, context condition and polarity (a quick look;
            the run is marked partial).
        batch_size: items per forward pass (likelihood) or prompts per generation batch.
        bootstrap, seed: percentile intervals from this many resamples (0: none); the seed also
            shuffles the lettered options.

    Returns:
        The run (:class:`~lmbias.run_result.RunResult`, for :func:`lmbias.benchmarks.save_run`) on the
        main process, None on the others.
    """
    spec = ModelSpec.of(model)
    categories = check_choices(categories, list(CATEGORIES), "categories")
    used = get_protocol(protocol)
    check_choice(decision, DECISIONS, "decision")
    if decision != "sum" and used.reads_replies:
        raise InputError("--decision applies to --protocol likelihood (a generated answer is read, not scored)")
    used.refuse_chat(spec, "bbq")  # before any model is checked or loaded
    check_limit(limit)
    check_scalar(batch_size, "batch_size", minimum=1)
    check_scalar(bootstrap, "bootstrap", minimum=0, expected="an integer >= 0 (0: no intervals)")
    check_scalar(seed, "seed", minimum=0)
    rows = select_rows(categories, limit, data_dir)
    records, described, placement, timing = used.answer(
        spec, rows, request(protocol, rows, batch_size=batch_size, seed=seed), out=out, benchmark="bbq",
        run_config={"protocol": protocol, "categories": list(categories), "limit": limit}, batch_size=batch_size, seed=seed,
        progress=progress, label=f"BBQ: {used.verb}")
    if records is None:
        return None
    # a read reply is the item's one answer; scored answers are chosen by each rule, all of them recorded
    decisions = () if used.reads_replies else DECISIONS
    predictions = ({name: [r[f"prediction_{name}"] for r in records] for name in decisions} if decisions
                   else {decision: [r["prediction"] for r in records]})
    results = {name: aggregate_bbq(rows, answers, bootstrap=bootstrap, seed=seed) for name, answers in predictions.items()}
    chosen = results[decision]
    reason = " ".join(part for part in (f"--limit {limit}" if limit else "",
                                        f"--categories {' '.join(categories)}" if len(categories) < len(CATEGORIES) else "") if part)
    result = RunResult(
        benchmark="bbq", out=str(out), model=described,
        data={"dataset": "bbq", "split": "test", "revision": BBQ_COMMIT, "citation": SPEC.citation, "categories": list(categories),
              "counts": {"items": len(rows), **{c: sum(r["category"] == c for r in rows) for c in categories}}},
        config={"protocol": protocol, "decision": decision if decisions else None, "categories": list(categories),
                "limit": limit, "batch_size": batch_size, "bootstrap": bootstrap, "seed": seed, "dtype": spec.dtype,
                "prompt": PROMPTS[protocol], **SETTINGS.get(protocol, {}), **placement},
        results={**chosen, **({"by_decision": {name: {key: block[key] for key in ("categories", "overall")}
                                               for name, block in results.items()}} if decisions else {})},
        partial=coverage({"items": (len(rows), SPEC.expected_rows())}, reason or "short data files"),
        timing=timing,
    )
    return used.finish(out, result, records)
