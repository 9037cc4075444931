"""How far a model's float32 outputs may be from each other: bounds derived from a float64 reference.

Two float32 computations of the same log-probabilities (shared prefixes or whole sequences, batched
or one at a time, vLLM or transformers, a KV cache reused or not) add and multiply in different
orders, and so round differently; which order a kernel takes depends on the CPU (AVX-512 or not),
the library and the batch's shape. Neither is more right: each is within float32 rounding of the
exact value. A test therefore does not compare the two paths with a tolerance tuned on one machine;
it bounds each path's distance to the float64 value and derives the comparison from that.

The bound, for a value that sums the log-probabilities of ``n`` tokens::

    |float32 value - float64 value| <= K * C * EPS32 * n + EPS32 * |value|

- ``EPS32 = 2**-23``, float32's machine epsilon.
- ``C``, the per-token constant of the model (in units of EPS32): the largest distance of one
  token's float32 log-probability to the same model's float64 log-probability (``model.double()``,
  the same inputs), measured on the tests' own inputs for each model family below, over every path
  the tests compare (each measurement is recorded beside its constant). A forward-error analysis
  gives the shape but not the size: each inner product of length ``d`` rounds by about
  ``sqrt(d) * EPS32 / 2`` of its terms' magnitude (Higham and Mary's probabilistic bound), and the
  2L + 1 matrix products of an L-layer model add such errors into the residual stream; how much the
  layers amplify them depends on the weights, so ``C`` is measured, not computed from ``d`` and L.
- ``n``: errors of summed tokens add (at worst linearly); a mean per token is bounded by one token's
  bound (``n = 1``), and so are a perplexity's logarithm and a probability (whose error is at most
  its logarithm's).
- ``EPS32 * |value|``: the value and the reference are each rounded to float32 when reported
  (``TokenLogprobs.sum`` is float32), half an ulp each.
- ``K = 4``: the constants are one machine's maxima (an AMD EPYC without AVX-512, where issue 47's
  tuned tolerances failed; no other CPU family was reachable when they were measured). Another CPU's
  kernels round in other orders, with errors of the same origin and size, and the largest of many
  tokens' errors varies with the inputs: a factor of 4 covers that, and keeps the bound far below
  what a wrong mask, position or cache entry changes (0.1 and more per token). A machine where a
  path exceeds the bound fails with its measured EPS32 per token, to be recorded here.

Two float32 paths are then within twice the bound of each other (each is within the bound of the
same float64 value), and they take the same decisions (which option has the highest score) wherever
the float64 margin between the best two options exceeds twice the bound.
"""

from __future__ import annotations

import copy

import numpy as np

EPS32 = 2.0**-23
K = 4

# Per-token constants C, in units of EPS32: the largest |float32 - float64| of one token's log-probability
# measured on the tests' inputs (AMD EPYC, no AVX-512, torch 2.13.0+cpu; docs/reliability.md has the table), rounded
# up to a power of two.
# The random 2-layer, 32-wide models with initializer_range 0.5 that test_likelihood, test_shared_prefixes and
# test_stereoset_task build: measured 112 (Llama), 86 (GPT-2) on the tokens they score, 61 (BERT, every vocabulary entry).
TINY_RANDOM = 128
# tests/tiny_lm.py's GPT-2 (the same shape, its own vocabulary): measured 400 on the next tokens of 38 random sequences of
# 2 to 39 tokens.
TINY_LM = 512
# The embedded SmolLM2-135M-Instruct (30 layers, 576 wide): measured 244 (shared prefixes) and 172 (whole sequences) on
# test_shared_prefixes' benchmark items; 296 (vLLM, prefix cache reused or not) and 288 (transformers) on the 150-token
# sequences of test_vllm_backend's prefix-cache test.
SMOLLM2_135M = 512


