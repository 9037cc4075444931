"""BBQ (Parrish et al. 2022) answered by a language model, declared for the generic run
(its :data:`~lmbias.benchmarks.bbq.BENCHMARK`, run by :func:`lmbias.benchmarks.declared.run_task`), two ways:

* ``likelihood`` (default; hf, vllm, and servers that return prompt log-probabilities): each item's
  prompt (:data:`PROMPT`: the context, then "Q: <question>" and "A:", the wording of
  lm-evaluation-harness's ``bbq`` task) is followed by each of its three answers (" " + answer),
  scored as a continuation of the prompt alone, with no start token before it, as the harness
  scores it (:func:`lmbias.protocols.likelihood.score_options`: the prompt is computed once for the
  three). The answer with the highest summed log-probability is the model's (``--decision sum``, the
  default: it is the probability of the answer as a string, and the harness's ``acc``); the one with
  the highest log-probability per token (``--decision mean``) is recorded beside it, and both sets of
  scores are in results.json.
* ``generate`` (a model without log-probabilities): the three answers as lettered options
  (:data:`LETTERED_PROMPT`) in an order shuffled per item from the seed, the answer generated
  greedily and read as a letter or as an answer's text (:func:`parse_answer`); one that is neither
  is invalid, counted and reported beside the scores, never taken as wrong or unknown.

The unknown answer is each item's own (its ``answer_info`` label), never a position; the scores are
:func:`lmbias.benchmarks.bbq.measure.bbq_scores` (:func:`measure`). A run's identity (the folder's
config.json) is its protocol, ``--categories`` and ``--limit``: ``--decision`` and ``--bootstrap`` change
what is computed from the same answers, so that a rerun with another of them scores nothing again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ...errors import InputError
from ...protocols import GENERATE, LIKELIHOOD, choice, get_protocol
from ...protocols.choice import Questions
from ...protocols.likelihood import Scoring, check_rows, score_options
from ..declared import Ask
from .data import ANSWERS, BBQ_COMMIT, SPEC
from .measure import bbq_scores

DECISIONS = ("sum", "mean")  # --decision: how a scored answer is chosen (a protocol that reads replies has no choice)
PROMPT = "{context}\n\nQ: {question}\nA:"
LETTERS = choice.LETTERS[:3]
LETTERED_PROMPT = ("{context}\n\nQuestion: {question}\nA. {A}\nB. {B}\nC. {C}\n"
                   "Answer with the letter of the correct option.\nAnswer:")
GENERATED_TOKENS = choice.GENERATED_TOKENS
ROW_KEYS = ("id", "category", "context", "question", *ANSWERS, "label", "target_loc", "unknown_loc", "question_polarity",
            "context_condition")


def prompt(row: dict) -> str:
    """The likelihood prompt of a BBQ row (:data:`PROMPT`)."""
    return PROMPT.format(context=row["context"], question=row["question"])


def score_bbq(lm: Any, rows: Sequence[dict], *, batch_size: int = 32, prompt: Callable[[dict], str] = prompt) -> list[dict]:
    """Score the three answers of each row after its prompt (a causal LM; ``prompt``: a row's prompt, by
    default BBQ's :data:`PROMPT`; a set of BBQ's layout in another language gives its own).

    Returns:
        One record per row: ``id``, ``category``, ``scores`` (the summed log-probability of each answer),
        ``tokens`` (each answer's scored tokens), ``prediction_sum`` / ``prediction_mean`` (the answer
        index with the highest sum / mean per token).
    """
    rows = check_rows(rows, ROW_KEYS, "BBQ")
    return score_options(lm, rows, [prompt(row) for row in rows], [[row[key] for key in ANSWERS] for row in rows],
                         batch_size=batch_size)


def option_order(row_id: str, seed: int) -> list[int]:
    """The order the three answers are shown in for ``row_id`` (answer indices by letter A, B, C): a
    permutation that depends on the seed and the item only."""
    return choice.option_order(row_id, 3, seed, "lmbias-bbq")


def lettered_prompt(row: dict, order: Sequence[int]) -> str:
    """The generative prompt of a BBQ row with its answers in ``order`` (:data:`LETTERED_PROMPT`)."""
    return LETTERED_PROMPT.format(context=row["context"], question=row["question"],
                                  **{letter: row[ANSWERS[index]] for letter, index in zip(LETTERS, order)})


parse_answer = choice.parse_choice  # a reply read as a letter or an answer's text


def scoring(rows: list[dict], settings: dict) -> Scoring:
    """The likelihood request: the three answers scored after each prompt (:func:`score_bbq`, three sentences per item)."""
    batch_size = settings["batch_size"]
    return Scoring(lambda lm, kind, part: score_bbq(lm, part, batch_size=batch_size), unit="item", per_item=3)


def questions(rows: list[dict], settings: dict) -> Questions:
    """The generate request: the lettered question (:func:`lettered_prompt`), its answers in an order shuffled per
    item from the seed (:func:`option_order`)."""
    orders = [option_order(row["id"], settings["seed"]) for row in rows]
    return Questions([row["id"] for row in rows], [lettered_prompt(row, order) for row, order in zip(rows, orders)],
                     [[row[key] for key in ANSWERS] for row in rows], orders)


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


def decisions(protocol: str) -> tuple:
    """The decision rules a ``protocol`` run records: both (:data:`DECISIONS`) where answers are scored,
    none where a reply is read (it is the item's one answer)."""
    return () if get_protocol(protocol).reads_replies else DECISIONS


def predicted(records: list[dict], settings: dict) -> list:
    """Each record's answer: by ``--decision`` where answers were scored, the reply's where one was read (None:
    invalid). BBQ's multilingual sets read their records the same way."""
    key = f"prediction_{settings['decision']}" if decisions(settings["protocol"]) else "prediction"
    return [record[key] for record in records]


def check(protocol: str, options: dict) -> None:
    """``--decision`` other than the default is refused where the protocol reads a reply."""
    if options["decision"] != "sum" and not decisions(protocol):
        raise InputError("--decision applies to --protocol likelihood (a generated answer is read, not scored)")


def measure(records: list[dict], rows: list[dict], settings: dict, data_dir) -> dict:
    """:func:`aggregate_bbq` of the answers chosen by ``--decision``; a scored run also keeps each
    rule's categories and overall under ``by_decision``."""
    rules = decisions(settings["protocol"])
    predictions = ({name: [r[f"prediction_{name}"] for r in records] for name in rules} if rules
                   else {settings["decision"]: [r["prediction"] for r in records]})
    results = {name: aggregate_bbq(rows, answers, bootstrap=settings["bootstrap"], seed=settings["seed"])
               for name, answers in predictions.items()}
    return {**results[settings["decision"]],
            **({"by_decision": {name: {key: block[key] for key in ("categories", "overall")} for name, block in results.items()}}
               if rules else {})}


def data(rows: list[dict], options: dict, data_dir) -> dict:
    """results.json's ``data``: the split, the revision, the citation, the categories and the counts per category."""
    categories = options["categories"]
    return {"dataset": "bbq", "split": "test", "revision": BBQ_COMMIT, "citation": SPEC.citation, "categories": list(categories),
            "counts": {"items": len(rows), **{c: sum(r["category"] == c for r in rows) for c in categories}}}


def outcomes(records: list[dict], rows: list[dict], settings: dict) -> list:
    """Whether each item's answer (by ``--decision`` where the run scored) is the correct one; None: invalid."""
    return [None if answer is None else answer == row["label"] for answer, row in zip(predicted(records, settings), rows)]


# the two protocols: results.json's config.prompt, the decision rule where answers are scored, generate's token budget
# (after the prompt, as before)
RULES = {"sum": "summed", "mean": "per-token"}  # --decision's rule, in the summary's words
ASKS = (
    Ask(LIKELIHOOD, "the three answers scored as continuations of the question", scoring, prompt=PROMPT,
        config=lambda options: {"decision": options["decision"]},
        how=lambda config: f"likelihood, the answer with the highest {RULES.get(config.get('decision'))} log-probability"),
    Ask(GENERATE, "lettered options, the answer generated and read (for models without log-probabilities)", questions,
        prompt=LETTERED_PROMPT, config=lambda options: {"decision": None, "max_new_tokens": GENERATED_TOKENS},
        how="generated answers to lettered options"),
)


