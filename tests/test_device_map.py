"""Models larger than one device (issue 15 §4): ``--device-map`` splits a model with accelerate's
big-model inference, for generation and likelihood; tested on the CPU with a tiny model (plumbing)
and a ``max_memory`` so small that most layers are offloaded to disk."""

import json

import pytest

import lmbias
from lmbias.cli import main
from lmbias.lm import generation
from lmbias.lm.likelihood import token_logprobs
from lmbias.lm.loading import load_causal_lm
from lmbias.lm.placement import parse_max_memory

import tolerances
from tiny_lm import save_tiny_causal_lm

TEXTS = ["the man was a good actor", "she was known for her best role", "a nurse"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_causal_lm(tmp_path_factory.mktemp("tiny"))


def test_a_model_split_over_cpu_and_disk_scores_and_generates_as_on_one_device_tiny_model_plumbing(tiny):
    whole = load_causal_lm(tiny, device="cpu")
    split = load_causal_lm(tiny, device_map="auto", max_memory={"cpu": "40KB"})
    placed = set(split.model.hf_device_map.values())
    assert "disk" in placed, split.model.hf_device_map  # the path is really taken: layers offloaded
    assert str(split.device) == "cpu"
    for a, b in zip(token_logprobs(whole.model, whole.tokenizer, TEXTS), token_logprobs(split.model, split.tokenizer, TEXTS)):
        tolerances.assert_two_paths_agree(a, b, 1, tolerances.TINY_LM)  # one token each
    settings = generation.generation_settings("greedy", max_new_tokens=6)
    assert generation.generate_batch(split, TEXTS, settings, seed=0) == generation.generate_batch(whole, TEXTS, settings, seed=0)


def test_run_crows_pairs_with_a_device_map_records_it_tiny_model_plumbing(tiny, tmp_path):
    plain, split = tmp_path / "plain", tmp_path / "split"
    assert main(["run", "crows_pairs", "--model", tiny, "--limit", "4", "--no-progress", "--out", str(plain)]) == 0
    assert main(["run", "crows_pairs", "--model", tiny, "--limit", "4", "--no-progress", "--out", str(split),
                 "--device-map", "auto", "--max-memory", "cpu=40KB"]) == 0
    results = json.loads((split / "results.json").read_text())
    assert results["config"]["device_map"] == "auto" and results["config"]["max_memory"] == {"cpu": "40KB"}
    scores = [[json.loads(line) for line in (folder / "scores.jsonl").read_text().splitlines()] for folder in (plain, split)]
    tokenizer, pairs = load_causal_lm(tiny, device="cpu").tokenizer, {row["id"]: row for row in lmbias.load_rows("crows_pairs")}
    for key, side in (("sent_more_score", "sent_more"), ("sent_less_score", "sent_less")):  # sums over each sentence's tokens
        tokens = [len(tokenizer(pairs[row["id"]][side], add_special_tokens=False)["input_ids"]) for row in scores[0]]
        assert [row["id"] for row in scores[0]] == [row["id"] for row in scores[1]]
        tolerances.assert_two_paths_agree([row[key] for row in scores[0]], [row[key] for row in scores[1]], tokens,
                                          tolerances.TINY_LM, key)


def test_device_map_mistakes_are_one_line(tiny, tmp_path, capsys):
    for extra, message in (
        (["--device-map", "auto", "--num-processes", "2"], "cannot be combined with --num-processes"),
        (["--device-map", "auto", "--device", "cpu"], "give --device or --device-map, not both"),
        (["--max-memory", "cpu=1GB"], "--max-memory applies to --device-map"),
        (["--device-map", "auto", "--max-memory", "cpu:1GB"], "--max-memory 'cpu:1GB': expected DEVICE=SIZE"),
        (["--device-map", "auto", "--max-memory", "gpu=1GB"], "the device must be a GPU number, cpu or mps"),
    ):
        assert main(["run", "crows_pairs", "--model", tiny, "--limit", "2", "--out", str(tmp_path / "r"), *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], err
        assert not (tmp_path / "r").exists()
    assert parse_max_memory(["0=70GiB", "cuda:1=40GiB", "cpu=200GiB"]) == {0: "70GiB", 1: "40GiB", "cpu": "200GiB"}
