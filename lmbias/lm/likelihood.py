"""Batched log-likelihood scoring with an already loaded model and its tokenizer.

Causal LMs: :func:`token_logprobs` (each token of a text) and :func:`continuation_logprobs` (a
continuation's tokens given a context). Masked LMs: :func:`pseudo_log_likelihood` (Salazar et al.
2020), :func:`masked_position_logprobs` (StereoSet intrasentence, Nadeem et al. 2021, §7.1) and
:func:`next_sentence_probability` (BERT's next-sentence-prediction head).

Shared conventions:

- Log-probabilities are natural logs, float32, returned in input order as a :class:`TokenLogprobs`
  (a list with one array per item, plus ``.sum``, ``.mean`` and ``.n_tokens``).
- Sequences are sorted by length (longest first) and cut into batches of ``batch_size`` sequences,
  right-padded with an attention mask. Real tokens keep positions ``0..n-1``, so padding does not
  change the numbers, and the pad id is irrelevant: the tokenizer's pad token if it has one, else 0
  (a tokenizer without a pad token, like GPT-2's, works as is).
- A sequence longer than the model takes (:func:`lmbias.lm.loading.context_length`) raises a
  ValueError naming the item and both lengths; nothing is truncated, so no score is silently computed on part of a text.
- The model runs on its own device (its inputs go to :func:`~lmbias.lm.placement.input_device`) under
  ``torch.inference_mode()``, in eval mode
  (dropout off); its training flag is restored afterwards.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .. import progress
from ..checks import check_choice, check_scalar, check_texts
from ..errors import InputError, InputTypeError
from .adjustments import SELF_DEBIAS_ATTRIBUTE
from .loading import context_length
from .placement import input_device

PREFIXES = ("bos", "bos-first", None)
STRATEGIES = ("left_to_right", "all_at_once")


class TokenLogprobs(list):
    """One float32 array of token log-probabilities per item, in input order, with summaries.

    >>> scores = TokenLogprobs([np.array([-1.0, -3.0], np.float32), np.zeros(0, np.float32)])
    >>> scores.sum.tolist(), scores.mean.tolist(), scores.n_tokens.tolist()
    ([-4.0, 0.0], [-2.0, nan], [2, 0])
    """

    @property
    def sum(self) -> np.ndarray:
        """Per item, the total log-probability (0.0 for an item with no scored token), float32."""
        return np.array([np.sum(item, dtype=np.float64) for item in self], dtype=np.float32)

    @property
    def n_tokens(self) -> np.ndarray:
        """Per item, the number of scored tokens, int64."""
        return np.array([len(item) for item in self], dtype=np.int64)

    @property
    def mean(self) -> np.ndarray:
        """Per item, the mean log-probability per scored token (NaN when none), float32."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return (self.sum.astype(np.float64) / self.n_tokens).astype(np.float32)


# --------------------------------------------------------------------------- causal LMs


