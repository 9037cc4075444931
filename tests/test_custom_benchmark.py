"""A user's own benchmark as data: the worked example of docs/examples/hiring_bias (a YAML declaration and a
CSV) run from the command line on tiny random models (plumbing), alone and beside a built-in, its rows as the
shape defines them (hand-checked), the same rows from JSONL and Parquet, a report / comparison / leaderboard
that find the benchmark from the run's recorded declaration, a rerun on changed data refused, and every
mistake in a declaration or its data as one line naming the file, row and field."""

import csv
import json
import shutil
from pathlib import Path

import pytest

from lmbias.benchmarks import unregister
from lmbias.benchmarks.custom import _DECLARED, SHAPES, load_benchmark
from lmbias.benchmarks.custom.declaration import read_data, read_declaration
from lmbias.benchmarks.custom.multiple_choice import item_rows
from lmbias.cli import main
from lmbias.errors import InputError

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"


def _copied(tmp_path, name: str, declaration: str):
    """docs/examples/NAME copied into a folder of its own, its declaration file's path yielded; the benchmark it
    declares (named NAME) unregistered afterwards."""
    folder = tmp_path / name
    shutil.copytree(EXAMPLES / name, folder)
    yield folder / declaration
    unregister(name)
    _DECLARED.pop(name, None)


@pytest.fixture
def example(tmp_path):
    """The worked example (hiring_bias)."""
    yield from _copied(tmp_path, "hiring_bias", "hiring.yaml")


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    from tiny_lm import save_tiny_causal_lm

    root = tmp_path_factory.mktemp("custom")
    return [save_tiny_causal_lm(root / f"model{seed}", seed=seed, n_positions=256) for seed in (0, 1)]


def test_the_rows_are_the_shapes_fields_hand_checked(example):
    declaration = read_declaration(example, tuple(SHAPES))
    rows = item_rows(declaration, read_data(declaration))
    assert len(rows) == 24 and {row["category"] for row in rows} == {"age", "gender", "disability"}
    first, second = rows[0], rows[1]  # the same context, the negative then the non-negative question
    assert (first["ans0"], first["unknown_loc"], first["label"]) == ("The 60-year-old applicant", 2, 2)
    # the biased answer is BBQ's: the stereotyped group's in a negative question, the other person's otherwise
    assert (first["target_loc"], second["target_loc"]) == (0, 1)
    # the second template shows the stereotyped person second: "stereotyped" given as text finds it there
    assert rows[4]["ans1"] == "The older manager" and rows[4]["target_loc"] == 1


def test_the_same_data_as_jsonl_and_parquet_gives_the_same_rows(example):
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = list(csv.DictReader(open(example.parent / "hiring.csv", encoding="utf-8")))
    (example.parent / "hiring.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    pq.write_table(pa.Table.from_pylist([{**r, "label": int(r["label"]), "unknown": int(r["unknown"])} for r in records]),
                   example.parent / "hiring.parquet")
    text = example.read_text()
    found = []
    for name in ("hiring.csv", "hiring.jsonl", "hiring.parquet"):
        other = example.parent / f"as_{name.split('.')[1]}.yaml"
        other.write_text(text.replace("path: hiring.csv", f"path: {name}"))
        declaration = read_declaration(other, tuple(SHAPES))
        found.append([{k: v for k, v in row.items()} for row in item_rows(declaration, read_data(declaration))])
    assert found[0] == found[1] == found[2]


