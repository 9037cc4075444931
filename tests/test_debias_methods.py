"""The debiasing methods of Meade et al. 2022's survey (issue 29): Self-Debias, INLP, SentenceDebias,
LEACE and CDA. The fitting maths on hand-built vectors (a probe falls to chance, a planted direction
is found); Self-Debias on hand-computed distributions; the saved folders on a tiny random GPT-2 (so
those tests check plumbing: the adjustment is applied exactly where it should be, and refused where
it cannot be); bench/debias_methods.py measures what the methods do on a real model."""

import json
import random

import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from lmbias.cli import main
from lmbias.debias.attribute_words import attribute_words, swap
from lmbias.debias.fit import fit_adjustment
from lmbias.debias.methods.cda import cda_pairs
from lmbias.debias.methods.inlp import inlp_projection
from lmbias.debias.methods.leace import leace_map
from lmbias.debias.methods.sentence_debias import bias_direction
from lmbias.debias.projection_data import labelled_sentences
from lmbias.debias.train import debias
from lmbias.errors import InputError
from lmbias.lm.adjustments import PROJECTION_FILE, SelfDebias
from lmbias.lm.likelihood import token_logprobs
from lmbias.lm.loading import load_causal_lm
from lmbias.lm.spec import ModelSpec

from tiny_lm import save_tiny_causal_lm

# Sentences in the tiny model's vocabulary: gender words (he/she, man/woman, actor/actress, his/her) and neutral ones.
MALE = ["he was a good actor in the city", "the man was the best actor of new york", "he is a man of the film",
        "his role in the film was good", "the man and his film were the best"]
FEMALE = ["she was a good actress in the city", "the woman was the best actress of new york", "she is a woman of the film",
          "her role in the film was good", "the woman and her film were the best"]
