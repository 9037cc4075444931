"""SEAT (May et al. 2019) with a language model, as bias-bench runs it: every distinct example of the
chosen tests embedded once (:func:`lmbias.benchmarks.seat.encode.sentence_embeddings`), then each
test's effect size and permutation p-value (:func:`lmbias.benchmarks.seat.measure.seat_test`) and the
mean |effect size| per bias type and over the tests. Its own run, not a declared Task
(:mod:`lmbias.benchmarks.declared`): it embeds sentences (the representation protocol), which no
other benchmark does.

The examples of a set are distinct, as in bias-bench (its encodings are a dict keyed by the text): an
example given twice in a set counts once, and ``n`` in the results counts the distinct ones. A test
whose two target sets then differ in size is refused, naming its file (none of the shipped files is).

A run takes seconds to minutes, so it does not resume part-way: it checks its ``--out`` before the
model loads (a folder holding another benchmark's run, or a SEAT run with other settings, is refused)
and writes ``results.json`` at the end.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from ...checks import check_choice, check_choices, check_scalar
from ...errors import InputError
from ...lm.adjustments import recorded_adjustment
from ...lm.backends import DEFAULT_BACKEND
from ...lm.loading import MODEL_TYPES
from ...lm.processes import process_state
from ...lm.runner import check_run_dir, claim_run_dir
from ...lm.spec import ModelSpec
from ...progress import showing
from ...resources import ResourceError, locate
from ...run_lock import holds_run_directory
from ...run_result import RunResult, coverage, model_description
from .data import BIAS_BENCH_COMMIT, BIAS_TYPES, DEFAULT_TESTS, SETS, SPEC, TESTS, bias_type, load_test
from .encode import sentence_embeddings
from .measure import seat_test, summarize

ENCODING = ("mean over all token positions of the base model's last hidden state (each text alone, the tokenizer's "
            "default special tokens), divided by its L2 norm: bias-bench's _encode")


def distinct_sets(test: str, data_dir=None) -> dict[str, dict]:
    """A test's four sets with each example once (first occurrence order): ``{set: {"category", "examples"}}``.

    Raises:
        ResourceError: its two target sets differ in size (the permutation test needs as many of each); names the file.
    """
    sets = {name: {"category": block["category"], "examples": list(dict.fromkeys(block["examples"]))}
            for name, block in load_test(test, data_dir).items()}
    x, y = len(sets["targ1"]["examples"]), len(sets["targ2"]["examples"])
    if x != y:
        raise ResourceError(f"{locate(f'seat/{test}', data_dir)}: targ1 has {x} distinct examples but targ2 has {y}; SEAT's "
                            "permutation test needs as many of each")
    return sets


@holds_run_directory
def run_seat(
    *,
    model: ModelSpec | str | None = None,
    out="runs/seat",
    tests: Sequence[str] = DEFAULT_TESTS,
    model_type: str = "auto",
    n_samples: int = 100_000,
    batch_size: int = 32,
    seed: int = 0,
    progress: bool = True,
    data_dir=None,
) -> RunResult | None:
    """SEAT with a model; returns the run (written by :func:`lmbias.benchmarks.save_run` or the command line).

    Args:
        model: a :class:`~lmbias.lm.spec.ModelSpec` (or a model name; None: the embedded default) on the
            ``hf`` backend (hidden states come from transformers in this process); a causal or masked LM.
        tests: test names (:data:`~lmbias.benchmarks.seat.data.TESTS`); default bias-bench's 17.
        model_type: "auto" (from the checkpoint's config), "causal" or "masked".
        n_samples: the permutation test's partitions (exact below this many; bias-bench's 100,000).
        batch_size: texts per forward pass.
        seed: seeds the sampled partitions.
        progress: show a progress bar while encoding.

    Returns:
        The run (:class:`~lmbias.run_result.RunResult`) on the main process, None on the others.
    """
    spec = ModelSpec.of(model)
    if spec.backend != DEFAULT_BACKEND:
        raise InputError(f"--backend {spec.backend}: SEAT embeds texts with the model's hidden states, which only "
                         f"--backend {DEFAULT_BACKEND} (transformers in this process) gives")
    if spec.chat:
        raise InputError("--chat: SEAT embeds the raw sentences; a chat template has no place in it")
    if (recorded_adjustment(spec.model, spec.revision) or {}).get("kind") == "self_debias":
        raise InputError(f"--model {spec.model} is self-debiased, which changes what it generates and scores, not its hidden "
                         "states: SEAT would measure the model it was made from (run SEAT on that one)")
    tests = check_choices(tests, TESTS, "tests")
    check_choice(model_type, MODEL_TYPES, "model_type")
    check_scalar(n_samples, "n_samples", minimum=1)
    check_scalar(batch_size, "batch_size", minimum=1)
    check_scalar(seed, "seed", minimum=0)
    sets = {test: distinct_sets(test, data_dir) for test in tests}
    spec = spec.checked()
    kind = spec.scoring_kind(model_type)
    state = process_state()
    config = {"model": spec.model, "model_type": model_type, "dtype": spec.dtype, "tests": list(tests), "n_samples": n_samples,
              "seed": seed, "batch_size": batch_size, **spec.identity()}
    check_run_dir(Path(out), config, state, "seat")
    lm = spec.load(state, seed=seed, kind=kind)
    claim_run_dir(Path(out), config, state, "seat")
    if not state.is_main_process:
        return None
    texts = list(dict.fromkeys(text for test in sets.values() for block in test.values() for text in block["examples"]))
    started = time.perf_counter()
    with showing(progress, "SEAT"):
        vectors = dict(zip(texts, sentence_embeddings(lm, texts, batch_size=batch_size)))
    encoded = time.perf_counter()
    found = {}
    for test, blocks in sets.items():
        result = seat_test(*([vectors[text] for text in blocks[name]["examples"]] for name in SETS), n_samples=n_samples, seed=seed)
        found[test] = {"bias_type": bias_type(test), **result, "categories": {name: blocks[name]["category"] for name in SETS}}
    reported = sum(test in DEFAULT_TESTS for test in tests)
    return RunResult(
        benchmark="seat", out=str(out), model=model_description(lm, type=kind),
        data={"dataset": "seat", "split": "test", "revision": BIAS_BENCH_COMMIT, "citation": SPEC.citation,
              "counts": {"tests": len(tests), "texts": len(texts)}},
        config={"tests": list(tests), "model_type": model_type, "n_samples": n_samples, "seed": seed, "batch_size": batch_size,
                "dtype": spec.dtype, "encoding": ENCODING, "device": str(lm.device) if lm.device is not None else None,
                **spec.recorded()},
        results={"tests": found, **summarize(found, BIAS_TYPES)},
        partial=coverage({"bias-bench tests": (reported, len(DEFAULT_TESTS))}, f"--tests {' '.join(tests)}"),
        timing={"encoding_seconds": encoded - started, "testing_seconds": time.perf_counter() - encoded, "texts_encoded": len(texts)},
    )
