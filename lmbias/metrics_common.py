"""What the evaluate modules in ``metrics/`` share.

A module subclasses :class:`TextMeasurement` through this module (``metrics_common.TextMeasurement``,
never ``from ... import TextMeasurement``: evaluate takes the first measurement class it finds in
the module's namespace as the module's class).
"""

import datasets
import evaluate

from .checks import check_texts
from .data.bold import SPEC as BOLD_SPEC

BOLD_CITATION = BOLD_SPEC.citation + "\n"

# Only ``predictions`` is a feature: evaluate requires every feature on every call, so ``groups``
# and the options are keyword arguments of ``compute``.
TEXT_FEATURES = datasets.Features({"predictions": datasets.Value("string")})


class TextMeasurement(evaluate.Measurement):
    """An evaluate measurement over a list of texts, with lmbias's input checks.

    ``predictions`` is checked before evaluate encodes it: evaluate would otherwise turn NaN
    into the string "nan" and score it silently.
    """

    def compute(self, *, predictions=None, **kwargs):
        """Check ``predictions`` (a non-empty list of strings), then compute as evaluate does."""
        return super().compute(predictions=check_texts(predictions, "predictions"), **kwargs)


def measurement_info(
    description: str, citation: str, inputs_description: str, reference_urls: list, features=TEXT_FEATURES
) -> evaluate.MeasurementInfo:
    """The ``MeasurementInfo`` of an lmbias module (by default one whose input is a list of texts)."""
    return evaluate.MeasurementInfo(
        module_type="measurement",
        description=description,
        citation=citation,
        inputs_description=inputs_description,
        features=features,
        reference_urls=reference_urls,
    )


def classifier_result(scores, labels, label_names, probabilities, classifier, groups=None) -> dict:
    """:func:`lmbias.stats.label_result` plus ``label_probabilities``: {model label: probability per text}."""
    from .stats import label_result

    result = label_result(scores, labels=labels, label_names=label_names, groups=groups)
    result["label_probabilities"] = {label: probabilities[:, i].tolist() for i, label in enumerate(classifier.labels)}
    return result


def cached_classifier(module: evaluate.EvaluationModule, default_model: str, *, device=None, dtype=None):
    """The classifier a classifier-based module uses: ``config_name`` names it (a Hub id or a local
    folder; evaluate's "default" means ``default_model``). Loaded on first use and kept on the module."""
    from .scorers.classifier import load_classifier

    name = default_model if module.config_name == "default" else module.config_name
    key = (name, device, dtype)
    cache = module.__dict__.setdefault("_lmbias_classifiers", {})
    if key not in cache:
        cache[key] = load_classifier(name, device=device, dtype=dtype)
    return cache[key]
