"""Input checks shared by the scorers and metrics: clear errors that name the argument."""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np

from .errors import InputError, InputTypeError


def check_texts(texts: Any, name: str = "predictions") -> list[str]:
    """Return ``texts`` as a list of strings, or raise naming ``name`` and the first bad item.

    Raises:
        TypeError: ``texts`` is None, a single string, or holds a non-string item (None, NaN, a number).
        ValueError: ``texts`` is empty.
    """
    if texts is None or isinstance(texts, (str, bytes)):
        raise InputTypeError(f"{name} must be a list of strings, got {type(texts).__name__}")
    try:
        texts = list(texts)
    except TypeError:
        raise InputTypeError(f"{name} must be a list of strings, got {type(texts).__name__}") from None
    if not texts:
        raise InputError(f"{name} is empty; expected at least one text")
    if set(map(type, texts)) <= {str}:  # the common case, checked without a Python loop
        return texts
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            shown = "NaN" if isinstance(text, float) and math.isnan(text) else repr(text)
            raise InputTypeError(f"{name}[{index}] is {shown} ({type(text).__name__}); expected a string (use '' for no text)")
    return texts


def check_labels(labels: Any, name: str) -> list:
    """Return ``labels`` as a list if each is a non-empty string or an integer, or raise naming ``name``
    and the first bad item (None, NaN, "" or a list is no label: it would become a group of its own).

    >>> check_labels(["gender", 3], "bias_types")
    ['gender', 3]
    """
    if labels is None or isinstance(labels, (str, bytes)) or not hasattr(labels, "__iter__"):
        raise InputTypeError(f"{name} must be a list of labels (strings or integers), got {type(labels).__name__}")
    labels = list(labels)
    for index, label in enumerate(labels):
        if label is None or (isinstance(label, float) and math.isnan(label)) or (isinstance(label, str) and not label.strip()):
            raise InputError(f"{name}[{index}] is missing ({label!r}); every example needs a label")
        if isinstance(label, bool) or not isinstance(label, (str, numbers.Integral)):
            raise InputTypeError(f"{name}[{index}] is {label!r} ({type(label).__name__}); expected a string or an integer label")
    return labels


def check_column(values: Any, name: str, n: int, allowed=None, unit: str = "item") -> list:
    """``values`` as a list of one value per ``unit`` (``n`` of them, as many as the predictions), each
    in ``allowed`` when given; else one line naming ``name`` and the first bad value.

    >>> check_column(["neg", "nonneg"], "question_polarities", 2, {"neg", "nonneg"})
    ['neg', 'nonneg']
    """
    if values is None or isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise InputTypeError(f"{name} must be a list with one value per {unit}, got {type(values).__name__}")
    values = list(values)
    if len(values) != n:
        raise InputError(f"{name} has {len(values)} values but predictions has {n}; expected one per {unit}")
    if allowed is not None:
        for index, value in enumerate(values):
            if value not in allowed:
                raise InputError(f"{name}[{index}] is {value!r}; expected one of {sorted(allowed, key=str)}")
    return values


def check_flags(values: Any, name: str) -> list[bool]:
    """Return ``values`` as a list of bools (numpy's too), or raise naming ``name`` and the first item
    that is not True or False.

    >>> check_flags([True, False], "gotcha")
    [True, False]
    """
    if values is None or isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise InputTypeError(f"{name} must be a list of True / False, got {type(values).__name__}")
    values = list(values)
    for index, value in enumerate(values):
        if not isinstance(value, (bool, np.bool_)):
            raise InputTypeError(f"{name}[{index}] is {value!r} ({type(value).__name__}); expected True or False")
    return [bool(value) for value in values]


def check_numbers(values: Any, name: str) -> list[float]:
    """Return ``values`` as a list of floats, or raise naming ``name`` and the first item that is not
    a number or is NaN (infinities pass: a log-probability may be -inf).

    >>> check_numbers([-1.5, 2], "more_scores")
    [-1.5, 2.0]
    """
    if values is None or isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise InputTypeError(f"{name} must be a list of numbers, got {type(values).__name__}")
    values = list(values)
    for index, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise InputTypeError(f"{name}[{index}] is {value!r} ({type(value).__name__}); expected a number")
        if math.isnan(value):
            raise InputError(f"{name}[{index}] is NaN; expected a number")
    return [float(value) for value in values]


