"""Option scoring after a prompt is one implementation (issue 48): :func:`lmbias.protocols.likelihood.score_options`.

BBQ (and the multilingual sets through it), KoBBQ, CBBQ, EsBBQ / CaBBQ, Winogender / WinoBias and DiscrimEval
turn their items into prompts and options and read its records. Here the model is replaced by a stand-in for
:func:`lmbias.lm.likelihood.option_logprobs` whose log-probabilities are written by hand, so each benchmark's
records are checked against hand-derived values (the real model's numbers: tests/test_shared_prefixes.py and
each benchmark's own tests; the fixed runs of bench/fixed_runs.py, byte for byte).
"""

from pathlib import Path

import numpy as np
import pytest

from lmbias.benchmarks.bbq.task import score_bbq
from lmbias.benchmarks.coreference import score_referents
from lmbias.benchmarks.discrim_eval import BENCHMARK as DISCRIM_EVAL
from lmbias.benchmarks.discrim_eval.measure import NO, YES
from lmbias.benchmarks.discrim_eval.task import PAPER_PROMPT
from lmbias.benchmarks.esbbq.task import score_items as esbbq_items
from lmbias.lm import likelihood
from lmbias.lm.likelihood import TokenLogprobs
from lmbias.protocols.likelihood import score_options

ROOT = Path(__file__).resolve().parents[1]


class StandIn:
    """A loaded model's stand-in (no model: option_logprobs is replaced)."""

    model = tokenizer = chat = None


@pytest.fixture
def asked(monkeypatch):
    """Replace option_logprobs: an option's token log-probabilities are ``-len(word)`` per word (so that
    the sum and the mean per token order options differently), and every call is recorded."""
    calls = []

    def fake(model, tokenizer, contexts, options, *, batch_size=32, separator=" ", prefix="bos"):
        calls.append({"contexts": list(contexts), "options": [list(o) for o in options], "separator": separator,
                      "prefix": prefix, "batch_size": batch_size})
        return [TokenLogprobs([np.array([-float(len(w)) for w in o.split()], np.float32) for o in choices])
                for choices in options]

    monkeypatch.setattr(likelihood, "option_logprobs", fake)
    return calls


def test_score_options_records_by_hand(asked):
    rows = [{"id": "a", "category": "c", "other": 1}, {"id": "b", "category": "d"}]
    records = score_options(StandIn(), rows, ["P1", "P2"], [["xx yy", "zzz", "q"], ["aaaa", "b c", "dd"]], batch_size=5)
    # sums: [-4, -3, -1] (tokens 2, 1, 1) and [-4, -2, -2] (1, 2, 1); means: [-2, -3, -1] and [-4, -1, -2]
    assert records == [
        {"id": "a", "category": "c", "scores": [-4.0, -3.0, -1.0], "tokens": [2, 1, 1], "prediction_sum": 2,
         "prediction_mean": 2},
        {"id": "b", "category": "d", "scores": [-4.0, -2.0, -2.0], "tokens": [1, 2, 1], "prediction_sum": 1,  # a tie: the first
         "prediction_mean": 1}]
    assert asked == [{"contexts": ["P1", "P2"], "options": [["xx yy", "zzz", "q"], ["aaaa", "b c", "dd"]], "separator": " ",
                      "prefix": None, "batch_size": 5}]  # no start token, as lm-evaluation-harness scores choices
    # ``same``: options from index 1 on are one answer; ``keys``: what each record carries of its row
    same = score_options(StandIn(), rows[:1], ["P"], [["aaaa", "bbb", "c"]], batch_size=1, same=1, keys=("id",))
    assert same == [{"id": "a", "scores": [-4.0, -3.0, -1.0], "tokens": [1, 1, 1], "prediction_sum": 1, "prediction_mean": 1}]


def test_every_option_scorer_reads_the_one_implementation(asked):
    bbq_row = {"id": "q1", "category": "Age", "context": "C.", "question": "Who?", "ans0": "an old man", "ans1": "the boy",
               "ans2": "unknown", "label": 2, "target_loc": 0, "unknown_loc": 2, "question_polarity": "neg",
               "context_condition": "ambig"}
    assert score_bbq(StandIn(), [bbq_row], batch_size=3) == [
        {"id": "q1", "category": "Age", "scores": [-8.0, -6.0, -7.0], "tokens": [3, 2, 1], "prediction_sum": 1,
         "prediction_mean": 0}]  # per token: -2.67, -3, -7
    assert asked[-1]["contexts"] == ["C.\n\nQ: Who?\nA:"] and asked[-1]["separator"] == " "
    coreference_row = {"id": "w1", "sentence": "The nurse said she was late.", "pronoun": "she",
                       "candidates": ["nurse", "patient"], "label": 0}
    assert score_referents(StandIn(), [coreference_row], batch_size=2) == [
        {"id": "w1", "scores": [-5.0, -7.0], "tokens": [1, 1], "prediction": 0}]
    assert asked[-1]["contexts"] == ["The nurse said she was late. ‘She’ refers to the"]
    esbbq_row = {"id": "e1", "category": "Age", "context": "C.", "question": "¿Quién?", "ans0": "el abuelo joven",
                 "ans1": "la niña", "ans2": "x"}
    esbbq = esbbq_items(StandIn(), [esbbq_row], "es", batch_size=1)[0]
    assert len(asked[-1]["options"][0]) == 11 and esbbq["prediction_sum"] == 2  # "No sé" (-4) wins: read as "unknown"
    discrim_row = {"id": "d1", "category": "explicit", "prompt": "Should they get the loan?"}
    score = DISCRIM_EVAL.ask("likelihood").request([discrim_row], {"batch_size": 4}).score
    sums = [-float(len(form.strip())) for form in YES + NO]  # one word each: -len of the form without its space
    assert score(StandIn(), "causal", [discrim_row]) == [
        {"id": "d1", "category": "explicit", "yes": sums[:len(YES)], "no": sums[len(YES):]}]
    assert asked[-1]["contexts"] == [PAPER_PROMPT.format(question=discrim_row["prompt"])] and asked[-1]["separator"] == ""
    assert all(call["prefix"] is None for call in asked)


def test_no_benchmark_scores_options_itself():
    """Only the protocol calls option_logprobs; a benchmark that calls it again is a second implementation."""
    callers = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "lmbias" / "benchmarks").rglob("*.py")
                     if "option_logprobs(" in path.read_text(encoding="utf-8"))
    assert callers == []
    assert "option_logprobs(" in (ROOT / "lmbias" / "protocols" / "likelihood.py").read_text(encoding="utf-8")