def token_logprobs(
    model: Any, tokenizer: Any, texts: Sequence[str], *, batch_size: int = 32, prefix: str | None = "bos"
) -> TokenLogprobs:
    """Log-probability of each token of each text under a causal LM.

    Texts are tokenised without special tokens. With ``prefix="bos"`` (default) one start token is
    prepended so that the first token is scored too: the tokenizer's BOS token, else its EOS token
    (GPT-2's ``<|endoftext|>``, the convention of the StereoSet authors' code). With ``prefix=None``
    nothing is prepended and the first token, having no context, is not scored (``n - 1`` values).
    With ``prefix="bos-first"`` the first token is scored given the start token alone and the others
    given the text's own earlier tokens, without the start token: the StereoSet authors' scheme
    (their ``eval_generative_models.py`` scores the first token from ``<|endoftext|>`` and the rest
    from a second pass over the sentence alone).

    Raises:
        ValueError: a text is longer than the model takes (the message names the index and lengths);
            ``prefix="bos"`` with a tokenizer that has neither a BOS nor an EOS token.

    Example, with ``AutoModelForCausalLM`` / ``AutoTokenizer`` loaded from e.g. ``"gpt2"``::

        scores = token_logprobs(model, tokenizer, ["The nurse is kind.", "Hi"])
        scores[1]    # float32 array, one log-prob per token of "Hi" (the first given <|endoftext|>)
        scores.mean  # float32 array, the mean per text
    """
    texts = check_texts(texts, "texts")
    check_scalar(batch_size, "batch_size", minimum=1, expected="an integer >= 1")
    start = _start_tokens(tokenizer, "bos" if prefix == "bos-first" else prefix)
    encoded = _encode(tokenizer, texts)
    if prefix == "bos-first":
        _check_lengths(model, tokenizer, [len(ids) for ids in encoded], lambda i: f"texts[{i}]")
        # Every first token is predicted from the start token alone: one short pass per distinct first token.
        firsts = sorted({ids[0] for ids in encoded if ids})
        first_items = [_causal_item(start + [t], 1) for t in firsts]
        first_logprob = dict(zip(firsts, _gathered_logprobs(model, tokenizer, first_items, batch_size, causal=True)))
        rest = _gathered_logprobs(model, tokenizer, [_causal_item(ids, 1) for ids in encoded], batch_size, causal=True)
        return TokenLogprobs([np.concatenate([first_logprob[ids[0]] if ids else r[:0], r]) for ids, r in zip(encoded, rest)])
    sequences = [start + ids for ids in encoded]
    _check_lengths(model, tokenizer, [len(s) for s in sequences], lambda i: f"texts[{i}]")
    items = [_causal_item(sequence, 1) for sequence in sequences]
    return TokenLogprobs(_gathered_logprobs(model, tokenizer, items, batch_size, causal=True))


def continuation_logprobs(
    model: Any,
    tokenizer: Any,
    contexts: Sequence[str],
    continuations: Sequence[str],
    *,
    batch_size: int = 32,
    separator: str = " ",
    prefix: str | None = "bos",
) -> TokenLogprobs:
    """Log-probabilities of each continuation's tokens given its context, under a causal LM.

    The text ``context + separator + continuation`` is tokenised as a whole (so the continuation is
    tokenised as it would be in running text) and ``prefix`` is prepended as in
    :func:`token_logprobs`. The boundary: the context is also tokenised alone, and the
    continuation's tokens are the whole text's tokens after the longest common prefix of the two.
    When the boundary is clean this is exactly the continuation's tokens (with the separator, e.g.
    GPT-2's leading space, inside its first token). A token that straddles the boundary (a context
    ending mid-word, ``"the nur" + "" + "se"`` -> ``" nurse"``) belongs to the continuation and is
    scored given the context tokens before it. So in all cases the values are the tail of
    ``token_logprobs`` of the whole text, and with a clean boundary
    ``token_logprobs(contexts).sum + continuation_logprobs(...).sum`` is the whole text's sum.

    Raises:
        ValueError: mismatched lengths; a context + continuation longer than the model takes; a
            context with no tokens while ``prefix=None`` (the continuation's first token would have
            nothing to be conditioned on).

    Example (a causal LM and its tokenizer)::

        scores = continuation_logprobs(model, tokenizer, ["The nurse said"], ["she was tired."])
        scores[0]    # log-probs of " she", " was", " tired", "." given "<|endoftext|>The nurse said"
    """
    contexts = check_texts(contexts, "contexts")
    continuations = check_texts(continuations, "continuations")
    _check_same_length(contexts, continuations, "contexts", "continuations")
    check_scalar(batch_size, "batch_size", minimum=1, expected="an integer >= 1")
    items = _continuation_items(tokenizer, contexts, continuations, separator, prefix)
    _check_lengths(model, tokenizer, [len(item[0]) for item in items], lambda i: f"contexts[{i}] + continuations[{i}]")
    return TokenLogprobs(_gathered_logprobs(model, tokenizer, items, batch_size, causal=True))


