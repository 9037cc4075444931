"""Issue 37: debias folders that cannot be run as saved (an unfinished fit or training, a damaged
projection) are refused in one line before the model loads; a fit that cannot succeed fails before
it spends its time (a held-out text longer than the model takes, an absurd --iterations); and every
phase of lmbias debias shows itself, with the summary's time the whole call's. On a tiny random
GPT-2 (plumbing)."""

import json
import re
import shutil

import numpy as np
import pytest
import torch

from lmbias.cli import main
from lmbias.debias.fit import fit_adjustment
from lmbias.debias.methods import fitting
from lmbias.debias.methods.inlp import inlp_projection
from lmbias.debias.pairs import is_held_out
from lmbias.debias.perplexity import held_out_perplexity, perplexity
from lmbias.errors import InputError
from lmbias.lm.adjustments import PROJECTION_FILE
from lmbias.lm.loading import load_causal_lm

import tolerances
from tiny_lm import save_tiny_causal_lm

MALE = ["he was a good actor in the city", "the man was the best actor of new york", "he is a man of the film",
        "his role in the film was good", "the man and his film were the best"]
FEMALE = ["she was a good actress in the city", "the woman was the best actress of new york", "she is a woman of the film",
          "her role in the film was good", "the woman and her film were the best"]
NEUTRAL = ["the film was born in the city of new york", "a nurse is a good person", "the american film was the best",
           "the person was known for the role", "the best film of the city was good"]
ENDINGS = ("and the film", "of the city", "in new york", "for the role", "and the best", "of a person")
ROWS = [f"{s} {w}" for w in ENDINGS for s in MALE + FEMALE + NEUTRAL]
# A held-out text (is_held_out) of 44 words: 45 tokens with the start token; and training texts as long.
LONG = " ".join(["the film of the city was good"] * 6) + " number 8"
LONG_TRAINING = [" ".join(["the film of the city was good"] * 6) + f" number {n}" for n in range(1, 4)]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_causal_lm(tmp_path_factory.mktemp("tiny"), n_positions=64)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text("\n".join(ROWS) + "\n")
    return path


@pytest.fixture(scope="module")
def projected(tiny, corpus, tmp_path_factory, data_dir):
    """A finished LEACE folder (a saved projection)."""
    out = tmp_path_factory.mktemp("fits") / "leace"
    fit_adjustment(model=tiny, method="leace", out=out, train_file=corpus, eval_limit=0, fit_sentences=40, show_progress=False,
                   data_dir=data_dir)
    return out


def _no_model_load(monkeypatch):
    """Make any weight loading fail the test: a refusal must come before the model loads."""
    from transformers import AutoModelForCausalLM

    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", refuse)


def _run_crows_pairs(model, out, capsys) -> tuple[int, list[str]]:
    code = main(["run", "crows_pairs", "--model", str(model), "--limit", "2", "--no-progress", "--out", str(out)])
    return code, capsys.readouterr().err.strip().splitlines()


# --------------------------------------------------------------------------- folders that cannot be run as saved


@pytest.mark.parametrize("status, how", [("fitting", "it fits again from the start"),
                                         ("training", "it resumes from its last checkpoint")])
def test_an_unfinished_debias_folder_is_refused_in_one_line_before_the_model_loads(status, how, projected, tmp_path, capsys,
                                                                                     monkeypatch):
    """Before: a folder whose debias.json said "fitting" ran as a model (exit 0, adjustment: leace recorded)."""
    folder = tmp_path / "unfinished"
    shutil.copytree(projected, folder)
    (folder / "debias.json").write_text(json.dumps({"status": status, "settings": {"method": "leace"}}))
    _no_model_load(monkeypatch)
    code, err = _run_crows_pairs(folder, tmp_path / "run", capsys)
    assert code == 2 and len(err) == 1, err
    assert f"--model {folder} is an unfinished lmbias debias run" in err[0] and f"status '{status}'" in err[0]
    assert f"--method leace ... --out {folder}; {how}" in err[0] and "or remove the folder" in err[0]
    assert not (tmp_path / "run").exists()
    with pytest.raises(InputError, match="unfinished lmbias debias run"):  # the Python entry too
        load_causal_lm(str(folder), device="cpu")


