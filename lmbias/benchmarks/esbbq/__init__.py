"""EsBBQ and CaBBQ (Ruiz-Fernández et al. 2025): BBQ adapted to Spain, in Spanish and in Catalan, with the
authors' accuracy and bias scores per category (their ``bias_score.py``); two benchmarks, ``esbbq`` and
``cabbq``, declared once (:func:`make_benchmark`)."""

from __future__ import annotations

from ...protocols import GENERATE, PROTOCOLS
from ..base import MODEL_OPTIONS, Benchmark, Examples, HubDataset, MetricSpec, ModuleExample, Readout, Share, Variant
from .data import NAMES
from .task import how_it_runs

METRICS = (
    MetricSpec("bias_ambig", "Bias (ambiguous)", "", 0.0, None, 3,
               "(answers that fit the stereotype - answers against it) / ambiguous items"),
    MetricSpec("bias_disambig", "Bias (disambiguated)", "", 0.0, None, 3,
               "accuracy where the correct answer fits the stereotype - accuracy where it does not"),
    MetricSpec("accuracy_ambig", "Accuracy (ambiguous)", "%", 100.0, True, 1, "share of ambiguous items answered 'unknown'"),
    MetricSpec("accuracy_disambig", "Accuracy (disambiguated)", "%", 100.0, True, 1,
               "share of disambiguated items answered correctly"),
    MetricSpec("invalid_rate", "Invalid replies", "%", 0.0, False, 1,
               "generate: share of replies that name no option (left out of the scores)", column=False, replies=True,
               share=Share("invalid", ("items", "invalid"))),
)


def make_benchmark(language: str) -> Benchmark:
    """EsBBQ (``"es"``) or CaBBQ (``"ca"``) as a benchmark."""
    name = NAMES[language]

    readout = Readout(
        domain="category", overall="overall (weighted by items)", counted="items",
        tallies=(("items", "items"), ("invalid", "invalid")),
        note=lambda results: "Bias in [-1, 1] (positive: toward the stereotype); overall: the categories' mean weighted by "
                             "their items, as the authors report it. Invalid: replies that name no option (left out).",
        title=f"{name} (Ruiz-Fernández et al. 2025)", report_note="The authors score likelihoods.",
        bars=("bias_ambig", "bias_disambig"),
        caption="Bars: the authors' bias scores (0: no bias; 1: always toward the stereotype). Intervals: bootstrap over "
                "templates, when computed.")
    benchmark = Benchmark(
        name=name.lower(), display_name=name,
        family="multilingual QA bias", headline="bias_ambig",
        description=f"{name}: BBQ adapted to Spain in {'Spanish' if language == 'es' else 'Catalan'}, bias per category",
        dataset=name.lower(), hub_dataset=HubDataset(f"BSC-LT/{name}", name, "test"),
        metrics=METRICS, **how_it_runs(language), domains="categories", readout=readout,
        run_options=(*MODEL_OPTIONS, "seed", "batch_size", "num_processes", "progress", "threads"),
        defaults={"batch_size": 16},
        variants=(Variant("protocol", f"{name} protocol", PROTOCOLS),),
        overall_note=f"{name}'s overall cells are the categories' mean weighted by their items, as the authors report.",
        paper="https://arxiv.org/abs/2507.11216",
        examples=Examples(
            refused=((("--protocol", GENERATE.name, "--decision", "mean"), "--decision applies to --protocol likelihood"),),
            modules={name.lower(): ModuleExample(
                {"predictions": [0, 1, 2, 1, -1], "labels": [2, 2, 2, 1, 0], "target_locs": [0, 0, 1, 0, 0],
                 "question_polarities": ["neg", "nonneg", "neg", "nonneg", "neg"],
                 "context_conditions": ["ambig", "ambig", "ambig", "disambig", "disambig"],
                 "question_types": ["n/a", "n/a", "n/a", "pro-stereo", "anti-stereo"], "categories": ["Age"] * 5},
                bad=(("bootstrap", -1, ValueError, "bootstrap must be an integer >= 0"),
                     ("seed", 1.5, TypeError, "seed must be an integer")))}),
    )
    return benchmark


ESBBQ, CABBQ = make_benchmark("es"), make_benchmark("ca")
