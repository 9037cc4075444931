"""Likelihood scoring on tiny random models built here (no real model is available offline).

Values are checked against hand computations from single unbatched forward passes, so the tests
check the arithmetic (shifts, masks, gathering, padding, order), not what a real model would say.
"""

import math

import numpy as np
import pytest
import tokenizers
import torch
import transformers
from tokenizers import decoders, models, pre_tokenizers, trainers

from lmbias.lm import likelihood as lk

import tolerances
from tiny_lm import save_tiny_bert

TINY = tolerances.TINY_RANDOM  # the per-token float32 rounding of these 2-layer, 32-wide random models

CORPUS = [
    "the nurse is kind and the doctor is tall",
    "a nurse was here and he said that she was tired",
    "the man is tall, the woman is strong.",
]
TEXTS = [
    "the nurse is kind",
    "he",
    "a nurse was here and he said that she was tired and the doctor is tall and the man is strong",
    "",
    "the woman is tall.",
]

# ---------------------------------------------------------------- tiny causal LM (GPT-2 style)


@pytest.fixture(scope="module")
def gpt2():
    """A byte-level BPE tokenizer trained here (``<|endoftext|>`` as BOS/EOS, no pad token) and a
    2-layer random GPT-2 taking at most 64 positions."""
    bpe = tokenizers.Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(CORPUS * 10, trainer)
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<|endoftext|>", eos_token="<|endoftext|>")
    config = transformers.GPT2Config(
        n_layer=2, n_embd=32, n_head=2, vocab_size=len(tokenizer), n_positions=64, initializer_range=0.5,
        bos_token_id=0, eos_token_id=0,
    )
    torch.manual_seed(0)
    return transformers.GPT2LMHeadModel(config).eval(), tokenizer


def by_hand(model, ids):
    """Log-probabilities of ids[1:] from one unpadded forward pass of ``model`` in float64 (the
    reference each float32 path is bounded against: tests/tolerances.py)."""
    with torch.no_grad():
        logprobs = tolerances.float64_copy(model)(torch.tensor([ids])).logits[0].log_softmax(-1)
    return logprobs[torch.arange(len(ids) - 1), torch.tensor(ids[1:])].numpy()


def test_token_logprobs_equal_a_full_forward_pass(gpt2):
    model, tokenizer = gpt2
    assert tokenizer.bos_token_id == 0  # <|endoftext|>
    scores = lk.token_logprobs(model, tokenizer, TEXTS, batch_size=2)
    for text, got in zip(TEXTS, scores):
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        assert got.dtype == np.float32 and len(got) == len(ids)
        if ids:
            tolerances.assert_near_float64(got, by_hand(model, [0] + ids), 1, TINY, text)
    no_prefix = lk.token_logprobs(model, tokenizer, TEXTS, prefix=None)
    for text, got in zip(TEXTS, no_prefix):
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        assert len(got) == max(len(ids) - 1, 0)
        if len(ids) > 1:
            tolerances.assert_near_float64(got, by_hand(model, ids), 1, TINY, text)


def test_bos_falls_back_to_eos_and_no_start_token_is_an_error(gpt2):
    model, tokenizer = gpt2
    without_bos = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer.backend_tokenizer, eos_token="<|endoftext|>")
    assert without_bos.bos_token_id is None
    np.testing.assert_array_equal(
        lk.token_logprobs(model, without_bos, ["he said"])[0], lk.token_logprobs(model, tokenizer, ["he said"])[0]
    )
    neither = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer.backend_tokenizer)
    with pytest.raises(ValueError, match="neither a BOS nor an EOS"):
        lk.token_logprobs(model, neither, ["he said"])
    n = len(neither("he said", add_special_tokens=False)["input_ids"])
    assert len(lk.token_logprobs(model, neither, ["he said"], prefix=None)[0]) == n - 1


