"""`lmbias debias` and `lmbias perplexity` (issue 16): the counterfactual pairs and the fairness losses
on hand-computed examples; training plumbing (resume, LoRA, the control, bad input) on a tiny random
GPT-2, so those tests check plumbing, not debiasing quality (bench/debias.py measures that)."""

import json
import math

import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from lmbias.benchmarks import save_run
from lmbias.cli import main
from lmbias.debias import train as training
from lmbias.debias.pairs import counterfactual, counterfactual_pairs, is_held_out, load_corpus
from lmbias.debias.perplexity import perplexity
from lmbias.debias.regularizers import aligned_positions, pair_distance
from lmbias.debias.sentiment_head import new_head
from lmbias.debias.train import debias

from tiny_lm import save_tiny_bert, save_tiny_causal_lm

POSITIVE = ["the nurse is good and the best actor", "a good and best film of the best city", "the good nurse was the best"]
NEGATIVE = ["the nurse is bad and the bad actor", "the man was bad and bad to her", "a bad nurse and a bad film"]
NEUTRAL = ["the nurse was born in new york", "he is an actor and a nurse", "the woman was a nurse in the city",
           "she was known for her role as a nurse", "the american nurse is a person of the city"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_causal_lm(tmp_path_factory.mktemp("tiny"), n_positions=64)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A text file of sentences in the tiny model's vocabulary; 'nurse' is the sensitive token."""
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text("\n".join((POSITIVE + NEGATIVE) * 5 + NEUTRAL * 4 + [f"the {w} film" for w in "abcdefghij"]) + "\n")
    return path


SMALL = {"attributes": ["occupation"], "steps": 6, "batch_size": 4, "checkpoint_every": 2, "max_length": 16, "eval_limit": 0,
         "show_progress": False}


def _weights(folder):
    return AutoModelForCausalLM.from_pretrained(folder).state_dict()


# --------------------------------------------------------------------------- pairs and losses (hand-computed)


def test_counterfactuals_keep_the_grammar():
    assert counterfactual("She is a nurse in Italy.", "occupation", "nurse", "accountant") == "She is an accountant in Italy."
    assert counterfactual("An auditor and a nurse.", "occupation", "auditor", "CEO") == "A CEO and a nurse."
    assert counterfactual("Nurse Ratched", "occupation", "Nurse", "editor") == "Editor Ratched"
    assert counterfactual("Jake said he gave her his book.", "name", "Jake", "Amy") == "Amy said she gave him her book."
    assert counterfactual("Amy lost her keys; call her.", "name", "Amy", "Jake") == "Jake lost his keys; call him."
    assert counterfactual("Amy met Emily.", "name", "Amy", "Katie") == "Katie met Emily."  # same gender: pronouns kept
    assert counterfactual("Trips to Italy from Italy", "country", "Italy", "Chile") == "Trips to Chile from Chile"


def test_counterfactual_pairs_pick_the_first_attribute_and_a_seeded_replacement():
    texts = ["A nurse from Italy.", "No token here.", "Jake is a nurse.", "The nursery."]
    pairs = counterfactual_pairs(texts, ["country", "occupation"])
    assert [(p["text"], p["attribute"], p["token"]) for p in pairs] == [("A nurse from Italy.", "country", "Italy"),
                                                                         ("Jake is a nurse.", "occupation", "nurse")]
    assert pairs == counterfactual_pairs(texts, ["country", "occupation"])  # the same on every run
    assert all(p["replacement"] != p["token"] and p["replacement"] in p["counterfactual"] for p in pairs)
    assert [p["held_out"] for p in pairs] == [is_held_out(p["text"]) for p in pairs]
    shares = np.mean([is_held_out(f"sentence {i}") for i in range(5000)])
    assert 0.08 < shares < 0.12


def test_aligned_positions_and_the_embedding_distance():
    assert aligned_positions([1, 5, 6, 7], [1, 8, 9, 6, 7]) == ([1, 2, 3], [2, 3, 4])
    assert aligned_positions([1, 5], [1, 9]) == ([1], [1])  # the token at the end: only its own position
    mine = torch.tensor([[[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]])
    theirs = torch.tensor([[[5.0, 0.0], [1.0, 1.0], [0.0, -2.0]]])
    # positions 1 and 2: cosine distances 1 - 1/sqrt(2) and 1 - (-1) = 2
    value = pair_distance(mine, theirs, [([1, 2], [1, 2])])
    assert value.item() == pytest.approx(((1 - 1 / math.sqrt(2)) + 2) / 2)


def test_the_sentiment_distance_is_the_heads_probability_gap():
    """A head whose P(positive) is sigmoid(x_0) for x_0 >= 0 (identity through the ReLU layers, logit
    difference x_0): the distance of a pair is the mean |sigmoid(x_0) - sigmoid(y_0)| over its positions."""
    head = new_head(2, "probability")
    with torch.no_grad():
        for layer in [*head.hidden, head.output]:
            if hasattr(layer, "weight"):
                layer.weight.zero_()
                layer.bias.zero_()
        head.hidden[0].weight[0, 0] = head.hidden[2].weight[0, 0] = head.output.weight[1, 0] = 1.0
    mine = torch.tensor([[[1.0, 5.0], [2.0, -3.0]]])
    theirs = torch.tensor([[[0.0, 7.0], [-4.0, 1.0]]])  # x_0 <= 0: P(positive) = 1/2
    sigmoid = lambda x: 1 / (1 + math.exp(-x))  # noqa: E731
    expected = ((sigmoid(1) - 0.5) + (sigmoid(2) - 0.5)) / 2
    assert pair_distance(mine, theirs, [([0, 1], [0, 1])], head).item() == pytest.approx(expected, rel=1e-6)
    assert pair_distance(mine, theirs, [([1], [0])], head).item() == pytest.approx(sigmoid(2) - 0.5, rel=1e-6)


# --------------------------------------------------------------------------- perplexity


def test_perplexity_is_exp_of_the_mean_negative_log_likelihood(tiny):
    model, tokenizer = AutoModelForCausalLM.from_pretrained(tiny), AutoTokenizer.from_pretrained(tiny)
    texts = ["the nurse is good", "he was an actor in the city"]
    # the oracle is transformers' own loss: the mean NLL of each text's tokens after the start token
    nll, tokens = 0.0, 0
    for text in texts:
        ids = torch.tensor([[tokenizer.eos_token_id] + tokenizer(text, add_special_tokens=False)["input_ids"]])
        with torch.no_grad():
            nll += model(ids, labels=ids).loss.item() * (ids.shape[1] - 1)
        tokens += ids.shape[1] - 1
    expected = math.exp(nll / tokens)
    measured = perplexity(model, tokenizer, texts)
    assert measured["ppl"] == pytest.approx(expected, rel=1e-6) and measured["tokens"] == 4 + 7


def test_plumbing_perplexity_command_writes_and_never_overwrites(tiny, corpus, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["perplexity", "--model", tiny, "--train-file", str(corpus), "--attributes", "occupation", "--out", str(out)]) == 0
    saved = json.loads((out / "perplexity.json").read_text())
    assert saved["ppl"]["texts"] == sum(is_held_out(t) for t in corpus.read_text().splitlines() if t)
    assert saved["ppl"]["ppl"] > 1 and "PPL_s" in capsys.readouterr().out
    assert main(["perplexity", "--model", tiny, "--limit", "1", "--train-file", str(corpus), "--out", str(out)]) == 2
    assert "holds the perplexity of other settings" in capsys.readouterr().err
    assert json.loads((out / "perplexity.json").read_text()) == saved


# --------------------------------------------------------------------------- training plumbing (tiny random model)


def test_plumbing_a_killed_training_resumes_where_it_stopped(tiny, corpus, tmp_path, monkeypatch, capsys):
    """Stopped right after the step-4 checkpoint, the run resumes there and ends with the same weights
    as an uninterrupted run (the batches depend on the seed and the step only)."""
    whole = debias(model=tiny, method="embedding", lam=10.0, train_file=corpus, out=tmp_path / "whole", **SMALL)
    assert whole["status"] == "finished" and not (tmp_path / "whole" / "checkpoints").exists()

    save = training._checkpoint

    def save_then_die(accelerator, out, step):
        save(accelerator, out, step)
        if step == 4:
            raise KeyboardInterrupt

    monkeypatch.setattr(training, "_checkpoint", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        debias(model=tiny, method="embedding", lam=10.0, train_file=corpus, out=tmp_path / "cut", **SMALL)
    assert [p.name for p in (tmp_path / "cut" / "checkpoints").iterdir()] == ["step-4"]  # step-2 removed
    monkeypatch.setattr(training, "_checkpoint", save)
    capsys.readouterr()
    debias(model=tiny, method="embedding", lam=10.0, train_file=corpus, out=tmp_path / "cut", **SMALL)
    assert f"resuming {tmp_path / 'cut'} from its checkpoint at step 4 of {SMALL['steps']}" in capsys.readouterr().err
    a, b = _weights(tmp_path / "whole"), _weights(tmp_path / "cut")
    assert all(torch.equal(a[key], b[key]) for key in a)
    assert not torch.equal(a["transformer.h.0.attn.c_attn.weight"], _weights(tiny)["transformer.h.0.attn.c_attn.weight"])
    steps = [json.loads(line)["step"] for line in (tmp_path / "cut" / "log.jsonl").read_text().splitlines()]
    assert steps == []  # logs every 10 steps: none in 6


def test_plumbing_a_run_stopped_before_its_first_checkpoint_says_it_starts_again(tiny, corpus, tmp_path, monkeypatch, capsys):
    batch_of = training._batch_of

    def stop_at_step_1(step, *args):
        if step == 1:
            raise KeyboardInterrupt
        return batch_of(step, *args)

    monkeypatch.setattr(training, "_batch_of", stop_at_step_1)
    with pytest.raises(KeyboardInterrupt):
        debias(model=tiny, method="embedding", lam=10.0, train_file=corpus, out=tmp_path / "cut", **SMALL)
    monkeypatch.setattr(training, "_batch_of", batch_of)
    capsys.readouterr()
    debias(model=tiny, method="embedding", lam=10.0, train_file=corpus, out=tmp_path / "cut", **SMALL)
    assert "stopped before its first checkpoint (step 2); training starts again from step 0" in capsys.readouterr().err


def test_a_corrupt_state_or_perplexity_file_is_one_line(tiny, corpus, tmp_path, capsys):
    from lmbias.cli import main

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "debias.json").write_text('{"status": "train')
    assert main(["debias", "--model", tiny, "--method", "embedding", "--lambda", "1", "--train-file", str(corpus),
                 "--attributes", "occupation", "--out", str(tmp_path / "run"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{tmp_path / 'run' / 'debias.json'} is not valid JSON" in err[0]
    (tmp_path / "ppl").mkdir()
    (tmp_path / "ppl" / "perplexity.json").write_bytes(b"\x00\xff")
    assert main(["perplexity", "--model", tiny, "--train-file", str(corpus), "--attributes", "occupation",
                 "--out", str(tmp_path / "ppl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{tmp_path / 'ppl' / 'perplexity.json'} is not valid JSON" in err[0]


def test_debias_help_describes_the_method():
    from lmbias.cli import build_parser

    text = build_parser()._subparsers._group_actions[0].choices["debias"].format_help()
    assert "L_LM + lambda * L_fairness" in text and "resumes" in text


def test_plumbing_the_control_and_the_methods_differ_only_in_the_fairness_loss(tiny, corpus, tmp_path):
    runs = {}
    for name, method, lam in (("control", "embedding", 0.0), ("embedding", "embedding", 10.0), ("sentiment", "sentiment", 10.0)):
        runs[name] = debias(model=tiny, method=method, lam=lam, train_file=corpus, out=tmp_path / name,
                            **{**SMALL, "steps": 10, "eval_limit": None})
    logged = {name: json.loads((tmp_path / name / "log.jsonl").read_text().splitlines()[0]) for name in runs}
    assert logged["control"]["fairness"] is None and logged["embedding"]["fairness"] > 0
    head = runs["sentiment"]["sentiment_head"]
    assert (head["positive"], head["negative"]) == (3 * 5 - sum(is_held_out(t) for t in POSITIVE) * 5,
                                                    3 * 5 - sum(is_held_out(t) for t in NEGATIVE) * 5)
    assert (tmp_path / "sentiment" / "sentiment_head.pt").is_file()
    assert runs["control"]["held_out"]["ppl"]["ppl"] > 1
    card = (tmp_path / "embedding" / "README.md").read_text()
    assert "embedding-regularised" in card and "| attributes | occupation |" in card
    # the saved folder is a model every benchmark can load
    assert AutoModelForCausalLM.from_pretrained(tmp_path / "embedding").config.n_layer == 2


def test_the_sentiment_head_stays_frozen_while_the_model_trains(tiny, corpus, tmp_path, monkeypatch):
    """Issue 25: f_s after training is bit-identical to a copy taken when it was prepared (and to the
    saved sentiment_head.pt), no parameter of it needs or got a gradient, and the model did train."""
    from dataclasses import replace

    from lmbias.debias import methods

    sentiment, prepared = methods.get_method("sentiment"), []

    def prepare_and_keep(preparation):
        term = sentiment.loss_term(preparation)
        prepared.append((term, {key: value.clone() for key, value in term.head.state_dict().items()}))
        return term

    monkeypatch.setitem(methods.REGISTRY, "sentiment", replace(sentiment, loss_term=prepare_and_keep))
    out = tmp_path / "sentiment"
    debias(model=tiny, method="sentiment", lam=10.0, train_file=corpus, out=out, **SMALL)
    (term, before), = prepared
    after, saved = term.head.state_dict(), torch.load(out / "sentiment_head.pt", weights_only=False)["state"]
    assert len(before) == 6 and set(after) == set(before) == set(saved)  # 3 linear layers: weight and bias each
    assert all(torch.equal(after[key], before[key]) and torch.equal(saved[key], before[key]) for key in before)
    assert all(not p.requires_grad and p.grad is None for p in term.head.parameters())
    key = "transformer.h.0.attn.c_attn.weight"
    assert not torch.equal(_weights(out)[key], _weights(tiny)[key])


# --------------------------------------------------------------------------- the method registry (issue 25)


def _debias_help() -> str:
    from lmbias.cli import build_parser

    return build_parser()._subparsers._group_actions[0].choices["debias"].format_help()


def test_the_built_in_methods_are_found_through_the_entry_points_setup_cfg_declares():
    """The built-ins are found like third-party methods: through the lmbias.debias_methods entry points
    in setup.cfg (after editing it: pip install --no-deps -e . refreshes the installed metadata)."""
    import configparser
    from importlib.metadata import entry_points
    from pathlib import Path

    from lmbias.debias.methods import get_method, names

    config = configparser.ConfigParser()
    config.read(Path(__file__).resolve().parents[1] / "setup.cfg")
    declared = dict(line.split(" = ") for line in config["options.entry_points"]["lmbias.debias_methods"].strip().splitlines())
    assert declared == {name: f"lmbias.debias.methods.{name}:METHOD"
                        for name in ("embedding", "sentiment", "cda", "inlp", "sentence_debias", "leace", "self_debias")}
    installed = {entry.name: entry for entry in entry_points(group="lmbias.debias_methods")}
    assert {name: installed[name].value for name in declared} == declared, "stale metadata: pip install --no-deps -e ."
    assert all(get_method(name) is installed[name].load() for name in declared)
    assert set(declared) <= set(names())
    assert "--method {cda,embedding,inlp,leace,self_debias,sentence_debias,sentiment}" in _debias_help()


def test_a_method_registered_at_run_time_is_offered_and_trains(tiny, corpus, tmp_path, capsys):
    """A third method, a tiny loss term with an option of its own, registered in the test: it appears
    in `lmbias debias --help`, its option reaches it and debias.json, its term is called once per step
    with the step's pairs, and it changes what is learnt (the λ = 0 control is the same for every method)."""
    from lmbias.debias.methods import DebiasMethod, register, unregister

    calls = []

    def logit_gap(preparation):
        power = preparation.settings["gap_power"]

        def term(output, counterfactual_output, positions):
            calls.append(len(positions))
            return (output.logits[:, -1].mean() - counterfactual_output.logits[:, -1].mean()).abs() ** power

        return term

    register(DebiasMethod(name="logit_gap", description="the gap of the mean last-position logits", loss_term=logit_gap,
                          add_arguments=lambda parser: parser.add_argument("--gap-power", type=float, default=2.0,
                                                                           help="the gap's exponent")))
    try:
        text = _debias_help()
        assert "{cda,embedding,inlp,leace,self_debias,sentence_debias,sentiment,logit_gap}" in text and "--gap-power GAP_POWER" in text
        assert "logit_gap (training loss term): the gap of the mean last-position logits" in " ".join(text.split())
        small = ["--train-file", str(corpus), "--attributes", "occupation", "--steps", "6", "--batch-size", "4",
                 "--checkpoint-every", "2", "--max-length", "16", "--eval-limit", "0", "--no-progress", "--model", tiny]
        assert main(["debias", *small, "--method", "logit_gap", "--gap-power", "1", "--lambda", "5", "--out",
                     str(tmp_path / "gap")]) == 0
        assert calls == [4] * 6  # 6 steps of 4 pairs
        settings = json.loads((tmp_path / "gap" / "debias.json").read_text())["settings"]
        assert (settings["method"], settings["gap_power"], settings["lam"]) == ("logit_gap", 1.0, 5.0)
        assert "sentiment_distance" not in settings  # another method's option is not this run's setting
        card = (tmp_path / "gap" / "README.md").read_text()
        assert "# logit_gap-regularised" in card and "(--method logit_gap): the gap of the mean last-position logits." in card
        for method in ("logit_gap", "embedding"):
            assert main(["debias", *small, "--method", method, "--lambda", "0", "--out", str(tmp_path / f"{method}-0")]) == 0
        assert calls == [4] * 6  # λ = 0 prepares no term
        gap, control, other = (_weights(tmp_path / name) for name in ("gap", "logit_gap-0", "embedding-0"))
        assert all(torch.equal(control[key], other[key]) for key in control)
        assert not torch.equal(gap["transformer.h.0.attn.c_attn.weight"], control["transformer.h.0.attn.c_attn.weight"])
    finally:
        unregister("logit_gap")
    assert "logit_gap" not in _debias_help()


def test_a_method_of_another_package_is_found_through_its_entry_point(tmp_path, monkeypatch):
    """An out-of-tree method: a module and real entry-point metadata (a .dist-info folder) on sys.path."""
    from lmbias.debias.methods import REGISTRY, get_method

    (tmp_path / "lmbias_plugin_method.py").write_text(
        "from lmbias.debias.methods import DebiasMethod\n"
        "METHOD = DebiasMethod(name='plugin_projection', description='a projection', transform=lambda preparation: preparation.model)\n")
    info = tmp_path / "lmbias_plugin_method-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lmbias-plugin-method\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[lmbias.debias_methods]\nplugin_projection = lmbias_plugin_method:METHOD\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        REGISTRY.reload()
        assert "plugin_projection" in REGISTRY.names()
        assert get_method("plugin_projection").kind == "hidden-state projection"
        assert "plugin_projection (hidden-state projection): a projection" in " ".join(_debias_help().split())
    finally:
        monkeypatch.undo()
        REGISTRY.reload()
    assert "plugin_projection" not in REGISTRY.names()


def test_debias_refuses_a_kind_it_cannot_apply_and_a_method_that_contributes_nothing(tiny, corpus, tmp_path, capsys):
    from lmbias.debias.methods import DebiasMethod, get_method, register, unregister

    register(DebiasMethod(name="projection", description="a projection", transform=lambda preparation: preparation.model))
    try:
        assert main(["debias", "--model", tiny, "--method", "projection", "--train-file", str(corpus),
                     "--out", str(tmp_path / "r"), "--no-progress"]) == 2  # no phase lines before the error
    finally:
        unregister("projection")
    assert capsys.readouterr().err.strip().splitlines() == [
        "lmbias: error: debias method 'projection': transform returned GPT2LMHeadModel, not a lmbias.debias.methods.Projection"]
    assert not (tmp_path / "r").exists()
    with pytest.raises(ValueError, match=r"must give exactly one of \['loss_term', 'transform', 'adjust_decoding'\], got none"):
        DebiasMethod(name="nothing", description="")
    with pytest.raises(KeyError, match=r"unknown debias method 'projection'; valid: \['cda', 'embedding', 'inlp'"):
        get_method("projection")


def test_plumbing_lora_trains_an_adapter_and_saves_the_merged_model(tiny, corpus, tmp_path):
    debias(model=tiny, method="embedding", lam=1.0, train_file=corpus, out=tmp_path / "lora", lora=True, **SMALL)
    merged, base = _weights(tmp_path / "lora"), _weights(tiny)
    assert set(merged) == set(base)  # no adapter weights left: merged into the model
    assert not torch.equal(merged["transformer.h.0.attn.c_attn.weight"], base["transformer.h.0.attn.c_attn.weight"])
    assert torch.equal(merged["transformer.wte.weight"], base["transformer.wte.weight"])  # not a LoRA target
    assert json.loads((tmp_path / "lora" / "debias.json").read_text())["settings"]["lora"] is True


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("extra, message", [
    (["--lambda", "-1"], "lambda must be a number >= 0"),
    (["--lambda", "1", "--attributes", "country"], "attribute 'country' has no texts in"),
    (["--lambda", "1", "--steps", "0"], "steps must be >= 1"),
    (["--lambda", "inf"], "lambda must be a finite number, got inf"),  # issue 24: every weight was NaN, exit 0
    (["--lambda", "nan"], "lambda must be a finite number, got nan"),
    (["--lambda", "1", "--learning-rate", "inf"], "--learning-rate must be a finite number, got inf"),
    (["--lambda", "1", "--learning-rate", "1e39"], "--learning-rate must be a number in (0, 1], got 1e+39"),
    (["--lambda", "1", "--sentiment-distance", "probability"],
     "--sentiment-distance is an option of --method sentiment, not of --method embedding"),  # issue 25: was ignored
])
def test_debias_mistakes_are_one_line(tiny, corpus, tmp_path, capsys, extra, message):
    assert main(["debias", "--model", tiny, "--method", "embedding", "--train-file", str(corpus), "--out", str(tmp_path / "r"),
                 *extra]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("lmbias: error: ")]
    assert len(errors) == 1 and message in errors[0], errors
    assert not (tmp_path / "r").exists()
    if "country" in message:
        assert "(found: country 0)" in errors[0]


def test_a_diverging_training_stops_with_one_line_naming_the_step(tiny, corpus, tmp_path, capsys):
    """Issue 24: a loss that is not finite (here λ = 1e300 makes it inf at once) stops the run with one
    line naming the step; no model (with NaN weights) is saved."""
    out = tmp_path / "r"
    assert main(["debias", "--model", tiny, "--method", "embedding", "--lambda", "1e300", "--train-file", str(corpus),
                 "--attributes", "occupation", "--steps", "6", "--batch-size", "4", "--checkpoint-every", "2",
                 "--max-length", "16", "--eval-limit", "0", "--no-progress", "--out", str(out)]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("lmbias: error: ")]
    assert errors == [f"lmbias: error: debias stopped at step 1: the loss (inf) is not finite (try a lower --learning-rate or "
                      f"--lambda, with another --out); no checkpoint was written to {out} and no model was saved"]
    assert json.loads((out / "debias.json").read_text())["status"] == "training"
    assert not (out / "model.safetensors").exists() and not list(out.glob("checkpoints/step-*"))


def test_a_training_that_diverges_later_keeps_its_last_good_checkpoint(tiny, corpus, tmp_path, monkeypatch):
    """Weights that turn NaN after the step-2 checkpoint (as an overflowing update leaves them): step 3's
    loss stops the run, step-2 is kept byte for byte, and no later checkpoint or model is written."""
    from safetensors.torch import load_file

    save, kept = training._checkpoint, {}

    def save_then_diverge(accelerator, out, step):
        save(accelerator, out, step)
        if step == 2:
            kept.update({p.name: p.read_bytes() for p in (out / "checkpoints" / "step-2").iterdir() if p.is_file()})
            with torch.no_grad():
                next(accelerator._models[0].parameters()).fill_(float("nan"))

    monkeypatch.setattr(training, "_checkpoint", save_then_diverge)
    out = tmp_path / "r"
    with pytest.raises(ValueError) as caught:
        debias(model=tiny, method="embedding", lam=1.0, train_file=corpus, out=out, **SMALL)
    assert str(caught.value) == ("debias stopped at step 3: the loss (nan) is not finite (try a lower --learning-rate or --lambda, "
                                 f"with another --out); {out} keeps its last good checkpoint (step-2) and no model was saved")
    assert [p.name for p in (out / "checkpoints").iterdir()] == ["step-2"]
    assert {p.name: p.read_bytes() for p in (out / "checkpoints" / "step-2").iterdir() if p.is_file()} == kept
    assert all(torch.isfinite(w).all() for w in load_file(out / "checkpoints" / "step-2" / "model.safetensors").values())
    assert not (out / "model.safetensors").exists()


def test_perplexity_without_a_sensitive_text_says_so_and_writes_no_nan(tiny, corpus, tmp_path, capsys):
    """Issue 24: PPL_s printed "nan" and perplexity.json held NaN when no held-out text has a sensitive token."""
    out = tmp_path / "run"
    assert main(["perplexity", "--model", tiny, "--train-file", str(corpus), "--attributes", "country", "--out", str(out)]) == 0
    text = (out / "perplexity.json").read_text()
    saved = json.loads(text, parse_constant=lambda name: pytest.fail(f"perplexity.json holds {name}"))
    reason = "no held-out text has a sensitive token (country)"
    assert saved["ppl_s"] == {"ppl": None, "tokens": 0, "texts": 0, "reason": reason}
    assert saved["ppl"]["ppl"] > 1 and saved["ppl"]["texts"] == sum(is_held_out(t) for t in corpus.read_text().splitlines() if t)
    printed = capsys.readouterr().out
    assert f"| PPL_s (those with a sensitive token) | none ({reason}) | 0 | 0 |" in printed and "nan" not in printed


def test_a_corpus_that_is_not_text_is_named_with_its_line(tmp_path):
    binary = tmp_path / "data.bin"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(ValueError, match=r"data.bin is not UTF-8 text \(byte 0\)"):
        load_corpus(binary)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"text": "a nurse"}\n{"body": "x"}\n')
    with pytest.raises(ValueError, match=r"rows.jsonl line 2: expected an object with a string 'text'"):
        load_corpus(rows)
    with pytest.raises(ValueError, match="no such file"):
        load_corpus(tmp_path / "missing.txt")


def test_a_model_without_a_causal_head_is_refused(tmp_path, corpus):
    from transformers import BertForMaskedLM

    (tmp_path / "bert").mkdir()
    save_tiny_bert(tmp_path / "bert", BertForMaskedLM, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "nurse"])
    with pytest.raises(ValueError, match="causal"):
        debias(model=str(tmp_path / "bert"), method="embedding", lam=1.0, train_file=corpus, out=tmp_path / "r", **SMALL)
    assert not (tmp_path / "r" / "model.safetensors").exists()


def test_an_output_folder_is_never_overwritten(tiny, corpus, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="holds other files \\(notes.txt\\); give a new or empty folder"):
        debias(model=tiny, method="embedding", lam=1.0, train_file=corpus, out=other, **SMALL)
    done = tmp_path / "done"
    debias(model=tiny, method="embedding", lam=1.0, train_file=corpus, out=done, **SMALL)
    before = (done / "model.safetensors").read_bytes()
    with pytest.raises(ValueError, match="holds a finished debiased model .* never overwritten"):
        debias(model=tiny, method="embedding", lam=1.0, train_file=corpus, out=done, **SMALL)
    with pytest.raises(ValueError, match="holds an unfinished debias run with other settings"):
        (done / "debias.json").write_text(json.dumps({"status": "training", "settings": {"lam": 5.0}}))
        debias(model=tiny, method="embedding", lam=1.0, train_file=corpus, out=done, **SMALL)
    assert (done / "model.safetensors").read_bytes() == before


def test_plumbing_the_report_compares_a_baseline_with_debiased_models(tiny, corpus, tmp_path):
    """The paper's Figure 4 / 5 comparison: I.F. / G.F. beside PPL and PPL_s, each model named with how it was made."""
    from lmbias.benchmarks.counterfactual import BENCHMARK as COUNTERFACTUAL
    from lmbias.benchmarks.declared import run_task
    from lmbias.report import build_report

    debias(model=tiny, method="embedding", lam=1.0, train_file=corpus, out=tmp_path / "embed", **SMALL)
    runs = []
    for name, model in (("base", tiny), ("embed", str(tmp_path / "embed"))):
        run = tmp_path / f"run-{name}"
        save_run(run_task(COUNTERFACTUAL, model=model, out=run, attributes=["country"], samples=2, max_new_tokens=4,
                          progress=False, classifiers=["vader"], no_similarity=True))
        assert main(["perplexity", "--model", model, "--train-file", str(corpus), "--out", str(run)]) == 0
        runs.append(run)
    page = build_report(runs, tmp_path / "report").read_text()
    assert "<th>PPL</th>" in page and "<th>PPL_s</th>" in page and "(embedding, λ = 1)" in page
    ppl = json.loads((runs[1] / "perplexity.json").read_text())["ppl"]["ppl"]
    assert f">{ppl:.2f}</td>" in page


def test_plumbing_two_processes_share_each_batch(tiny, corpus, tmp_path):
    """`torchrun --nproc_per_node 2 -m lmbias debias` (what `accelerate launch` starts): each process
    takes half of every batch (gloo on CPU) and the main one saves the model."""
    import subprocess
    import sys

    out = tmp_path / "two"
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
               "--master_port", "29531", "-m", "lmbias", "debias", "--model", tiny, "--method", "embedding", "--lambda", "1",
               "--train-file", str(corpus), "--attributes", "occupation", "--steps", "4", "--batch-size", "4",
               "--checkpoint-every", "2", "--max-length", "16", "--eval-limit", "0", "--device", "cpu", "--no-progress",
               "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    state = json.loads((out / "debias.json").read_text())
    assert state["status"] == "finished" and state["processes"] == 2
    assert not torch.equal(_weights(out)["transformer.h.0.attn.c_attn.weight"], _weights(tiny)["transformer.h.0.attn.c_attn.weight"])


def test_a_dataset_corpus_needs_a_text_column(tmp_path):
    """--train-dataset goes through datasets.load_dataset (a Hub id; here a local folder, which it reads the same way)."""
    import datasets

    good, bad = tmp_path / "good", tmp_path / "bad"
    datasets.Dataset.from_dict({"text": ["A nurse.", " ", "An editor."]}).to_parquet(str(good / "train.parquet"))
    datasets.Dataset.from_dict({"body": ["A nurse."]}).to_parquet(str(bad / "train.parquet"))
    texts, source = load_corpus(train_dataset=str(good))
    assert texts == ["A nurse.", "An editor."] and source == f"{good} (train split)"
    with pytest.raises(ValueError, match=r"has no 'text' column \(it has \['body'\]\)"):
        load_corpus(train_dataset=str(bad))
    with pytest.raises(ValueError, match="give --train-file or --train-dataset, not both"):
        load_corpus(tmp_path / "x.txt", str(good))