NEUTRAL = ["the film was born in the city of new york", "a nurse is a good person", "the american film was the best",
           "the person was known for the role", "the best film of the city was good"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_causal_lm(tmp_path_factory.mktemp("tiny"), n_positions=64)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    rows = [f"{s} {w}" for w in ("and the film", "of the city", "in new york", "for the role", "and the best", "of a person")
            for s in MALE + FEMALE + NEUTRAL]
    path.write_text("\n".join(rows) + "\n")
    return path


# --------------------------------------------------------------------------- word swaps (CDA, SentenceDebias)


def test_cda_swaps_are_two_sided_and_leave_other_words_alone(data_dir):
    words = attribute_words("gender", data_dir)
    assert ("he", "she") in words and ("he.", "she.") in words  # bias-bench's punctuated variants
    # "her" -> "his": bias-bench checks every pair and the last listed one that holds the word wins ((him, her) then (his, her))
    assert swap("he told her that she was his actor.", words) == "she told his that he was her actress."
    assert swap("the nurse went to the city", words) is None  # nothing to swap: no pair
    assert swap("he  was   here", words) == "she was here"  # whitespace words, joined by one space (bias-bench)
    assert swap("He was here", words) is None  # case-sensitive, as the lists are lower case
    race = attribute_words("race", data_dir)
    swapped = swap("the black man and the black woman met an asian man", race, random.Random(3)).split()
    assert swapped[1] == swapped[5] != "black"  # one group maps to one group within a text
    assert swapped[9] != "asian" and swapped[0::2] == ["the", "man", "the", "woman", "an", "man"]


def test_cda_pairs_are_seeded_and_split_like_the_corpus(data_dir):
    texts = MALE + FEMALE + NEUTRAL
    pairs = cda_pairs(texts, {"bias_type": "gender", "seed": 0}, data_dir)
    assert [p["text"] for p in pairs] == MALE + FEMALE  # the neutral ones have no attribute word
    assert pairs[0]["counterfactual"] == "she was a good actress in the city" and pairs[0]["attribute"] == "gender"
    assert all(swap(p["counterfactual"], attribute_words("gender", data_dir)) == p["text"] for p in pairs)  # swapping back
    religion = ["the jewish man read the torah", "a muslim woman"]
    once, again = (cda_pairs(religion, {"bias_type": "religion", "seed": 1}, data_dir) for _ in range(2))
    assert once == again


def test_inlp_sentences_follow_bias_bench(data_dir):
    sentences, labels, names = labelled_sentences(MALE + FEMALE + NEUTRAL + ["he and she"], "gender", seed=0, data_dir=data_dir)
    assert names == ["male", "female", "neutral"] and sorted(np.bincount(labels)) == [5, 5, 5]
    for sentence, label in zip(sentences, labels):
        words = sentence.split()
        if label < 2:  # cut at or after the (last) attribute word
            assert {"he", "his", "man", "actor", "she", "her", "woman", "actress"} & set(words)
        else:
            assert len(words) >= 4
    with pytest.raises(InputError, match="no gender sentence of class 'female'"):
        labelled_sentences(MALE + NEUTRAL, "gender", data_dir=data_dir)


# --------------------------------------------------------------------------- the projections on hand-built vectors


def _planted(n=600, dim=12, seed=0):
    """Vectors whose class (3 classes) shows along two planted directions, plus noise."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    x = rng.normal(size=(n, dim))
    x[:, 0] += 3.0 * (y == 0)
    x[:, 1] += 3.0 * (y == 1)
    return x, y


def _probe(train_x, train_y, test_x, test_y):
    from sklearn.linear_model import LogisticRegression  # the debias extra (not in the vLLM test environment)

    return LogisticRegression(max_iter=2000).fit(train_x, train_y).score(test_x, test_y)


def test_after_inlp_a_linear_probe_falls_to_chance_on_held_out_vectors():
    x, y = _planted()
    test_x, test_y = _planted(seed=1)
    assert _probe(x, y, test_x, test_y) > 0.6  # chance: about 0.34
    projection, accuracies, stopped = inlp_projection(x[:400], y[:400], x[400:], y[400:], iterations=4)
    assert np.allclose(projection, projection.T, atol=1e-8) and np.allclose(projection @ projection, projection, atol=1e-8)
    assert accuracies[0] > 0.6 and accuracies[-1] < 0.45 and stopped is None  # bias-bench's: all 4 classifiers
    chance = np.bincount(test_y).max() / len(test_y)
    assert _probe(x @ projection.T, y, test_x @ projection.T, test_y) < chance + 0.05
    assert np.isclose(np.trace(projection), 12 - 4 * 3, atol=1e-6)  # each 3-class classifier removes 3 dimensions
    # --stop-at-chance: two classifiers remove the two planted directions; the third is at chance on the dev vectors
    projection, accuracies, stopped = inlp_projection(x[:400], y[:400], x[400:], y[400:], iterations=4, stop_at_chance=True)
    dev_majority = np.bincount(y[400:]).max() / 200
    assert len(accuracies) == 3 and accuracies[-1] <= dev_majority
    assert stopped == f"classifier 3 is at chance (dev accuracy {accuracies[-1]:.3f}, the majority class {dev_majority:.3f}); " \
                      "its direction is not removed"
    assert np.isclose(np.trace(projection), 12 - 2 * 3, atol=1e-6)


def test_after_leace_a_linear_probe_falls_to_chance_and_the_map_is_its_own_formula():
    x, y = _planted()
    test_x, test_y = _planted(seed=1)
    matrix, offset = leace_map(x, y, 3)
    erased = x @ matrix.numpy().T + offset.numpy()
    onehot = np.eye(3)[y]
    covariance = (erased - erased.mean(0)).T @ (onehot - onehot.mean(0)) / len(x)
    assert np.abs(covariance).max() < 1e-8  # LEACE's guarantee: no linear covariance with the concept left
    chance = np.bincount(test_y).max() / len(test_y)
    assert _probe(erased, y, test_x @ matrix.numpy().T + offset.numpy(), test_y) < chance + 0.05
    from concept_erasure import LeaceEraser

    eraser = LeaceEraser.fit(torch.tensor(x), torch.nn.functional.one_hot(torch.tensor(y), 3).double())
    assert np.allclose(erased, eraser(torch.tensor(x)).numpy(), atol=1e-8)  # the affine form equals the package's eraser


def test_sentence_debias_finds_a_planted_direction():
    rng = np.random.default_rng(0)
    direction = rng.normal(size=8)
    direction /= np.linalg.norm(direction)
    bases = rng.normal(size=(50, 1, 8))
    sets = bases + np.stack([1.5, -1.5])[None, :, None] * direction + rng.normal(scale=0.05, size=(50, 2, 8))
    found = bias_direction(sets)
    assert abs(found @ direction) > 0.99


# --------------------------------------------------------------------------- Self-Debias


def test_self_debias_formula_on_hand_computed_distributions():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.2]]))
    prefixed = [torch.log(torch.tensor([[0.2, 0.7, 0.1]]))]
    owner = SelfDebias.__new__(SelfDebias)
    owner.decay_constant, owner.epsilon = 10.0, 0.01
    got = owner.debiased_logprobs(logits, prefixed).exp()[0].numpy()
    # Token 1 is 0.4 more likely after the prefix: alpha = exp(-10 * 0.4) = 0.0183; tokens 0 and 2 keep alpha = 1.
    weights = np.array([0.5, 0.3 * np.exp(-4.0), 0.2])
    assert np.allclose(got, weights / weights.sum(), atol=1e-6)
    owner.decay_constant = 50.0  # exp(-20) < epsilon: the floor
    got = owner.debiased_logprobs(logits, prefixed).exp()[0].numpy()
    weights = np.array([0.5, 0.3 * 0.01, 0.2])
    assert np.allclose(got, weights / weights.sum(), atol=1e-6)


def test_self_debias_lowers_the_targeted_continuation_and_scores_like_the_formula(tiny, corpus, tmp_path, data_dir):
    """Plumbing on a tiny random model: the saved folder's scores are the formula applied to the model's own
    plain and prefixed passes, and a continuation the prefix makes more likely loses probability."""
    out = tmp_path / "sd"
    state = fit_adjustment(model=tiny, method="self_debias", out=out, train_file=corpus, eval_limit=0, show_progress=False,
                           decay_constant=10.0, data_dir=data_dir)
    assert state["adjustment"]["settings"]["prefixes"] == ["The following text discriminates against people because of their gender: "]
    adjusted, plain = load_causal_lm(str(out), dtype="float32", device="cpu"), load_causal_lm(tiny, dtype="float32", device="cpu")
    texts = ["the man was a good actor", "she was the best"]
    got = token_logprobs(adjusted.model, adjusted.tokenizer, texts)
    tokenizer = plain.tokenizer
    prefix = tokenizer(state["adjustment"]["settings"]["prefixes"][0], add_special_tokens=False)["input_ids"]
    for text, values in zip(texts, got):
        ids = [tokenizer.eos_token_id] + tokenizer(text, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            p = plain.model(torch.tensor([ids])).logits[0].softmax(-1)
            q = plain.model(torch.tensor([prefix + ids])).logits[0, len(prefix):].softmax(-1)
        weights = p * torch.exp(-10.0 * (q - p).clamp(min=0)).clamp(min=0.01)
        expected = (weights / weights.sum(-1, keepdim=True)).log()[torch.arange(len(ids) - 1), ids[1:]].numpy()
        assert np.allclose(values, expected, atol=1e-5)
        with torch.no_grad():
            debiased = adjusted.model(torch.tensor([ids]), use_cache=False).logits[0].exp()
        targeted = (q - p).argmax(-1)  # at each position, the token the prefix makes most likely (beyond the plain pass)...
        rows = torch.arange(len(ids))
        assert torch.all(debiased[rows, targeted] < p[rows, targeted])  # ...loses probability


def test_self_debias_scores_options_whole_as_bbq_asks_them(tiny, corpus, tmp_path, data_dir):
    """BBQ's option scorer reuses a context's cache for its options; a self-debiased model scores each
    context + option whole instead (the adjustment needs the whole sequence), with the same values."""
    from lmbias.lm.likelihood import continuation_logprobs, option_logprobs

    fit_adjustment(model=tiny, method="self_debias", out=tmp_path / "sd", train_file=corpus, eval_limit=0, show_progress=False,
                   data_dir=data_dir)
    lm = load_causal_lm(str(tmp_path / "sd"), device="cpu")
    contexts, options = ["the man and the woman", "he was a good"], [["he was", "she was", "a person"], ["actor", "actress"]]
    grouped = option_logprobs(lm.model, lm.tokenizer, contexts, options)
    pairs = continuation_logprobs(lm.model, lm.tokenizer, [c for c, o in zip(contexts, options) for _ in o],
                                  [x for o in options for x in o])
    assert np.allclose(np.concatenate([g.sum for g in grouped]), pairs.sum, atol=1e-5)


def test_self_debias_generation_equals_a_greedy_loop_over_the_formula(tiny, corpus, tmp_path, data_dir):
    out = tmp_path / "sd"
    fit_adjustment(model=tiny, method="self_debias", out=out, train_file=corpus, eval_limit=0, show_progress=False,
                   decay_constant=10.0, data_dir=data_dir)
    adjusted = load_causal_lm(str(out), dtype="float32", device="cpu")
    generated = adjusted.generate(["the man", "she was a good"], {"do_sample": False, "max_new_tokens": 4}, seed=0)
    model, tokenizer = AutoModelForCausalLM.from_pretrained(tiny).eval(), AutoTokenizer.from_pretrained(tiny)
    prefix = tokenizer("The following text discriminates against people because of their gender: ", add_special_tokens=False)["input_ids"]
    for prompt, result in zip(["the man", "she was a good"], generated):
        ids = tokenizer(prompt)["input_ids"]
        new = []
        for _ in range(4):
            with torch.no_grad():
                p = model(torch.tensor([ids + new])).logits[0, -1].softmax(-1)
                q = model(torch.tensor([prefix + ids + new])).logits[0, -1].softmax(-1)
            new.append(int((p * torch.exp(-10.0 * (q - p).clamp(min=0)).clamp(min=0.01)).argmax()))
            if new[-1] == tokenizer.eos_token_id:
                new.pop()
                break
        assert result["continuation"] == tokenizer.decode(new, skip_special_tokens=True)
    sampled = adjusted.generate(["the man", "she was a good"], {"do_sample": True, "top_k": 0, "max_new_tokens": 3}, seed=0,
                                num_return_sequences=3)  # the counterfactual benchmark's many samples per prompt
    assert len(sampled) == 6 and all(r["num_tokens"] <= 3 for r in sampled)


def test_seat_refuses_a_self_debiased_model_and_measures_a_projected_one(tiny, corpus, tmp_path, data_dir, capsys):
    """SEAT reads hidden states: Self-Debias leaves them as they were (SEAT would measure the starting model),
    a projection changes them (SEAT's representation is the mean of the projected states)."""
    fit_adjustment(model=tiny, method="self_debias", out=tmp_path / "sd", train_file=corpus, eval_limit=0, show_progress=False,
                   data_dir=data_dir)
    command = ["run", "seat", "--tests", "sent-weat6", "--n-samples", "100", "--no-progress"]
    assert main([*command, "--model", str(tmp_path / "sd"), "--out", str(tmp_path / "seat-sd")]) == 2
    assert "self-debiased" in capsys.readouterr().err and not (tmp_path / "seat-sd").exists()
    fit_adjustment(model=tiny, method="sentence_debias", out=tmp_path / "proj", train_file=corpus, eval_limit=0,
                   show_progress=False, data_dir=data_dir)
    assert main([*command, "--model", str(tmp_path / "proj"), "--out", str(tmp_path / "seat-proj")]) == 0
    from safetensors.torch import load_file

    from lmbias.lm.representations import mean_hidden_states

    saved = load_file(str(tmp_path / "proj" / PROJECTION_FILE))
    texts = ["he was a good actor", "she was the best actress in the city"]
    plain, projected = load_causal_lm(tiny, device="cpu"), load_causal_lm(str(tmp_path / "proj"), device="cpu")
    expected = mean_hidden_states(plain.model, plain.tokenizer, texts) @ saved["matrix"].numpy().T + saved["offset"].numpy()
    assert np.allclose(mean_hidden_states(projected.model, projected.tokenizer, texts), expected, atol=1e-5)  # the mean of an affine map


# --------------------------------------------------------------------------- saved projections (tiny model: plumbing)


@pytest.mark.parametrize("method", ["inlp", "leace", "sentence_debias"])
def test_plumbing_a_saved_projection_is_applied_to_every_final_hidden_state(method, tiny, corpus, tmp_path, data_dir):
    out = tmp_path / method
    options = {"iterations": 3} if method == "inlp" else {}
    state = fit_adjustment(model=tiny, method=method, out=out, train_file=corpus, eval_limit=5, fit_sentences=40,
                           show_progress=False, data_dir=data_dir, **options)
    assert json.loads((out / "config.json").read_text())["lmbias_adjustment"]["method"] == method
    assert state["status"] == "finished" and state["held_out"]["ppl"]["ppl"] > 0
    from safetensors.torch import load_file

    saved = load_file(str(out / PROJECTION_FILE))
    adjusted, plain = load_causal_lm(str(out), device="cpu"), AutoModelForCausalLM.from_pretrained(tiny).eval()
    ids = torch.tensor([[5, 6, 7, 8, 9]])
    with torch.no_grad():
        hidden = plain.transformer(ids).last_hidden_state
        projected = hidden @ saved["matrix"].T + saved["offset"]
        assert torch.allclose(adjusted.model.base_model(ids).last_hidden_state, projected, atol=1e-5)
        assert torch.allclose(adjusted.model(ids).logits, plain.lm_head(projected), atol=1e-4)
    if method == "sentence_debias":
        assert state["fit"]["versions_per_set"] == 2
    else:
        assert state["fit"]["classes"]["neutral"] > 0 and "after" in state["fit"]["probe_test_accuracy"]


def test_plumbing_an_adjusted_model_is_refused_by_a_backend_that_cannot_apply_it(tiny, corpus, tmp_path, data_dir, capsys):
    out = tmp_path / "leace"
    fit_adjustment(model=tiny, method="leace", out=out, train_file=corpus, eval_limit=0, fit_sentences=40, show_progress=False,
                   data_dir=data_dir)
    with pytest.raises(InputError, match="only --backend hf applies"):
        ModelSpec(model=str(out), backend="openai", options={"base_url": "http://127.0.0.1:9/v1"}).checked()
    assert main(["run", "crows_pairs", "--model", str(out), "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1",
                 "--limit", "2", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "debiased by leace" in err[0] and not (tmp_path / "run").exists()
    assert main(["run", "crows_pairs", "--model", str(out), "--limit", "2", "--no-progress", "--out", str(tmp_path / "hf")]) == 0
    recorded = json.loads((tmp_path / "hf" / "results.json").read_text())["model"]["adjustment"]
    assert recorded == {"method": "leace", "kind": "projection", "settings": {}}  # what the numbers were measured with


def test_plumbing_a_fit_never_writes_over_a_model_and_restarts_an_interrupted_one(tiny, corpus, tmp_path, data_dir):
    out = tmp_path / "fit"
    common = {"model": tiny, "method": "sentence_debias", "train_file": corpus, "eval_limit": 0, "show_progress": False,
              "data_dir": data_dir}
    fit_adjustment(out=out, **common)
    before = (out / "model.safetensors").read_bytes()
    with pytest.raises(InputError, match="finished debiased model"):
        fit_adjustment(out=out, **common)
    assert (out / "model.safetensors").read_bytes() == before
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="holds other files"):
        fit_adjustment(out=other, **common)
    interrupted = tmp_path / "interrupted"
    interrupted.mkdir()
    (interrupted / "debias.json").write_text(json.dumps({"status": "fitting", "settings": {}}))
    (interrupted / "model.safetensors").write_text("half")
    assert fit_adjustment(out=interrupted, **common)["status"] == "finished"
    assert (interrupted / "model.safetensors").read_bytes() == before  # deterministic: the same model again


# --------------------------------------------------------------------------- CDA in the training loop


def test_plumbing_cda_trains_on_both_halves_and_a_killed_run_resumes_bitwise(tiny, corpus, tmp_path, data_dir, monkeypatch):
    from lmbias.debias import train as training

    common = {"model": tiny, "method": "cda", "lam": 1.0, "train_file": corpus, "steps": 4, "batch_size": 4, "checkpoint_every": 2,
              "max_length": 16, "eval_limit": 0, "show_progress": False, "data_dir": data_dir}
    whole = debias(out=tmp_path / "whole", **common)
    assert whole["settings"]["bias_type"] == "gender" and whole["pairs"] == {"gender": 60}  # 10 gendered sentences x 6 endings
    save = training._checkpoint

    def save_then_die(accelerator, out, step):
        save(accelerator, out, step)
        raise KeyboardInterrupt

    monkeypatch.setattr(training, "_checkpoint", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        debias(out=tmp_path / "cut", **common)
    monkeypatch.setattr(training, "_checkpoint", save)
    debias(out=tmp_path / "cut", **common)  # resumes at step 2
    trained, resumed = (AutoModelForCausalLM.from_pretrained(tmp_path / name).state_dict() for name in ("whole", "cut"))
    assert all(torch.equal(trained[k], resumed[k]) for k in trained)
    control = debias(out=tmp_path / "control", **{**common, "lam": 0.0})
    lm_only = AutoModelForCausalLM.from_pretrained(tmp_path / "control").state_dict()
    assert any(not torch.equal(trained[k], lm_only[k]) for k in trained)  # the swapped half changes the training
    assert control["pairs"] == whole["pairs"]


# --------------------------------------------------------------------------- bad input: one line, nothing written


@pytest.mark.parametrize("arguments, message", [
    (["--method", "inlp", "--lambda", "1"], "--lambda applies to training methods"),
    (["--method", "cda"], "give --lambda"),
    (["--method", "embedding", "--lambda", "1", "--bias-type", "race"], "--bias-type applies to the methods"),
    (["--method", "self_debias", "--iterations", "3"], "--iterations is an option of --method inlp"),
    (["--method", "self_debias", "--epsilon", "0"], "epsilon"),
    (["--method", "inlp", "--fit-sentences", "1"], "--fit-sentences must be >= 2"),
])
def test_debias_method_mistakes_are_one_line(arguments, message, tiny, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["debias", "--model", tiny, "--out", str(out), *arguments]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and "Traceback" not in "\n".join(err)
    assert not out.exists() or not any(p.name != ".lmbias.lock" for p in out.iterdir())


@pytest.mark.parametrize("method", [["--method", "inlp"], ["--method", "cda", "--lambda", "1"]])
def test_a_model_without_any_attribute_word_in_its_vocabulary_is_one_line(method, tiny, corpus, tmp_path, data_dir, capsys):
    # The tiny model's words hold gender words but no race word: each would be <unk>.
    corpus = tmp_path / "race.txt"
    corpus.write_text("the black man was a good actor in the city\nthe asian woman was the best\n" * 20)
    assert main(["debias", "--model", tiny, *method, "--bias-type", "race", "--train-file", str(corpus), "--out",
                 str(tmp_path / "out"), "--data-dir", str(data_dir), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "none of bias-bench's race attribute words is in its vocabulary" in err[0]


def test_an_unknown_method_is_one_line(tiny, tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["debias", "--model", tiny, "--method", "nope", "--out", str(tmp_path / "out")])
    assert stopped.value.code == 2 and "invalid choice: 'nope'" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_a_corpus_without_attribute_words_is_one_line(tiny, tmp_path, data_dir, capsys):
    corpus = tmp_path / "plain.txt"
    corpus.write_text("the nurse was a person of the city\nthe best film was good\n" * 5)
    assert main(["debias", "--model", tiny, "--method", "sentence_debias", "--train-file", str(corpus), "--out",
                 str(tmp_path / "out"), "--data-dir", str(data_dir)]) == 2
    assert "no sentence of the corpus holds a gender attribute word" in capsys.readouterr().err
    assert main(["debias", "--model", tiny, "--method", "cda", "--lambda", "1", "--train-file", str(corpus), "--out",
                 str(tmp_path / "cda"), "--data-dir", str(data_dir)]) == 2
    assert "holds a gender attribute word of bias-bench's lists" in capsys.readouterr().err
