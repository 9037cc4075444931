"""The continue protocol (lmbias.protocols.continuation): its scorers loaded before the model, an unavailable one
skipped and said at once (or the run stopped), the records and the scores file against generations.jsonl read
back, the references scored the same way, a resume that generates nothing again, and the pre-load check.
Plumbing: a tiny random GPT-2 built here, scorers that count characters and words."""

from __future__ import annotations

import json

import pytest

from lmbias.errors import InputError, RequirementError
from lmbias.lm.generation import generation_settings
from lmbias.lm.loading import LanguageModel
from lmbias.lm.spec import ModelSpec
from lmbias.protocols import get_protocol
from lmbias.protocols.continuation import Continuations, Scorer, ScorerUnavailable
from lmbias.run_result import RunResult

from tiny_lm import save_tiny_causal_lm

ROWS = [{"id": "a", "prompt": "the man was", "group": "m"}, {"id": "b", "prompt": "she is an actress and", "group": "f"},
        {"id": "c", "prompt": "the nurse was", "group": "f"}]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_causal_lm(tmp_path_factory.mktemp("tiny"), n_positions=64)


def _request(events: list, *, unavailable: bool = False, require_all: bool = False, scores_file="scores.jsonl"):
    def load_chars():
        events.append("load chars")
        return "chars-model"

    def load_words():
        events.append("load words")
        if unavailable:
            raise ScorerUnavailable("no word list here; fix: pass --words")
        return None

    chars = Scorer("chars", load_chars, lambda loaded, texts, rows: [len(text) for text in texts],
                   describe=lambda loaded: {"model": loaded}, config_key="counter")
    words = Scorer("words", load_words, lambda loaded, texts, rows: [[row["group"], len(text.split())]
                                                                      for text, row in zip(texts, rows)])
    return Continuations(prompts=[row["prompt"] for row in ROWS], preset="bold-gpt2",
                         settings=generation_settings("bold-gpt2", max_new_tokens=4), samples=2, scorers=(chars, words),
                         text=lambda row, continuation: row["prompt"] + continuation,
                         references=[(ROWS[0], "a human wrote this"), (ROWS[2], "and this")], require_all=require_all,
                         scores_file=scores_file, config={"extra": 1})


def _answer(tiny, out, request, events=None, check_only=False):
    if events is not None:
        real = ModelSpec.load

        def load(self, *args, **kwargs):
            events.append("load model")
            return real(self, *args, **kwargs)

        ModelSpec.load = load
    try:
        return get_protocol("continue").answer(ModelSpec.of(tiny), ROWS, request, out=out, benchmark="demo",
                                               run_config={"option": "x"}, batch_size=2, seed=3, progress=False,
                                               label="demo: generating", check_only=check_only)
    finally:
        if events is not None:
            ModelSpec.load = real


def test_scorers_load_before_the_model_and_score_every_continuation_and_reference(tiny, tmp_path, capsys):
    events: list = []
    continued, model, placement, timing = _answer(tiny, tmp_path / "run", _request(events, unavailable=True), events)
    assert events == ["load chars", "load words", "load model"]
    assert "lmbias: will skip words: no word list here; fix: pass --words" in capsys.readouterr().err
    generations = [json.loads(line) for line in (tmp_path / "run" / "generations.jsonl").read_text().splitlines()]
    assert [(g["id"], g["sample"]) for g in generations] == [(i, s) for i in "abc" for s in (0, 1)]
    prompt_of = {row["id"]: row["prompt"] for row in ROWS}
    texts = [prompt_of[g["id"]] + g["continuation"] for g in generations]
    assert continued.records == [{"id": g["id"], "sample": g["sample"], "text": text, "chars": len(text)}
                                 for g, text in zip(generations, texts)]
    assert continued.values("chars") == [len(text) for text in texts]
    assert continued.references == [{"id": "a", "text": "a human wrote this", "chars": 18}, {"id": "c", "text": "and this", "chars": 8}]
    assert continued.num_tokens == [g["num_tokens"] for g in generations]
    assert continued.skipped == {"words": "no word list here; fix: pass --words"}
    assert continued.described == {"chars": {"model": "chars-model"}} and placement["counter"] == {"model": "chars-model"}
    assert set(timing) == {"model_load_seconds", "generation_seconds", "scoring_seconds"}
    config = json.loads((tmp_path / "run" / "config.json").read_text())["config"]
    assert (config["option"], config["extra"], config["num_return_sequences"], config["seed"]) == ("x", 1, 2, 3)
    result = get_protocol("continue").finish(tmp_path / "run", RunResult("demo", model, {}, {}, {}), continued)
    assert result.outputs == {"generations_file": "generations.jsonl", "scores_file": "scores.jsonl"}
    assert [json.loads(line) for line in result.files["scores.jsonl"].splitlines()] == continued.records


def test_every_scorer_runs_and_a_resume_generates_nothing_again(tiny, tmp_path, monkeypatch):
    first, *_ = _answer(tiny, tmp_path / "run", _request([]))
    assert first.skipped == {} and [r["words"] for r in first.records[:2]] == [["m", len(first.records[0]["text"].split())],
                                                                             ["m", len(first.records[1]["text"].split())]]
    monkeypatch.setattr(LanguageModel, "generate", lambda *a, **k: pytest.fail("generated again"))
    again, *_ = _answer(tiny, tmp_path / "run", _request([]))
    assert again.records == first.records
    result = get_protocol("continue").finish(tmp_path / "run", RunResult("demo", {}, {}, {}, {}),
                                             _answer(tiny, tmp_path / "run", _request([], scores_file=None))[0])
    assert result.files == {} and result.outputs == {"generations_file": "generations.jsonl"}


def test_a_scorer_that_stops_the_run_or_require_all_leaves_nothing_generated(tiny, tmp_path):
    with pytest.raises(RequirementError, match="--require-all: nothing was generated because these cannot be scored: words: "
                                               "no word list here"):
        _answer(tiny, tmp_path / "strict", _request([], unavailable=True, require_all=True))
    assert not (tmp_path / "strict" / "config.json").exists()

    def refused():
        raise InputError("toxic_labels ['hate'] are not labels of the classifier")

    request = Continuations(prompts=["x"] * 3, preset="greedy", settings=generation_settings("greedy", max_new_tokens=2),
                            scorers=(Scorer("toxicity", refused, lambda loaded, texts, rows: []),))
    with pytest.raises(InputError, match="toxic_labels"):
        _answer(tiny, tmp_path / "refused", request)
    assert not (tmp_path / "refused" / "config.json").exists()


def test_the_pre_load_check_stops_before_any_scorer_loads(tiny, tmp_path):
    events: list = []
    assert _answer(tiny, tmp_path / "run", _request(events), events, check_only=True) == (None, None, None, None)
    assert events == [] and not (tmp_path / "run" / "config.json").exists()  # no scorer, no model loaded; nothing written
    _answer(tiny, tmp_path / "run", _request([]))  # a finished run; the check of another configuration refuses it
    with pytest.raises(InputError, match="another configuration"):
        get_protocol("continue").answer(ModelSpec.of(tiny), ROWS, _request([]), out=tmp_path / "run", benchmark="demo",
                                        run_config={"option": "y"}, batch_size=2, seed=3, progress=False,
                                        label="demo: generating", check_only=True)


def test_continue_is_a_protocol_but_no_protocol_choice():
    from lmbias.protocols import PROTOCOLS

    assert get_protocol("continue").verb == "generating" and "continue" not in PROTOCOLS
    with pytest.raises(InputError, match="protocol must be one of"):
        get_protocol("contine")
