"""One run's side of a paired comparison (``lmbias compare``): its items, each item's outcome, the units the
items are resampled in, and its headline measures over any draw of its items.

A declared benchmark gets it from its Task (:func:`task_side`: the items read again with the run's options,
its per-item file, ``Task.outcomes`` and ``Task.measure``); a benchmark with its own run declares
``Benchmark.paired`` (BOLD scores its saved texts again: :mod:`lmbias.benchmarks.bold.paired`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import InputError
from ..protocols import get_protocol


@dataclass
class Side:
    """One run's items for a paired comparison.

    Attributes:
        ids: the items, in an order both runs share.
        outcomes: each item's outcome that the headline counts (True / False; None: no valid answer).
        units: the resampling units, as lists of item indices (a pair of sentences, a prompt's samples).
        headline: ``headline(draw)``: the headline measures ``{metric id: value}`` over the units drawn (a list of
            unit indices, which may repeat: a bootstrap draw; every unit once: the run itself).
        outcome_name: what a True outcome is, in a few words.
        data: what says which data the items came from (compared between the runs).
    """

    ids: list
    outcomes: list
    units: list
    headline: Callable[[list], dict]
    outcome_name: str
    data: dict


def saved_generations(run, dataset: str, data_dir=None, rows=None) -> tuple[list, list]:
    """A generation run's saved texts (its ``generations.jsonl``, in id and sample order) and the rows of
    ``dataset`` they continue (``rows``: those rows given, a user's benchmark's), for a comparison that scores
    them again.

    Raises:
        InputError: no generations file, or a text of an item the dataset does not have.
    """
    from ..data import load_rows

    path = run.path / "generations.jsonl"
    if not path.is_file():
        raise InputError(f"{run.path}: no generations.jsonl, the texts a comparison scores again; rerun the command that "
                         "wrote the run")
    generations = sorted((json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()),
                         key=lambda g: (g["id"], g["sample"]))
    by_id = {row["id"]: row for row in (load_rows(dataset, data_dir=data_dir) if rows is None else rows)}
    unknown = [g["id"] for g in generations if g["id"] not in by_id]
    if unknown:
        raise InputError(f"{path}: {len(unknown):,} texts of items {dataset} does not have (first {unknown[0]!r})")
    return generations, [by_id[g["id"]] for g in generations]


def headline_values(benchmark, results: dict, body: dict) -> dict:
    """metric id -> value of a results body's headline measures overall (one per value of a variant declared
    ``each``, such as a multilingual set's language: ``metric/value``)."""
    records = list(benchmark.records({**results, "results": body}))
    each = [variant.field for variant in benchmark.variants if variant.each]
    return {"/".join([record["metric"], *(str(record[name]) for name in each if record.get(name))]): record["value"]
            for record in benchmark.headline_records(records)}


def _settings(task, results: dict, path) -> dict:
    """The settings a Task's functions read, from what the run recorded (defaults where results.json has none);
    no bootstrap inside the measure (the comparison resamples)."""
    config = results["config"]
    options = {option.name: config.get(option.name, option.default) for option in task.options}
    options = {name: list(value) if isinstance(value, tuple) else value for name, value in options.items()}
    protocol = config.get("protocol") or next(iter(task.protocols))
    return {**options, "protocol": protocol, "prompt": config.get("prompt"), "batch_size": config.get("batch_size", 32),
            "seed": config.get("seed", 0), "benchmark": task.name, "out": str(path), "bootstrap": 0}


def task_side(benchmark, run, data_dir=None) -> Side:
    """A declared benchmark's run as one side of a comparison."""
    task, results = benchmark.task, run.results
    settings = _settings(task, results, run.path)
    protocol = get_protocol(settings["protocol"])
    records_file = run.path / protocol.records_file
    if not records_file.is_file():
        raise InputError(f"{run.path}: no {protocol.records_file}, the per-item answers a comparison reads; rerun the "
                         "command that wrote the run with this lmbias")
    records = [json.loads(line) for line in records_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = task.items(settings, data_dir)
    if not rows or len(records) % len(rows):
        raise InputError(f"{records_file} holds {len(records):,} answers for {len(rows):,} items read again: the data "
                         "or the run's options differ from when it ran; rerun it")
    per_row = len(records) // len(rows)
    units: dict = {}
    for index, row in enumerate(rows):
        units.setdefault(row.get("pair", index), []).append(index)  # the coreference sets' pairs resample together

    groups = list(units.values())

    def headline(draw: list) -> dict:
        drawn_rows, drawn_records = [], []
        for k, unit in enumerate(draw):  # a unit drawn twice gets distinct ids (and pairs)
            for index in groups[unit]:
                row = {**rows[index], "id": f"{rows[index]['id']}#{k}"}
                if "pair" in row:
                    row["pair"] = f"{row['pair']}#{k}"
                drawn_rows.append(row)
                drawn_records += records[index * per_row:(index + 1) * per_row]
        return headline_values(benchmark, results, task.measure(drawn_records, drawn_rows, settings, data_dir))

    return Side([str(row["id"]) for row in rows], task.outcomes(records, rows, settings), groups, headline,
                task.outcome_name, {key: results.get("data", {}).get(key) for key in ("revision", "split")})
