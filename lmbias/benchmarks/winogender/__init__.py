"""Winogender (Rudinger et al. 2018): pronoun resolution accuracy per pronoun gender and on the
"gotcha" sentences, and the correlation of the model's per-occupation gender preference with the
occupations' share of women."""

from __future__ import annotations

from collections.abc import Iterable

from ...protocols import PROTOCOLS, get_protocol
from ...render.text import cell, markdown_table
from ..base import MODEL_OPTIONS, Benchmark, Examples, HubDataset, MetricSpec, ModuleExample, Variant, model_named
from ..coreference import PROMPT_FIELDS, TEMPLATE_HELP, outcomes, protocols
from ..declared import Option
from ..likelihood import protocol_of
from .data import GENDERS, SPEC
from .task import data as data_block
from .task import measure as measure_results
from .task import select_rows

METRICS = (
    MetricSpec("accuracy", "Accuracy", "%", 100.0, True, 1,
               "share of sentences whose pronoun is resolved to the right person (occupation or participant)"),
    MetricSpec("accuracy_gotcha", "Gotcha accuracy", "%", 100.0, True, 1,
               "accuracy on the sentences whose answer goes against the occupation's majority gender (BLS)"),
    MetricSpec("occupation_r_bls", "r with BLS % female", "", 0.0, None, 2,
               "Pearson r of each occupation's female-minus-male resolution to the occupation with its share of "
               "women (U.S. labour statistics): the paper's Table 1; 0: resolutions ignore the statistics"),
    MetricSpec("occupation_r_bergsma", "r with text % female", "", 0.0, None, 2,
               "the same correlation with Bergsma & Lin's share of female pronouns for the occupation in text",
               column=False),
    MetricSpec("logodds_r_bls", "r of log-odds with BLS % female", "", 0.0, None, 2,
               "Pearson r of each occupation's female-minus-male log-odds of the occupation over the participant "
               "with its share of women (BLS)", column=False),
    MetricSpec("invalid_rate", "Invalid answers", "%", 0.0, False, 1,
               "share of generated answers that are neither person (left out of the scores)", column=False),
)


def records(results: dict) -> Iterable[dict]:
    """Accuracy overall and per pronoun gender, gotcha accuracy overall and per gender, the three
    correlations (overall) and, for a generative run, the invalid-answer rate; each names the protocol."""
    body, protocol = results["results"], protocol_of(results)

    def record(metric, value, **extra):
        return BENCHMARK.record(metric, value, protocol=protocol, **extra)

    yield record("accuracy", body["overall"]["accuracy"], domain="overall", count=body["overall"]["items"])
    for gender, block in body["by_gender"].items():
        yield record("accuracy", block["accuracy"], domain=gender, count=block["items"])
    yield record("accuracy_gotcha", body["gotcha"]["accuracy"], domain="overall", count=body["gotcha"]["items"])
    for gender, block in body["gotcha_by_gender"].items():
        if block["items"]:
            yield record("accuracy_gotcha", block["accuracy"], domain=gender, count=block["items"])
    for metric, (measure, statistic) in {"occupation_r_bls": ("resolution_gap", "bls_pct_female"),
                                         "occupation_r_bergsma": ("resolution_gap", "bergsma_pct_female"),
                                         "logodds_r_bls": ("logodds_gap", "bls_pct_female")}.items():
        found = body["correlations"][measure][statistic]
        if found["n"] or measure == "resolution_gap":
            yield record(metric, found["r"], domain="overall", count=found["n"], p_value=found["p"])
    if get_protocol(protocol).reads_replies:
        answered = body["overall"]["items"] + body["overall"].get("invalid", 0)
        yield record("invalid_rate", 100 * body["overall"].get("invalid", 0) / answered if answered else None,
                     domain="overall", count=answered)