def reply_logprobs(lm: Any, requests: Sequence[str], replies: Sequence[str], *, batch_size: int = 32):
    """Likelihood in the chat template: each reply's token log-probabilities as the assistant's answer
    to its request (the user's message; :data:`lmbias.lm.chat.SENTENCE_REQUEST` for a lone sentence, the
    request of :data:`lmbias.lm.chat.DEFAULT_INSTRUCTION` for a continuation), given the rendered template up to the opening of
    the assistant's turn (:func:`continuation_logprobs`, no start token added: the template writes
    its own). ``lm.chat`` must be set (a chat run)."""
    contexts = [lm.chat.render(lm.tokenizer, request) for request in requests]
    return continuation_logprobs(lm.model, lm.tokenizer, contexts, list(replies), batch_size=batch_size, separator="",
                                 prefix=None)


def option_logprobs(
    model: Any,
    tokenizer: Any,
    contexts: Sequence[str],
    options: Sequence[Sequence[str]],
    *,
    batch_size: int = 32,
    separator: str = " ",
    prefix: str | None = "bos",
) -> list[TokenLogprobs]:
    """Per context, the log-probabilities of each of its options' tokens given it: the values of
    :func:`continuation_logprobs` for every (context, option) pair, with the context's tokens computed
    once for all its options.

    Each context's tokens are run once and their key / value cache is reused by each of its options
    (with transformers models that keep one; a model without it, such as a state-space model, and a
    backend that scores whole sequences, such as vLLM or a server, score each pair as
    :func:`continuation_logprobs` does). ``batch_size`` counts contexts.

    Returns:
        One :class:`TokenLogprobs` per context, with one array per option, in input order.

    Raises:
        ValueError: as :func:`continuation_logprobs`; a context without options.

    Example (a causal LM and its tokenizer)::

        scores = option_logprobs(model, tokenizer, ["Q: Who was late?\\nA:"], [["The nurse", "The doctor", "Unknown"]])
        scores[0].sum    # three summed log-probabilities, one per answer
    """
    contexts = check_texts(contexts, "contexts")
    options = list(options) if options is not None and not isinstance(options, (str, bytes)) and hasattr(options, "__iter__") else options
    if options is None or isinstance(options, (str, bytes)) or not isinstance(options, list) or len(options) != len(contexts):
        raise InputError(f"options must hold one list of options per context ({len(contexts)}), got "
                         f"{len(options) if isinstance(options, Sequence) else type(options).__name__}")
    options = [check_texts(choices, f"options[{i}]") for i, choices in enumerate(options)]
    check_scalar(batch_size, "batch_size", minimum=1, expected="an integer >= 1")
    owner = [i for i, choices in enumerate(options) for _ in choices]
    items = _continuation_items(tokenizer, [contexts[i] for i in owner], [o for choices in options for o in choices],
                                separator, prefix, lambda k: f"contexts[{owner[k]}]")
    _check_lengths(model, tokenizer, [len(item[0]) for item in items], lambda k: f"contexts[{owner[k]}] + its option")
    values = None if hasattr(model, "prompt_logprobs") else _shared_prefix_logprobs(model, tokenizer, items, owner, batch_size)
    if values is None:  # a backend that scores whole sequences, or a model without a key / value cache to reuse
        values = _gathered_logprobs(model, tokenizer, items, batch_size * max(map(len, options)), causal=True)
    grouped: list[list[np.ndarray]] = [[] for _ in contexts]
    for i, value in zip(owner, values):
        grouped[i].append(value)
    return [TokenLogprobs(group) for group in grouped]