def test_a_finished_folder_still_runs(projected, tmp_path, capsys):
    code, err = _run_crows_pairs(projected, tmp_path / "run", capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "run" / "results.json").read_text())["model"]["adjustment"]["method"] == "leace"


def _truncated(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])
    return "cannot be read as safetensors"


def _all_nan(path):
    from safetensors.torch import save_file

    save_file({"matrix": torch.full((32, 32), float("nan")), "offset": torch.zeros(32)}, str(path))
    return "1,024 of the projection's 1,056 values are not finite"


def _wrong_shape(path):
    from safetensors.torch import save_file

    save_file({"matrix": torch.eye(16), "offset": torch.zeros(16)}, str(path))
    return "the projection is (16, 16) + (16,), expected 32 x 32 and 32 (the model's hidden size)"


def _missing(path):
    path.unlink()
    return "is missing: config.json records a projection"


@pytest.mark.parametrize("damage", [_truncated, _all_nan, _wrong_shape, _missing])
def test_a_damaged_projection_is_one_line_naming_the_file(damage, projected, tmp_path, capsys, monkeypatch):
    """Before: a truncated file gave a raw SafetensorError, an all-NaN one 'more_scores[0] is missing'."""
    folder = tmp_path / "damaged"
    shutil.copytree(projected, folder)
    expected = damage(folder / PROJECTION_FILE)
    _no_model_load(monkeypatch)
    code, err = _run_crows_pairs(folder, tmp_path / "run", capsys)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"lmbias: {folder / PROJECTION_FILE}") or str(folder / PROJECTION_FILE) in err[0]
    assert expected in err[0] and "fit it again with lmbias debias" in err[0] and "Traceback" not in err[0]
    assert not (tmp_path / "run").exists()


# --------------------------------------------------------------------------- fits that cannot succeed


@pytest.fixture()
def encodings(monkeypatch):
    """The fits that start (each encodes its sentences once, mean_hidden_states): the most words of a sentence of each."""
    calls = []
    encode = fitting.mean_hidden_states

    def counted(*args, **kwargs):
        calls.append(max(len(sentence.split()) for sentence in args[2]))
        return encode(*args, **kwargs)

    monkeypatch.setattr(fitting, "mean_hidden_states", counted)
    return calls


def test_a_held_out_text_longer_than_the_model_takes_fails_before_the_fit(tmp_path, data_dir, encodings):
    """Before: INLP fitted for minutes, then the held-out perplexity stopped on the long text without naming --eval-limit."""
    assert is_held_out(LONG) and not any(map(is_held_out, LONG_TRAINING))
    short = save_tiny_causal_lm(tmp_path / "short", n_positions=24)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(ROWS + LONG_TRAINING + [LONG]) + "\n")
    before = sum(is_held_out(row) for row in ROWS)  # the held-out texts scored before the long one
    assert before > 0
    common = {"model": short, "method": "inlp", "train_file": corpus, "fit_sentences": 40, "iterations": 3, "show_progress": False,
              "data_dir": data_dir}
    with pytest.raises(InputError) as refused:
        fit_adjustment(out=tmp_path / "refused", **common)
    message = str(refused.value)
    assert "\n" not in message and f"held-out text {before + 1} of {corpus}" in message and "is 45 tokens" in message
    assert "takes at most 24" in message and f"--eval-limit {before} " in message and "--eval-limit 0" in message
    assert encodings == []  # no fit started
    assert not (tmp_path / "refused" / "debias.json").exists()
    # As the message says: the held-out texts before it; the fitted sentences are cut to the context (--max-length 128 > 24).
    state = fit_adjustment(out=tmp_path / "fits", eval_limit=before, **common)
    assert len(encodings) == 1 and state["held_out"]["ppl"]["texts"] == before
    assert encodings[0] > 24 and state["settings"]["max_length"] == 128  # as given: the sentences were cut to the 24 positions


