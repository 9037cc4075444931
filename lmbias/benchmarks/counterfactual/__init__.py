"""Counterfactual sentiment bias (Huang et al. 2020): I.F. and G.F. per attribute and classifier, S.S. / S.S.c."""

from __future__ import annotations

from collections.abc import Iterable

from ...lm.chat import add_instruction_argument
from ...lm.spec import ModelSpec
from ...render.text import markdown_table
from ..base import Benchmark, Examples, HubDataset, MetricSpec, ModuleExample, Variant, model_named
from ..derived import mean_over_domains
from .data import ATTRIBUTES
from .scorers.sentiment import CLASSIFIERS

METRICS = (
    MetricSpec("individual_fairness", "I.F.", "", 0.0, False, 3,
               "mean Wasserstein-1 distance between sentiment of counterfactual pairs (same template)"),
    MetricSpec("group_fairness", "G.F.", "", 0.0, False, 3,
               "mean Wasserstein-1 distance between a subgroup's sentiment and everyone's"),
)


def records(results: dict, benchmark: Benchmark | None = None) -> Iterable[dict]:
    """I.F. and G.F. per attribute (the domain) and classifier, with their bootstrap intervals (``benchmark``: a
    set scored as this one, a user's templates; default this one)."""
    benchmark = benchmark or BENCHMARK
    for attribute, block in results["results"]["attributes"].items():
        for classifier, fairness in block["classifiers"].items():
            for spec in METRICS:
                yield benchmark.record(spec.id, fairness[spec.id], domain=attribute, classifier=classifier,
                                       ci=fairness.get("ci", {}).get(spec.id))


def derived_records(records: list) -> list:
    """The leaderboard's overall I.F. / G.F.: the mean over the attributes measured, per classifier."""
    return mean_over_domains(records, ("metric", "classifier"), "attributes")


def summary(results: dict, out) -> str:
    """I.F. and G.F. per attribute and classifier, and S.S. / S.S.c per attribute."""
    rows = []
    for attribute, block in results["results"]["attributes"].items():
        relevance = block.get("semantic_similarity", {})
        for classifier, fairness in block["classifiers"].items():
            rows.append({
                "attribute": attribute, "classifier": classifier, "samples": block["samples"],
                "I.F.": f"{fairness['individual_fairness']:.4f}", "G.F.": f"{fairness['group_fairness']:.4f}",
                "S.S.": f"{relevance['ss']:.1f}" if relevance else "-", "S.S.c": f"{relevance['ssc']:.1f}" if relevance else "-",
            })
    outputs = results["outputs"]
    lines = [f"model: {model_named(results)}; {outputs['texts']:,} continuations "
             f"({results['config']['samples_per_prefix']} per prefix); results in {out}/results.json", ""]
    if rows:
        lines.append(markdown_table(rows, list(rows[0])))
    return "\n".join(lines)


def add_arguments(parser) -> None:
    """``lmbias run counterfactual``'s own options."""
    parser.add_argument("--attributes", nargs="+", choices=ATTRIBUTES, default=list(ATTRIBUTES),
                        help="sensitive attributes whose templates are used")
    parser.add_argument("--samples", type=int, default=1000, help="continuations per prefix (the paper: 1000)")
    parser.add_argument("--classifiers", nargs="+", choices=CLASSIFIERS, default=list(CLASSIFIERS),
                        help="sentiment classifiers (hf needs the Hub or a local --hf-model)")
    parser.add_argument("--hf-model", help="sentiment classifier for 'hf' (default distilbert-base-uncased-finetuned-sst-2-english)")
    parser.add_argument("--encoder", help="sentence-transformers model for S.S. (default all-MiniLM-L6-v2)")
    parser.add_argument("--no-similarity", action="store_true", help="skip S.S. / S.S.c")
    parser.add_argument("--bootstrap", type=int, default=0, help="bootstrap resamples for I.F. / G.F. intervals")
    parser.add_argument("--max-new-tokens", type=int, help="default 50 (the paper's)")
    add_instruction_argument(parser)
    parser.add_argument("--require-all", action="store_true", help="stop before generating if any scorer cannot run")


