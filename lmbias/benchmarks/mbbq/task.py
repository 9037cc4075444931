"""MBBQ's run: the declaration for the generic run (:func:`lmbias.benchmarks.declared.run_task`).

Likelihood protocol: each item's three answers are scored as the continuation of its context and question,
in the item's language, worded as the authors' prompts word them (their second prompt, "Context: ...
Question: ... Answer:", in each language: :data:`PROMPTS`), without the lettered options (a likelihood run
scores the answers themselves); the answer with the highest summed log-probability (``--decision mean``:
per token) is the model's. With the control set (default), its items are scored the same way and read as
the authors read them: the templates the model does not understand in every language run are left out
(:mod:`lmbias.benchmarks.mbbq.measure`).

A sample (``--limit N``) takes the first N items of each template, context condition and question
polarity, in the main and the control set alike, so every template keeps both conditions.
"""

from __future__ import annotations

from collections import Counter

from ...protocols.likelihood import Scoring
from ..bbq.task import DECISIONS, score_bbq
from ..declared import Option, Task
from .data import CATEGORIES, CITATION, LANGUAGES, MBBQ_COMMIT, ROWS, SETS, read_file
from .measure import mbbq_scores

# The authors' second prompt per language (their answer_detection.py, trans_prompt_dict), without the options.
PROMPTS = {"en": "Context: {context} Question: {question} Answer:", "nl": "Context: {context} Vraag: {question} Antwoord:",
           "es": "Contexto: {context} Pregunta: {question} Respuesta:", "tr": "Bağlam: {context} Soru: {question} Cevap:"}


def prompt(row: dict) -> str:
    """The likelihood prompt of an MBBQ row, in its language (:data:`PROMPTS`)."""
    return PROMPTS[row["language"]].format(context=row["context"], question=row["question"])


def select_rows(languages, categories, limit, control: bool, data_dir=None) -> list[dict]:
    """The main set's rows (then the control set's) of each language and category: each whole, or the first
    ``limit`` items of each template, context condition and question polarity."""
    rows = []
    for dataset in SETS if control else SETS[:1]:
        for language in languages:
            for category in categories:
                taken: Counter = Counter()
                for row in read_file(category, dataset, language, data_dir):
                    taken[row["template"], row["context_condition"], row["question_polarity"]] += 1
                    if limit is None or taken[row["template"], row["context_condition"], row["question_polarity"]] <= limit:
                        rows.append(row)
    return rows


def measure(records: list[dict], rows: list[dict], settings: dict, data_dir) -> dict:
    """:func:`mbbq_scores` of the answers chosen by ``--decision``, the control set beside the main one."""
    predictions = [record[f"prediction_{settings['decision']}"] for record in records]
    main = [(row, p) for row, p in zip(rows, predictions) if row["set"] == "main"]
    control = [(row, p) for row, p in zip(rows, predictions) if row["set"] == "control"]
    return mbbq_scores([row for row, _ in main], [p for _, p in main], control_rows=[row for row, _ in control],
                       control_predictions=[p for _, p in control], template_filter=not settings["no_template_filter"],
                       bootstrap=settings["bootstrap"], seed=settings["seed"])


def outcomes(records: list[dict], rows: list[dict], settings: dict) -> list:
    """Whether each item's answer (by ``--decision``) is the correct one."""
    key = f"prediction_{settings['decision']}"
    return [record[key] == row["label"] for record, row in zip(records, rows)]


def data(rows: list[dict], options: dict, data_dir) -> dict:
    """results.json's ``data``: the revision, the citation, the languages and categories, the counts."""
    counts = Counter(f"{row['language']}/{row['set']}" for row in rows)
    return {"dataset": "mbbq", "split": "test", "revision": MBBQ_COMMIT, "citation": CITATION,
            "languages": list(options["languages"]), "categories": list(options["categories"]),
            "counts": {"items": len(rows), **dict(sorted(counts.items()))}}


def counted(rows: list[dict], options: dict) -> dict:
    """The items asked of the languages' and sets' full files."""
    sets = 2 if not options["no_control"] else 1
    full = len(LANGUAGES) * sum(ROWS[category][i] for category in CATEGORIES for i in range(sets))
    return {"items": (len(rows), full)}


TASK = Task(
    name="mbbq", display_name="MBBQ",
    options=(
        Option("languages", "MBBQ languages to run (the same templates in each)", default=LANGUAGES, choices=LANGUAGES,
               many=True, narrows=True),
        Option("categories", "MBBQ categories to run", default=CATEGORIES, choices=CATEGORIES, many=True, narrows=True),
        Option("limit", "N counts items per template, context condition and question polarity: the first N of each, in the "
                        "main and the control set", type=int, minimum=1, expected="an integer >= 1", metavar="N", narrows=True),
        Option("decision", "choose the answer by summed log-probability or by log-probability per token", default="sum",
               choices=DECISIONS, identity=False),
        Option("no_control", "skip the control set (and so the authors' filter of the templates the model does not "
                             "understand, and the control accuracy)", type=bool, default=False, narrows=True),
        Option("no_template_filter", "read the bias on every template, not only on those the control set shows the model "
                                     "understands in every language run", type=bool, default=False, identity=False),
        Option("bootstrap", "bootstrap resamples of the templates for confidence intervals (0: none)", default=0, type=int,
               minimum=0, expected="an integer >= 0 (0: no intervals)", identity=False),
    ),
    protocols={"likelihood": "the three answers scored as continuations of the question, in its language"},
    items=lambda settings, data_dir: select_rows(settings["languages"], settings["categories"], settings["limit"],
                                                  not settings["no_control"], data_dir),
    request=lambda protocol, rows, settings: Scoring(
        lambda lm, kind, part: score_bbq(lm, part, batch_size=settings["batch_size"], prompt=prompt), unit="item", per_item=3),
    measure=measure, data=data, counted=counted, outcomes=outcomes, outcome_name="correct answer",
    config=lambda protocol, options: {"prompts": PROMPTS},
)
