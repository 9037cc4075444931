"""The protocols as objects (lmbias.protocols): the embed protocol on a tiny random GPT-2 (plumbing: the numbers
of a random model mean nothing, only that each item gets its own texts' vectors as a float64 reference computes
them one text at a time), its run folder (identity written, another configuration refused, the suite's check
stopping before the model loads), and what it refuses before any model is looked at."""

import json

import numpy as np
import pytest
import torch
import transformers

from lmbias.errors import InputError
from lmbias.lm.runner import RunConfigError
from lmbias.lm.spec import ModelSpec
from lmbias.protocols import EMBED, PROTOCOLS, REGISTRY, get_protocol
from lmbias.protocols.embedding import Embeddings
from lmbias.run_result import RunResult

from tiny_lm import save_tiny_causal_lm

TEXTS = [["the man was a nurse", "the woman", "the man was a nurse"], ["the woman", "an actress known for her best role"]]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_causal_lm(tmp_path_factory.mktemp("tiny-embed"))


def _reference(folder: str, text: str, normalize: bool) -> np.ndarray:
    """The text alone through the base model in float64: its last hidden state's mean over the tokens (unit length)."""
    model = transformers.AutoModelForCausalLM.from_pretrained(folder).double().eval()
    ids = transformers.AutoTokenizer.from_pretrained(folder)(text, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        mean = model.base_model(input_ids=ids).last_hidden_state[0].mean(dim=0).numpy()
    return mean / np.linalg.norm(mean) if normalize else mean


def _answer(tiny, out, request, **changed):
    settings = {"out": out, "benchmark": "toy", "run_config": {"limit": 2}, "batch_size": 2, "seed": 0, "progress": False,
                "label": "toy: embedding", **changed}
    rows = [{"id": "a"}, {"id": "b"}]
    return EMBED.answer(ModelSpec(tiny, device="cpu"), rows, request, **settings)


def test_embed_is_a_registered_protocol_but_no_protocol_choice():
    assert get_protocol("embed") is EMBED and REGISTRY["embed"] is EMBED
    assert PROTOCOLS == ("likelihood", "generate")  # what --protocol chooses between; embed is a benchmark's only one
    assert EMBED.records_file is None and not EMBED.reads_replies and not EMBED.takes_template
    result = RunResult(benchmark="toy", out="x", model={}, data={}, config={}, results={}, partial={}, timing={})
    assert EMBED.finish("x", result, [{"id": "a"}]) is result and result.files == {} and result.outputs == {}
    with pytest.raises(InputError, match=r"^protocol must be one of \['likelihood', 'generate', 'continue', 'embed', 'judge'\]"):
        get_protocol("embedding")


@pytest.mark.parametrize("normalize", [True, False])
def test_plumbing_embed_gives_each_item_its_texts_vectors_each_text_encoded_once(tiny, tmp_path, normalize):
    records, model, placement, timing = _answer(tiny, tmp_path / "run", Embeddings(TEXTS, normalize=normalize))
    assert [r["id"] for r in records] == ["a", "b"] and [r["embeddings"].shape for r in records] == [(3, 32), (2, 32)]
    assert all(r["embeddings"].dtype == np.float32 for r in records)
    for record, texts in zip(records, TEXTS):
        expected = np.stack([_reference(tiny, text, normalize) for text in texts])
        # float32 through 2 layers of width 32 against float64: a few float32 epsilons of the values' size
        tolerance = 64 * np.finfo(np.float32).eps * max(1.0, np.abs(expected).max())
        assert np.abs(record["embeddings"] - expected).max() < tolerance
    # a text given twice (in one item, in two) is encoded once: the very same vector
    assert np.array_equal(records[0]["embeddings"][0], records[0]["embeddings"][2])
    assert np.array_equal(records[0]["embeddings"][1], records[1]["embeddings"][0])
    assert timing["texts_encoded"] == 3 and timing["encoding_seconds"] > 0
    assert model["type"] == "causal" and placement["device"] == "cpu"
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["benchmark"] == "toy"
    assert saved["config"] == {"model": tiny, "model_type": "auto", "dtype": None, "limit": 2, "batch_size": 2}
    assert list(saved["config"]) == ["model", "model_type", "dtype", "limit", "batch_size"]  # the order config.json keeps
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["config.json"]  # no per-item file, no shards


def test_embed_checks_its_folder_before_the_model_loads(tiny, tmp_path, monkeypatch):
    out = tmp_path / "run"
    _answer(tiny, out, Embeddings(TEXTS))
    written = (out / "config.json").read_bytes()

    def no_load(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(ModelSpec, "load", no_load)
    with pytest.raises(RunConfigError, match=r"another configuration \(batch_size: recorded 2, now 4\)"):
        _answer(tiny, out, Embeddings(TEXTS), batch_size=4)
    with pytest.raises(RunConfigError, match=r"another configuration \(model_type: recorded 'auto', now 'causal'\)"):
        _answer(tiny, out, Embeddings(TEXTS, model_type="causal"))
    # the protocol's check (the suite's, of every run before the first loads): nothing loaded, nothing written
    assert _answer(tiny, tmp_path / "new", Embeddings(TEXTS), check_only=True) == (None, None, None, None)
    with pytest.raises(RunConfigError, match=r"another configuration \(batch_size: recorded 2, now 4\)"):
        _answer(tiny, out, Embeddings(TEXTS), batch_size=4, check_only=True)
    assert (out / "config.json").read_bytes() == written and not (tmp_path / "new").exists()


@pytest.mark.parametrize("spec, message", [
    (ModelSpec("m", backend="openai", options={"base_url": "http://127.0.0.1:1/v1"}),
     "--backend openai: Toy embeds texts with the model's hidden states, which only --backend hf (transformers in this "
     "process) gives"),
    (ModelSpec("m", chat=True), "--chat: Toy embeds the raw sentences; a chat template has no place in it"),
])
def test_embed_refuses_a_model_without_hidden_states_by_its_options_alone(spec, message):
    with pytest.raises(InputError) as refused:
        EMBED.refuse_model(spec, "Toy")
    assert str(refused.value) == message
    assert get_protocol("likelihood").refuse_model(spec, "Toy") is None  # the other protocols refuse no model this way


def test_embed_refuses_a_kind_or_texts_it_was_not_given_before_writing(tiny, tmp_path):
    with pytest.raises(InputError, match=r"^toy embeds with masked LMs; .* is a causal LM \(--model-type auto\)$"):
        _answer(tiny, tmp_path / "run", Embeddings(TEXTS, kinds=("masked",)))
    with pytest.raises(InputError, match=r"^request.texts has 1 items' texts for 2 rows; expected one list per row$"):
        _answer(tiny, tmp_path / "run", Embeddings(TEXTS[:1]))
    assert not (tmp_path / "run").exists()