def bound(tokens, per_token: float, value=0.0) -> np.ndarray:
    """The largest distance of a float32 value summing ``tokens`` log-probabilities (1 for one token
    or a mean per token) to its float64 value, for a model of per-token constant ``per_token``
    (:data:`TINY_RANDOM`, :data:`TINY_LM`, :data:`SMOLLM2_135M`): ``K * per_token * EPS32 * tokens + EPS32 * |value|``."""
    tokens = np.maximum(np.asarray(tokens, dtype=np.float64), 1)
    return K * per_token * EPS32 * tokens + EPS32 * np.abs(np.asarray(value, dtype=np.float64))


def float64_copy(model):
    """A copy of a torch model in float64 (the reference; the model itself is left as it is)."""
    return copy.deepcopy(model).double()


def per_token_eps(values, reference, tokens) -> float:
    """The largest distance of ``values`` to ``reference`` per summed token, in units of EPS32 (what
    the constants above record, and what a failure reports)."""
    distance = np.abs(np.asarray(values, dtype=np.float64) - np.asarray(reference, dtype=np.float64))
    return float(np.max(distance / np.maximum(np.asarray(tokens, dtype=np.float64), 1), initial=0.0) / EPS32)


def assert_near_float64(values, reference, tokens, per_token: float, what: str = "") -> None:
    """Each float32 value within :func:`bound` of its float64 reference (arrays of one shape;
    ``tokens``: how many log-probabilities each value sums, broadcast against them)."""
    values, reference = np.asarray(values, dtype=np.float64), np.asarray(reference, dtype=np.float64)
    assert values.shape == reference.shape, (what, values.shape, reference.shape)
    allowed = bound(np.broadcast_to(tokens, reference.shape), per_token, reference)
    far = np.abs(values - reference) > allowed
    measured = per_token_eps(values, reference, np.broadcast_to(tokens, reference.shape))
    assert not far.any(), (f"{what}: {int(far.sum())} of {far.size} values farther from the float64 value than "
                           f"{K} x {per_token} x EPS32 per token ({measured:.0f} EPS32 per token measured): "
                           f"{values[far][:5]} vs {reference[far][:5]}")


def assert_two_paths_agree(a, b, tokens, per_token: float, what: str = "") -> None:
    """Two float32 computations of the same values within twice :func:`bound` of each other (each is
    within the bound of the same float64 value), for when the float64 value is not computed."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, (what, a.shape, b.shape)
    allowed = 2 * bound(np.broadcast_to(tokens, a.shape), per_token, np.maximum(np.abs(a), np.abs(b)))
    far = np.abs(a - b) > allowed
    measured = per_token_eps(a, b, np.broadcast_to(tokens, a.shape))
    assert not far.any(), (f"{what}: {int(far.sum())} of {far.size} values differ by more than twice {K} x {per_token} x "
                           f"EPS32 per token ({measured:.0f} EPS32 per token apart): {a[far][:5]} vs {b[far][:5]}")


def assert_same_decisions(scores, reference, tokens, per_token: float, what: str = "", *, float32_reference: bool = False) -> None:
    """Rows of option scores (one row per item): the float32 path picks the option the float64
    reference picks wherever the reference's margin between its best two options exceeds twice the
    bound (there rounding cannot change the winner); with ``float32_reference`` (the reference is
    another float32 path, itself within the bound), wherever it exceeds four times the bound."""
    scores, reference = np.asarray(scores, dtype=np.float64), np.asarray(reference, dtype=np.float64)
    if reference.ndim != 2 or reference.shape[1] < 2:
        return
    ordered = np.sort(reference, axis=1)
    margin = ordered[:, -1] - ordered[:, -2]
    allowed = bound(np.broadcast_to(tokens, reference.shape), per_token, reference).max(axis=1)
    clear = margin > (4 if float32_reference else 2) * allowed
    differ = clear & (scores.argmax(axis=1) != reference.argmax(axis=1))
    assert not differ.any(), f"{what}: rows {np.flatnonzero(differ).tolist()} decide otherwise than the float64 reference"