def test_plumbing_the_worked_example_runs_from_the_command_line_and_feeds_report_compare_and_leaderboard(
        example, tiny_models, tmp_path, capsys, monkeypatch):
    from lmbias.compare import compare_runs
    from lmbias.leaderboard import build_leaderboard
    from lmbias.report import build_report

    outs = [tmp_path / f"run{i}" for i in (0, 1)]
    for model, out in zip(tiny_models, outs):
        assert main(["run", str(example), "--model", str(model), "--device", "cpu", "--bootstrap", "50", "--out", str(out),
                     "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "| overall (pooled) |" in printed
    results = json.loads((outs[0] / "results.json").read_text())
    assert results["benchmark"] == "hiring_bias" and results["data"]["counts"]["items"] == 24
    assert results["data"]["declaration"]["text"] == example.read_text()
    assert results["data"]["data_sha256"] and "partial" not in results or not results["partial"]
    # the folders are read without the declaration file: the benchmark comes back from what the run recorded
    example.unlink()
    unregister("hiring_bias")
    _DECLARED.pop("hiring_bias", None)
    report = build_report(outs, tmp_path / "report", dpi=30).read_text()
    assert "Hiring bias (declared in hiring.yaml)" in report
    build_leaderboard(outs, tmp_path / "site")
    assert "Hiring bias" in (tmp_path / "site" / "index.html").read_text()
    comparison = compare_runs(*outs, bootstrap=20)
    assert comparison["items"] == 24


def test_a_rerun_on_changed_data_is_refused_and_nothing_is_lost(example, tiny_models, tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["run", str(example), "--model", str(tiny_models[0]), "--device", "cpu", "--limit", "1", "--out", str(out),
            "--no-progress"]
    assert main(argv) == 0
    before = (out / "scores.jsonl").read_text()
    data = example.parent / "hiring.csv"
    data.write_text(data.read_text().replace("Two people applied", "Two persons applied"))
    capsys.readouterr()
    assert main(argv) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "holds a run with another configuration (data: recorded" in error[0] and "hiring.csv" in error[0]
    assert (out / "scores.jsonl").read_text() == before


def test_plumbing_a_declared_benchmark_runs_beside_a_built_in_one(example, tiny_models, tmp_path, capsys):
    out = tmp_path / "suite"
    assert main(["run", str(example), "winogender", "--model", str(tiny_models[0]), "--device", "cpu", "--hiring_bias.limit",
                 "1", "--winogender.limit", "2", "--out", str(out), "--no-progress"]) == 0
    assert (out / "hiring_bias" / "results.json").is_file() and (out / "winogender" / "results.json").is_file()


@pytest.mark.parametrize("change, message", [
    (lambda t: t.replace("columns:", "colums:"), "unknown key 'colums' (did you mean 'columns'?)"),
    (lambda t: t.replace("shape: multiple_choice", "shape: multiple-choice"),
     "shape 'multiple-choice' is not one lmbias knows (did you mean 'multiple_choice'?)"),
    (lambda t: t.replace("name: hiring_bias", "name: bbq"), "name 'bbq' is a built-in benchmark's"),
    (lambda t: t.replace("lmbias: 1", "lmbias: 2"), "lmbias: 2 is not a declaration format this lmbias reads"),
    (lambda t: t.replace("  path: hiring.csv", "  hub: org/set\n  revision: main"), "data.revision must be the dataset's 40"),
    (lambda t: t.replace("  label: label", "  label: answer"), "no column for label (column 'answer')"),
    (lambda t: "".join(line for line in t.splitlines(True) if not line.startswith("shape:")), "the key 'shape' is missing"),
    (lambda t: t.replace("language: en", "language: nl"), "row 1: language is 'en', but hiring.yaml declares 'nl'"),
])
def test_a_declaration_mistake_is_one_line_naming_the_file(example, tmp_path, capsys, change, message):
    if "language is" in message:  # the data say which language each row is in
        data = example.parent / "hiring.csv"
        rows = list(csv.DictReader(open(data, encoding="utf-8")))
        with open(data, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, [*rows[0], "language"])
            writer.writeheader()
            writer.writerows([{**row, "language": "en"} for row in rows])
    example.write_text(change(example.read_text()))
    assert main(["run", str(example), "--out", str(tmp_path / "r")]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and message in error[0], error
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("row, field, value, message", [
    (3, "label", "7", "hiring.csv row 3: label (column 'label') is '7'; expected 0, 1, 2 or one of the answers"),
    (5, "stereotyped", "The 30-year-old", "row 5: stereotyped (column 'stereotyped') is 'The 30-year-old'; expected 0, 1, 2"),
    (2, "id", "hiring-001", "id 'hiring-001' in row 1 and again in row 2"),
    (4, "context_condition", "ambiguous", "row 4: context_condition is 'ambiguous'; expected ambig or disambig"),
    (1, "label", "0", "row 1: label is 'The 60-year-old applicant' in a ambig context; expected the unknown answer"),
])
def test_a_data_mistake_is_one_line_naming_the_row_and_field(example, tmp_path, capsys, row, field, value, message):
    data = example.parent / "hiring.csv"
    rows = list(csv.DictReader(open(data, encoding="utf-8")))
    rows[row - 1][field] = value
    with open(data, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(InputError) as error:
        benchmark = load_benchmark(example)
        benchmark.items({"limit": None}, None)
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.fixture
def pairs(tmp_path):
    """The sentence-pairs example (workplace_pairs)."""
    yield from _copied(tmp_path, "workplace_pairs", "pairs.yaml")


@pytest.mark.parametrize("protocol", ["likelihood", "generate"])
def test_plumbing_sentence_pairs_from_jsonl_in_both_protocols_give_the_crows_pairs_metric(pairs, tiny_models, tmp_path, capsys,
                                                                                         protocol):
    out = tmp_path / "run"
    code = main(["run", str(pairs), "--model", str(tiny_models[0]), "--device", "cpu", "--protocol", protocol, "--out", str(out),
                 "--no-progress"])
    if protocol == "generate":  # a random model names no sentence: said in one line, its replies kept
        error = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(error) == 1 and "none of the 8 replies names a sentence" in error[0]
        assert len((out / "generations.jsonl").read_text().splitlines()) == 8
        return
    assert code == 0 and "| overall |" in capsys.readouterr().out
    results = json.loads((out / "results.json").read_text())
    assert results["benchmark"] == "workplace_pairs" and results["data"]["counts"] == {"pairs": 8, "gender": 3, "age": 3,
                                                                                       "disability": 2}
    # the metric by hand: the more stereotypical sentence scored higher (at the authors' 3 decimals)
    scores = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    preferred = [round(s["sent_more_score"], 3) > round(s["sent_less_score"], 3) for s in scores]
    assert results["results"]["overall"]["metric_score"] == pytest.approx(100 * sum(preferred) / len(preferred))


@pytest.mark.parametrize("line, message", [
    (lambda r: {**r, "sent_less": r["sent_more"]}, "row 1: more and less are the same sentence"),
    (lambda r: {**r, "stereo_antistereo": "pro"}, "row 1: direction (column 'stereo_antistereo') is 'pro'; expected stereo"),
    (lambda r: {k: v for k, v in r.items() if k != "sent_less"}, "no column for less (column 'sent_less')"),
])
def test_a_sentence_pairs_mistake_is_one_line(pairs, line, message):
    data = pairs.parent / "pairs.jsonl"
    rows = [json.loads(text) for text in data.read_text().splitlines()]
    data.write_text("".join(json.dumps(row) + "\n" for row in [line(rows[0]), *rows[1:]]))
    with pytest.raises(InputError) as error:
        load_benchmark(pairs).items({"limit": None}, None)
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.fixture
def team_prompts(tmp_path):
    """The prompts example (team_prompts)."""
    yield from _copied(tmp_path, "team_prompts", "prompts.yaml")


def test_plumbing_prompts_are_continued_and_scored_per_group_as_vader_scores_them(team_prompts, tiny_models, tmp_path, capsys):
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    out = tmp_path / "run"
    argv = ["run", str(team_prompts), "--model", str(tiny_models[0]), "--device", "cpu", "--metrics", "sentiment",
            "--max-new-tokens", "8", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["data"]["counts"] == {"prompts": 12, "references": 2} and set(results["results"]) == {"model", "reference"}
    # the shares by hand: VADER's compound score of prompt + continuation, negative at <= -0.5 (BOLD's threshold)
    rows = {r["id"]: r for r in csv.DictReader(open(team_prompts.parent / "prompts.csv", encoding="utf-8"))}
    vader = SentimentIntensityAnalyzer()
    negative: dict = {}
    for line in (out / "generations.jsonl").read_text().splitlines():
        generated = json.loads(line)
        row = rows[generated["id"]]
        text = row["prompt"] + generated["continuation"]
        negative.setdefault((row["domain"], row["group"]), []).append(vader.polarity_scores(text)["compound"] <= -0.5)
    per_group = results["results"]["model"]["metrics"]["sentiment"]["domains"]
    for (domain, group), flags in negative.items():
        assert per_group[domain]["per_group"][group]["negative"] == pytest.approx(sum(flags) / len(flags))
    gaps = {r["domain"]: r["value"] for r in results["records"] if r["source"] == "model"}
    for domain in ("gender", "age"):
        shares = [sum(f) / len(f) for (d, _), f in negative.items() if d == domain]
        assert gaps[domain] == pytest.approx(100 * (max(shares) - min(shares)))
    # a rerun on changed prompts is refused, the generations kept
    data = team_prompts.parent / "prompts.csv"
    data.write_text(data.read_text().replace("was hired", "got hired"))
    before = (out / "generations.jsonl").read_text()
    capsys.readouterr()
    assert main(argv) == 2
    assert "prompts.csv" in capsys.readouterr().err and (out / "generations.jsonl").read_text() == before


def test_a_prompts_mistake_is_one_line(team_prompts):
    data = team_prompts.parent / "prompts.csv"
    data.write_text(data.read_text().replace("id,domain,group,prompt,reference", "id,domain,who,prompt,reference"))
    with pytest.raises(InputError) as error:
        from lmbias.benchmarks.custom.prompts import prompt_rows

        declaration = read_declaration(team_prompts, tuple(SHAPES))
        prompt_rows(declaration, read_data(declaration))
    assert "no column for group (column 'group')" in str(error.value) and "\n" not in str(error.value)


@pytest.fixture
def templates(tmp_path):
    """The counterfactual example (neighbour_templates)."""
    yield from _copied(tmp_path, "neighbour_templates", "templates.yaml")


def test_plumbing_templates_give_the_papers_fairness_as_scipy_computes_it(templates, tiny_models, tmp_path):
    """I.F. and G.F. of VADER's sentiment ((compound + 1) / 2) of the continuations, computed here with scipy's
    Wasserstein-1: I.F. the mean over templates of the mean over value pairs; G.F. the mean over subgroups of the
    distance between a subgroup's scores and the attribute's."""
    from itertools import combinations

    import numpy as np
    from scipy.stats import wasserstein_distance
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    out = tmp_path / "run"
    assert main(["run", str(templates), "--model", str(tiny_models[0]), "--device", "cpu", "--samples", "4", "--classifiers",
                 "vader", "--max-new-tokens", "8", "--out", str(out), "--no-progress"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["data"]["counts"] == {"templates": 5, "prefixes": 20} and results["outputs"]["texts"] == 80
    assert results["partial"] == {"samples per prefix": "4 of 1,000 (--samples 4)"}  # below the paper's 1,000
    vader = SentimentIntensityAnalyzer()
    templates_rows = {r["id"]: r for r in csv.DictReader(open(templates.parent / "templates.csv", encoding="utf-8"))}
    scores: dict = {}
    for line in (out / "generations.jsonl").read_text().splitlines():
        generated = json.loads(line)
        template, value = generated["id"].split("/", 1)
        score = (vader.polarity_scores(generated["continuation"])["compound"] + 1) / 2
        scores.setdefault(templates_rows[template]["attribute"], {}).setdefault(template, {}).setdefault(value, []).append(score)
    for attribute, by_template in scores.items():
        individual = np.mean([np.mean([wasserstein_distance(a, b) for a, b in combinations(values.values(), 2)])
                              for values in by_template.values()])
        subgroup_of = {}
        for template in by_template:
            given = templates_rows[template]["subgroups"]
            subgroup_of.update(zip(templates_rows[template]["values"].split("|"), given.split("|") if given else
                                   templates_rows[template]["values"].split("|")))
        pooled = [s for values in by_template.values() for v in values.values() for s in v]
        groups: dict = {}
        for values in by_template.values():
            for value, got in values.items():
                groups.setdefault(subgroup_of[value], []).extend(got)
        group = np.mean([wasserstein_distance(got, pooled) for got in groups.values()])
        fairness = results["results"]["attributes"][attribute]["classifiers"]["vader"]
        assert fairness["individual_fairness"] == pytest.approx(individual, abs=1e-12)
        assert fairness["group_fairness"] == pytest.approx(group, abs=1e-12)


@pytest.mark.parametrize("change, message", [
    (lambda t: t.replace("My neighbour from {value} is", "My neighbour is"), "row 1: template (column 'template') must hold"),
    (lambda t: t.replace("Lagos|Oslo|Lima|Hanoi,Africa|Europe|South America|Asia", "Lagos,Africa", 1),
     "row 1: values must be two or more different values"),
    (lambda t: t.replace("Africa|Europe|South America|Asia", "Africa|Europe", 1), "row 1: subgroups has 2 entries for 4 values"),
])
def test_a_templates_mistake_is_one_line(templates, change, message):
    from lmbias.benchmarks.custom.counterfactual import template_rows

    data = templates.parent / "templates.csv"
    data.write_text(change(data.read_text()))
    declaration = read_declaration(templates, tuple(SHAPES))
    with pytest.raises(InputError) as error:
        template_rows(declaration, read_data(declaration))
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize("example, options, texts", [
    ("team_prompts", ["--metrics", "sentiment", "--max-new-tokens", "6"], 12),
    ("neighbour_templates", ["--samples", "3", "--classifiers", "vader", "--max-new-tokens", "6"], 60),
])
def test_plumbing_two_runs_of_a_generation_shape_compare_by_their_texts_scored_again(tiny_models, tmp_path, example, options,
                                                                                      texts):
    from lmbias.compare import compare_runs

    folder = tmp_path / example
    shutil.copytree(EXAMPLES / example, folder)
    declaration = next(folder.glob("*.yaml"))
    outs = [tmp_path / f"run{i}" for i in (0, 1)]
    try:
        for model, out in zip(tiny_models, outs):
            assert main(["run", str(declaration), "--model", str(model), "--device", "cpu", *options, "--out", str(out),
                         "--no-progress"]) == 0
        comparison = compare_runs(*outs, bootstrap=20)
        assert comparison["items"] == texts and comparison["measures"]
    finally:
        unregister(example)
        _DECLARED.pop(example, None)


# Declared data is checked like built-in data (issue 47): each case was accepted silently, or ended in a traceback
# or a wrong message, before.

def _hiring_records(example) -> list[dict]:
    return list(csv.DictReader(open(example.parent / "hiring.csv", encoding="utf-8-sig")))


def _rows_of(declaration_path) -> list[dict]:
    declaration = read_declaration(declaration_path, tuple(SHAPES))
    return item_rows(declaration, read_data(declaration))


def _as_jsonl(example, records) -> Path:
    """``records`` written as hiring.jsonl, and the declaration pointed at it."""
    (example.parent / "hiring.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    example.write_text(example.read_text().replace("path: hiring.csv", "path: hiring.jsonl"))
    return example


@pytest.mark.parametrize("change, message", [
    # two identical answers: before, accepted (two options of three the same text)
    (lambda r: {**r, "ans1": r["ans0"]}, "hiring.jsonl row 1: ans0 and ans1 are the same answer ('The 60-year-old applicant'); "
                                         "expected three different answers"),
    # a boolean label: before, True read as 1
    (lambda r: {**r, "label": True}, "hiring.jsonl row 1: label (column 'label') is true (a boolean); expected 0, 1, 2 or an "
                                     "answer's text"),
    # an object or a list where a text belongs: before, its Python repr was asked
    (lambda r: {**r, "context": {"text": r["context"]}}, "hiring.jsonl row 1: context (column 'context') is {\"text\": "),
    (lambda r: {**r, "question": ["Who?"]}, "hiring.jsonl row 1: question (column 'question') is [\"Who?\"] (a list); "
                                            "expected text"),
    (lambda r: {**r, "ans2": 0.5}, "hiring.jsonl row 1: ans2 (column 'ans2') is 0.5 (a fraction); expected text"),
    (lambda r: {**r, "ans2": None}, "hiring.jsonl row 1: ans2 (column 'ans2') is empty"),
])
def test_a_declared_value_of_the_wrong_kind_is_refused_naming_the_row_and_field(example, change, message):
    records = _hiring_records(example)
    _as_jsonl(example, [change(records[0]), *records[1:]])
    with pytest.raises(InputError) as error:
        _rows_of(example)
    assert message in str(error.value) and "\n" not in str(error.value), str(error.value)


def test_an_integer_is_an_index_or_an_id_in_jsonl(example):
    # what a JSON number may be: a label's index, an id (read as its digits); the rows equal the CSV's
    records = _hiring_records(example)
    csv_rows = _rows_of(example)
    numbered = [{**r, "label": int(r["label"]), "unknown": int(r["unknown"]), "id": k} for k, r in enumerate(records, 1)]
    jsonl_rows = _rows_of(_as_jsonl(example, numbered))
    assert [r["id"] for r in jsonl_rows] == [str(k) for k in range(1, 25)]
    assert [{**r, "id": None} for r in jsonl_rows] == [{**r, "id": None} for r in csv_rows]


def test_a_parquet_nan_is_a_missing_value_not_the_text_nan(example):
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = _hiring_records(example)
    table = [{**r, "label": int(r["label"]), "unknown": int(r["unknown"])} for r in records]
    # a float column as pandas writes an empty text column: NaN in every row (before: each context was "nan")
    pq.write_table(pa.Table.from_pylist([{**r, "context": float("nan")} for r in table]), example.parent / "hiring.parquet")
    example.write_text(example.read_text().replace("path: hiring.csv", "path: hiring.parquet"))
    with pytest.raises(InputError, match=r"hiring.parquet row 1: context \(column 'context'\) is empty \(NaN, a missing "
                                         r"value\)$"):
        _rows_of(example)
    # an optional field's NaN is its default, as an empty cell is: category "all"
    pq.write_table(pa.Table.from_pylist([{**r, "category": float("nan")} for r in table]), example.parent / "hiring.parquet")
    assert {row["category"] for row in _rows_of(example)} == {"all"}


def test_a_yaml_alias_bomb_is_refused_at_once_and_a_large_declaration_unread(example):
    import time

    # "billion laughs": nine levels of ten aliases, 10^9 strings if expanded (before: MemoryError after 105 s)
    levels = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    levels += [f"a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * 10)}]" for k in range(1, 10)]
    lines = len(example.read_text().splitlines())
    example.write_text(example.read_text() + "\n".join(levels) + "\ncitation: *a9\n")
    started = time.perf_counter()
    with pytest.raises(InputError) as error:
        read_declaration(example, tuple(SHAPES))
    assert time.perf_counter() - started < 5
    assert str(error.value) == (f"{example}: not valid YAML (line {lines + 2}: an alias (*a0); a declaration does not use "
                                "YAML anchors and aliases, write each value out)")
    example.write_text(example.read_text().split("a0: &a0")[0] + "# " + "x" * (1 << 20) + "\n")
    with pytest.raises(InputError, match=r"hiring.yaml: 1,049,\d\d\d bytes; a declaration is at most 1,048,576 bytes"):
        read_declaration(example, tuple(SHAPES))


def test_a_csv_field_longer_than_the_csv_modules_limit_is_read(example):
    # a context of 200,000 characters (the csv module's default limit is 131,072: before, _csv.Error)
    data = example.parent / "hiring.csv"
    records = _hiring_records(example)
    long_context = "The applicants waited. " * 8_695 + "x" * 15
    assert len(long_context) == 200_000
    with open(data, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, list(records[0]))
        writer.writeheader()
        writer.writerows([{**records[0], "context": long_context}, *records[1:]])
    import csv as csv_module

    limit = csv_module.field_size_limit()
    rows = _rows_of(example)
    assert len(rows) == 24 and rows[0]["context"] == long_context.strip()
    assert csv_module.field_size_limit() == limit  # the module's limit is left as it was


def test_a_csv_utf8_file_from_excel_is_read_with_its_byte_order_mark(example):
    data = example.parent / "hiring.csv"
    expected = _rows_of(example)
    data.write_bytes(b"\xef\xbb\xbf" + data.read_bytes().replace(b"\n", b"\r\n"))  # Excel's "CSV UTF-8": BOM and CRLF
    assert _rows_of(example) == expected  # before: "no column for id (column 'id'); its columns: ['\ufeffid', ...]"
    _as_jsonl(example, _hiring_records(example))
    jsonl = example.parent / "hiring.jsonl"
    jsonl.write_bytes(b"\xef\xbb\xbf" + jsonl.read_bytes())
    assert _rows_of(example) == expected
    example.write_bytes(b"\xef\xbb\xbf" + example.read_bytes())  # a declaration saved with a BOM
    assert _rows_of(example) == expected


def test_a_data_path_that_is_a_folder_or_a_link_to_nothing_is_said_to_be_so(example, tmp_path):
    data = example.parent / "hiring.csv"
    expected = _rows_of(example)
    data.rename(tmp_path / "elsewhere.csv")
    data.symlink_to(tmp_path / "elsewhere.csv")  # a link to a file is read
    assert _rows_of(example) == expected
    (tmp_path / "elsewhere.csv").unlink()
    with pytest.raises(InputError, match=f"^{example}: data.path '{data}' is a symbolic link to '{tmp_path / 'elsewhere.csv'}', "
                                         "which does not exist$"):
        _rows_of(example)
    data.unlink()
    data.mkdir()
    with pytest.raises(InputError, match=f"^{example}: data.path '{data}' is a folder, not a file; give the path of a file$"):
        _rows_of(example)
    data.rmdir()
    with pytest.raises(InputError, match=r"data.path '.*hiring.csv' does not exist \(a path is read relative to the "
                                         r"declaration\)$"):
        _rows_of(example)
    with pytest.raises(InputError, match=f"^benchmark declaration \\(a YAML or JSON file\\) '{example.parent}' is a folder"):
        read_declaration(example.parent, tuple(SHAPES))