def _continuation_items(tokenizer: Any, contexts: list[str], continuations: list[str], separator: str,
                        prefix: str | None, where=lambda index: f"contexts[{index}]") -> list[tuple[list[int], list[int], list[int]]]:
    """The scored item of each context + continuation (see :func:`continuation_logprobs` for the
    boundary); ``where(index)`` names a pair's context in an error."""
    if not isinstance(separator, str):
        raise InputTypeError(f"separator must be a string, got {type(separator).__name__}")
    if prefix == "bos-first":
        raise InputError("prefix='bos-first' is for token_logprobs; continuation scorers take 'bos' or None")
    start = _start_tokens(tokenizer, prefix)
    joined = [context + separator + continuation for context, continuation in zip(contexts, continuations)]
    items = []
    for index, (context_ids, ids) in enumerate(zip(_encode(tokenizer, contexts), _encode(tokenizer, joined))):
        shared = 0
        while shared < min(len(context_ids), len(ids)) and context_ids[shared] == ids[shared]:
            shared += 1
        first = len(start) + shared
        if first == 0 and ids:
            raise InputError(
                f"{where(index)} ({contexts[index]!r}) has no tokens and prefix=None: the continuation's first "
                "token has nothing to be conditioned on; use prefix='bos'"
            )
        items.append(_causal_item(start + ids, max(first, 1)))
    return items


def _shared_prefix_logprobs(model: Any, tokenizer: Any, items: list[tuple[list[int], list[int], list[int]]],
                            owner: list[int], batch_size: int) -> list[np.ndarray] | None:
    """:func:`_gathered_logprobs` of causal ``items`` whose sequences of one ``owner`` share a start: per owner,
    the tokens before the first scored one that all its sequences share run once (batched over
    ``batch_size`` owners, left-padded, with the LM head on the last position only), and each
    sequence's rest runs on a copy of that cache, at its own positions, with the prefix's padding
    masked out. None when that cannot be done: an owner with no token to share (nothing before its first
    scored token), or a model whose output holds no transformers ``Cache`` to reuse."""
    import torch

    groups: dict[int, list[int]] = {}
    for k, i in enumerate(owner):
        groups.setdefault(i, []).append(k)
    plan = []  # (member sequence indices, shared length)
    for members in groups.values():
        sequences = [items[k][0] for k in members]
        # never past a scored token, and at least one token of each sequence left for its own pass
        shared = min(min(len(s) - len(items[k][2]), len(s) - 1) for k, s in zip(members, sequences))
        while any(len(s) < shared or s[:shared] != sequences[0][:shared] for s in sequences):
            shared -= 1
        if shared < 1:
            return None
        plan.append((members, shared))
    out = [np.zeros(0, dtype=np.float32) for _ in items]
    order = sorted(range(len(plan)), key=lambda g: -max(len(items[k][0]) for k in plan[g][0]))
    pad = _pad_id(tokenizer)
    device = input_device(model)
    accepted = inspect.signature(model.forward).parameters
    if "position_ids" not in accepted:  # a model without positions (a state-space model) keeps no cache to reuse
        return None
    if getattr(model, SELF_DEBIAS_ATTRIBUTE, None) is not None:  # Self-Debias adjusts whole sequences, not cached tails
        return None
    keep_last = {"logits_to_keep": 1} if "logits_to_keep" in accepted else {}
    cache_name = "cache" if "cache" in accepted else "past_key_values"  # transformers >= 5.24 renames it
    with _scoring(model), progress.bar(len(items), "likelihood", unit="seq") as shown:
        for start in range(0, len(order), batch_size):
            chosen = [plan[g] for g in order[start:start + batch_size]]
            lengths = [shared for _, shared in chosen]
            width = max(lengths)
            # left-padded, so that every prefix ends at the last position and only its logits are computed
            ids = torch.tensor([[pad] * (width - n) + items[m[0]][0][:n] for m, n in chosen], device=device)
            mask = torch.tensor([[0] * (width - n) + [1] * n for n in lengths], device=device)
            positions = torch.tensor([[0] * (width - n) + list(range(n)) for n in lengths], device=device)
            output = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, **keep_last)
            last = _token_logits(output)[:, -1].float().log_softmax(-1)
            rows = [(g, k) for g, (members, _) in enumerate(chosen) for k in members]
            cache = getattr(output, "cache", None) or getattr(output, "past_key_values", None)
            if not hasattr(cache, "reorder_cache"):  # e.g. a state-space model's own cache: no prefix to reuse
                return None
            cache.reorder_cache(torch.tensor([g for g, _ in rows], device=device))
            tails = [items[k][0][chosen[g][1]:] for g, k in rows]
            tail_width = max(len(t) for t in tails)
            tail_ids = torch.tensor([t + [pad] * (tail_width - len(t)) for t in tails], device=device)
            tail_mask = torch.tensor([[1] * len(t) + [0] * (tail_width - len(t)) for t in tails], device=device)
            positions = torch.tensor([[chosen[g][1] + j for j in range(tail_width)] for g, _ in rows], device=device)
            logits = _token_logits(model(input_ids=tail_ids, attention_mask=torch.cat([mask[[g for g, _ in rows]], tail_mask], 1),
                                         position_ids=positions, use_cache=True, **{cache_name: cache})).float().log_softmax(-1)
            for r, (g, k) in enumerate(rows):
                shared = chosen[g][1]
                sequence, _, targets = items[k]
                first = len(sequence) - len(targets)
                values = [float(last[g, sequence[shared]]) if t == shared else float(logits[r, t - shared - 1, sequence[t]])
                          for t in range(first, len(sequence))]
                out[k] = np.array(values, dtype=np.float32)
            shown.update(len(rows))
    return out