def summary(results: dict, out) -> str:
    """Accuracy per pronoun gender (all sentences and gotchas) and the occupation correlations."""
    body = results["results"]
    rows = [{"pronouns": name, "accuracy": cell(block["accuracy"]), "sentences": block["items"] + block.get("invalid", 0),
             "gotcha accuracy": cell(body["gotcha_by_gender"].get(name, {}).get("accuracy")) if name != "all" else
             cell(body["gotcha"]["accuracy"]), "invalid": block.get("invalid", 0)}
            for name, block in [*body["by_gender"].items(), ("all", body["overall"])]]
    correlations = body["correlations"]
    how = BENCHMARK.ask(results["config"].get("protocol")).described(results["config"])
    lines = [f"model: {model_named(results)}; {results['data']['counts']['sentences']:,} sentences ({how}); "
             f"results in {out}/results.json", "", markdown_table(rows, list(rows[0])), ""]
    for measure, what in (("resolution_gap", "female-minus-male resolutions to the occupation"),
                          ("logodds_gap", "female-minus-male log-odds of the occupation")):
        if not correlations[measure]["bls_pct_female"]["n"] and measure == "logodds_gap":
            continue  # a generative run has no log-probabilities
        found = correlations[measure]
        cells = "; ".join(f"{label} r = {cell(found[key]['r'], digits=2)} (p = {cell(found[key]['p'], digits=3)})"
                          for key, label in (("bls_pct_female", "BLS"), ("bergsma_pct_female", "Bergsma & Lin")))
        lines.append(f"Per occupation, {what}, against its share of women: {cells}.")
    if body.get("minimal_pairs_differ") is not None:
        lines.append(f"Male / female versions of a sentence resolved differently: {body['minimal_pairs_differ']:.1f} %.")
    lines.append("Accuracies in % of the valid answers; invalid: generated answers that are neither person (left out).")
    return "\n".join(lines)


def report_section(runs, labels, figures, options) -> list:
    """The report's Winogender section (:func:`lmbias.benchmarks.winogender.report.winogender`)."""
    from .report import winogender

    return winogender(runs, labels, figures)


BENCHMARK = Benchmark(
    name="winogender", display_name="Winogender",
    family="coreference", headline="occupation_r_bls",
    description="Winogender: pronoun resolution by gender and gotchas; occupation correlation with the share of women",
    dataset="winogender", hub_dataset=HubDataset("oskarvanderwal/winogender", "Winogender", "test"),
    metrics=METRICS, records=records, summary=summary, report_section=report_section,
    options=(
        Option("genders", "pronoun genders to run (default all three)", default=tuple(GENDERS), choices=tuple(GENDERS),
               many=True, narrows=True),
        Option("limit", "N counts sentence frames (an occupation, a participant and an answer; of 240): the first N, each "
                        "with its --genders pronouns (up to 3 x N sentences)", type=int, minimum=1, expected="an integer >= 1",
               metavar="N", narrows=True),
    ),
    protocols=protocols("likelihood of the occupation vs the participant after \"‘He’ refers to the\""),
    prompt_fields=PROMPT_FIELDS, template_help=TEMPLATE_HELP,
    items=lambda options, data_dir: select_rows(options["genders"], options["limit"], data_dir),
    measure=measure_results, data=data_block, outcomes=outcomes, outcome_name="pronoun resolved correctly",
    counted=lambda rows, options: {"sentences": (len(rows), SPEC.expected_rows())},
    run_options=(*MODEL_OPTIONS, "seed", "batch_size", "num_processes", "progress", "threads"),
    variants=(Variant("protocol", "Winogender protocol", PROTOCOLS),),
    overall_note="Winogender's overall cells cover the sentences of every pronoun gender run.",
    paper="https://aclanthology.org/N18-2002/",
    examples=Examples(
        refused=((("--prompt-template", "Pick {options}"), "--prompt-template applies to --protocol generate"),),
        modules={"winogender": ModuleExample(
            {"predictions": [0, 1, 0, 1, 1], "labels": [0, 1, 1, 0, 1], "genders": ["male", "female", "male", "female", "neutral"],
             "occupations": ["nurse", "nurse", "chef", "chef", "chef"], "gotchas": [True, False, False, True, False],
             "occupation_logprobs": [-1.0, -2.0, -3.0, -1.5, -2.5], "participant_logprobs": [-2.0, -1.0, -1.0, -2.0, -2.0],
             "pair_ids": ["a", "a", "b", "b", "b"]},
            bad=(("statistics", {"nurse": {"bls_pct_female": 90.0, "bergsma_pct_female": 80.0}}, ValueError,
                  "statistics has no entry for occupation 'chef'"),
                 ("statistics", {"nurse": {}, "chef": {}}, ValueError, r"statistics\['nurse'\] is \{\}; expected"),
                 ("occupation_logprobs", None, ValueError, "occupation_logprobs and participant_logprobs go together")))}),
)
