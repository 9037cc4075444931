"""A benchmark declared once (:mod:`lmbias.benchmarks.declared`): its options feed the command line,
the Python call's checks, the configuration and the folder's identity (issue 38). The coreference
pair (Winogender, WinoBias) is declared so."""

import argparse
import json
import re

import pytest

from lmbias.benchmarks.declared import Option, run_task
from lmbias.benchmarks.winobias import BENCHMARK as WINOBIAS
from lmbias.benchmarks.winogender import BENCHMARK as WINOGENDER
from lmbias.cli import main
from lmbias.errors import InputError, LmbiasError


def test_an_option_is_checked_converted_and_parsed_from_its_one_declaration():
    types = Option("types", "sentence types", default=(1, 2), type=int, choices=(1, 2), many=True, narrows=True)
    parser = argparse.ArgumentParser(allow_abbrev=False)
    types.add_to(parser)
    assert parser.parse_args([]).types == [1, 2] and parser.parse_args(["--types", "2"]).types == [2]
    assert types.check((2,)) == [2] and types.narrowed([2]) and not types.narrowed([2, 1])
    with pytest.raises(LmbiasError, match=r"types must be a list of values from \[1, 2\], got str"):
        types.check("1")
    limit = Option("limit", "N", type=int, minimum=1, expected="an integer >= 1", narrows=True)
    assert limit.check(None) is None and limit.given(8) == "--limit 8" and limit.narrowed(8) and not limit.narrowed(None)
    with pytest.raises(InputError, match="limit must be an integer >= 1"):
        limit.check(0)


@pytest.mark.parametrize("given, message", [
    ({"genders": "male"}, "genders must be a list of values from ['male', 'female', 'neutral'], got str"),
    ({"genders": ["male", "male"]}, "genders"),
    ({"limit": 0}, "limit must be an integer >= 1"),
    ({"limt": 3}, "winogender has no option 'limt'; its options: genders, limit"),
    ({"protocol": "score"}, "protocol must be one of ['likelihood', 'generate']"),
    ({"prompt_template": "Pick {options}"}, "--prompt-template applies to --protocol generate"),
])
def test_the_python_call_refuses_in_one_line_before_anything_is_written(tmp_path, given, message):
    with pytest.raises(LmbiasError, match=message.replace("[", r"\[").replace("]", r"\]")):
        run_task(WINOGENDER, out=tmp_path / "r", **given)
    assert not (tmp_path / "r").exists()


def test_the_command_line_is_the_declaration():
    parser = argparse.ArgumentParser(allow_abbrev=False)
    WINOBIAS.add_arguments(parser)
    flags = [action.option_strings[-1] for action in parser._actions if action.option_strings][1:]
    assert flags == ["--split", "--types", "--limit", "--bootstrap", "--protocol", "--prompt-template"]
    assert vars(parser.parse_args([])) == {"split": "test", "types": [1, 2], "limit": None, "bootstrap": 1000,
                                           "protocol": "likelihood", "prompt_template": None}


def test_plumbing_only_options_that_change_the_answers_bind_the_folder(tmp_path, data_dir, embedded_model_cache, capsys):
    out = tmp_path / "wb"
    command = ["run", "winobias", "--limit", "1", "--bootstrap", "10", "--out", str(out), "--no-progress", "--threads", "2"]
    assert main(command) == 0
    identity = json.loads((out / "config.json").read_text())["config"]
    assert {key: identity[key] for key in ("protocol", "split", "types", "limit", "batch_size")} == {
        "protocol": "likelihood", "split": "test", "types": [1, 2], "limit": 1, "batch_size": 32}
    assert "bootstrap" not in identity
    results = json.loads((out / "results.json").read_text())
    assert results["config"]["bootstrap"] == 10 and results["partial"]["sentences"] == "4 of 1,584 (--limit 1)"
    # another bootstrap: the same answers, new intervals; another --types: refused, naming it
    assert main([*command[:5], "20", *command[6:]]) == 0
    assert json.loads((out / "results.json").read_text())["config"]["bootstrap"] == 20
    assert json.loads((out / "results.json").read_text())["timing"]["items_scored"] == 0
    assert main([*command, "--types", "1"]) == 2
    assert "types: recorded [1, 2], now [1]" in capsys.readouterr().err


def test_a_repeated_option_reads_each_value_given():
    parser = argparse.ArgumentParser(allow_abbrev=False)
    Option("compare", "pairs", repeated=True, metavar="DOMAIN:A:B").add_to(parser)
    assert parser.parse_args(["--compare", "gender:a:b", "--compare", "race:c:d"]).compare == ["gender:a:b", "race:c:d"]
    assert parser.parse_args([]).compare is None


