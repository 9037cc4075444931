"""WinoBias (Zhao et al. 2018): accuracy on pro- and anti-stereotypical sentences of each type and
their gap (pro - anti), with bootstrap intervals over the sentence pairs."""

from __future__ import annotations

from ...protocols import PROTOCOLS
from ..base import MODEL_OPTIONS, Benchmark, Examples, HubDataset, MetricSpec, ModuleExample, Readout, Share, Variant
from ..coreference import PROMPT_FIELDS, TEMPLATE_HELP, outcomes, protocols
from ..declared import Option
from .data import FILE_ROWS, SPLITS, TYPES
from .measure import MAX_BOOTSTRAP
from .task import data as data_block
from .task import measure as measure_results
from .task import select_rows

# each accuracy counted over its sentences, the gap over both kinds; the invalid answers over every answer
_ITEMS = ("counts.pro.items", "counts.anti.items")
METRICS = (
    MetricSpec("gap", "Pro - anti gap", "pp", 0.0, None, 1,
               "accuracy on pro-stereotypical minus anti-stereotypical sentences (the paper's bias measure; 0: unbiased)",
               count=_ITEMS),
    MetricSpec("accuracy_pro", "Accuracy (pro)", "%", 100.0, True, 1,
               "share of pro-stereotypical sentences whose pronoun is resolved to the right occupation", count=_ITEMS[0]),
    MetricSpec("accuracy_anti", "Accuracy (anti)", "%", 100.0, True, 1,
               "share of anti-stereotypical sentences whose pronoun is resolved to the right occupation", count=_ITEMS[1]),
    MetricSpec("invalid_rate", "Invalid answers", "%", 0.0, False, 1,
               "share of generated answers that are neither occupation (left out of the scores)", column=False,
               replies=True, share=Share(("counts.pro.invalid", "counts.anti.invalid"),
                                         ("counts.pro.invalid", "counts.anti.invalid", *_ITEMS))),
)


def _note(results: dict) -> str:
    """The summary's closing line: the units, the intervals' resamples, the two types and what "invalid" means."""
    resamples = results["config"].get("bootstrap")
    return ("Accuracies in %, the gap in percentage points (0: unbiased)"
            + (f"; [95 % bootstrap interval over the pairs, {resamples} resamples]" if resamples else "")
            + ". Type 1: only world knowledge resolves the pronoun; type 2: syntax does too. Invalid: generated answers "
            "that are neither occupation (left out).")


_INVALID = ("counts.pro.invalid", "counts.anti.invalid")
READOUT = Readout(
    domain="type", overall="overall (pooled)", note=_note,
    counted=lambda results: f"{results['data']['counts']['sentences']:,} {results['config']['split']} sentences",
    tallies=(("sentences", (*_ITEMS, *_INVALID)), ("invalid", _INVALID)),
    title="WinoBias (Zhao et al. 2018)", bars=("accuracy_pro", "accuracy_anti"),
    report_note=lambda runs: f"Split: {', '.join(sorted({run.results['config']['split'] for run in runs}))}.",
    caption="Bars: accuracy of the pronoun's resolution on the sentences where it agrees with the occupation's majority "
            "gender (pro) and where it does not (anti); intervals: bootstrap over the pairs.")


BENCHMARK = Benchmark(
    name="winobias", display_name="WinoBias",
    family="coreference", headline="gap",
    description="WinoBias: coreference accuracy on pro- and anti-stereotypical sentences and their gap",
    dataset="winobias", hub_dataset=HubDataset("uclanlp/wino_bias", "WinoBias", "test"),
    metrics=METRICS, domains="types", config_names=("split",), readout=READOUT,
    options=(
        Option("split", "the test half (default) or the dev half", default="test", choices=tuple(SPLITS)),
        Option("types", "sentence types to run (1: semantic cues only; 2: syntactic cues too)", default=tuple(TYPES),
               type=int, choices=tuple(TYPES), many=True, narrows=True),
        Option("limit", "N counts pro / anti sentence pairs per type (of 396): the first N of each type, so 2 x N "
                        "sentences per type", type=int, minimum=1, expected="an integer >= 1", metavar="N", narrows=True),
        Option("bootstrap", "bootstrap resamples of the pairs for the intervals (default 1000; 0: none)", default=1000,
               type=int, minimum=0, maximum=MAX_BOOTSTRAP, expected=f"an integer from 0 (no intervals) to {MAX_BOOTSTRAP:,}",
               identity=False),
    ),
    protocols=protocols("likelihood of each occupation after \"‘He’ refers to the\""),
    prompt_fields=PROMPT_FIELDS, template_help=TEMPLATE_HELP,
    items=lambda options, data_dir: select_rows(options["split"], options["types"], options["limit"], data_dir),
    measure=measure_results, data=data_block, outcomes=outcomes, outcome_name="pronoun resolved correctly",
    counted=lambda rows, options: {"sentences": (len(rows), 4 * FILE_ROWS)},
    run_options=(*MODEL_OPTIONS, "seed", "batch_size", "num_processes", "progress", "threads"),
    variants=(Variant("split", "WinoBias split", SPLITS), Variant("protocol", "WinoBias protocol", PROTOCOLS)),
    overall_note="WinoBias's overall cells pool type 1 and type 2 sentences; the paper reports each type.",
    paper="https://aclanthology.org/N18-2003/",
    examples=Examples(
        modules={"winobias": ModuleExample(
            {"predictions": [0, 1, 0, 0, 1], "labels": [0, 1, 0, 1, 1], "types": [1, 1, 1, 1, 2],
             "stereotypes": ["pro", "pro", "anti", "anti", "pro"], "pairs": ["a", "b", "a", "b", "c"]},
            options={"bootstrap": 50},
            bad=(("bootstrap", -1, ValueError, "bootstrap must be an integer from 0"),
                 ("bootstrap", 10**12, ValueError, "bootstrap must be an integer from 0 .* to 100,000"),
                 ("seed", -1, ValueError, "seed must be"),
                 ("confidence", 1.5, ValueError, "confidence must be a number between 0 and 1"),
                 ("seed", 1.5, TypeError, "seed must be an integer")))}),
)
