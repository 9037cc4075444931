"""The parts of a benchmark's declaration that say how it runs, and the one generic run that carries it out.

A benchmark (:class:`~lmbias.benchmarks.base.Benchmark`, one declaration) asks its items through the protocols
(:mod:`lmbias.protocols`) and declares: its own options (:class:`Option`, each declared once: type, choices, range, default,
help, and whether it changes the answers), the protocols it supports (one :class:`Ask` each: the
:class:`~lmbias.protocols.Protocol` object, what it does here, how the items become its request, its
default wording, what a resume compares and what results.json's config adds), its items, its measure (a pure function of the answers and
the items' metadata) and what results.json records of its data. :func:`run_task` does the rest, the
same for every such benchmark: check every option (one line naming the option), select the items,
ask the protocol (resumable, locked run folder, progress), apply the measure, label a partial run,
and return the :class:`~lmbias.run_result.RunResult` with its per-item file. The one declaration
feeds the command line (:meth:`~lmbias.benchmarks.base.Benchmark.add_arguments`), the Python call (:func:`run_task`'s checks), the
configuration recorded in results.json, and the folder's identity that a resume compares. Every
benchmark is run this way.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..checks import check_choice, check_choices, check_scalar
from ..errors import InputError
from ..lm.spec import ModelSpec
from ..protocols import Protocol, check_protocol
from ..run_lock import holds_run_directory
from ..run_result import RunResult, coverage

if TYPE_CHECKING:
    from .base import Benchmark

_UNSET = object()
ITEMS_FILE = "items.jsonl"  # each item a run asked: its id and its content's digest (what `lmbias compare` pairs by)
POSITION = "row"  # a user's data row's line number: where an item is in its file, not what it is


@dataclass(frozen=True)
class Option:
    """One option of a benchmark, declared once.

    Attributes:
        name: the Python name (``limit``); the command line's ``--limit`` (underscores as dashes).
        help: the ``--help`` text.
        default: its value when not given (a list for ``many``).
        type: the type of a value (``int``, ``float``, ``str``; ``bool``: a flag, ``--small-set``); the command
            line converts to it.
        parse: how the command line reads one value, where not plainly as ``type`` (an argparse ``type``
            callable, e.g. :func:`~lmbias.benchmarks.base.any_case`: ``--categories ses`` reads as ``SES``);
            the Python call's values are checked as given.
        choices: the values allowed (each element's, with ``many``).
        many: a non-empty list of distinct values (``--genders male female``).
        repeated: given once per value (``--compare A --compare B``), read as the list of them (None: not given).
        minimum, maximum: the range of an ``int`` or ``float`` (None: unbounded).
        expected: what the error says is expected (default: from the range).
        metavar: the value's name in ``--help``.
        identity: whether it changes the model's answers, so that a run folder's configuration holds it
            and a resume with another value is refused (``--bootstrap`` changes only the intervals: False).
        narrows: whether a value other than the default covers less than the whole benchmark, so that
            the run is labelled partial with the option as given (``--limit 8``); or ``narrows(value)``, whether
            that value does (``--samples 3`` of the paper's 25 narrows, 30 does not).
    """

    name: str
    help: str
    default: Any = None
    type: type = str
    choices: tuple | None = None
    many: bool = False
    repeated: bool = False
    minimum: int | None = None
    maximum: int | None = None
    expected: str | None = None
    metavar: str | None = None
    parse: Callable[[str], Any] | None = None
    identity: bool = True
    narrows: bool | Callable[[Any], bool] = False

    @property
    def flag(self) -> str:
        """The command-line flag (``--prompt-template``)."""
        return "--" + self.name.replace("_", "-")

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        """Add the option to a command-line parser."""
        if self.type is bool:
            parser.add_argument(self.flag, action="store_true", help=self.help)
            return
        settings: dict = {"default": list(self.default) if self.many and self.default is not None else self.default,
                          "help": self.help}
        if self.parse is not None or self.type is not str:
            settings["type"] = self.parse or self.type
        if self.choices is not None:
            settings["choices"] = list(self.choices)
        if self.many:
            settings["nargs"] = "+"
        if self.repeated:
            settings["action"] = "append"
        if self.metavar:
            settings["metavar"] = self.metavar
        parser.add_argument(self.flag, **settings)

    def check(self, value: Any) -> Any:
        """``value`` checked (a one-line :class:`~lmbias.errors.InputError` naming the option and what
        was expected) and converted: a list for ``many``."""
        if value is None and self.default is None:
            return None
        if self.many:
            if self.choices is not None:
                return [self.type(v) for v in check_choices(value, list(self.choices), self.name)]
            if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__") or not list(value) or any(
                    isinstance(v, bool) or not isinstance(v, self.type) for v in value):
                raise InputError(f"{self.name} must be a non-empty list of {self.type.__name__} values, got {value!r}")
            return list(value)
        if self.choices is not None:
            return check_choice(value, list(self.choices), self.name)
        if self.type is bool and not isinstance(value, bool):
            raise InputError(f"{self.name} must be True or False, got {value!r}")
        if self.type in (int, float):
            check_scalar(value, self.name, minimum=self.minimum, maximum=self.maximum, integer=self.type is int,
                         expected=self.expected)
        return value

    def narrowed(self, value: Any) -> bool:
        """Whether ``value`` covers less than the whole benchmark (``narrows`` and not the default)."""
        if not self.narrows or value is None:
            return False
        if callable(self.narrows):
            return bool(self.narrows(value))
        if self.many:
            return self.default is None or set(value) != set(self.default)
        return value != self.default

    def given(self, value: Any) -> str:
        """How the option reads on a command line with ``value`` (``--types 1``; a flag: ``--small-set``)."""
        if self.type is bool:
            return self.flag
        return f"{self.flag} {' '.join(map(str, value)) if isinstance(value, (list, tuple)) else value}"


def chat_requested(model) -> bool:
    """Whether a run of ``model`` (a :class:`~lmbias.lm.spec.ModelSpec`) is a chat run, known from its
    options alone, before anything is checked or loaded: ``--chat``, or a backend whose server
    applies the chat template (``openai-chat``)."""
    return model.chat is True or model.engine.chat == "server"


def named_settings(*keys: str) -> Callable[[dict], dict]:
    """An :attr:`Ask.identity` that holds the settings ``keys`` (own options, or ``protocol``, ``batch_size``, ``seed``),
    in that order."""
    return lambda settings: {key: settings[key] for key in keys}


@dataclass(frozen=True)
class Ask:
    """How a benchmark asks its items through one protocol: one entry of its
    :attr:`~lmbias.benchmarks.base.Benchmark.protocols`. A benchmark declares one per protocol it supports and never
    names a protocol otherwise: what differs between protocols is here, and what a function must know of the
    protocol a run used it asks the protocol object (``get_protocol(settings["protocol"]).reads_replies``).

    Attributes:
        protocol: the :class:`~lmbias.protocols.Protocol` (the object: ``LIKELIHOOD``, ``GENERATE``).
        help: what the protocol does for this benchmark (``--protocol``'s help).
        request: ``request(rows, settings)``: the protocol's request for the rows (pure: no model in sight;
            ``settings`` as :attr:`~lmbias.benchmarks.base.Benchmark.items` gets them).
        prompt: its default wording (None: none, or chosen per item).
        identity: ``identity(settings)``: the run's identity that config.json holds and a resume compares, besides
            the model (None: the protocol, where the benchmark has several, and every option declared ``identity``;
            :func:`named_settings` picks settings by name).
        config: ``config(options)``: what results.json's ``config`` adds (e.g. the decision rule), or sets anew for
            a key it already has (an option that does not apply to the protocol: None).
        how: what a run's summary says the protocol did, or ``how(config)`` where it names a setting of the run
            (:meth:`described`).
    """

    protocol: Protocol
    help: str
    request: Callable[[list, dict], Any]
    prompt: str | None = None
    identity: Callable[[dict], dict] | None = None
    config: Callable[[dict], dict] = lambda options: {}
    how: str | Callable[[dict], str] = ""

    def described(self, config: dict) -> str:
        """What a run's summary says the protocol did, in the run whose results.json ``config`` is given."""
        return self.how(config) if callable(self.how) else self.how


def item_digest(row: dict) -> str:
    """A digest of an item's content: every field but its position in the data file (:data:`POSITION`), so that the
    same item in a reordered file has the same digest and an item whose text, answers or labels changed has another.

    >>> item_digest({"id": "a-1", "label": 2, "row": 7}) == item_digest({"row": 1, "label": 2, "id": "a-1"})
    True
    >>> item_digest({"id": "a-1", "label": 2}) == item_digest({"id": "a-1", "label": 1})
    False
    """
    content = {key: value for key, value in row.items() if key != POSITION}
    return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False, default=repr).encode()).hexdigest()[:16]


