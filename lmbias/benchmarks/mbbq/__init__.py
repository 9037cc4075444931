"""MBBQ (Neplenbroek et al. 2024): BBQ's templates in English, Dutch, Spanish and Turkish, with the authors'
accuracy and bias scores per language, read together with the control set's accuracy; the four languages
share their templates, so their scores compare the same questions."""

from __future__ import annotations

from collections.abc import Iterable

from ...render.text import cell, markdown_table
from ..base import MODEL_OPTIONS, Benchmark, HubDataset, MetricSpec, Variant, model_named
from .data import LANGUAGES
from .task import TASK

METRICS = (
    MetricSpec("bias_ambig", "Bias (ambiguous)", "", 0.0, None, 3,
               "mean reply score in ambiguous contexts: +1 the stereotyped group, -1 the other person, 0 unknown"),
    MetricSpec("bias_disambig", "Bias (disambiguated)", "", 0.0, None, 3,
               "correct answers where the answer is the stereotyped group minus those where it is the other person, "
               "over the disambiguated items"),
    MetricSpec("accuracy_ambig", "Accuracy (ambiguous)", "%", 100.0, True, 1, "share of ambiguous items answered 'unknown'"),
    MetricSpec("accuracy_disambig", "Accuracy (disambiguated)", "%", 100.0, True, 1,
               "share of disambiguated items answered correctly"),
    MetricSpec("control_accuracy", "Control accuracy", "%", 100.0, True, 1,
               "disambiguated accuracy on the control set (names instead of group words): does the model do the task?",
               column=False),
)


def records(results: dict) -> Iterable[dict]:
    """The four measures and the control accuracy per language, per category and overall."""
    for language, body in results["results"]["languages"].items():
        for domain, block in [*body["categories"].items(), ("overall", body["overall"])]:
            for spec in METRICS:
                yield BENCHMARK.record(spec.id, block.get(spec.id), domain=domain, language=language,
                                       count=block["templates"], ci=(block.get("ci") or {}).get(spec.id))


def summary(results: dict, out) -> str:
    """The languages side by side: each measure overall, with the control accuracy and the templates read."""
    body, languages = results["results"], list(results["results"]["languages"])
    rows = []
    for spec in METRICS:
        rows.append({"measure": spec.name, **{language: cell(body["languages"][language]["overall"][spec.id],
                                                             (body["languages"][language]["overall"].get("ci") or {}).get(spec.id),
                                                             digits=spec.decimals) for language in languages}})
    kept = body["templates"]
    filtered = (f"{kept['kept']} of {kept['all']} templates read: those the control set shows the model understands in every "
                "language run (the authors' filter)" if body["template_filter"] else f"all {kept['all']} templates read")
    return "\n".join([f"model: {model_named(results)}; {results['data']['counts']['items']:,} items (likelihood, in each "
                      f"item's language); results in {out}/results.json", "", markdown_table(rows, ["measure", *languages]), "",
                      f"{filtered}. Bias in [-1, 1] (positive: toward the stereotype); each figure is the mean over the "
                      "templates, as the authors compute it. The languages share their templates: a column is the same "
                      "questions in another language."])


def report_section(runs, labels, figures, options) -> list:
    """The report's MBBQ section (:func:`lmbias.benchmarks.mbbq.report.mbbq`)."""
    from .report import mbbq

    return mbbq(runs, labels, figures)


BENCHMARK = Benchmark(
    name="mbbq", display_name="MBBQ", description="MBBQ: BBQ in English, Dutch, Spanish and Turkish, with control sets",
    dataset="mbbq", hub_dataset=HubDataset("Veranep/MBBQ", "MBBQ", "test"),
    metrics=METRICS, run=TASK.run, task=TASK, records=records, summary=summary, report_section=report_section,
    run_options=(*MODEL_OPTIONS, "seed", "batch_size", "num_processes", "progress", "threads"),
    add_arguments=TASK.add_arguments, defaults={"batch_size": 16},
    variants=(Variant("language", "MBBQ language", LANGUAGES, each=True),),
    overall_note="MBBQ's overall cells are the mean over the templates read, per language, as the authors average.",
    paper="https://arxiv.org/abs/2406.07243",
)