def test_a_training_checks_the_held_out_texts_before_it_trains(tmp_path, data_dir, capsys):
    short = save_tiny_causal_lm(tmp_path / "short", n_positions=24)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(ROWS + [LONG]) + "\n")
    out = tmp_path / "out"
    capsys.readouterr()  # the tiny model's saving bar
    assert main(["debias", "--model", short, "--method", "cda", "--lambda", "1", "--steps", "2", "--train-file", str(corpus),
                 "--out", str(out), "--data-dir", str(data_dir), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is 45 tokens with its start token" in err[0] and "--eval-limit 0" in err[0]
    assert not out.exists() or [p.name for p in out.iterdir() if p.name != ".lmbias.lock"] == []  # nothing written: a rerun is a new run


def test_inlp_stops_at_the_first_classifier_at_chance_when_asked():
    # Train: the class is the sign of x0. Dev: the sign of x0 is right for half the points, the majority class is half.
    train_x = np.array([[1.0, 0.3], [2.0, -0.2], [-1.0, 0.1], [-2.0, -0.4]] * 5)
    train_y = np.array([1, 1, 0, 0] * 5)
    dev_x, dev_y = np.array([[1.0, 0.0], [-1.0, 0.0], [1.0, 0.0], [-1.0, 0.0]]), np.array([1, 0, 0, 1])
    projection, accuracies, stopped = inlp_projection(train_x, train_y, dev_x, dev_y, iterations=80, stop_at_chance=True)
    assert accuracies == [0.5] and np.array_equal(projection, np.eye(2))  # its direction is not removed
    assert stopped == "classifier 1 is at chance (dev accuracy 0.500, the majority class 0.500); its direction is not removed"


def test_inlp_stops_when_nothing_is_left_to_remove():
    # All the vectors lie on the x0 axis: one classifier removes it, and nothing is left for a second.
    train_x = np.array([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [-2.0, 0.0, 0.0]] * 5)
    train_y = np.array([1, 1, 0, 0] * 5)
    dev_x, dev_y = np.array([[1.5, 0.0, 0.0], [-1.5, 0.0, 0.0], [3.0, 0.0, 0.0]]), np.array([1, 0, 1])
    projection, accuracies, stopped = inlp_projection(train_x, train_y, dev_x, dev_y, iterations=100000)
    assert accuracies == [1.0] and np.allclose(projection, np.diag([0.0, 1.0, 1.0]))
    assert stopped.startswith("the projected training vectors are all zero after 1 classifiers")


def test_a_huge_iterations_with_ten_sentences_is_bounded(tiny, corpus, tmp_path, data_dir, monkeypatch, capsys):
    """Before: --iterations 100000 with 10 fit sentences ran silently past 300 s (and kept one d x d matrix per classifier)."""
    from sklearn.svm import LinearSVC

    fits = []
    fit = LinearSVC.fit
    monkeypatch.setattr(LinearSVC, "fit", lambda self, x, y: fits.append(len(x)) or fit(self, x, y))
    assert main(["debias", "--model", tiny, "--method", "inlp", "--iterations", "100000", "--fit-sentences", "10", "--eval-limit",
                 "0", "--train-file", str(corpus), "--out", str(tmp_path / "inlp"), "--data-dir", str(data_dir)]) == 0
    state = json.loads((tmp_path / "inlp" / "debias.json").read_text())
    accuracies = state["fit"]["dev_accuracy_per_iteration"]
    # 30 sentences: 14 train vectors span at most 14 of the 32 dimensions, and each classifier removes at least one.
    assert len(fits) == len(accuracies) <= 15
    assert state["fit"]["stopped"].startswith(f"the projected training vectors are all zero after {len(fits)} classifiers")
    err = capsys.readouterr()
    assert f"debias: inlp stopped before --iterations 100,000: {state['fit']['stopped']}" in err.err
    assert f"stopped early: {state['fit']['stopped']}" in err.out


# --------------------------------------------------------------------------- where the time goes


def test_the_held_out_perplexity_scores_each_text_once(tiny, corpus, monkeypatch):
    from lmbias.lm import likelihood

    scored = []
    score = likelihood.token_logprobs
    monkeypatch.setattr(likelihood, "token_logprobs", lambda model, tokenizer, texts, **kw: scored.append(list(texts)) or
                        score(model, tokenizer, texts, **kw))
    texts = [*ROWS, "the nurse was a good person of a person"]  # held out, with a sensitive token (nurse)
    lm = load_causal_lm(tiny, device="cpu")
    measured = held_out_perplexity(lm.model, lm.tokenizer, texts, ["occupation"])
    held = [row for row in texts if is_held_out(row)]
    assert scored == [held]  # one pass over the held-out texts: PPL_s reads its texts' scores from it
    monkeypatch.setattr(likelihood, "token_logprobs", score)
    nurse = [row for row in held if "nurse" in row.split()]
    assert len(nurse) == 1 and measured["ppl_s"]["texts"] == 1 and measured["ppl"]["texts"] == len(held) == 14
    alone = perplexity(lm.model, lm.tokenizer, nurse)  # the same texts scored on their own
    # a perplexity's logarithm is a mean per token: one token's float32 bound (tests/tolerances.py)
    assert measured["ppl_s"]["tokens"] == alone["tokens"]
    tolerances.assert_two_paths_agree(np.log(measured["ppl_s"]["ppl"]), np.log(alone["ppl"]), 1, tolerances.TINY_LM)
    tolerances.assert_two_paths_agree(np.log(measured["ppl"]["ppl"]), np.log(perplexity(lm.model, lm.tokenizer, held)["ppl"]), 1,
                                      tolerances.TINY_LM)


@pytest.mark.parametrize("arguments, phases, lines", [
    (["--method", "embedding", "--lambda", "1", "--attributes", "occupation", "--steps", "2", "--batch-size", "2"],
     {"corpus", "load", "loss_term", "training", "held_out", "save"},
     ["debias: reading the corpus and pairing its texts", "debias: loading ", "debias: training (embedding, lambda 1)",
      "debias: held-out perplexity: likelihood", "debias: saving the model to "]),
    (["--method", "inlp", "--iterations", "2", "--fit-sentences", "20"],
     {"corpus", "load", "fit", "save", "held_out"},
     ["debias: reading the corpus", "debias: loading ", "encoding 60 sentences", "debias: inlp classifiers",
      "debias: saving the adjusted model to ", "debias: held-out perplexity: likelihood"]),
])
def test_every_phase_shows_itself_and_the_summary_is_the_whole_call(arguments, phases, lines, tiny, corpus, tmp_path, data_dir,
                                                                    capsys):
    """Before: a 4 min 14 s call said "3 steps in 34 s", and 3.7 min passed without a line."""
    import time

    out = tmp_path / "model"
    started = time.perf_counter()
    assert main(["debias", "--model", tiny, *arguments, "--train-file", str(corpus), "--out", str(out), "--data-dir",
                 str(data_dir)]) == 0
    wall = time.perf_counter() - started
    captured = capsys.readouterr()
    for line in lines:
        assert line in captured.err, line
    seconds = json.loads((out / "debias.json").read_text())["seconds"]
    assert set(seconds) == phases | {"total"}
    assert sum(v for k, v in seconds.items() if k != "total") <= seconds["total"] + 0.05 * len(seconds) and seconds["total"] <= wall
    said = re.search(r" in (\d+) s \(", captured.out)
    assert said and int(said.group(1)) == round(seconds["total"]), captured.out
