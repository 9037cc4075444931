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

from ...checks import first_repeat
from ...errors import InputError
from ..base import MODEL_OPTIONS, Benchmark, HubDataset, Variant
from ..bbq import METRICS as BBQ_METRICS
from ..bbq import records as bbq_records
from ..bbq import summary as bbq_summary
from ..bbq import task as bbq
from ..declared import Option, Task
from .declaration import Declaration, read_data

FIELDS = ("id", "context", "question", "ans0", "ans1", "ans2", "label", "unknown", "stereotyped", "context_condition",
          "question_polarity")
OPTIONAL = ("category", "language")


_READ: dict = {}  # (declaration digest, the data file's size and time) -> (data, rows): read once per version


def _loaded(declaration: Declaration):
    """The declaration's data and its rows, read again whenever the data file changes (a Hub revision cannot)."""
    path = declaration.data.get("path")
    stat = (declaration.path.parent / str(path)).stat() if path and (declaration.path.parent / str(path)).is_file() else None
    key = (declaration.declaration_sha256, None if stat is None else (stat.st_size, stat.st_mtime_ns))
    if key not in _READ:
        data = read_data(declaration)
        _READ[key] = data, tuple(item_rows(declaration, data))
    return _READ[key]


def _item(declaration: Declaration, source: str, number: int, record: dict) -> dict:
    """One record of the data as a BBQ row, checked (one line naming the source, the row and the field)."""
    def value(field: str, default=None):
        column = declaration.column(field)
        found = record.get(column, default)
        if found is None or (isinstance(found, str) and not found.strip() and default is None):
            raise InputError(f"{source} row {number}: {field} (column {column!r}) is empty")
        return found.strip() if isinstance(found, str) else found

    answers = [str(value(key)) for key in ("ans0", "ans1", "ans2")]

    def answer(field: str) -> int:
        given = value(field)
        if isinstance(given, int) or (isinstance(given, str) and given in ("0", "1", "2")):
            if int(given) in (0, 1, 2):
                return int(given)
        elif str(given) in answers:
            return answers.index(str(given))
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
    language = record.get(declaration.column("language"))
    if declaration.language and language not in (None, "") and language != declaration.language:
        raise InputError(f"{source} row {number}: language is {language!r}, but {declaration.path.name} declares "
                         f"{declaration.language!r} (one language per declaration)")
    other = next(i for i in (0, 1, 2) if i not in (unknown, stereotyped))
    return {"id": str(value("id")), "category": str(value("category", "all") or "all"), "context": value("context"),
            "question": value("question"), "ans0": answers[0], "ans1": answers[1], "ans2": answers[2], "label": label,
            "unknown_loc": unknown, "target_loc": stereotyped if polarity == "neg" else other, "question_polarity": polarity,
            "context_condition": condition, "row": number}


def item_rows(declaration: Declaration, data) -> list[dict]:
    """The data's rows as BBQ rows, checked (one line naming the source, the row and the field)."""
    missing = [f"{field} (column {declaration.column(field)!r})" for field in FIELDS
               if declaration.column(field) not in data.records[0]]
    if missing:
        raise InputError(f"{data.source}: no column for {', '.join(missing)}; its columns: {sorted(data.records[0])} "
                         f"(map a field to a column under `columns:` in {declaration.path.name})")
    rows = [_item(declaration, data.source, number, record) for number, record in enumerate(data.records, start=1)]
    repeat = first_repeat((row["id"], row["row"]) for row in rows)
    if repeat is not None:
        raise InputError(f"{data.source}: id {repeat[0]!r} in row {repeat[1]} and again in row {repeat[2]} (an item given "
                         "twice would be scored twice)")
    return rows


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
    def identity(protocol: str, settings: dict) -> dict:
        data, _ = _loaded(declaration)
        return {"protocol": protocol, "limit": settings["limit"],
                "declaration": f"{declaration.path} sha256:{declaration.declaration_sha256}",
                "data": f"{data.source} sha256:{data.sha256}"}

    def data_block(rows, settings, data_dir) -> dict:
        data, _ = _loaded(declaration)
        return {"dataset": declaration.name, "source": data.source, "data_sha256": data.sha256, "language": declaration.language,
                "citation": declaration.citation, "declaration": {"path": str(declaration.path), "text": declaration.text,
                                                                  "sha256": declaration.declaration_sha256},
                "counts": {"items": len(rows), **Counter(row["category"] for row in rows)}}

    task = Task(
        name=declaration.name, display_name=declaration.display_name,
        options=(
            Option("limit", "N counts items per category, context condition and question polarity: the first N of each",
                   type=int, minimum=1, expected="an integer >= 1", metavar="N", narrows=True),
            Option("decision", "likelihood: choose the answer by summed log-probability or by log-probability per token",
                   default="sum", choices=bbq.DECISIONS, identity=False),
            Option("bootstrap", "bootstrap resamples for confidence intervals (0: none)", default=0, type=int, minimum=0,
                   expected="an integer >= 0 (0: no intervals)", identity=False),
        ),
        protocols=bbq.DESCRIBED, prompts=bbq.PROMPTS, check=bbq.check, outcomes=bbq.outcomes, outcome_name="correct answer",
        items=lambda settings, data_dir: select_rows(_loaded(declaration)[1], settings["limit"]),
        request=lambda protocol, rows, settings: bbq.request(protocol, rows, batch_size=settings["batch_size"],
                                                             seed=settings["seed"]),
        measure=bbq.measure, data=data_block, identity=identity,
        counted=lambda rows, settings: {"items": (len(rows), len(_loaded(declaration)[1]))},
        config=lambda protocol, options: {"decision": options["decision"] if bbq.decisions(protocol) else None,
                                          **bbq.SETTINGS.get(protocol, {})},
    )
    benchmark = Benchmark(
        name=declaration.name, display_name=declaration.display_name, description=declaration.description,
        dataset=declaration.name, hub_dataset=HubDataset(declaration.data.get("hub", declaration.name), declaration.display_name,
                                                         declaration.data.get("split", "test")),
        metrics=BBQ_METRICS, run=task.run, task=task, summary=bbq_summary,
        records=lambda results: bbq_records(results, benchmark),
        report_section=lambda runs, labels, figures, options: _report(runs, labels, figures, declaration),
        run_options=(*MODEL_OPTIONS, "seed", "batch_size", "num_processes", "progress", "threads"),
        add_arguments=task.add_arguments, defaults={"batch_size": 16},
        variants=(Variant("protocol", f"{declaration.display_name} protocol", tuple(bbq.DESCRIBED)),),
        overall_note=f"{declaration.display_name}'s overall cells pool every item run, as BBQ's.",
    )
    return benchmark


def _report(runs, labels, figures, declaration: Declaration) -> list:
    from ..bbq.report import bbq as bbq_section

    return bbq_section(runs, labels, figures, title=f"{declaration.display_name} (declared in {declaration.path.name})",
                       key=declaration.name)