def _start_tokens(tokenizer: Any, prefix: str | None) -> list[int]:
    check_choice(prefix, PREFIXES, "prefix")
    if prefix is None:
        return []
    token = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    if token is None:
        raise InputError(f"prefix='bos' but {type(tokenizer).__name__} has neither a BOS nor an EOS token; pass prefix=None")
    return [token]


def _causal_item(sequence: list[int], first: int) -> tuple[list[int], list[int], list[int]]:
    """Score ``sequence[first:]``: token ``t`` is predicted by the logits at position ``t - 1``."""
    return sequence, list(range(first - 1, len(sequence) - 1)), sequence[first:]


# --------------------------------------------------------------------------- masked LMs


def pseudo_log_likelihood(model: Any, tokenizer: Any, texts: Sequence[str], *, batch_size: int = 32) -> TokenLogprobs:
    """Pseudo-log-likelihood terms of each text under a masked LM (Salazar et al. 2020).

    Each token (special tokens such as ``[CLS]``/``[SEP]`` excluded) is masked in turn and the
    log-probability of the original token at that position is kept. ``.sum`` is the PLL of the
    paper. All (text, position) copies are batched together: ``batch_size`` masked copies per
    forward pass, whichever texts they come from.

    Example (``AutoModelForMaskedLM`` / ``AutoTokenizer`` of e.g. ``"bert-base-cased"``)::

        pseudo_log_likelihood(model, tokenizer, ["The nurse is kind.", "He is kind."]).sum  # PLL per text
    """
    texts = check_texts(texts, "texts")
    check_scalar(batch_size, "batch_size", minimum=1, expected="an integer >= 1")
    mask = _mask_token_id(tokenizer)
    encoded = tokenizer(texts, return_special_tokens_mask=True)
    _check_lengths(model, tokenizer, [len(ids) for ids in encoded["input_ids"]], lambda i: f"texts[{i}]")
    items, owners = [], []
    for index, (ids, special) in enumerate(zip(encoded["input_ids"], encoded["special_tokens_mask"])):
        for position, token in enumerate(ids):
            if not special[position]:
                items.append((ids[:position] + [mask] + ids[position + 1 :], [position], [token]))
                owners.append(index)
    return _regroup(_gathered_logprobs(model, tokenizer, items, batch_size, causal=False), owners, len(texts))