def test_plumbing_batched_equals_one_at_a_time_in_input_order_without_pad_token(gpt2):
    model, tokenizer = gpt2
    assert tokenizer.pad_token is None
    batched = lk.token_logprobs(model, tokenizer, TEXTS, batch_size=3)
    single = [lk.token_logprobs(model, tokenizer, [text], batch_size=1)[0] for text in TEXTS]
    assert [len(b) for b in batched] == [len(s) for s in single]
    for b, s in zip(batched, single):
        tolerances.assert_two_paths_agree(b, s, 1, TINY, "batched vs one at a time")
    means = np.array([s.mean() if len(s) else np.nan for s in single])
    assert np.array_equal(np.isnan(batched.mean), np.isnan(means))
    tolerances.assert_two_paths_agree(batched.mean[~np.isnan(means)], means[~np.isnan(means)], 1, TINY, "means")
    contexts, continuations = TEXTS[:3], ["was tired", "said that", "she"]
    batched = lk.continuation_logprobs(model, tokenizer, contexts, continuations, batch_size=2)
    for i, got in enumerate(batched):
        alone = lk.continuation_logprobs(model, tokenizer, [contexts[i]], [continuations[i]], batch_size=1)[0]
        tolerances.assert_two_paths_agree(got, alone, 1, TINY, contexts[i])


def test_summaries_sum_mean_and_token_counts(gpt2):
    model, tokenizer = gpt2
    scores = lk.token_logprobs(model, tokenizer, ["the nurse is kind", ""])
    assert scores.n_tokens.tolist() == [len(scores[0]), 0]
    assert scores.sum[0] == pytest.approx(float(scores[0].sum()), abs=1e-5) and scores.sum[1] == 0.0
    assert scores.mean[0] == pytest.approx(float(scores[0].mean()), abs=1e-6) and math.isnan(scores.mean[1])
    assert scores.sum.dtype == scores.mean.dtype == np.float32


def test_continuation_plus_context_equals_the_whole_text_on_a_clean_boundary(gpt2):
    model, tokenizer = gpt2
    contexts, continuations = ["the nurse", "he said that", "a"], ["is kind", "she was tired", "nurse was here"]
    whole = lk.token_logprobs(model, tokenizer, [c + " " + x for c, x in zip(contexts, continuations)])
    context = lk.token_logprobs(model, tokenizer, contexts)
    continuation = lk.continuation_logprobs(model, tokenizer, contexts, continuations)
    for i, text in enumerate(continuations):
        # the continuation's tokens are those of " " + continuation (the space inside the first token)
        assert continuation.n_tokens[i] == len(tokenizer(" " + text, add_special_tokens=False)["input_ids"])
    tolerances.assert_two_paths_agree(context.sum + continuation.sum, whole.sum, whole.n_tokens, TINY, "sums")
    tolerances.assert_two_paths_agree(np.concatenate([context[0], continuation[0]]), whole[0], 1, TINY, "tokens")


def test_a_token_straddling_the_boundary_belongs_to_the_continuation(gpt2):
    model, tokenizer = gpt2
    whole_ids = tokenizer("the nurse", add_special_tokens=False)["input_ids"]
    context_ids = tokenizer("the nur", add_special_tokens=False)["input_ids"]
    assert whole_ids[:1] == context_ids[:1] and whole_ids[1] != context_ids[1]  # " nurse" vs " nu" "r"
    got = lk.continuation_logprobs(model, tokenizer, ["the nur"], ["se"], separator="")[0]
    whole = lk.token_logprobs(model, tokenizer, ["the nurse"])[0]
    tolerances.assert_two_paths_agree(got, whole[1:], 1, TINY)  # " nurse", given <|endoftext|> "the"
    empty = lk.continuation_logprobs(model, tokenizer, ["the nurse"], [""], separator="")
    assert empty.n_tokens.tolist() == [0]


