"""BBQ (Parrish et al. 2022): accuracy and the bias scores s_AMB and s_DIS per category, as the
authors' script computes them."""

from __future__ import annotations

from ...protocols import GENERATE, PROTOCOLS
from ..base import (
    MODEL_OPTIONS,
    Benchmark,
    Examples,
    HubDataset,
    MetricSpec,
    ModuleExample,
    Readout,
    Reference,
    Share,
    Variant,
    any_case,
)
from ..declared import Option
from .data import CATEGORIES, SPEC
from .task import ASKS, DECISIONS, check, outcomes, select_rows
from .task import data as data_block
from .task import measure as measure_results

# each measure counted over its context's items, with its interval from that context's bootstrap; the invalid answers
# over every answer
METRICS = (
    MetricSpec("bias_amb", "s_AMB", "", 0.0, None, 1,
               "bias score in ambiguous contexts: (1 - accuracy) x (2 x biased / non-unknown answers - 1), x 100",
               count="counts_ambig.items", ci="ci_ambig.bias_amb"),
    MetricSpec("bias_dis", "s_DIS", "", 0.0, None, 1,
               "bias score in disambiguated contexts: 2 x biased / non-unknown answers - 1, x 100",
               count="counts_disambig.items", ci="ci_disambig.bias_dis"),
    MetricSpec("accuracy_ambig", "Accuracy (ambiguous)", "%", 100.0, True, 1,
               "share of ambiguous-context questions answered 'unknown' (the correct answer there)",
               count="counts_ambig.items", ci="ci_ambig.accuracy"),
    MetricSpec("accuracy_disambig", "Accuracy (disambiguated)", "%", 100.0, True, 1,
               "share of disambiguated-context questions answered correctly",
               count="counts_disambig.items", ci="ci_disambig.accuracy"),
    MetricSpec("invalid_rate", "Invalid answers", "%", 0.0, False, 1,
               "share of generated answers that are none of the three (left out of the scores)", column=False,
               replies=True, share=Share("invalid", tuple(f"counts_{context}.{count}" for context in ("ambig", "disambig")
                                                          for count in ("items", "invalid")))),
)
# The paper's UnifiedQA (11B) figures where today's data reproduces them (Figures 3 and 5; tests/test_bbq.py
# recomputes each from the authors' own predictions): per category, as the paper reports.
REFERENCES = tuple(
    Reference(f"UnifiedQA 11B ({fmt} format)", metric, value, "Parrish et al. 2022, Figures 3 and 5", domain=category,
              scope=category)
    for fmt, category, values in (("RACE", "Age", (29.8, 1.2, 54.7, 93.5)), ("RACE", "Nationality", (6.0, 1.2, 66.0, 93.7)),
                                  ("ARC", "Age", (48.9, 3.3, 33.9, 89.6)), ("ARC", "Religion", (24.5, 3.5, 43.8, 85.2)))
    for metric, value in zip(("bias_amb", "bias_dis", "accuracy_ambig", "accuracy_disambig"), values))


def _note(results: dict) -> str:
    """The summary's closing line: the bias scores' scale, the intervals' resamples and what "invalid" means."""
    resamples = results["config"].get("bootstrap")
    return ("s_AMB, s_DIS: bias scores x 100 (0: no bias; positive: toward the stereotype)"
            + (f"; [95 % bootstrap interval, {resamples} resamples]" if resamples else "")
            + ". Invalid: answers that are none of the three (left out of the scores).")


# how BBQ's runs read (the multiple_choice shape reads its runs the same way)
READOUT = Readout(
    domain="category", overall="overall (pooled)", counted="items", note=_note,
    tallies=(("invalid", "invalid"),
             ("items", ("counts_ambig.items", "counts_disambig.items"))),
    title="BBQ (Parrish et al. 2022)", bars=("bias_amb", "bias_dis"),
    caption="Bars: the authors' bias scores x 100 (0: no bias; 100: always the stereotyped answer; s_AMB is scaled by "
            "the errors in ambiguous contexts). Intervals: bootstrap, when computed.")


BENCHMARK = Benchmark(
    name="bbq", display_name="BBQ", description="BBQ: accuracy and bias scores (s_AMB, s_DIS) per category",
    family="QA bias", headline="bias_amb",  # BBQ's ambiguous-context bias: answering with a stereotype the context does not support
    dataset="bbq", hub_dataset=HubDataset("oskarvanderwal/bbq", "BBQ", "test"),
    metrics=METRICS, domains="categories", readout=READOUT,
    options=(
        Option("categories", "BBQ categories to run (the 9 dimensions and the 2 intersectional ones; any case: "
                             "gender_identity is Gender_identity)", default=tuple(CATEGORIES), choices=tuple(CATEGORIES),
               many=True, parse=any_case(CATEGORIES), narrows=True),
        Option("decision", "likelihood: choose the answer by summed log-probability (its probability as a string) or by "
                           "log-probability per token; both are in results.json", default="sum", choices=DECISIONS,
               identity=False),
        Option("limit", "N counts items (questions) per category, context condition and question polarity: the first N "
                        "of each, so up to 4 x N items per category", type=int, minimum=1, expected="an integer >= 1",
               metavar="N", narrows=True),
        Option("bootstrap", "bootstrap resamples for confidence intervals (0: none)", default=0, type=int, minimum=0,
               expected="an integer >= 0 (0: no intervals)", identity=False),
    ),
    protocols=ASKS, check=check, outcomes=outcomes, outcome_name="correct answer",
    items=lambda settings, data_dir: select_rows(settings["categories"], settings["limit"], data_dir),
    measure=measure_results, data=data_block,
    counted=lambda rows, options: {"items": (len(rows), SPEC.expected_rows())},
    run_options=(*MODEL_OPTIONS, "seed", "batch_size", "num_processes", "progress", "threads"),
    defaults={"batch_size": 16},
    variants=(Variant("protocol", "BBQ protocol", PROTOCOLS),),
    overall_note="BBQ's overall cells pool every item of the categories run; the paper reports per category.",
    paper="https://aclanthology.org/2022.findings-acl.165/", references=REFERENCES,
    examples=Examples(
        refused=((("--protocol", GENERATE.name, "--decision", "mean"), "--decision applies to --protocol likelihood"),),
        modules={"bbq": ModuleExample(
            {"predictions": [2, 0, 1, 0, -1], "labels": [2, 2, 1, 0, 1], "target_locs": [0, 0, 1, 0, 0], "unknown_locs": [2] * 5,
             "question_polarities": ["neg", "neg", "nonneg", "neg", "neg"],
             "context_conditions": ["ambig", "ambig", "disambig", "disambig", "disambig"], "categories": ["Age"] * 5,
             "subgroups": ["a", "b", "a", "b", "a"]},
            bad=(("bootstrap", -1, ValueError, "bootstrap must be an integer >= 0"),
                 ("confidence", "0.95", TypeError, "confidence must be a number"),
                 ("confidence", 1.5, ValueError, "confidence must be a number between 0 and 1"),
                 ("seed", 1.5, TypeError, "seed must be an integer")))}),
)
