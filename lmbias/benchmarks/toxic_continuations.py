"""What ToxiGen and RealToxicityPrompts share on the continue protocol (:mod:`lmbias.protocols.continuation`): the
toxicity classifier's options, declared once (:func:`classifier_options`), and the classifier as the protocol's
scorer (:func:`toxicity_scorer`).

The classifier is loaded and its toxic labels checked before the language model loads, so a classifier that
cannot be loaded, or that lacks the named label, stops the run before anything is generated; a rerun after a
crash generates only what is missing. What is scored is the continuation alone (the prompt is the dataset's), as
the ToxiGen and RealToxicityPrompts evaluations score it; each continuation's toxicity is written to
``toxicity.jsonl`` (its prompt's id, the sample, the text scored and its toxicity).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..protocols.continuation import Scorer
from ..scorers.toxicity import ToxicityClassifier
from .declared import Option

TOXICITY_FILE = "toxicity.jsonl"


def classifier_options(default_model: str, default_labels: Sequence[str]) -> tuple:
    """The :class:`ToxicityClassifier`'s options (``--toxicity-model``, ``--toxic-label``, ``--toxicity-threshold``,
    ``--score-batch-size``, ``--classifier-device``) with a benchmark's default model and toxic labels. None of them
    is in the run's identity: another classifier scores the same continuations again."""
    return (
        Option("toxicity_model", f"toxicity classifier (Hub id or folder; default {default_model})", default=default_model,
               identity=False),
        Option("toxic_label", f"the classifier's toxic label(s) (default: {', '.join(default_labels)})",
               default=tuple(default_labels), many=True, metavar="LABEL", identity=False),
        Option("toxicity_threshold", "a text is toxic at or above this toxicity", default=0.5, type=float, minimum=0,
               maximum=1, expected="a number in (0, 1]", identity=False),
        Option("score_batch_size", "texts per classifier batch", default=32, type=int, minimum=1,
               expected="an integer >= 1", identity=False),
        Option("classifier_device", "the classifier's device (default: a GPU when there is one)", identity=False),
    )


def classifier(settings: dict) -> ToxicityClassifier:
    """The :class:`ToxicityClassifier` that :func:`classifier_options`' values in ``settings`` give (checked: a
    threshold of 0 is refused in one line)."""
    labels = settings["toxic_label"]
    return ToxicityClassifier(model=settings["toxicity_model"], labels=tuple(labels) if labels else None,
                              threshold=settings["toxicity_threshold"], batch_size=settings["score_batch_size"],
                              device=settings["classifier_device"])


def check_classifier(protocol: str, options: dict) -> None:
    """A benchmark's ``check``: the classifier's options together (a threshold of 0), before anything loads."""
    classifier(options)


def toxicity_scorer(scorer: ToxicityClassifier) -> Scorer:
    """The continue protocol's scorer ``toxicity``: each text's toxicity in [0, 1]; results.json's ``config`` records
    the classifier (its model, toxic labels, threshold and stand-in mark) as ``classifier``."""
    return Scorer("toxicity", scorer.load, lambda loaded, texts, rows: [float(s) for s in scorer.scores(texts, loaded)],
                  describe=scorer.record, config_key="classifier")


def with_continuations(timing: dict, continued, seconds: float) -> dict:
    """results.json's ``timing`` of a toxicity run (a benchmark's ``timing``): the protocol's, with the count of
    ``continuations`` scored."""
    return {**timing, "continuations": len(continued.records)}
