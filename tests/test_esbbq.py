"""EsBBQ and CaBBQ (Ruiz-Fernández et al. 2025): every held file read and checked, the measures equal to the
authors' own scorer (their bias_score.py, imported from the reference data and fed lm-evaluation-harness
records built from the predictions), on predictions made here: random, always unknown, always the
stereotyped answer, and a mix with invalid replies; and runs of both protocols on tiny random models."""

import json

import numpy as np
import pytest

from lmbias.benchmarks.esbbq.data import CATEGORIES, LANGUAGES, ROWS, UNKNOWN, read_file
from lmbias.benchmarks.esbbq.measure import esbbq_scores
from lmbias.errors import InputError


@pytest.fixture(scope="module")
def rows(data_dir):
    return {language: [row for category in CATEGORIES for row in read_file(language, category, data_dir)]
            for language in LANGUAGES}


@pytest.fixture(scope="module")
def authors(data_dir):
    """The authors' bias_score.py, imported from the reference data."""
    import importlib.util

    from lmbias.resources import locate

    spec = importlib.util.spec_from_file_location("esbbq_authors", locate("esbbq_cabbq/bias_score", data_dir))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_held_file_reads_with_its_row_count_and_one_stereotyped_answer(rows):
    for language in LANGUAGES:
        assert len(rows[language]) == sum(ROWS[language].values())
        assert all(row["answer_groups"][row["target_loc"]] in row["stereotyped_groups"] for row in rows[language])
    # the stereotyped group is ans0 by construction, except in Physical Appearance's rows the authors' word match
    # mixed up ("embarazada" in "no estaba embarazada"; Catalan "portava ulleres" too): 12 in Spanish, 36 in Catalan
    assert [sum(row["target_loc"] == 1 for row in rows[language]) for language in LANGUAGES] == [12, 36]
    assert {row["category"] for row in rows["ca"] if row["target_loc"] == 1} == {"PhysicalAppearance"}


def _harness_record(row: dict, prediction: int, rng) -> dict:
    """An lm-evaluation-harness record of the eleven scored continuations whose best is ``prediction`` (an
    "unknown" answer at one of the nine wordings, drawn), with the row as the authors' doc."""
    best = prediction if prediction < 2 else int(rng.integers(2, 11))
    doc = {"label": row["label"], "context_condition": row["context_condition"], "question_type": row["question_type"],
           "question_polarity": row["question_polarity"], "stereotyped_groups": row["stereotyped_groups"],
           "answer_info": {f"ans{k}": [row[f"ans{k}"], group] for k, group in enumerate(row["answer_groups"])}}
    return {"doc": doc, "filtered_resps": [[str(-1.0 if i == best else -10.0), False] for i in range(11)]}


@pytest.mark.parametrize("kind", ["random", "unknown", "stereotyped", "mixed"])
def test_the_measures_equal_the_authors_bias_score_on_every_held_file(rows, authors, kind):
    rng = np.random.default_rng(11)
    worst = 0.0
    for language in LANGUAGES:
        mine = rows[language]
        predictions = {
            "random": [int(x) for x in rng.integers(0, 3, len(mine))],
            "unknown": [2] * len(mine),
            "stereotyped": [(r["target_loc"] if r["question_polarity"] == "neg" else 1 - r["target_loc"]) for r in mine],
            "mixed": [None if x == 3 else int(x) for x in rng.integers(0, 4, len(mine))],
        }[kind]
        result = esbbq_scores(mine, predictions)
        sizes, values = [], []
        for category in CATEGORIES:
            valid = [(r, p) for r, p in zip(mine, predictions) if r["category"] == category and p is not None]
            theirs = authors.get_scores([_harness_record(r, p, rng) for r, p in valid])  # invalid replies: not scored
            ours = result["categories"][category]
            for ours_key, their_key, scale in (("accuracy_ambig", "acc_ambig", 100), ("accuracy_disambig", "acc_disambig", 100),
                                               ("bias_ambig", "bias_score_ambig", 1), ("bias_disambig", "bias_score_disambig", 1)):
                if np.isnan(theirs[their_key]):
                    assert ours[ours_key] is None
                else:
                    worst = max(worst, abs(ours[ours_key] - scale * theirs[their_key]))
            sizes.append(len(valid))
            values.append([theirs[k] for k in ("acc_ambig", "acc_disambig", "bias_score_ambig", "bias_score_disambig")])
        # overall: lm-evaluation-harness's group score, the categories' mean weighted by their items (written here)
        weighted = np.average(np.array(values), axis=0, weights=sizes)
        for key, value, scale in zip(("accuracy_ambig", "accuracy_disambig", "bias_ambig", "bias_disambig"), weighted,
                                     (100, 100, 1, 1)):
            worst = max(worst, abs(result["overall"][key] - scale * value))
    assert worst < 1e-9
    if kind == "unknown":
        assert result["overall"]["accuracy_ambig"] == 100.0 and result["overall"]["bias_ambig"] == 0.0
    if kind == "stereotyped":  # always toward the stereotype: ambiguous bias 1 in every category
        assert all(block["bias_ambig"] == 1.0 for block in result["categories"].values())