def check_option_scores(values: Any, name: str, n: int) -> np.ndarray:
    """``values`` as a float array of one score per example (``n``: an option's log-probability in
    StereoSet's and CrowS-Pairs' measures), or one line naming ``name``: missing, a string, not numbers,
    another count, or NaN (an option left unscored).

    >>> check_option_scores([-1.5, -2], "more_scores", 2)
    array([-1.5, -2. ])
    """
    if values is None:
        raise InputTypeError(f"{name} is missing; expected one score per example")
    if isinstance(values, (str, bytes)):
        raise InputTypeError(f"{name} must be a list of scores (numbers), one per example; got a string")
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputTypeError(f"{name} must be a list of scores (numbers), one per example") from None
    if array.shape != (n,):
        raise InputError(f"{name} has {array.size} scores but there are {n} examples; expected one per example")
    if np.isnan(array).any():
        raise InputError(f"{name}[{int(np.flatnonzero(np.isnan(array))[0])}] is missing or NaN; every option needs a score")
    return array


def check_groups(groups: Sequence[Any] | None, length: int, name: str = "groups") -> list[str] | None:
    """Return group labels as strings (or None), checking one label per text and no missing label
    (None or NaN; "" is a label here: :func:`check_labels` refuses it)."""
    if groups is None:
        return None
    if isinstance(groups, (str, bytes)):
        raise InputTypeError(f"{name} must be a list with one group label per prediction, got a single string")
    groups = list(groups)
    if len(groups) != length:
        raise InputError(f"{name} has {len(groups)} labels but there are {length} predictions; expected one label per prediction")
    for index, group in enumerate(groups):
        if group is None or (isinstance(group, float) and math.isnan(group)):
            raise InputError(f"{name}[{index}] is missing ({group!r}); every prediction needs a group label")
    return [str(group) for group in groups]


def check_choices(values: Any, choices: Sequence[Any], name: str) -> list:
    """``values`` as a list if it is a non-empty list of distinct ``choices`` (a value given twice
    would be counted twice); a single string is an error, not a list of its characters.

    >>> check_choices(["gender", "race"], ["gender", "race", "profession"], "domains")
    ['gender', 'race']
    """
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise InputTypeError(f"{name} must be a list of values from {list(choices)}, got {type(values).__name__}")
    values = list(values)
    if not values:
        raise InputError(f"{name} is empty; choose from {list(choices)}")
    for value in values:
        check_choice(value, choices, name)
    repeated = sorted({value for value in values if values.count(value) > 1})
    if repeated:
        raise InputError(f"{name} lists {repeated} more than once; each would be counted again")
    return values


def check_choice(value: Any, choices: Sequence[Any], name: str) -> Any:
    """Return ``value`` if it is one of ``choices``; else a ValueError listing them."""
    if value not in choices:
        raise InputError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


def check_scalar(
    value: Any,
    name: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    integer: bool = True,
    expected: str | None = None,
) -> Any:
    """Return ``value`` if it is a finite number (an integer when ``integer``) within ``[minimum, maximum]``;
    else an :class:`~lmbias.errors.InputTypeError` (not a number) or :class:`~lmbias.errors.InputError`
    (out of range) that names ``name`` and says what was expected (``expected``, in words, replaces
    the bounds in the message).

    >>> check_scalar(3, "batch_size", minimum=1)
    3
    >>> check_scalar(0, "batch_size", minimum=1)
    Traceback (most recent call last):
    ...
    lmbias.errors.InputError: batch_size must be >= 1, got 0
    """
    bounds = " and ".join(f"{sign} {bound}" for sign, bound in ((">=", minimum), ("<=", maximum)) if bound is not None)
    wanted = expected or bounds or ("an integer" if integer else "a number")
    number_type = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, number_type):
        kind = "an integer" if integer else "a number"
        raise InputTypeError(f"{name} must be {kind}{f' ({wanted})' if wanted != kind else ''}, got {value!r}")
    if not integer and not math.isfinite(value):  # NaN passes no bound check, inf passes an open one
        raise InputError(f"{name} must be a finite number, got {value!r}{f' (expected {wanted})' if wanted != 'a number' else ''}")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise InputError(f"{name} must be {wanted}, got {value!r}")
    return value


def first_repeat(items: Iterable[tuple[Hashable, Any]]) -> tuple[Hashable, Any, Any] | None:
    """The first key given twice in ``items`` (``(key, place)`` pairs, e.g. an id and its line number),
    as ``(key, where it was first, where again)``; None when every key is different. A data reader
    names both places in its error: an id given twice would be scored twice.

    >>> first_repeat([("a", 1), ("b", 2), ("a", 3)])
    ('a', 1, 3)
    >>> first_repeat([("a", 1), ("b", 2)]) is None
    True
    """
    seen: dict = {}
    for key, place in items:
        if key in seen:
            return key, seen[key], place
        seen[key] = place
    return None