def test_empty_context_needs_a_start_token(gpt2):
    model, tokenizer = gpt2
    got = lk.continuation_logprobs(model, tokenizer, [""], ["the nurse"], separator="")[0]
    tolerances.assert_two_paths_agree(got, lk.token_logprobs(model, tokenizer, ["the nurse"])[0], 1, TINY)
    with pytest.raises(ValueError, match=r"contexts\[0\].*prefix=None"):
        lk.continuation_logprobs(model, tokenizer, [""], ["the nurse"], separator="", prefix=None)


def test_too_long_text_is_an_error_naming_index_and_lengths(gpt2):
    model, tokenizer = gpt2
    long = " ".join(["the nurse is kind"] * 30)
    n = len(tokenizer(long, add_special_tokens=False)["input_ids"]) + 1
    with pytest.raises(ValueError, match=rf"texts\[1\] is {n} tokens long .* at most 64"):
        lk.token_logprobs(model, tokenizer, ["he", long])
    with pytest.raises(ValueError, match=r"contexts\[0\] \+ continuations\[0\] is \d+ tokens long .* at most 64"):
        lk.continuation_logprobs(model, tokenizer, [long], ["he"])


def test_model_in_training_mode_is_scored_without_dropout_and_left_as_it_was(gpt2):
    model, tokenizer = gpt2
    expected = lk.token_logprobs(model, tokenizer, TEXTS[:1])[0]
    model.config.resid_pdrop = 0.5
    model.train()
    try:
        np.testing.assert_allclose(lk.token_logprobs(model, tokenizer, TEXTS[:1])[0], expected, atol=1e-6)
        assert model.training
    finally:
        model.eval()


# ---------------------------------------------------------------- tiny masked LM (BERT style)

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = SPECIAL + "the man woman is was tall kind strong he she said a . nur ##se ##s doc ##tor".split()


def tiny_bert(tmp_path_factory, cls):
    return save_tiny_bert(tmp_path_factory.mktemp("bert"), cls, WORDS, max_positions=40)


@pytest.fixture(scope="module")
def bert_mlm(tmp_path_factory):
    return tiny_bert(tmp_path_factory, transformers.BertForMaskedLM)


@pytest.fixture(scope="module")
def bert_pretraining(tmp_path_factory):
    return tiny_bert(tmp_path_factory, transformers.BertForPreTraining)


def mlm_logprobs(model, ids, positions, targets):
    """log P(targets at positions) from one unpadded forward pass of ``model`` in float64 (the reference)."""
    with torch.no_grad():
        logprobs = tolerances.float64_copy(model)(torch.tensor([ids])).logits[0].log_softmax(-1)
    return np.array([logprobs[p, t].item() for p, t in zip(positions, targets)])


MLM_TEXTS = ["the nurse is kind.", "he", "the doctor said she was tall and the man was strong.", "", "the nurses"]


def test_pseudo_log_likelihood_equals_masking_one_position_at_a_time(bert_mlm):
    model, tokenizer = bert_mlm
    assert tokenizer.tokenize("the nurse") == ["the", "nur", "##se"]  # the vocabulary is really used
    scores = lk.pseudo_log_likelihood(model, tokenizer, MLM_TEXTS, batch_size=5)
    for text, got in zip(MLM_TEXTS, scores):
        ids = tokenizer(text)["input_ids"]
        expected = []
        for position in range(1, len(ids) - 1):  # not [CLS], not [SEP]
            masked = ids[:position] + [tokenizer.mask_token_id] + ids[position + 1 :]
            expected += mlm_logprobs(model, masked, [position], [ids[position]]).tolist()
        assert len(got) == len(ids) - 2
        tolerances.assert_near_float64(got, expected, 1, TINY, text)
    assert scores.n_tokens[3] == 0 and scores.sum[3] == 0.0