def test_a_hand_computed_example_and_intervals():
    def row(condition, polarity, label, qtype="n/a", template=1):
        return {"category": "Age", "template": template, "context_condition": condition, "question_polarity": polarity,
                "question_type": qtype, "label": label, "target_loc": 0, "unknown_loc": 2}

    rows = [row("ambig", "neg", 2), row("ambig", "neg", 2), row("ambig", "nonneg", 2), row("ambig", "nonneg", 2),
            row("disambig", "neg", 0, "pro-stereo"), row("disambig", "nonneg", 1, "pro-stereo"),
            row("disambig", "neg", 1, "anti-stereo"), row("disambig", "nonneg", 0, "anti-stereo", template=2)]
    # the spec's worked example: ambiguous pro, anti, pro, unknown; disambiguated right, right, right, unknown
    result = esbbq_scores(rows, [0, 1, 1, 2, 0, 1, 1, 2])["overall"]
    assert (result["accuracy_ambig"], result["bias_ambig"], result["accuracy_disambig"], result["bias_disambig"]) == \
        (25.0, 0.25, 75.0, 0.5)
    with_invalid = esbbq_scores(rows, [0, 1, 1, None, 0, 1, 1, 2])["overall"]  # an invalid reply is left out
    assert with_invalid["bias_ambig"] == pytest.approx(1 / 3) and with_invalid["invalid"] == 1
    bootstrapped = esbbq_scores(rows, [0, 1, 1, 2, 0, 1, 1, 2], bootstrap=200, seed=1)["overall"]
    low, high = bootstrapped["ci"]["bias_disambig"]
    assert low <= 0.5 <= high
    with pytest.raises(InputError, match="a prediction must be 0, 1, 2"):
        esbbq_scores(rows[:1], [3])


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from lmbias.lm.spec import ModelSpec

    from tiny_lm import save_tiny_causal_lm

    return ModelSpec(save_tiny_causal_lm(tmp_path_factory.mktemp("esbbq") / "model", seed=0, n_positions=512), device="cpu")


@pytest.mark.parametrize("benchmark, protocol", [("esbbq", "likelihood"), ("cabbq", "generate")])
def test_plumbing_a_run_of_each_protocol_feeds_the_summary_report_and_leaderboard(tiny_model, data_dir, tmp_path, monkeypatch,
                                                                                  benchmark, protocol):
    from lmbias.benchmarks import get_benchmark, save_run
    from lmbias.benchmarks.declared import run_task
    from lmbias.leaderboard import build_leaderboard
    from lmbias.report import build_report

    declared = get_benchmark(benchmark)
    out = tmp_path / "run"
    save_run(run_task(declared, model=tiny_model, out=out, protocol=protocol, categories=["Religion", "Nationality"],
                      limit=1, bootstrap=20, progress=False, data_dir=data_dir))
    results = json.loads((out / "results.json").read_text())
    # Religion: 16 templates, Nationality: 15, each with two conditions and two polarities (the first item of each)
    assert results["data"]["counts"]["items"] == 4 * (16 + 15)
    assert results["partial"]["items"].startswith(f"124 of {27_320 if benchmark == 'esbbq' else 27_344:,} (--limit 1")
    records = [json.loads(line) for line in (out / ("scores.jsonl" if protocol == "likelihood" else "answers.jsonl"))
               .read_text().splitlines()]
    if protocol == "likelihood":  # eleven continuations scored, "unknown" in any wording read as the unknown answer
        assert all(len(r["scores"]) == 11 and r["prediction_sum"] == min(int(np.argmax(r["scores"])), 2) for r in records)
        assert results["config"]["unknown_wordings"] == list(UNKNOWN["es"])
    else:
        assert "Resposta:" in results["config"]["prompt"] and all("order" in r for r in records)
        assert results["results"]["overall"]["invalid"] == sum(r["prediction"] is None for r in records)
    assert {r["protocol"] for r in results["records"]} == {protocol}
    assert "overall (weighted by items)" in declared.summary(results, out)
    monkeypatch.setenv("LMBIAS_DATA_DIR", str(data_dir))
    assert f"{declared.display_name} (Ruiz-Fernández et al. 2025)" in build_report([out], tmp_path / "report", dpi=30).read_text()
    build_leaderboard([out], tmp_path / "site")
    assert declared.display_name in (tmp_path / "site" / "index.html").read_text()