def masked_position_logprobs(
    model: Any,
    tokenizer: Any,
    texts_with_blank: Sequence[str],
    fillers: Sequence[str],
    *,
    blank: str = "BLANK",
    strategy: str = "left_to_right",
    batch_size: int = 32,
) -> TokenLogprobs:
    """Log-probabilities of a filler's subwords at the blank of a text, under a masked LM.

    StereoSet intrasentence scoring for masked LMs (Nadeem et al. 2021, §7.1). The text is
    tokenised with the blank replaced by one mask token; the filler is tokenised alone, without
    special tokens (for byte-level BPE tokenizers such as RoBERTa's, pass ``" " + word`` to get the
    word-initial form). Then, at the token level:

    - ``strategy="left_to_right"`` (default; what the StereoSet authors' code does): one sequence
      per subword ``k``, with subwords ``0..k-1`` in place followed by one mask (later subwords
      absent), scoring subword ``k`` at that mask. Their code builds the same thing as a string
      (``decode(subwords[:k]) + mask``) and re-tokenises it; building it from token ids avoids a
      re-tokenisation that can split the prefix differently.
    - ``strategy="all_at_once"``: one sequence with as many masks as the filler has subwords, all
      predicted in the same forward pass.

    Returns one value per subword. ``.mean`` is the mean log-probability; the StereoSet authors'
    own score is the mean of the probabilities, ``[np.exp(x).mean() for x in result]``.

    Raises:
        ValueError: a text does not contain ``blank`` exactly once, or already contains the mask
            token; a filler with no tokens; mismatched lengths; a sequence too long for the model.

    Example (a masked LM and its tokenizer)::

        scores = masked_position_logprobs(model, tokenizer, ["The BLANK is kind."] * 2, ["nurse", "plumber"])
        scores[1]    # one log-prob per subword of "plumber" at the blank
    """
    texts = check_texts(texts_with_blank, "texts_with_blank")
    fillers = check_texts(fillers, "fillers")
    _check_same_length(texts, fillers, "texts_with_blank", "fillers")
    check_choice(strategy, STRATEGIES, "strategy")
    check_scalar(batch_size, "batch_size", minimum=1, expected="an integer >= 1")
    if not isinstance(blank, str) or not blank:
        raise InputError(f"blank must be a non-empty string, got {blank!r}")
    mask = _mask_token_id(tokenizer)
    for index, text in enumerate(texts):
        if text.count(blank) != 1:
            raise InputError(
                f"texts_with_blank[{index}] contains {blank!r} {text.count(blank)} times; expected exactly once: {text!r}"
            )
    templates = tokenizer([text.replace(blank, tokenizer.mask_token) for text in texts])["input_ids"]
    items, owners, lengths = [], [], []
    for index, (ids, filler) in enumerate(zip(templates, _encode(tokenizer, fillers))):
        where = [position for position, token in enumerate(ids) if token == mask]
        if len(where) != 1:
            raise InputError(
                f"texts_with_blank[{index}] has {len(where)} mask tokens once the blank is replaced; expected 1 "
                f"(does the text itself contain {tokenizer.mask_token!r}?): {texts[index]!r}"
            )
        if not filler:
            raise InputError(f"fillers[{index}] ({fillers[index]!r}) has no tokens")
        left, right = ids[: where[0]], ids[where[0] + 1 :]
        if strategy == "all_at_once":
            steps = [(left + [mask] * len(filler) + right, list(range(len(left), len(left) + len(filler))), filler)]
        else:
            steps = [(left + filler[:k] + [mask] + right, [len(left) + k], [filler[k]]) for k in range(len(filler))]
        items += steps
        owners += [index] * len(steps)
        lengths.append(len(left) + len(filler) + len(right))
    _check_lengths(model, tokenizer, lengths, lambda i: f"texts_with_blank[{i}] with fillers[{i}]")
    return _regroup(_gathered_logprobs(model, tokenizer, items, batch_size, causal=False), owners, len(texts))


