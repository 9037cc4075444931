"""Debiasing methods behind one small protocol, and their registry.

A method is a :class:`DebiasMethod`: a name, a one-line description, its own options, and what it
contributes, which is exactly one of:

* ``loss_term``: a training loss term, what ``lmbias debias`` applies (embedding and sentiment
  regularisation). ``loss_term(preparation)`` is called once before the first step (and again when a
  run resumes) with a :class:`Preparation` (the starting model, the training texts, the settings, the
  run folder), and returns the term: a callable ``term(output, counterfactual_output, positions)``
  giving the batch's L_fairness as a scalar tensor, which the loop adds to the LM loss as λ · term.
  ``output`` and ``counterfactual_output`` are the model's outputs (with ``hidden_states``) on a batch
  of training texts and on their counterfactuals; ``positions[j]`` is pair j's aligned prefix ends in
  each (:func:`~lmbias.debias.regularizers.aligned_positions`). The term may carry ``record``, a dict
  of JSON values that ``debias.json`` keeps (the sentiment method: its classifier's counts and F1).
* ``transform``: a projection of the final hidden states, fitted without training (INLP,
  SentenceDebias, LEACE). ``transform(preparation)`` returns a :class:`Projection`, which ``lmbias
  debias`` saves beside the model (:mod:`lmbias.lm.adjustments`): the hf backend applies it on load.
* ``adjust_decoding``: a decoding-time adjustment (Self-Debias). ``adjust_decoding(preparation)``
  returns its settings (:class:`lmbias.lm.adjustments.SelfDebias`'s keywords), saved the same way.

A loss-term method may also give ``pairs(texts, settings, data_dir)``: the training texts and their
counterfactuals (dicts with ``text``, ``counterfactual``, ``attribute``, ``held_out``) in place of the
counterfactual paper's (:func:`lmbias.debias.pairs.counterfactual_pairs`); CDA does.

Methods are found through the ``lmbias.debias_methods`` entry-point group, built-ins (declared in
setup.cfg) and other packages' alike; :func:`register` adds one at run time.
docs/adding-a-debias-method.md shows a whole method.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...plugins import Registry

GROUP = "lmbias.debias_methods"
KINDS = {"loss_term": "training loss term", "transform": "hidden-state projection", "adjust_decoding": "decoding-time adjustment"}


@dataclass(frozen=True)
class Preparation:
    """What a method's ``loss_term`` or ``transform`` gets before training: the starting model (not yet
    trained, wrapped or moved by accelerate), its tokenizer, the training part of the corpus, the run's
    settings (the method's options among them), the run folder and the device."""

    model: Any
    tokenizer: Any
    texts: list
    settings: dict
    folder: Path
    device: Any
    data_dir: Any = None


@dataclass(frozen=True)
class Projection:
    """What a ``transform`` method fits: the affine map ``h -> h @ matrix.T + offset`` of the final
    hidden states (torch tensors, d x d and d), and ``record``, JSON values that ``debias.json`` and the
    model card keep (what it was fitted on, how well a probe did)."""

    matrix: Any
    offset: Any
    record: dict


@dataclass(frozen=True)
class DebiasMethod:
    """A debiasing method (see the module docstring).

    Args:
        name: the id: ``lmbias debias --method NAME``, ``debias.json``'s ``settings.method``.
        description: one line for ``lmbias debias --help`` and the saved model's card.
        add_arguments: ``add_arguments(parser)`` adds the method's own options to ``lmbias debias``;
            each needs a default (the Python API's default too) and its ``dest`` is its settings key.
        check: ``check(options)`` raises :class:`~lmbias.errors.InputError` naming a bad option value.
        loss_term, transform, adjust_decoding: what it contributes; exactly one is given.
        pairs: a loss-term method's own training pairs (see the module docstring).
        bias_types: the bias types (``--bias-type``) it can target, for methods built on bias-bench's
            attribute words; empty: it takes no ``--bias-type``.
        files: names of the files it writes into the run folder (an unfinished run may hold them).
        card_rows: ``card_rows(state)`` -> ``(setting, value)`` rows for the model card's table.
    """

    name: str
    description: str
    add_arguments: Callable | None = None
    check: Callable | None = None
    loss_term: Callable | None = None
    transform: Callable | None = None
    adjust_decoding: Callable | None = None
    pairs: Callable | None = None
    bias_types: tuple = ()
    files: tuple = ()
    card_rows: Callable | None = None

    def __post_init__(self):
        given = [hook for hook in KINDS if getattr(self, hook) is not None]
        if len(given) != 1:
            raise InputError(f"debias method {self.name!r} must give exactly one of {list(KINDS)}, got {given or 'none'}")
        if self.pairs is not None and self.loss_term is None:
            raise InputError(f"debias method {self.name!r}: pairs are for a training loss term")

    @property
    def trains(self) -> bool:
        """Whether ``lmbias debias`` trains the model (a loss term) rather than fitting an adjustment."""
        return self.loss_term is not None

    @property
    def kind(self) -> str:
        """What it contributes, in words: "training loss term", "model transform" or "decoding-time adjustment"."""
        return next(KINDS[hook] for hook in KINDS if getattr(self, hook) is not None)

    def defaults(self) -> dict:
        """Its options and their defaults, read from ``add_arguments``."""
        parser = argparse.ArgumentParser(allow_abbrev=False, add_help=False)
        if self.add_arguments is not None:
            self.add_arguments(parser)
        return vars(parser.parse_args([]))


# The methods, found through the ``lmbias.debias_methods`` entry-point group (lmbias.plugins), built-in
# and third-party alike.
REGISTRY = Registry(GROUP, DebiasMethod, "debias method")


def register(method: DebiasMethod) -> DebiasMethod:
    """Add ``method`` to the registry (replacing one of the same name) and return it."""
    return REGISTRY.register(method)


def unregister(name: str) -> None:
    """Remove the method called ``name`` (no error if it is not registered)."""
    REGISTRY.unregister(name)


def methods() -> list:
    """The registered :class:`DebiasMethod` objects, in registration order."""
    return list(REGISTRY.values())


def names() -> list:
    """The registered methods' names, in registration order."""
    return REGISTRY.names()


def get_method(name: str) -> DebiasMethod:
    """The method called ``name``; an :class:`~lmbias.errors.UnknownNameError` lists the valid names."""
    return REGISTRY.get(name)


def method_options(name: str, given: dict) -> dict:
    """The options of the method ``name``: its defaults updated with ``given``, checked. An option of
    another registered method is refused unless it has that method's default (the command line passes
    every method's options), and an option no method has is refused."""
    method = get_method(name)
    options = method.defaults()
    for key, value in given.items():
        if key in options:
            options[key] = value
            continue
        owner = next((other for other in methods() if key in other.defaults()), None)
        if owner is None:
            raise InputError(f"unknown option {key!r} for --method {name}; its options: {sorted(options) or 'none'}")
        if value != owner.defaults()[key]:
            raise InputError(f"--{key.replace('_', '-')} is an option of --method {owner.name}, not of --method {name}")
    if method.check is not None:
        method.check(options)
    return options


def check_bias_type(method: DebiasMethod, bias_type: str | None) -> None:
    """``--bias-type``: one of ``method.bias_types``, and given only to a method that has them."""
    if bias_type is None:
        return
    if not method.bias_types:
        takes = [m.name for m in methods() if m.bias_types]
        raise InputError(f"--bias-type applies to the methods built on bias-bench's attribute words ({', '.join(takes)}), "
                         f"not --method {method.name}")
    if bias_type not in method.bias_types:
        raise InputError(f"--bias-type must be one of {list(method.bias_types)}, got {bias_type!r}")