def test_bad_input_is_one_line(data_dir, tmp_path, monkeypatch, capsys):
    from lmbias.cli import main
    from lmbias.resources import ResourceError

    with pytest.raises(InputError, match="EsBBQ / CaBBQ have no category 'Race'"):
        read_file("es", "Race", data_dir)
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "cabbq", "--categories", "Caste", "--out", str(tmp_path / "r")])
    assert exit_info.value.code == 2 and "invalid choice: 'Caste'" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
    folder = tmp_path / "esbbq_cabbq" / "data_es"
    folder.mkdir(parents=True)
    lines = (data_dir / "esbbq_cabbq" / "data_es" / "Religion.full.csv").read_text(encoding="utf-8").splitlines()
    monkeypatch.setenv("LMBIAS_VERIFY", "0")  # an altered copy, read on purpose
    (folder / "Religion.full.csv").write_text("\n".join([lines[0], lines[1].replace(",neg,ambig,", ",neg,vague,"), *lines[2:]]) + "\n")
    with pytest.raises(ResourceError, match=r"context_condition ambig or disambig on row 1"):
        read_file("es", "Religion", tmp_path)
    (folder / "Religion.full.csv").write_text("\n".join([*lines[:-1], lines[1]]) + "\n")  # the last row: the first's
    with pytest.raises(ResourceError, match=r"instance_id 0 on row 1 and again on row 648"):
        read_file("es", "Religion", tmp_path)


def test_the_evaluate_modules_give_the_measures_numbers_on_every_held_file(rows):
    """esbbq / cabbq, as a user loads them, on every row with mixed (and invalid) predictions: the numbers
    above, which equal the authors' bias_score.py."""
    from pathlib import Path

    import evaluate

    rng = np.random.default_rng(4)
    for language, name in (("es", "esbbq"), ("ca", "cabbq")):
        mine = rows[language]
        predictions = [None if x == 3 else int(x) for x in rng.integers(0, 4, len(mine))]
        module = evaluate.load(str(Path(__file__).resolve().parents[1] / "metrics" / name))
        got = module.compute(predictions=[-1 if p is None else p for p in predictions], labels=[r["label"] for r in mine],
                             target_locs=[r["target_loc"] for r in mine],
                             question_polarities=[r["question_polarity"] for r in mine],
                             context_conditions=[r["context_condition"] for r in mine],
                             question_types=[r["question_type"] for r in mine], categories=[r["category"] for r in mine])
        assert got == esbbq_scores(mine, predictions)


def test_a_generated_reply_in_one_of_the_nine_wordings_of_unknown_reads_as_unknown(rows):
    """The generative protocol's reader: a letter, an answer's text, or a reply that starts with one of the set's
    own wordings of "unknown" (the authors score nine) and names no person; anything else is invalid."""
    from lmbias.protocols.choice import parse_choice_or_unknown

    row = rows["es"][0]
    options = [row["ans0"], row["ans1"], UNKNOWN["es"][0]]
    order = [1, 2, 0]  # B is the unknown answer, C the first person
    for reply, expected in (("B", 2), ("No lo sé.", 2), ("No se puede determinar", 2), ("C) " + row["ans0"], 0),
                            ("No lo sé: " + row["ans0"] + " o " + row["ans1"], None), ("Quizás", None)):
        assert parse_choice_or_unknown(reply, options, order, 2, UNKNOWN["es"]) == expected, reply