def next_sentence_probability(
    model: Any, tokenizer: Any, first: Sequence[str], second: Sequence[str], *, batch_size: int = 32
) -> np.ndarray:
    """Probability that ``second[i]`` follows ``first[i]``, from a next-sentence-prediction head.

    The pair is tokenised as BERT was trained (``[CLS] first [SEP] second [SEP]``, segment ids 0/1);
    the result is ``softmax(seq_relationship_logits)[:, 0]`` (index 0 = "is next" in BERT), float32.
    The model must have an NSP head: ``BertForPreTraining`` or ``BertForNextSentencePrediction``.

    Raises:
        TypeError: the model has no NSP head (e.g. ``BertForMaskedLM``); never a silent fallback.

    Example (``BertForPreTraining.from_pretrained("bert-base-cased")`` and its tokenizer)::

        next_sentence_probability(model, tokenizer, ["He is a nurse."], ["He is kind."])  # float32, shape (1,)
    """
    first = check_texts(first, "first")
    second = check_texts(second, "second")
    _check_same_length(first, second, "first", "second")
    check_scalar(batch_size, "batch_size", minimum=1, expected="an integer >= 1")
    encoded = tokenizer(first, second)
    keys = [key for key in ("input_ids", "token_type_ids") if key in encoded]
    encodings = [dict(zip(keys, values)) for values in zip(*(encoded[key] for key in keys))]
    _check_lengths(model, tokenizer, [len(e["input_ids"]) for e in encodings], lambda i: f"first[{i}] + second[{i}]")
    out = np.empty(len(first), dtype=np.float32)
    with _scoring(model):
        for index, batch in _batches(encodings, batch_size, _pad_id(tokenizer), input_device(model)):
            out[index] = _nsp_logits(model, model(**batch)).float().softmax(-1)[:, 0].cpu().numpy()
    return out


def _token_logits(output: Any) -> Any:
    """Per-token logits of a model output: ``logits``, or ``prediction_logits`` of a pre-training
    model (e.g. ``BertForPreTraining``, which has both the masked-LM and the NSP head)."""
    logits = getattr(output, "logits", None)
    return logits if logits is not None else output.prediction_logits


def _nsp_logits(model: Any, output: Any) -> Any:
    from transformers.modeling_outputs import NextSentencePredictorOutput

    if getattr(output, "seq_relationship_logits", None) is not None:
        return output.seq_relationship_logits
    if isinstance(output, NextSentencePredictorOutput):
        return output.logits
    raise InputTypeError(
        f"{type(model).__name__} has no next-sentence-prediction head (its output {type(output).__name__} has no "
        "seq_relationship_logits); load the checkpoint with BertForPreTraining or BertForNextSentencePrediction"
    )


def _mask_token_id(tokenizer: Any) -> int:
    if getattr(tokenizer, "mask_token_id", None) is None:
        raise InputError(f"{type(tokenizer).__name__} has no mask token; a masked language model's tokenizer is needed")
    return tokenizer.mask_token_id


def _regroup(values: list[np.ndarray], owners: list[int], n_items: int) -> TokenLogprobs:
    """Concatenate per-sequence values into one array per item (sequences are in item order)."""
    parts: list[list[np.ndarray]] = [[] for _ in range(n_items)]
    for value, owner in zip(values, owners):
        parts[owner].append(value)
    return TokenLogprobs(np.concatenate(p) if p else np.zeros(0, dtype=np.float32) for p in parts)


# --------------------------------------------------------------------------- shared plumbing