def test_plumbing_pseudo_log_likelihood_batched_equals_batch_size_one(bert_mlm):
    model, tokenizer = bert_mlm
    batched = lk.pseudo_log_likelihood(model, tokenizer, MLM_TEXTS, batch_size=7)
    single = lk.pseudo_log_likelihood(model, tokenizer, MLM_TEXTS, batch_size=1)
    assert np.array_equal(np.isnan(batched.mean), np.isnan(single.mean))
    scored = ~np.isnan(single.mean)
    tolerances.assert_two_paths_agree(batched.mean[scored], single.mean[scored], 1, TINY, "means")
    assert abs(batched.mean[0] - batched.mean[2]) > 1e-3  # different texts, different values: order kept


def test_masked_position_logprobs_left_to_right_and_all_at_once(bert_mlm):
    model, tokenizer = bert_mlm
    texts, fillers = ["the BLANK is kind.", "BLANK said she was tall", "the man BLANK"], ["nurse", "he", "doctors"]
    mask = tokenizer.mask_token_id
    left_to_right = lk.masked_position_logprobs(model, tokenizer, texts, fillers, batch_size=2)
    all_at_once = lk.masked_position_logprobs(model, tokenizer, texts, fillers, strategy="all_at_once", batch_size=2)
    for i, (text, filler) in enumerate(zip(texts, fillers)):
        before, after = text.split("BLANK")
        left = tokenizer(before)["input_ids"][:-1]  # [CLS] ... without [SEP]
        right = tokenizer(after)["input_ids"][1:]  # ... [SEP] without [CLS]
        sub = tokenizer(filler, add_special_tokens=False)["input_ids"]
        assert len(sub) == [2, 1, 3][i]  # nur ##se / he / doc ##tor ##s
        one_pass = mlm_logprobs(model, left + [mask] * len(sub) + right, range(len(left), len(left) + len(sub)), sub)
        tolerances.assert_near_float64(all_at_once[i], one_pass, 1, TINY, text)
        steps = [mlm_logprobs(model, left + sub[:k] + [mask] + right, [len(left) + k], [sub[k]])[0] for k in range(len(sub))]
        tolerances.assert_near_float64(left_to_right[i], steps, 1, TINY, text)
    tolerances.assert_two_paths_agree(left_to_right[1], all_at_once[1], 1, TINY)  # one subword: the same thing
    # several: the later masks matter (more than float32 rounding could)
    assert abs(left_to_right[2][0] - all_at_once[2][0]) > 2 * tolerances.bound(1, TINY, all_at_once[2][0])


def test_masked_position_errors(bert_mlm, gpt2):
    model, tokenizer = bert_mlm
    with pytest.raises(ValueError, match=r"texts_with_blank\[1\] contains 'BLANK' 0 times"):
        lk.masked_position_logprobs(model, tokenizer, ["the BLANK", "the man"], ["he", "she"])
    with pytest.raises(ValueError, match=r"texts_with_blank\[0\] contains 'BLANK' 2 times"):
        lk.masked_position_logprobs(model, tokenizer, ["BLANK BLANK"], ["he"])
    with pytest.raises(ValueError, match=r"texts_with_blank\[0\] has 2 mask tokens"):
        lk.masked_position_logprobs(model, tokenizer, ["[MASK] BLANK"], ["he"])
    with pytest.raises(ValueError, match=r"fillers\[0\] \(''\) has no tokens"):
        lk.masked_position_logprobs(model, tokenizer, ["the BLANK"], [""])
    with pytest.raises(ValueError, match="strategy must be one of"):
        lk.masked_position_logprobs(model, tokenizer, ["the BLANK"], ["he"], strategy="greedy")
    with pytest.raises(ValueError, match="has no mask token"):
        lk.pseudo_log_likelihood(gpt2[0], gpt2[1], ["he"])
    with pytest.raises(ValueError, match=r"texts\[0\] is \d+ tokens long .* at most 40"):
        lk.pseudo_log_likelihood(model, tokenizer, ["the man " * 30])


