"""The ``multiple_choice`` shape: BBQ's items from a user's data, asked and scored as BBQ's (both protocols,
:mod:`lmbias.benchmarks.bbq.task`; accuracy, s_AMB and s_DIS per category and pooled).

Fields (the data's columns of the same names, or those the declaration's ``columns`` maps them to):

* ``id`` (unique), ``context``, ``question``, ``ans0``, ``ans1``, ``ans2`` (the three answers);
* ``label``: the correct answer, ``unknown``: the answer that says the question cannot be answered,
  ``stereotyped``: the answer that names the stereotyped group; each an index (0, 1, 2) or an answer's text;
* ``context_condition``: ``ambig`` (the correct answer is the unknown one) or ``disambig``;
* ``question_polarity``: ``neg`` (the question asks who fits a negative stereotype) or ``nonneg``;
* ``category`` (optional; default "all"), ``language`` (optional; one value, the declaration's, if it gives one).

The biased answer is BBQ's: the stereotyped group's for a negative question, the other person's for a
non-negative one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from ...errors import InputError
from ...protocols import PROTOCOLS
from ..base import MODEL_OPTIONS, Benchmark, Variant
from ..bbq import METRICS as BBQ_METRICS
from ..bbq import READOUT as BBQ_READOUT
from ..bbq import task as bbq
from ..declared import Option
from .declaration import Declaration
from .shape import check_columns, check_language, check_unique, data_block, field_value, identity, loaded

FIELDS = ("id", "context", "question", "ans0", "ans1", "ans2", "label", "unknown", "stereotyped", "context_condition",
          "question_polarity")
OPTIONAL = ("category", "language")


def _item(declaration: Declaration, source: str, number: int, record: dict) -> dict:
    """One record of the data as a BBQ row, checked (one line naming the source, the row and the field)."""
    def value(field: str, default=None):
        return field_value(declaration, source, number, record, field, default)

    answers = [value(key) for key in ("ans0", "ans1", "ans2")]
    for first, second in ((0, 1), (0, 2), (1, 2)):
        if answers[first] == answers[second]:
            raise InputError(f"{source} row {number}: ans{first} and ans{second} are the same answer ({answers[first][:60]!r}); "
                             "expected three different answers")

    def answer(field: str) -> int:
        given = field_value(declaration, source, number, record, field, index=True)
        if isinstance(given, int) or given in ("0", "1", "2"):
            if int(given) in (0, 1, 2):
                return int(given)
        elif given in answers:
            return answers.index(given)
        raise InputError(f"{source} row {number}: {field} (column {declaration.column(field)!r}) is {given!r}; "
                         f"expected 0, 1, 2 or one of the answers {answers}")

    condition, polarity = value("context_condition"), value("question_polarity")
    if condition not in ("ambig", "disambig"):
        raise InputError(f"{source} row {number}: context_condition is {condition!r}; expected ambig or disambig")
    if polarity not in ("neg", "nonneg"):
        raise InputError(f"{source} row {number}: question_polarity is {polarity!r}; expected neg or nonneg")
    label, unknown, stereotyped = answer("label"), answer("unknown"), answer("stereotyped")
    if stereotyped == unknown:
        raise InputError(f"{source} row {number}: stereotyped and unknown are the same answer ({answers[unknown]!r}); "
                         "the stereotyped group's answer names a person")
    if (condition == "ambig") != (label == unknown):
        expected = "the unknown answer" if condition == "ambig" else "a person, not the unknown answer"
        raise InputError(f"{source} row {number}: label is {answers[label]!r} in a {condition} context; expected {expected}")
    check_language(declaration, source, number, record)
    other = next(i for i in (0, 1, 2) if i not in (unknown, stereotyped))
    return {"id": value("id"), "category": value("category", "all"), "context": value("context"),
            "question": value("question"), "ans0": answers[0], "ans1": answers[1], "ans2": answers[2], "label": label,
            "unknown_loc": unknown, "target_loc": stereotyped if polarity == "neg" else other, "question_polarity": polarity,
            "context_condition": condition, "row": number}


def item_rows(declaration: Declaration, data) -> list[dict]:
    """The data's rows as BBQ rows, checked (one line naming the source, the row and the field)."""
    check_columns(declaration, data, FIELDS)
    return check_unique([_item(declaration, data.source, number, record) for number, record in enumerate(data.records, 1)],
                        data.source)


def select_rows(rows, limit: int | None) -> list[dict]:
    """All rows, or the first ``limit`` of each category, context condition and question polarity."""
    taken: Counter = Counter()
    chosen = []
    for row in rows:
        taken[row["category"], row["context_condition"], row["question_polarity"]] += 1
        if limit is None or taken[row["category"], row["context_condition"], row["question_polarity"]] <= limit:
            chosen.append(dict(row))
    return chosen


def make_benchmark(declaration: Declaration) -> Benchmark:
    """The benchmark a ``multiple_choice`` declaration declares."""
    def rows() -> tuple:
        return loaded(declaration, item_rows)[1]

    benchmark = Benchmark(
        name=declaration.name, display_name=declaration.display_name, description=declaration.description,
        family="QA bias",
        dataset=declaration.name, hub_dataset=declaration.hub_dataset,
        metrics=BBQ_METRICS, domains="categories",
        readout=replace(BBQ_READOUT, title=f"{declaration.display_name} (declared in {declaration.path.name})"),
        options=(
            Option("limit", "N counts items per category, context condition and question polarity: the first N of each",
                   type=int, minimum=1, expected="an integer >= 1", metavar="N", narrows=True),
            Option("decision", "likelihood: choose the answer by summed log-probability or by log-probability per token",
                   default="sum", choices=bbq.DECISIONS, identity=False),
            Option("bootstrap", "bootstrap resamples for confidence intervals (0: none)", default=0, type=int, minimum=0,
                   expected="an integer >= 0 (0: no intervals)", identity=False),
        ),
        protocols=tuple(replace(asked, identity=identity(declaration, item_rows, ("limit",))) for asked in bbq.ASKS),
        check=bbq.check, outcomes=bbq.outcomes, outcome_name="correct answer",
        items=lambda settings, data_dir: select_rows(rows(), settings["limit"]),
        measure=bbq.measure, data=data_block(declaration, item_rows, "items", "category"),
        counted=lambda asked, settings: {"items": (len(asked), len(rows()))},
        run_options=(*MODEL_OPTIONS, "seed", "batch_size", "num_processes", "progress", "threads"),
        defaults={"batch_size": 16},
        variants=(Variant("protocol", f"{declaration.display_name} protocol", PROTOCOLS),),
        overall_note=f"{declaration.display_name}'s overall cells pool every item run, as BBQ's.",
    )
    return benchmark

