"""What the evaluate modules in ``metrics/`` share.

A module subclasses :class:`TextMeasurement` through this module (``metrics_common.TextMeasurement``,
never ``from ... import TextMeasurement``: evaluate takes the first measurement class it finds in
the module's namespace as the module's class).
"""

import datasets
import evaluate

from .checks import check_groups, check_texts  # noqa: F401 (check_groups: also for the modules)
from .data.bold import SPEC as BOLD_SPEC
from .errors import InputError

BOLD_CITATION = BOLD_SPEC.citation + "\n"

# Only ``predictions`` is a feature: evaluate requires every feature on every call, so ``groups``
# and the options are keyword arguments of ``compute``.
TEXT_FEATURES = datasets.Features({"predictions": datasets.Value("string")})


class Measurement(evaluate.Measurement):
    """An evaluate measurement whose inputs also stream: ``add`` / ``add_batch`` then ``compute()``.

    evaluate streams only the inputs declared as features. The per-example inputs a module takes as
    keywords (``PER_EXAMPLE``, e.g. ``groups``: optional, so they cannot be features, which evaluate
    requires on every call) are collected here alongside, checked to have one entry per example, and
    handed to ``_compute``. They are cleared before computing, so nothing leaks into the next call,
    even when the computation fails. No lmbias measurement takes ``references``: passing them is an error.
    """

    PER_EXAMPLE: tuple = ()

    def _check_predictions(self, predictions):
        """``predictions`` as the module accepts them (checked before evaluate encodes them)."""
        return predictions

    def _check_features(self, features: dict) -> dict:
        """The other feature columns as the module accepts them (checked before evaluate encodes them)."""
        return features

    def _split(self, kwargs: dict) -> tuple:
        """(feature inputs, per-example inputs, options) of keyword arguments."""
        features = {k: v for k, v in kwargs.items() if k in self._feature_names() and k != "predictions"}
        per_example = {k: v for k, v in kwargs.items() if k in self.PER_EXAMPLE and v is not None}
        options = {k: v for k, v in kwargs.items() if k not in features and k not in self.PER_EXAMPLE}
        return features, per_example, options

    def _refuse_references(self, references) -> None:
        if references is not None:
            raise InputError(f"{self.name} takes no references=; pass the texts (or scores) as predictions=")

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of examples: the features (``predictions`` ...) and the per-example inputs."""
        self._refuse_references(references)
        features, per_example, options = self._split(kwargs)
        if options:
            raise InputError(f"{self.name}.add_batch() takes the examples only; pass {sorted(options)} to compute()")
        if predictions is not None:
            features["predictions"] = self._check_predictions(predictions)
        features = self._check_features(features)
        if not features:
            raise InputError(f"{self.name}.add_batch() got no examples; expected {list(self._feature_names())}")
        count = len(next(iter(features.values())))
        per_example = {key: check_groups(values, count, key) for key, values in per_example.items()}
        pending = self.__dict__.setdefault("_lmbias_pending", {})
        if self.writer is not None and set(per_example) != set(pending):
            raise InputError(f"every batch must give the same per-example inputs: earlier batches gave "
                             f"{sorted(pending) or 'none'}, this one {sorted(per_example) or 'none'}")
        super().add_batch(**features)
        for key, values in per_example.items():
            pending.setdefault(key, []).extend(values)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one example, with the singular names (``prediction``, ``group`` for ``groups`` ...)."""
        self.add_batch(predictions=None if prediction is None else [prediction],
                       references=None if reference is None else [reference],
                       **{key + "s": [value] for key, value in kwargs.items()})

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Compute over the examples added so far plus those given here (evaluate's semantics); the
        per-example inputs given here without new examples apply to the examples added before."""
        try:
            features, per_example, options = self._split(kwargs)
            if predictions is not None or features:
                self.add_batch(predictions=predictions, references=references, **features, **per_example)
                per_example = {}
            self._refuse_references(references)
            if self.writer is None:
                if "predictions" in self._feature_names():
                    self._check_predictions(predictions)  # says what predictions must be
                raise InputError(f"{self.name}: nothing to compute; pass predictions= or call add() / add_batch() first")
            inputs = {**self.__dict__.pop("_lmbias_pending", {}), **per_example}
        except Exception:
            self._discard()
            raise
        return super().compute(**inputs, **options)

    def _discard(self) -> None:
        """Drop every example added so far (after a failed call), as a finished compute does."""
        self.__dict__.pop("_lmbias_pending", None)
        if self.writer is not None:
            self.writer.finalize()
        self.writer = self.buf_writer = self.data = self.selected_feature_format = None
        if self.filelock is not None:
            self.filelock.release()
        self.filelock = self.cache_file_name = None


class TextMeasurement(Measurement):
    """A :class:`Measurement` over a list of texts, with per-text ``groups``.

    ``predictions`` is checked before evaluate encodes it: evaluate would otherwise turn NaN
    into the string "nan" and score it silently.
    """

    PER_EXAMPLE = ("groups",)

    def _check_predictions(self, predictions):
        return check_texts(predictions, "predictions")


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