def _gathered_logprobs(
    model: Any, tokenizer: Any, items: list[tuple[list[int], list[int], list[int]]], batch_size: int, *, causal: bool
) -> list[np.ndarray]:
    """For each ``(input_ids, rows, targets)``: ``log_softmax(logits[rows])[targets]`` as float32.

    The one forward loop of the causal and masked scorers; items with nothing to score skip it.
    """
    import torch

    out = [np.zeros(0, dtype=np.float32) for _ in items]
    todo = [i for i, item in enumerate(items) if item[1]]
    if hasattr(model, "prompt_logprobs"):  # a vLLM engine or a served model: the backend scores whole sequences
        if not causal:
            raise InputError(f"masked-LM scoring (pseudo-log-likelihood, next-sentence prediction) needs --backend hf, "
                             f"not {model.info.get('backend')}")
        values = model.prompt_logprobs([items[i][0] for i in todo])
        for i, value in zip(todo, values):
            out[i] = np.asarray(value, dtype=np.float32)[items[i][1]]
        return out
    encodings = [{"input_ids": items[i][0]} for i in todo]
    extra = {"use_cache": False} if causal else {}
    with _scoring(model):
        for index, batch in _batches(encodings, batch_size, _pad_id(tokenizer), input_device(model)):
            chosen = [items[todo[k]] for k in index]
            sizes = [len(rows) for _, rows, _ in chosen]
            logits = _token_logits(model(**batch, **extra))  # on the last device of a model split over several
            where = torch.tensor([[j, row] for j, (_, rows, _) in enumerate(chosen) for row in rows], device=logits.device)
            targets = torch.tensor([t for _, _, ts in chosen for t in ts], device=logits.device)
            logits = logits[where[:, 0], where[:, 1]].float()
            values = logits.log_softmax(-1).gather(1, targets[:, None])[:, 0].cpu().numpy()
            for k, value in zip(index, np.split(values, np.cumsum(sizes)[:-1])):
                out[todo[k]] = value
    return out


def _batches(
    encodings: list[dict[str, list[int]]], batch_size: int, pad_id: int, device: Any
) -> Iterator[tuple[list[int], dict]]:
    """Yield ``(indices, inputs)``: longest first, right-padded (``pad_id`` for ids, 0 otherwise), with attention masks."""
    import torch

    order = sorted(range(len(encodings)), key=lambda i: -len(encodings[i]["input_ids"]))
    with progress.bar(len(order), "likelihood", unit="seq") as shown:
        for start in range(0, len(order), batch_size):
            index = order[start : start + batch_size]
            chosen = [encodings[i] for i in index]
            width = len(chosen[0]["input_ids"])
            batch = {}
            for key in chosen[0]:
                fill = pad_id if key == "input_ids" else 0
                batch[key] = torch.tensor([e[key] + [fill] * (width - len(e[key])) for e in chosen], device=device)
            lengths = [len(e["input_ids"]) for e in chosen]
            batch["attention_mask"] = torch.tensor([[1] * n + [0] * (width - n) for n in lengths], device=device)
            yield index, batch
            shown.update(len(index))


@contextlib.contextmanager
def _scoring(model: Any) -> Iterator[None]:
    """``torch.inference_mode()`` with the model in eval mode; its training flag is restored after."""
    import torch

    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            yield
    finally:
        model.train(was_training)


def _encode(tokenizer: Any, texts: list[str]) -> list[list[int]]:
    return [list(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]


def _pad_id(tokenizer: Any) -> int:
    """Any id works for padding (it is masked out); the pad token's if there is one."""
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0


def _check_lengths(model: Any, tokenizer: Any, lengths: list[int], describe: Any) -> None:
    limit = context_length(model, tokenizer)
    for index, length in enumerate(lengths):
        if limit is not None and length > limit:
            raise InputError(
                f"{describe(index)} is {length} tokens long (special and start tokens included) but the model takes at "
                f"most {limit}; shorten it (nothing is truncated, so that no score covers only part of a text)"
            )


def _check_same_length(a: list, b: list, name_a: str, name_b: str) -> None:
    if len(a) != len(b):
        raise InputError(f"{name_a} has {len(a)} items but {name_b} has {len(b)}; expected one {name_b} item per {name_a} item")