def test_next_sentence_probability_is_the_softmax_of_the_nsp_logits(bert_pretraining):
    model, tokenizer = bert_pretraining
    first, second = ["the man is tall.", "she", "he said"], ["he was kind.", "the nurse was strong and so tall.", "she"]
    got = lk.next_sentence_probability(model, tokenizer, first, second, batch_size=2)
    assert got.dtype == np.float32
    for i in range(3):
        encoded = tokenizer(first[i], second[i], return_tensors="pt")
        assert encoded["token_type_ids"].sum() > 0  # the second segment is marked
        with torch.no_grad():  # a probability's error is at most its logarithm's: one token's bound
            expected = tolerances.float64_copy(model)(**encoded).seq_relationship_logits.softmax(-1)[0, 0].item()
        tolerances.assert_near_float64(got[i], expected, 1, TINY, first[i])
    tolerances.assert_two_paths_agree(got, lk.next_sentence_probability(model, tokenizer, first, second, batch_size=1), 1, TINY)


def test_next_sentence_probability_with_an_nsp_only_model(tmp_path_factory):
    model, tokenizer = tiny_bert(tmp_path_factory, transformers.BertForNextSentencePrediction)
    got = lk.next_sentence_probability(model, tokenizer, ["the man"], ["is tall"])
    with torch.no_grad():
        expected = tolerances.float64_copy(model)(**tokenizer("the man", "is tall", return_tensors="pt")).logits.softmax(-1)[0, 0].item()
    tolerances.assert_near_float64(got[0], expected, 1, TINY)


def test_next_sentence_probability_needs_an_nsp_head(bert_mlm):
    model, tokenizer = bert_mlm
    with pytest.raises(TypeError, match="BertForMaskedLM has no next-sentence-prediction head"):
        lk.next_sentence_probability(model, tokenizer, ["the man"], ["is tall"])


# ---------------------------------------------------------------- input checks


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m, t: lk.token_logprobs(m, t, []), ValueError, "texts is empty"),
        (lambda m, t: lk.token_logprobs(m, t, "the man"), TypeError, "texts must be a list"),
        (lambda m, t: lk.token_logprobs(m, t, ["he", None]), TypeError, r"texts\[1\] is None"),
        (lambda m, t: lk.token_logprobs(m, t, ["he", float("nan")]), TypeError, r"texts\[1\] is NaN"),
        (lambda m, t: lk.token_logprobs(m, t, ["he"], prefix="eos"), ValueError, "prefix must be one of"),
        (lambda m, t: lk.token_logprobs(m, t, ["he"], batch_size=0), ValueError, "batch_size must be"),
        (lambda m, t: lk.continuation_logprobs(m, t, ["he"], ["a", "b"]), ValueError, "contexts has 1 items but continuations"),
        (lambda m, t: lk.continuation_logprobs(m, t, ["he"], [None]), TypeError, r"continuations\[0\] is None"),
        (lambda m, t: lk.continuation_logprobs(m, t, ["he"], ["a"], separator=None), TypeError, "separator must be a string"),
        (lambda m, t: lk.pseudo_log_likelihood(m, t, []), ValueError, "texts is empty"),
        (lambda m, t: lk.masked_position_logprobs(m, t, ["the BLANK"], []), ValueError, "fillers is empty"),
        (lambda m, t: lk.masked_position_logprobs(m, t, ["the BLANK"], ["a", "b"]), ValueError, "has 1 items but fillers has 2"),
        (lambda m, t: lk.next_sentence_probability(m, t, ["a"], ["b", "c"]), ValueError, "first has 1 items but second has 2"),
        (lambda m, t: lk.next_sentence_probability(m, t, [float("nan")], ["b"]), TypeError, r"first\[0\] is NaN"),
    ],
)
def test_bad_inputs_are_clear_errors_naming_the_argument(bert_mlm, call, error, message):
    with pytest.raises(error, match=message):
        call(*bert_mlm)