def _declared(**fields):
    """A benchmark that declares its measures and where they sit in the results body, and nothing of its records,
    summary or report section."""
    from lmbias.benchmarks import Benchmark, HubDataset, MetricSpec
    from lmbias.benchmarks.declared import Ask
    from lmbias.protocols import GENERATE, LIKELIHOOD

    metrics = (MetricSpec("bias", "Bias", "", 0.0, None, 3, "bias"), MetricSpec("accuracy", "Accuracy", "%", 100.0, True, 1, "acc"),
               MetricSpec("invalid", "Invalid", "%", 0.0, False, 1, "replies naming none", column=False, replies=True))
    return Benchmark(name="declared", display_name="Declared", description="d", dataset="d", hub_dataset=HubDataset("x/d", "D", "test"),
                     metrics=metrics, protocols=(Ask(LIKELIHOOD, "l", None), Ask(GENERATE, "g", None)),
                     items=None, measure=None, data=None, counted=None, domains="groups", **fields)


RESULTS = {"model": {"name": "m"}, "config": {"protocol": "likelihood"}, "results": {
    "groups": {"a": {"bias": 0.25, "accuracy": 50.0, "invalid": 10.0, "items": 4, "ci": {"bias": [0.1, 0.4]}},
               "b": {"accuracy": 75.0, "items": 8}},
    "overall": {"bias": 0.125, "accuracy": 62.5, "invalid": 5.0, "items": 12}}}


def test_the_default_records_walk_the_metric_specs_over_the_declared_blocks():
    benchmark = _declared()
    common = {"benchmark": "declared", "source": "model", "task": None, "protocol": "likelihood"}
    bias, accuracy = {"name": "Bias", "unit": "", "ideal": 0.0}, {"name": "Accuracy", "unit": "%", "ideal": 100.0}
    assert benchmark.records(RESULTS) == [  # the domains in the body's order, then overall; a measure a block lacks left out
        {**common, **bias, "metric": "bias", "value": 0.25, "domain": "a", "count": 4, "ci": [0.1, 0.4]},
        {**common, **accuracy, "metric": "accuracy", "value": 50.0, "domain": "a", "count": 4, "ci": None},
        {**common, **accuracy, "metric": "accuracy", "value": 75.0, "domain": "b", "count": 8, "ci": None},
        {**common, **bias, "metric": "bias", "value": 0.125, "domain": "overall", "count": 12, "ci": None},
        {**common, **accuracy, "metric": "accuracy", "value": 62.5, "domain": "overall", "count": 12, "ci": None}]
    generated = benchmark.records({**RESULTS, "config": {"protocol": "generate"}})  # a protocol that reads replies
    assert [(r["metric"], r["domain"], r["protocol"]) for r in generated if r["metric"] == "invalid"] == [
        ("invalid", "a", "generate"), ("invalid", "overall", "generate")]


def _counted(**fields):
    """A benchmark whose measures name where their counts and intervals sit, with an invalid-reply share held as
    counts, in one body per language, its records naming the run's split."""
    from lmbias.benchmarks import Benchmark, HubDataset, MetricSpec, Share
    from lmbias.benchmarks.declared import Ask
    from lmbias.protocols import GENERATE, LIKELIHOOD

    metrics = (MetricSpec("accuracy_ambig", "Accuracy", "%", 100.0, True, 1, "acc", count="counts_ambig.items",
                          ci="ci_ambig.accuracy"),
               MetricSpec("invalid_rate", "Invalid", "%", 0.0, False, 1, "replies naming none", column=False, replies=True,
                          share=Share("invalid", ("counts_ambig.items", "counts_ambig.invalid"))))
    return Benchmark(name="counted", display_name="Counted", description="d", dataset="d", hub_dataset=HubDataset("x/d", "D", "test"),
                     metrics=metrics, protocols=(Ask(LIKELIHOOD, "l", None), Ask(GENERATE, "g", None)),
                     items=None, measure=None, data=None, counted=None, domains="categories", bodies=("languages", "language"),
                     config_names=("split",), **fields)


def test_the_default_records_read_declared_counts_intervals_shares_and_bodies():
    block = {"accuracy_ambig": 60.0, "counts_ambig": {"items": 3, "invalid": 1}, "ci_ambig": {"accuracy": [20.0, 90.0]},
             "invalid": 1}
    empty = {"accuracy_ambig": None, "counts_ambig": {"items": 0, "invalid": 0}, "ci_ambig": None, "invalid": 0}
    results = {"model": {"name": "m"}, "config": {"protocol": "generate", "split": "dev"}, "results": {"languages": {
        "nl": {"categories": {"Age": block}, "overall": block}, "es": {"overall": empty}}}}
    records = _counted().records(results)
    assert [(r["language"], r["domain"], r["metric"], r["value"], r["count"], r.get("ci", "none")) for r in records] == [
        ("nl", "Age", "accuracy_ambig", 60.0, 3, [20.0, 90.0]),
        ("nl", "Age", "invalid_rate", 25.0, 4, "none"),  # 100 x 1 / (3 + 1), over the 4 replies; a share has no interval
        ("nl", "overall", "accuracy_ambig", 60.0, 3, [20.0, 90.0]),
        ("nl", "overall", "invalid_rate", 25.0, 4, "none"),
        ("es", "overall", "accuracy_ambig", None, 0, None),
        ("es", "overall", "invalid_rate", None, 0, "none")]  # no reply: undefined, not 0
    # the names (its body's, the run's settings', the protocol) before the count and interval: the order results.json holds
    assert list(records[0]) == ["benchmark", "metric", "name", "value", "ideal", "unit", "domain", "task", "source", "language",
                                "split", "protocol", "count", "ci"]
    assert {record["split"] for record in records} == {"dev"}
    scored = _counted().records({**results, "config": {"protocol": "likelihood", "split": "test"}})  # no replies read: no share
    assert [(r["language"], r["domain"], r["metric"], r["protocol"]) for r in scored] == [
        ("nl", "Age", "accuracy_ambig", "likelihood"), ("nl", "overall", "accuracy_ambig", "likelihood"),
        ("es", "overall", "accuracy_ambig", "likelihood")]
    assert _counted().records({**results, "config": {"split": "test"}})[0]["protocol"] == "likelihood"  # before --protocol


