"""`lmbias score bold`: every BOLD metric over BOLD rows, per domain and group."""

import json

import pytest

import lmbias
from lmbias.benchmarks.bold.task import FIXES, score_bold, score_bold_source
from lmbias.cli import main

from test_toxicity_regard import save_tiny_model


def test_wikipedia_baseline_per_domain_and_group_for_the_offline_metrics():
    result = score_bold_source(
        "wikipedia", domains=["gender", "religious_ideology"], per_group=20,
        metrics=["sentiment", "psycholinguistic_norms", "gender_polarity"],
    )
    assert result["n_texts"] == 2 * 20 + 6 * 20 + 12  # hinduism has only 12 prompts
    sentiment = result["metrics"]["sentiment"]["domains"]
    assert set(sentiment) == {"gender", "religious_ideology"}
    assert sentiment["gender"]["per_group"]["American_actors"]["n"] == 20
    assert sentiment["gender"]["test"]["method"] == "two-proportion z-test"
    assert sentiment["religious_ideology"]["test"]["method"] == "chi-square test of homogeneity"
    for group in sentiment["gender"]["per_group"].values():
        assert group["negative"] + group["neutral"] + group["positive"] == pytest.approx(1.0)
    norms = result["metrics"]["psycholinguistic_norms"]["domains"]["gender"]["per_group"]["American_actresses"]
    assert norms["n"] == 20 and 0 <= norms["joy"] <= 1
    polarity = result["metrics"]["gender_polarity"]
    assert set(polarity["methods"]) == {"unigram", "wavg", "max"}
    assert polarity["profession_merged_groups"]["healthcare & medicine"]["total"] == 0  # no profession rows here
    assert result["skipped"] == {} and result["options"]["anonymize"] is True


def test_scores_are_computed_on_anonymised_texts():
    rows = [row for row in lmbias.load_rows("bold", "gender") if row["name"] == "Jacob_Zachar"]
    # "Zachar" is not a gendered word; "He" is. Anonymisation must not remove "He".
    texts = ["He loved Jacob Zachar."]
    result = score_bold(rows, texts, metrics=["gender_polarity"], gender_methods=["unigram"])
    assert result["metrics"]["gender_polarity"]["methods"]["unigram"]["domains"]["gender"]["per_group"]["American_actors"]["male"] == 1.0


def test_classifier_metrics_run_on_given_models_and_regard_only_on_the_papers_groups(tmp_path):
    toxic = save_tiny_model(tmp_path / "tox", ["toxic", "insult"], "multi_label_classification", bias=[0.5, -3.0])
    regard = save_tiny_model(tmp_path / "reg", ["negative", "neutral", "positive", "other"], bias=[0.0, 0.0, 1.0, 0.0])
    rows = [r for domain in ("gender", "race", "profession") for r in lmbias.load_rows("bold", domain)[:: 997]]
    texts = [row["wikipedia"] for row in rows]
    result = score_bold(rows, texts, metrics=["toxicity", "regard"], toxicity_model=toxic, regard_model=regard, device="cpu")
    toxicity = result["metrics"]["toxicity"]["domains"]
    assert set(toxicity) == {"gender", "race", "profession"}
    assert all(group["toxic"] == 1.0 for domain in toxicity.values() for group in domain["per_group"].values())
    regard_domains = result["metrics"]["regard"]["domains"]
    assert set(regard_domains) == {"gender", "race"}
    assert set(regard_domains["race"]["per_group"]) <= {"African_Americans", "European_Americans"}
    assert all(group["positive"] == 1.0 for domain in regard_domains.values() for group in domain["per_group"].values())


def test_unavailable_classifiers_are_skipped_with_the_reason_and_the_rest_kept(tmp_path):
    rows = lmbias.load_rows("bold", "gender")[:3]
    result = score_bold(rows, [r["wikipedia"] for r in rows], metrics=["sentiment", "toxicity"], toxicity_model=str(tmp_path / "missing"))
    assert "sentiment" in result["metrics"] and "toxicity" not in result["metrics"]
    reason = result["skipped"]["toxicity"]
    assert f"there is no folder or file {tmp_path / 'missing'}" in reason and reason.endswith("fix: " + FIXES["toxicity"])
    assert "\n" not in reason


def test_bad_input():
    rows = lmbias.load_rows("bold", "gender")[:2]
    with pytest.raises(ValueError, match="texts has 1 entries but rows has 2"):
        score_bold(rows, ["one"])
    with pytest.raises(ValueError, match=r"metrics must be one of \['sentiment', .*got 'sentimen'"):
        score_bold(rows, ["a", "b"], metrics=["sentimen"])
    with pytest.raises(ValueError, match=r"metrics lists \['sentiment'\] more than once"):
        score_bold(rows, ["a", "b"], metrics=["sentiment", "sentiment"])
    with pytest.raises(TypeError, match="metrics must be a list of values"):
        score_bold(rows, ["a", "b"], metrics="sentiment")
    with pytest.raises(ValueError, match=r"domains lists \['religious_ideology'\] more than once"):
        score_bold_source(domains=["religious_ideology", "religious_ideology"], per_group=1)
    with pytest.raises(ValueError, match="source must be one of"):
        score_bold_source("generations")
    with pytest.raises(ValueError, match="per_group must be >= 1"):
        score_bold_source(per_group=0)


def test_cli_writes_the_results_json(tmp_path, capsys):
    out = tmp_path / "wiki.json"
    arguments = ["score", "bold", "--domains", "race", "--per-group", "5", "--metrics", "sentiment", "gender_polarity", "--out", str(out)]
    assert main(arguments) == 0
    result = json.loads(out.read_text())
    assert result["source"] == "wikipedia" and result["n_texts"] == 20 and result["domains"] == ["race"]
    assert "wrote" in capsys.readouterr().out


def test_an_embedding_file_with_the_default_vectors_gives_the_default_numbers(tmp_path, capsys):
    """--embedding PATH: the pinned subset written as a word2vec binary file is read, hard-debiased and
    used for gender polarity and the norms' lexicon extension exactly as the default."""
    from lmbias import embeddings

    path = tmp_path / "vectors.bin"
    embeddings.load_word2vec_subset().save_word2vec_format(str(path), binary=True)
    rows = lmbias.load_rows("bold", "gender")[:6]
    texts = [row["wikipedia"] for row in rows]
    metrics = ["gender_polarity", "psycholinguistic_norms"]
    default, from_file = score_bold(rows, texts, metrics=metrics), score_bold(rows, texts, metrics=metrics, embedding=path)
    assert from_file["metrics"] == default["metrics"] and from_file["options"]["embedding"] == str(path)
    assert main(["score", "bold", "--domains", "gender", "--per-group", "1", "--metrics", "gender_polarity",
                 "--embedding", str(tmp_path / "missing.bin")]) == 2
    assert "embedding: no such file" in capsys.readouterr().err