def items_text(rows: Sequence[dict]) -> str:
    """:data:`ITEMS_FILE`'s content: one line per item asked, in the run's order, its ``id`` and ``sha256``
    (:func:`item_digest`)."""
    return "".join(json.dumps({"id": str(row["id"]), "sha256": item_digest(row)}) + "\n" for row in rows)


@holds_run_directory
def run_task(benchmark: Benchmark, *, model: ModelSpec | str | None = None, out, protocol: str | None = None,
             prompt_template: str | None = None, batch_size: int = 32, seed: int = 0, progress: bool = True, data_dir=None,
             check_only: bool = False, **given) -> RunResult | None:
    """Run a declared benchmark with a model; its answers are written to ``out`` as they come (a rerun
    resumes) and the run is returned. A benchmark with per-item ``outcomes`` also gets :data:`ITEMS_FILE`, the
    items asked (each id and :func:`item_digest`), which ``lmbias compare`` checks the items it reads again against.

    Args:
        benchmark: the :class:`~lmbias.benchmarks.base.Benchmark`.
        model: a :class:`~lmbias.lm.spec.ModelSpec` (or a model name; None: the embedded default).
        protocol: the name of one of ``benchmark.protocols`` (default: the first); prompt_template: the wording of a
            protocol that takes one.
        batch_size: items per forward pass or generation batch; seed: the option orders' and
            bootstrap's seed; progress: a progress bar.
        check_only: make every check, of the options, the items, the model's spec and the run folder, then stop before
            anything is loaded or written, and return None (:meth:`~lmbias.benchmarks.base.Benchmark.check_run`).
        **given: the benchmark's own options (``limit=8``).

    Returns:
        The run (:class:`~lmbias.run_result.RunResult`) on the main process, None on the others (and with ``check_only``).
    """
    spec = ModelSpec.of(model)
    options = benchmark.checked(given)
    chosen = benchmark.ask(protocol)
    used = chosen.protocol
    protocol = used.name
    if prompt_template is not None and benchmark.template_help is None:
        raise InputError(f"{benchmark.name} takes no prompt_template (--prompt-template): its questions' wording is fixed")
    prompt = check_protocol(used, prompt_template, default=chosen.prompt, fields=benchmark.prompt_fields)
    benchmark.check(protocol, options)
    used.refuse_chat(spec, benchmark.name, chat_scoring=benchmark.chat_scoring)  # before any model is checked or loaded
    used.refuse_model(spec, benchmark.display_name)
    benchmark.refuse(spec, options)
    check_scalar(batch_size, "batch_size", minimum=1)
    check_scalar(seed, "seed", minimum=0)
    settings = {**options, "protocol": protocol, "prompt": prompt, "batch_size": batch_size, "seed": seed, "benchmark": benchmark.name,
                "out": out, "data_dir": data_dir, "chat": chat_requested(spec), "device": spec.device}
    rows = benchmark.items(settings, data_dir)
    # what `lmbias compare` checks the items against, for a benchmark it compares; before the request or the measure sees them
    asked = {ITEMS_FILE: items_text(rows)} if benchmark.outcomes is not None else {}
    named = {"protocol": protocol} if len(benchmark.protocols) > 1 else {}  # one protocol: nothing to record
    identity = {**named, **{option.name: options[option.name] for option in benchmark.options if option.identity}} \
        if chosen.identity is None else chosen.identity(settings)
    records, described, placement, timing = used.answer(
        spec, rows, chosen.request(rows, settings), out=out, benchmark=benchmark.name, run_config=identity,
        batch_size=batch_size, seed=seed, progress=progress, label=f"{benchmark.display_name}: {used.verb}", check_only=check_only)
    if records is None:
        return None
    # the partial label names the sizes of a sample (--limit 8) before the selections (--types 1), as the
    # benchmarks' own labels did: "--limit 8 --types 1"
    narrowed = " ".join(option.given(options[option.name]) for option in sorted(benchmark.options, key=lambda option: option.many)
                        if option.narrowed(options[option.name]))
    config = {**named, **options, "batch_size": batch_size, "seed": seed, "dtype": spec.dtype, "prompt": prompt,
              **chosen.config(options)}
    started = time.perf_counter()
    results = benchmark.measure(records, rows, settings, data_dir)
    measured = time.perf_counter() - started
    result = RunResult(
        benchmark=benchmark.name, out=str(out), model=described, data=benchmark.data(rows, settings, data_dir),
        config={**(config if benchmark.recorded is None else benchmark.recorded(config, rows, settings, described)), **placement},
        results=results,
        partial=partial(benchmark.counted(rows, settings), lambda: narrowed or benchmark.shortfall(settings, data_dir)),
        timing=benchmark.timing(timing, records, measured),
        skipped={**benchmark.skipped(settings), **benchmark.skipped_by(records, settings)},
        outputs={**({"items_file": ITEMS_FILE} if asked else {}), **benchmark.outputs(records, rows, settings)}, files=asked,
    )
    return used.finish(out, result, records)


def partial(counted: dict, reason: Callable[[], str]) -> dict:
    """results.json's ``partial`` of a benchmark's ``counted``: each shortfall with its own reason, else ``reason()``.

    >>> partial({"attributes": (1, 3, "--attributes name"), "prompts": (5, 9)}, lambda: "--limit 5")
    {'attributes': '1 of 3 (--attributes name)', 'prompts': '5 of 9 (--limit 5)'}
    """
    labelled: dict = {}
    for what, (covered, full, *own) in counted.items():
        if covered < full:
            labelled.update(coverage({what: (covered, full)}, own[0] if own else reason()))
    return labelled


def option_names(options: Sequence[Option]) -> list:
    """The Python names of ``options``."""
    return [option.name for option in options]
