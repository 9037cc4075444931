"""A user's own benchmark as data (a declaration file and its data; :mod:`.declaration`), run like a built-in
one: ``lmbias run ./my_benchmark.yaml``, alone or beside built-ins, with both protocols, resume, report,
compare, leaderboard and push.

The shapes:

* ``multiple_choice``, BBQ's: a context (ambiguous or disambiguated), a question (negative or non-negative),
  three answers of which one is "unknown" and one the stereotyped group's; BBQ's accuracy and bias scores
  (s_AMB, s_DIS), per category and pooled (:mod:`.multiple_choice`);
* ``sentence_pairs``, CrowS-Pairs': a more and a less stereotypical sentence; the metric score, per group and
  overall (:mod:`.sentence_pairs`);
* ``prompts``, BOLD's: prompts about groups, continued and scored by BOLD's scorers; the gaps between groups
  per domain (:mod:`.prompts`);
* ``counterfactual``, Huang et al.'s: templates filled with each value of an attribute, continued many times; I.F.
  and G.F. of the continuations' sentiment (:mod:`.counterfactual`);
* ``paired_prompts``, political even-handedness': two prompts per pair that take two sides (two groups), both
  answered and read by a grader model with the authors' rubrics or the user's; even-handedness, refusal and hedging,
  per side and per breakdown (:mod:`.paired_prompts`).

A run records its declaration's text and digest and its data's digest: a rerun in the same folder with
another declaration or changed data is refused, and a report, comparison or leaderboard of the run finds the
benchmark from the recorded declaration, without the file.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import InputError
from .. import get_benchmark, names, register
from ..base import Benchmark
from . import counterfactual, multiple_choice, paired_prompts, prompts, sentence_pairs
from .declaration import read_declaration

SHAPES = {"multiple_choice": multiple_choice.make_benchmark, "sentence_pairs": sentence_pairs.make_benchmark,
          "prompts": prompts.make_benchmark, "counterfactual": counterfactual.make_benchmark,
          "paired_prompts": paired_prompts.make_benchmark}
OWN_KEYS = {"paired_prompts": paired_prompts.OWN_KEYS}  # the keys a shape takes besides every declaration's
SUFFIXES = (".yaml", ".yml", ".json")
_DECLARED: dict = {}  # name -> (path, digest) of the declaration registered under it


def is_declaration(argument: str) -> bool:
    """Whether a ``lmbias run`` argument names a declaration file (a path ending in .yaml, .yml or .json)."""
    return argument.lower().endswith(SUFFIXES) and not argument.startswith("-")


def load_benchmark(path, text: str | None = None) -> Benchmark:
    """The benchmark a declaration file declares, registered under its name (``text``: the declaration as a run
    recorded it). A built-in benchmark's name, or another declaration file's, is refused; the same file edited
    replaces its benchmark."""
    declaration = read_declaration(path, tuple(SHAPES), text, OWN_KEYS)
    known = _DECLARED.get(declaration.name)
    if known == (declaration.path, declaration.declaration_sha256):
        return get_benchmark(declaration.name)
    if declaration.name in names() and (known is None or known[0] != declaration.path):  # the same file edited: replaced
        what = "another declaration's" if known else "a built-in benchmark's"
        raise InputError(f"{declaration.path}: name {declaration.name!r} is {what}; give the benchmark a name of its own")
    benchmark = register(SHAPES[declaration.shape](declaration))
    _DECLARED[declaration.name] = (declaration.path, declaration.declaration_sha256)
    return benchmark


def register_recorded(results: dict) -> None:
    """Register the benchmark of a run's results.json from the declaration it recorded, when it is not known."""
    recorded = (results.get("data") or {}).get("declaration") if isinstance(results.get("data"), dict) else None
    if isinstance(recorded, dict) and isinstance(recorded.get("text"), str) and results.get("benchmark") not in names():
        load_benchmark(Path(recorded.get("path") or "declaration.yaml"), recorded["text"])