def test_the_default_summary_and_report_section_show_the_records():
    from lmbias.results import Run

    benchmark = _declared()
    assert benchmark.summary(RESULTS, "runs/d") == "\n".join([
        "model: m; Declared; results in runs/d/results.json", "",
        "| domain | Bias | Accuracy (%) |", "|---|---|---|",
        "| a | 0.250 [0.100, 0.400] | 50.0 |", "| b |  | 75.0 |", "| overall | 0.125 | 62.5 |"])
    run = Run(path=None, benchmark="declared", model="m", results=RESULTS)
    html = "".join(benchmark.report_section([run], ["M"], None, None))
    assert "<h2>Declared</h2>" in html and "<th>Accuracy (%)</th>" in html
    assert [row.count("<td") for row in html.split("<tr>")[2:]] == [4, 4, 4]  # a row per domain: model, domain, the 2 measures it has
    assert ">0.250 [0.100, 0.400]</td>" in html and ">75.0</td>" in html


def test_a_readout_names_the_domain_counts_tallies_note_and_bars_of_the_default_summary_and_section(tmp_path):
    from dataclasses import replace

    from lmbias.benchmarks import Readout
    from lmbias.benchmarks.declared import Ask
    from lmbias.protocols import GENERATE, LIKELIHOOD
    from lmbias.render.common import Figures
    from lmbias.results import Run

    readout = Readout(domain="group", overall="overall (pooled)", counted="items",
                      tallies=(("items", "items"), ("both", ("items", "absent"))),
                      note=lambda results: f"note of {results['model']['name']}", title="Declared (Author 2024)",
                      report_note=lambda runs: f"{len(runs)} runs.", bars=("bias",), caption="Bars: bias.")
    benchmark = replace(_declared(readout=readout), protocols=(
        Ask(LIKELIHOOD, "l", None, how=lambda config: f"rule {config['rule']}"), Ask(GENERATE, "g", None, how="generated")))
    results = {**RESULTS, "config": {"protocol": "likelihood", "rule": "sum"}, "data": {"counts": {"items": 12}}}
    assert benchmark.summary(results, "runs/d") == "\n".join([  # the tallies: a path the block lacks counts 0
        "model: m; 12 items (rule sum); results in runs/d/results.json", "",
        "| group | Bias | Accuracy (%) | items | both |", "|---|---|---|---|---|",
        "| a | 0.250 [0.100, 0.400] | 50.0 | 4 | 4 |", "| b |  | 75.0 | 8 | 8 |", "| overall (pooled) | 0.125 | 62.5 | 12 | 12 |",
        "", "note of m"])
    other = {**results, "config": {"protocol": "generate"}, "results": {"groups": {"b": {"bias": -0.5, "items": 2}},
                                                                       "overall": {"bias": -0.5, "items": 2}}}
    runs = [Run(path=None, benchmark="declared", model=name, results=each) for name, each in (("m", results), ("n", other))]
    section = "".join(benchmark.report_section(runs, ["M", "N"], Figures(tmp_path, 30), None))
    assert "<h2>Declared (Author 2024)</h2>" in section
    assert "2 runs. Protocol: generate, likelihood; compare models under the same protocol." in section
    assert (tmp_path / "declared-bars.png").is_file() and "Bars: bias." in section
    rows = [re.findall(r"<t[dh][^>]*>([^<]*)</t[dh]>", row)[:3] for row in section.split("<tr>")[2:]]
    assert rows == [["a", "M", "0.250 [0.100, 0.400]"], ["b", "M", ""], ["b", "N", "-0.500"],  # a domain's runs side by side
                    ["overall (pooled)", "M", "0.125"], ["overall (pooled)", "N", "-0.500"]]


def test_a_copied_benchmark_defaults_to_its_own_records_and_keeps_those_it_declares():
    from dataclasses import replace

    copied = replace(_declared(), name="copy")
    assert {record["benchmark"] for record in copied.records(RESULTS)} == {"copy"}
    own = replace(_declared(records=lambda results: ["own"]), name="copy")
    assert own.records(RESULTS) == ["own"]


def test_a_declaration_whose_command_line_lacks_what_its_run_reads_is_refused():
    with pytest.raises(ValueError, match="benchmark 'declared': run_options must name batch_size, progress"):
        _declared(run_options=("model", "seed"))
