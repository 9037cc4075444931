"""KoBBQ (Jin et al., TACL 2024): a Korean BBQ, with the authors' out-of-choice ratio, accuracy and diff-bias
scores per category, per label annotation and per prompt (their ``5_evaluation.py``)."""

from __future__ import annotations

from ...protocols import LIKELIHOOD, PROTOCOLS, get_protocol
from ...render import html
from ...render.text import cell, markdown_table
from ..base import (
    MODEL_OPTIONS,
    Benchmark,
    Examples,
    HubDataset,
    MetricSpec,
    ModuleExample,
    Readout,
    Variant,
    records_section,
    records_summary,
)
from ..bbq.task import DECISIONS, decisions, predicted
from ..declared import Option
from .data import CATEGORIES, PROMPT_IDS, ROWS
from .measure import kobbq_scores
from .task import ASKS, check, items
from .task import data as data_block

METRICS = (
    MetricSpec("bias_ambig", "Diff-bias (ambiguous)", "", 0.0, None, 3,
               "(answers that fit the stereotype - answers against it) / valid ambiguous answers"),
    MetricSpec("bias_disambig", "Diff-bias (disambiguated)", "", 0.0, None, 3,
               "accuracy where the answer fits the stereotype - accuracy where it does not"),
    MetricSpec("accuracy_ambig", "Accuracy (ambiguous)", "%", 100.0, True, 1, "share of valid ambiguous answers 'unknown'"),
    MetricSpec("accuracy_disambig", "Accuracy (disambiguated)", "%", 100.0, True, 1,
               "share of valid disambiguated answers that are correct"),
    MetricSpec("ooc_ratio", "Out of choice", "%", 0.0, False, 1, "share of replies that name no answer (left out)",
               column=False, replies=True),
)


READOUT = Readout(
    domain="category", counted="items", tallies=(("items", "items"),),
    note=lambda results: "Diff-bias in [-1, 1] (positive: toward the stereotype); each figure pools the items, as the "
                         "authors compute it, on the valid answers only"
                         + ("; a figure over several prompts is their mean." if len(results["results"]["prompts"]) > 1 else "."),
    title="KoBBQ (Jin et al. 2024)", bars=("bias_ambig", "bias_disambig"),
    report_note="Scores on the valid answers only, with the out-of-choice ratio beside them, as the authors compute them; "
                "a run of several prompts reports their mean.",
    caption="Bars: the authors' diff-bias (0: no bias; 1: always toward the stereotype). Intervals: bootstrap over "
            "templates, when computed.")


def _per_prompt(results: dict) -> list:
    """Overall per prompt of a run that asked several (the figures per category are their mean), as table cells."""
    prompts = results["results"]["prompts"]
    shown = METRICS if get_protocol(results["config"]["protocol"]).reads_replies else METRICS[:4]
    return [[f"prompt {prompt}", *(cell(block["overall"][spec.id], digits=spec.decimals) for spec in shown),
             block["overall"]["items"]] for prompt, block in prompts.items()] if len(prompts) > 1 else []


def _header(results: dict) -> list:
    shown = METRICS if get_protocol(results["config"]["protocol"]).reads_replies else METRICS[:4]
    return ["prompt", *(f"{spec.name} ({spec.unit})" if spec.unit else spec.name for spec in shown), "items"]


def summary(results: dict, out) -> str:
    """The default summary, then, for a run of several prompts, the overall figures per prompt."""
    rows = _per_prompt(results)
    table = [markdown_table([dict(zip(_header(results), row)) for row in rows], _header(results))] if rows else []
    return "\n\n".join([records_summary(BENCHMARK, results, out), *table])


def report_section(runs, labels, figures, options) -> list:
    """The default section, then the overall figures per prompt of each run that asked several."""
    rows = [[row[0], label, *row[1:]] for label, run in zip(labels, runs) for row in _per_prompt(run.results)]
    header = _header(next(run.results for run in runs if _per_prompt(run.results))) if rows else []
    return [*records_section(BENCHMARK, runs, labels, figures, options),
            *([html.table([header[0], "model", *header[1:]], rows, "KoBBQ overall per prompt")] if rows else [])]


BENCHMARK = Benchmark(
    name="kobbq", display_name="KoBBQ", description="KoBBQ: a Korean BBQ, out-of-choice, accuracy and diff-bias per category",
    family="multilingual QA bias", headline="bias_ambig",
    dataset="kobbq", hub_dataset=HubDataset("naver-ai/kobbq", "KoBBQ", "test"),
    metrics=METRICS, domains="categories", readout=READOUT, summary=summary, report_section=report_section,
    options=(
        Option("categories", "KoBBQ categories to run", default=CATEGORIES, choices=CATEGORIES, many=True, narrows=True),
        Option("limit", "N counts samples per template, context condition and question type: the first N of each", type=int,
               minimum=1, expected="an integer >= 1", metavar="N", narrows=True),
        Option("prompts", "generate: which of the authors' five prompts (1-5) ask each sample (the authors ask each "
                          "prompt in a run of its own)", default=PROMPT_IDS, choices=PROMPT_IDS, type=int, many=True),
        Option("decision", "likelihood: choose the answer by summed log-probability or by log-probability per token",
               default="sum", choices=DECISIONS, identity=False),
        Option("bootstrap", "bootstrap resamples of the templates for confidence intervals (0: none)", default=0, type=int,
               minimum=0, expected="an integer >= 0 (0: no intervals)", identity=False),
    ),
    protocols=ASKS, items=items, check=check, data=data_block,
    measure=lambda records, rows, settings, data_dir: kobbq_scores(rows, predicted(records, settings),
                                                                   bootstrap=settings["bootstrap"], seed=settings["seed"]),
    counted=lambda rows, settings: {"items": (len(rows), sum(ROWS.values()) * (1 if decisions(settings["protocol"])
                                                                               else 3 * len(settings["prompts"])))},
    outcomes=lambda records, rows, settings: [None if p is None else p == row["label"]
                                              for p, row in zip(predicted(records, settings), rows)],
    outcome_name="correct answer",
    run_options=(*MODEL_OPTIONS, "seed", "batch_size", "num_processes", "progress", "threads"),
    defaults={"batch_size": 16},
    variants=(Variant("protocol", "KoBBQ protocol", PROTOCOLS),),
    overall_note="KoBBQ's overall cells pool every item run (the mean over the prompts run), as the authors compute them.",
    paper="https://arxiv.org/abs/2307.16778",
    examples=Examples(
        refused=((("--protocol", LIKELIHOOD.name, "--prompts", "1"), "--prompts applies to --protocol generate"),),
        modules={"kobbq": ModuleExample(
            {"predictions": [2, 0, 1, -1, 0], "labels": [2, 2, 2, 2, 0], "biased_locs": [0] * 5, "unknown_locs": [2] * 5,
             "context_types": ["amb", "amb", "amb", "amb", "dis-biased"], "categories": ["age"] * 5, "templates": ["age-001"] * 5},
            bad=(("bootstrap", -1, ValueError, "bootstrap must be an integer >= 0"),
                 ("seed", 1.5, TypeError, "seed must be an integer")))}),
)
