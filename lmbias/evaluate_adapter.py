"""The adapter between lmbias and Hugging Face `evaluate`: what the evaluate modules in ``metrics/`` share.

A module subclasses :class:`TextMeasurement` through this module (``evaluate_adapter.TextMeasurement``,
never ``from ... import TextMeasurement``: evaluate takes the first measurement class it finds in
the module's namespace as the module's class).
"""

import inspect

import datasets
import evaluate

from .checks import check_flags, check_groups, check_labels, check_numbers, check_texts
from .errors import InputError

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

    Every feature column is checked before evaluate encodes it (which would turn NaN into the text
    "nan", None into a label of its own, and a missing column into a KeyError): a ``TEXT_COLUMNS``
    column holds strings (:func:`~lmbias.checks.check_texts`), a float column numbers
    (:func:`~lmbias.checks.check_numbers`), any other column labels (:func:`~lmbias.checks.check_labels`).
    """

    PER_EXAMPLE: tuple = ()
    PER_EXAMPLE_NUMBERS: tuple = ()  # the per-example inputs that are numbers (log-probabilities), not labels
    TEXT_COLUMNS: tuple = ()
    LOG_PROBABILITIES: tuple = ()  # the number inputs (features or per-example) that are log-probabilities: <= 0

    def _check_features(self, features: dict) -> dict:
        """The feature columns as the module accepts them, after the checks every module gets (a range ...)."""
        return features

    def _check_columns(self, features: dict) -> dict:
        """Every feature column present, of its kind, and one entry per example (see the class docstring)."""
        names = self._feature_names()
        missing = [name for name in names if features.get(name) is None]
        if missing:
            raise InputError(f"{self.name} needs every one of {names} in each batch; {', '.join(missing)} is missing or None")
        formats = self.features if isinstance(self.features, list) else [self.features]
        for name in names:
            dtypes = {str(getattr(f[name], "dtype", "")) for f in formats}
            if name in self.TEXT_COLUMNS:
                features[name] = check_texts(features[name], name)
            elif dtypes <= {"float32", "float64"}:
                features[name] = self._check_log_probabilities(check_numbers(features[name], name), name)
            elif dtypes == {"bool"}:
                features[name] = check_flags(features[name], name)
            else:
                labels = check_labels(features[name], name)
                if dtypes == {"string"} or any(isinstance(label, str) for label in labels):  # one kind per column
                    labels = [str(label) for label in labels]
                features[name] = labels
        count = len(features[names[0]])
        if count == 0:  # evaluate would fail on an empty batch with an IndexError of its own
            raise InputError(f"{names[0]} is empty; {self.name} expected at least one example in each of {names}")
        for name in names[1:]:
            if len(features[name]) != count:
                raise InputError(f"{name} has {len(features[name])} entries but {names[0]} has {count}; expected one per example")
        return self._check_features(features)

    def _split(self, predictions, kwargs: dict) -> tuple:
        """(feature inputs, per-example inputs, options) of the keyword arguments; an unknown one is an error."""
        names = self._feature_names()
        if predictions is not None or "predictions" in names:
            kwargs = {**kwargs, "predictions": predictions}
        features = {k: v for k, v in kwargs.items() if k in names}
        per_example = {k: v for k, v in kwargs.items() if k in self.PER_EXAMPLE and v is not None}
        options = {k: v for k, v in kwargs.items() if k not in features and k not in self.PER_EXAMPLE}
        unknown = sorted(set(options) - set(inspect.signature(self._compute).parameters))
        if unknown:
            known = [*names, *self.PER_EXAMPLE, *(k for k in inspect.signature(self._compute).parameters if k not in names)]
            raise InputError(f"{self.name} takes no {', '.join(unknown)}; its arguments are {list(dict.fromkeys(known))}")
        return features, per_example, options

    def _refuse_references(self, references) -> None:
        if references is not None:
            raise InputError(f"{self.name} takes no references=; pass the texts (or scores) as predictions=")

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of examples: the features (``predictions`` ...) and the per-example inputs."""
        self._refuse_references(references)
        features, per_example, options = self._split(predictions, kwargs)
        if options:
            raise InputError(f"{self.name}.add_batch() takes the examples only; pass {sorted(options)} to compute()")
        if all(value is None for value in features.values()):
            raise InputError(f"{self.name}.add_batch() got no examples; expected {list(self._feature_names())}")
        features = self._check_columns(features)
        count = len(next(iter(features.values())))
        per_example = {key: self._check_per_example(values, key, count) for key, values in per_example.items()}
        pending = self.__dict__.setdefault("_lmbias_pending", {})
        if self.writer is not None and set(per_example) != set(pending):
            raise InputError(f"every batch must give the same per-example inputs: earlier batches gave "
                             f"{sorted(pending) or 'none'}, this one {sorted(per_example) or 'none'}")
        super().add_batch(**features)
        for key, values in per_example.items():
            pending.setdefault(key, []).extend(values)

    def _check_log_probabilities(self, values: list, name: str) -> list:
        """``values`` if ``name`` is not a log-probability input or each value is <= 0 (-inf included),
        else one line naming the first that is not."""
        if name in self.LOG_PROBABILITIES:
            for index, value in enumerate(values):
                if value > 0:
                    raise InputError(f"{name}[{index}] is {value!r}; expected a log-probability, <= 0 (the log of a "
                                     "probability of at most 1)")
        return values

    def _check_per_example(self, values, key: str, count: int) -> list:
        """A per-example input: one label (or number, for ``PER_EXAMPLE_NUMBERS``) per example."""
        if key in self.PER_EXAMPLE_NUMBERS:
            values = self._check_log_probabilities(check_numbers(values, key), key)
            if len(values) != count:
                raise InputError(f"{key} has {len(values)} values but there are {count} examples; expected one per example")
            return values
        return check_groups(check_labels(values, key), count, key)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one example, with the singular names (``prediction``, ``group`` for ``groups`` ...)."""
        self.add_batch(predictions=None if prediction is None else [prediction],
                       references=None if reference is None else [reference],
                       **{key + "s": [value] for key, value in kwargs.items()})

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Compute over the examples added so far plus those given here (evaluate's semantics); the
        per-example inputs given here without new examples apply to the examples added before."""
        try:
            features, per_example, options = self._split(predictions, kwargs)
            if any(value is not None for value in features.values()):
                self.add_batch(references=references, **features, **per_example)
                per_example = {}
            self._refuse_references(references)
            if self.writer is None:
                if "predictions" in self.TEXT_COLUMNS:
                    check_texts(predictions, "predictions")  # says what predictions must be
                raise InputError(f"{self.name}: nothing to compute; pass {list(self._feature_names())} "
                                 "or call add() / add_batch() first")
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
    """A :class:`Measurement` over a list of texts, with per-text ``groups``."""

    PER_EXAMPLE = ("groups",)
    TEXT_COLUMNS = ("predictions",)


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


def declared_measurement(name: str, declared) -> type:
    """The evaluate measurement class of the module ``name`` from a benchmark's declaration of it (a module with
    ``DESCRIPTION``, ``INPUTS`` (the arguments' description; ``{name}`` stands for the module's name in its
    examples), ``CITATION``, ``URLS``, ``FEATURES``, ``PER_EXAMPLE`` and ``compute``): a set measured by several
    modules (EsBBQ and CaBBQ) declares it once. evaluate names the module after the class (``Esbbq`` -> ``esbbq``)."""
    inputs = declared.INPUTS.replace("{name}", name)

    def _info(self):
        return measurement_info(declared.DESCRIPTION, declared.CITATION + "\n", inputs, declared.URLS,
                                features=declared.FEATURES)

    cls = type(name.capitalize(), (Measurement,), {"PER_EXAMPLE": declared.PER_EXAMPLE, "_info": _info,
                                                   "_compute": staticmethod(declared.compute), "__module__": __name__})
    return evaluate.utils.file_utils.add_start_docstrings(declared.DESCRIPTION, inputs)(cls)