def run(options, model: ModelSpec):
    """``lmbias run counterfactual``: :func:`lmbias.benchmarks.counterfactual.task.run_counterfactual`."""
    from .task import run_counterfactual

    scoring = {"classifiers": options.classifiers, "semantic": not options.no_similarity, "bootstrap": options.bootstrap}
    if options.hf_model:
        scoring["hf_model"] = options.hf_model
    if options.encoder:
        scoring["encoder"] = options.encoder
    return run_counterfactual(
        model=model, out=options.out, attributes=options.attributes, samples=options.samples,
        max_new_tokens=options.max_new_tokens, seed=options.seed, batch_size=options.batch_size,
        progress=options.progress,
        require_all=options.require_all, data_dir=options.data_dir, scoring=scoring, instruction=options.instruction,
    )


def report_section(runs, labels, figures, options) -> list:
    """The report's counterfactual section (:func:`lmbias.benchmarks.counterfactual.report.counterfactual`)."""
    from .report import counterfactual

    return counterfactual(runs, labels, figures)


def migrate_v1(results: dict) -> dict:
    """Version 1 -> 2: ``generation`` becomes ``config`` (settings) and ``outputs`` (texts, file); the
    skipped classifiers move to the top level; the prefix count to ``data.counts``."""
    if "generation" not in results:
        return {**results, "skipped": results.get("skipped", results.get("results", {}).get("skipped", {}))}
    generation, data = results["generation"], results.get("data", {})
    config = {key: generation.get(key) for key in ("preset", "settings", "seed", "batch_size", "samples_per_prefix")}
    config["attributes"] = data.get("attributes")
    return {**{k: v for k, v in results.items() if k != "generation"}, "config": config,
            "data": {**data, "counts": data.get("counts", {"prefixes": data.get("prefixes")})},
            "outputs": {"texts": generation.get("texts"), "generations_file": generation.get("file")},
            "skipped": results.get("skipped", results.get("results", {}).get("skipped", {}))}


BENCHMARK = Benchmark(
    name="counterfactual", display_name="Counterfactual sentiment", description="counterfactual sentiment bias (Huang et al. 2020)",
    dataset="counterfactual_templates",
    hub_dataset=HubDataset("lmbias/counterfactual_templates", "Counterfactual sentiment templates", "test"),
    metrics=METRICS, run=run, records=records, summary=summary, report_section=report_section,
    add_arguments=add_arguments, defaults={"batch_size": 8},
    variants=(Variant("classifier", "Counterfactual classifier", ("hf", "opinion", "vader")),),
    domain_aliases={"occupation": "profession", "country": "nationality"},
    derived_records=derived_records, migrate_v1=migrate_v1, unfinished_presets=("counterfactual",),
    overall_note="I.F. and G.F. are the mean over the attributes measured for the classifier chosen.",
    paper="https://aclanthology.org/2020.findings-emnlp.7/",
    paired=lambda run, data_dir: _paired(run, data_dir),
    examples=Examples(
        refused=((("--instruction", "Go on: {prompt}"), "--instruction applies to chat runs: add --chat"),),
        modules={
            "counterfactual_sentiment_bias": ModuleExample(
                {"predictions": [0.1, 0.9, 0.4, 0.6, 0.2], "attribute_values": ["x", "y", "x", "y", "x"],
                 "template_ids": [1, 1, 2, 2, 2], "subgroups": ["m", "f", "m", "f", "m"]},
                bad=(("bootstrap", -1, ValueError, "bootstrap must be a non-negative integer"),
                     ("bootstrap", 2.5, TypeError, "bootstrap must be an integer"), ("tau", "0.5", TypeError, "tau must be a number"),
                     ("seed", 1.5, TypeError, "seed must be an integer"))),
            "counterfactual_semantic_similarity": ModuleExample(
                {"predictions": ["What a wonderful, happy day for her!", "He was an awful, angry man.", "The actress is a nurse.",
                                 "The actor fixed the engine.", "It is a table."],
                 "prefixes": ["Her day was", "He was", "The actress is", "The actor", "It is"]},
                bad=(("threshold", "0.4", TypeError, "threshold must be a number"),
                     ("batch_size", "64", TypeError, "batch_size must be an integer"),
                     ("sensitive_tokens", "Italy", TypeError, "sensitive_tokens must be a list of strings")))}),
)


def _paired(run, data_dir):
    from .paired import counterfactual_side

    return counterfactual_side(run, data_dir)
