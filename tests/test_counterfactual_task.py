"""The counterfactual run: generations of the templates -> sentiment -> I.F. / G.F. and S.S. / S.S.c."""

import json

import pytest

import lmbias
from lmbias.benchmarks import save_run
from lmbias.benchmarks.counterfactual import BENCHMARK
from lmbias.benchmarks.counterfactual.measure import counterfactual_fairness
from lmbias.benchmarks.counterfactual.scorers import sentiment
from lmbias.benchmarks.counterfactual.task import score_counterfactual, scorers
from lmbias.benchmarks.declared import run_task
from lmbias.protocols.continuation import score_texts

from tiny_lm import save_tiny_causal_lm


def fake_generations(rows, texts_by_token):
    return [{"id": row["id"], "sample": k, "continuation": text} for row in rows for k, text in enumerate(texts_by_token(row["token"]))]


def test_fairness_per_attribute_and_classifier_from_given_generations():
    rows = lmbias.load_rows("counterfactual_templates", "name")
    # Female names get happy continuations, male names neutral ones: opinion scores 1.0 vs 0.5.
    generations = fake_generations(
        rows, lambda token: ["a wonderful, great day", "happy and good"] if token in ("Molly", "Amy", "Emma") else ["a day", "the table"]
    )
    result = score_counterfactual(rows, generations, classifiers=["opinion"], semantic=False)
    fairness = result["attributes"]["name"]["classifiers"]["opinion"]
    expected = counterfactual_fairness(
        [1.0 if g["id"].split("/")[-1] in ("Molly", "Amy", "Emma") else 0.5 for g in generations],
        attribute_values=[g["id"].split("/")[-1] for g in generations], template_ids=[int(g["id"].split("/")[1]) for g in generations],
        subgroups=[next(r["subgroup"] for r in rows if r["id"] == g["id"]) for g in generations],
    )
    assert fairness["individual_fairness"] == pytest.approx(expected["individual_fairness"])
    # 3 of 34 names differ by 0.5: 3 * 31 of 561 pairs have W1 0.5
    assert fairness["individual_fairness"] == pytest.approx(0.5 * 3 * 31 / 561)
    assert fairness["group_fairness"] > 0
    assert result["skipped"] == {} and result["attributes"]["name"]["samples"] == 680


def test_unavailable_hf_classifier_is_skipped_with_the_reason():
    scored = score_texts(scorers(["vader", "hf"], hf_model="no-org/no-sst2-model", semantic=False), ["a good day"],
                         [{"attribute": "name"}])
    assert set(scored.described) == {"vader"} and scored.values("vader")[0] > 0.5  # VADER: "good" is positive
    assert "'no-org/no-sst2-model' cannot be loaded" in scored.skipped["hf"]
    assert scored.skipped["hf"].endswith("or leave hf out of --classifiers")  # the fix, said with the reason
    with pytest.raises(ValueError, match=r"classifiers must be one of \['opinion', 'vader', 'hf'\], got 'google'"):
        scorers(["google"])


def test_plumbing_run_counterfactual_end_to_end_on_a_tiny_model(tmp_path):
    tiny = save_tiny_causal_lm(tmp_path / "tiny")
    out = tmp_path / "run"
    result = save_run(run_task(
        BENCHMARK, model=tiny, out=out, attributes=["country"], samples=2, max_new_tokens=4, batch_size=16, progress=False,
        classifiers=["opinion", "vader"],
    ))
    saved = json.loads((out / "results.json").read_text())
    assert saved == json.loads(json.dumps(result))
    assert saved["outputs"]["texts"] == 200 and saved["data"]["counts"]["prefixes"] == 100  # schema v2 keys
    assert saved["partial"] == {"attributes": "1 of 3 (--attributes country)", "samples per prefix": "2 of 1,000 (--samples 2)"}
    block = saved["results"]["attributes"]["country"]
    assert set(block["classifiers"]) == {"opinion", "vader"}
    assert 0 <= block["classifiers"]["vader"]["individual_fairness"] <= 1
    assert len(block["classifiers"]["vader"]["subgroups"]) == 10
    if "semantic_similarity" not in saved["skipped"]:  # schema v2: skipped is top level
        assert 0 <= block["semantic_similarity"]["ss"] <= 100


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match=r"attributes must be one of \['country', 'occupation', 'name'\], got 'religion'"):
        run_task(BENCHMARK, out=tmp_path / "run", attributes=["religion"])
    with pytest.raises(ValueError, match="samples must be >= 1"):
        run_task(BENCHMARK, out=tmp_path / "run", samples=0)
    with pytest.raises(ValueError, match=r"--instruction applies to chat runs"):
        run_task(BENCHMARK, out=tmp_path / "run", instruction="Go on: {prompt}")
    assert not (tmp_path / "run").exists()
    assert sentiment.CLASSIFIERS == ("opinion", "vader", "hf")


def test_plumbing_cli_run_counterfactual(tmp_path, capsys):
    from lmbias.cli import main

    tiny = save_tiny_causal_lm(tmp_path / "tiny")
    out = tmp_path / "cf"
    code = main(["run", "counterfactual", "--model", tiny, "--attributes", "name", "--samples", "2", "--max-new-tokens", "3",
                 "--classifiers", "opinion", "vader", "--no-similarity", "--out", str(out), "--no-progress", "--device", "cpu"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "| name | opinion | 680 |" in printed and "| name | vader | 680 |" in printed
    assert json.loads((out / "results.json").read_text())["results"]["attributes"]["name"]["samples"] == 680
