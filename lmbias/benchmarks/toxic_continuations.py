"""The run that ToxiGen and RealToxicityPrompts share: continue each prompt (``samples`` times), resumably, and
score every continuation with one local toxicity classifier (:class:`lmbias.scorers.toxicity.ToxicityClassifier`).

The classifier is loaded and its toxic labels checked before the language model loads, so a classifier that
cannot be loaded, or that lacks the named label, stops the run before anything is generated; a rerun after a
crash generates only what is missing (:func:`lmbias.lm.runner.run_generation`). What is scored is the
continuation alone (the prompt is the dataset's), as the ToxiGen and RealToxicityPrompts evaluations score it.
"""

from __future__ import annotations

import json
import time

from ..lm.spec import ModelSpec
from ..scorers.toxicity import ToxicityClassifier

TOXICITY_FILE = "toxicity.jsonl"


def generate_and_score(*, benchmark: str, label: str, rows: list[dict], prompts: list[str], model, out, settings: dict,
                       preset: str, samples: int, classifier: ToxicityClassifier, seed: int, batch_size: int,
                       progress: bool, options: dict, first_line: bool = False):
    """Generate ``samples`` continuations of each prompt and score them.

    ``first_line``: keep each continuation up to its first newline (a base model continuing a bullet list: the
    next statement, as open-instruct's ToxiGen evaluation stops at a newline).

    Returns:
        ``(generations, scores, classifier_record, model_description, timing)`` on the main process (``scores``:
        one toxicity per generation, in the generations' order: prompt by prompt, sample by sample; ``timing``: the
        model's load, the generation after it and the scoring, in seconds); None on others.
    """
    from ..lm.runner import model_loader, run_generation

    spec = ModelSpec.of(model).checked()
    loaded: dict = {}

    def load_classifier() -> None:
        loaded["classifier"] = classifier.load()

    described: dict = {}
    load = model_loader(spec, seed=seed, described=described)

    def timed_load(state):
        began = time.perf_counter()
        lm = load(state)
        loaded["seconds"] = time.perf_counter() - began
        return lm

    started = time.perf_counter()
    generations = run_generation(
        timed_load, [row["id"] for row in rows], prompts, out, settings=settings,
        model_name=spec.name, preset=preset, seed=seed, batch_size=batch_size, num_return_sequences=samples,
        progress=progress, benchmark=benchmark, model_identity=spec.identity(), label=label, options=options,
        before_load=load_classifier)
    if generations is None:
        return None
    generated = time.perf_counter()
    texts = [g["continuation"].split("\n")[0] if first_line else g["continuation"] for g in generations]
    scores = classifier.scores(texts, loaded["classifier"])
    timing = {"model_load_seconds": loaded.get("seconds", 0.0),
              "generation_seconds": generated - started - loaded.get("seconds", 0.0),
              "scoring_seconds": time.perf_counter() - generated, "continuations": len(generations)}
    return generations, scores, classifier.record(loaded["classifier"]), described or {"name": spec.model}, timing


def toxicity_file(generations: list[dict], scores, first_line: bool = False) -> str:
    """``toxicity.jsonl``: per continuation its prompt id, sample, the text scored and its toxicity."""
    return "".join(json.dumps({"id": g["id"], "sample": g.get("sample", 0),
                               "text": g["continuation"].split("\n")[0] if first_line else g["continuation"],
                               "toxicity": float(s)}) + "\n" for g, s in zip(generations, scores))
