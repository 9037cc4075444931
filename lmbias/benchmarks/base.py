"""What a benchmark declares: a frozen :class:`Benchmark`.

The command line, the run envelope (:mod:`lmbias.run_result`), the readers (:mod:`lmbias.results`),
the report, the leaderboard, the Hub push and the model-index all iterate the registry
(:mod:`lmbias.benchmarks`) and ask each benchmark what they need; none of them names a benchmark.
``docs/adding-a-benchmark.md`` walks through a new one.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..checks import check_choice
from ..errors import InputError, UnknownNameError
from ..lm.backends import DEFAULT_BACKEND
from ..lm.spec import DTYPES
from ..protocols import add_protocol_arguments, get_protocol
from ..render import html
from ..render.text import cell, markdown_table
from .declared import Ask, chat_requested, run_task

# The options every ``lmbias run BENCHMARK`` may share, defined once; a benchmark lists the ones its
# command line takes (Benchmark.run_options) and may change their defaults (Benchmark.defaults).
RUN_OPTIONS = {
    "model": (["--model"], {"help": "Hub id, local folder or .gguf file (default: the embedded SmolLM2-135M-Instruct)"}),
    "name": (["--name"], {"help": "the model's display name in the summary, results.json, report, leaderboard and Hub card "
                                  "(default: the Hub id, or a local folder's last component)"}),
    "device": (["--device"], {"help": "cpu, cuda, ... (default: each process's GPU, else cpu)"}),
    "device_map": (["--device-map"], {"choices": ["auto", "balanced", "balanced_low_0", "sequential"],
                                      "help": "split the model over this machine's GPUs (then CPU, then disk) with accelerate: "
                                              "for a model larger than one GPU; one process only"}),
    "max_memory": (["--max-memory"], {"nargs": "+", "metavar": "DEVICE=SIZE",
                                      "help": "with --device-map, the memory each device may hold, e.g. 0=70GiB 1=70GiB cpu=200GiB"}),
    "backend": (["--backend"], {"default": DEFAULT_BACKEND, "help": "the inference backend (its own options follow)"}),
    "revision": (["--revision"], {"help": "the model's Hub commit, branch or tag (a Hub id only; default: its default branch)"}),
    "dtype": (["--dtype"], {"choices": list(DTYPES),
                            "help": "weights' dtype (default: the checkpoint's on a GPU, float32 on CPU)"}),
    "chat": (["--chat"], {"action": "store_true",
                          "help": "put each prompt to the model in its own chat template, as the user's message (a chat "
                                  "model's protocol; always so with --backend openai-chat); recorded with the run"}),
    "system_prompt": (["--system-prompt"], {"metavar": "TEXT", "help": "with --chat: the system message (default: none, "
                                                                       "so the template's own default applies)"}),
    "seed": (["--seed"], {"type": int, "default": 0, "help": "seed of the sampling and the bootstrap"}),
    "batch_size": (["--batch-size"], {"type": int, "default": 32,
                                      "help": "prompts per generation batch, or sequences per scoring pass"}),
    "num_processes": (["--num-processes"], {"type": int, "default": 1,
                                            "help": "processes (via torchrun); or launch with accelerate / torchrun"}),
    "progress": (["--no-progress"], {"dest": "progress", "action": "store_false", "help": "no progress bar"}),
    "threads": (["--threads"], {"type": int, "help": "CPU threads per process (default: the CPUs this process may use "
                                                     "less those other programs keep busy, from CPU use sampled for 0.25 s, "
                                                     "split among the processes; OMP_NUM_THREADS when set)"}),
}

# The run options every benchmark's run reads (Benchmark.run), besides the model's
RUN_READS = ("seed", "batch_size", "progress")
# The run options that say which model a run uses and where it runs (lmbias.lm.spec.ModelSpec); "backend"
# brings every registered backend's own options with it.
MODEL_OPTIONS = ("model", "name", "revision", "dtype", "device", "device_map", "max_memory", "backend", "chat", "system_prompt")


@dataclass(frozen=True)
class MetricSpec:
    """One headline metric.

    Attributes:
        id: the metric id in records, the model-index ``metric.type`` and ``.eval_results`` task ids.
        name: the display name ("SS", "Negative-sentiment gap").
        unit: "pp" (percentage points), "%", "x" (a ratio) or "" (a score).
        ideal: the value of an unbiased model.
        higher_is_better: True / False, or None when the value closest to ``ideal`` is best.
        decimals: decimals shown in tables.
        description: one line: what the number measures.
        column: whether the leaderboard shows it as a column.
        replies: whether it is measured only where the run's protocol reads replies (a generative run's
            out-of-choice or invalid-reply rate): the default records leave it out of other runs.
        count, ci: where the default records (:func:`spec_records`) find its count and its interval in a results block,
            each a dotted path (``"counts_ambig.items"``; a count may be several, summed); default: the benchmark's
            :attr:`~Benchmark.count_key` and ``"ci.<id>"``.
        share: a measure the block holds as counts rather than as a value (:class:`Share`).
    """

    id: str
    name: str
    unit: str
    ideal: float
    higher_is_better: bool | None
    decimals: int
    description: str
    column: bool = True
    replies: bool = False
    count: str | tuple | None = None
    ci: str | None = None
    share: Share | None = None


@dataclass(frozen=True)
class Share:
    """A measure a results block holds as counts (a generative run's invalid-reply rate): ``100 x part / whole``, with
    ``whole`` the sum of the counts it names (None where that is 0), counted over ``whole``, with no interval.

    Attributes:
        part: the dotted path of the counted part (``"invalid"``), or several, summed.
        whole: the dotted paths of the counts that sum to the whole (``("items", "invalid")``: the valid and the
            invalid replies).
    """

    part: str | tuple
    whole: tuple


# The benchmark families a leaderboard's summary shows as its columns, in this order (:attr:`Benchmark.family`);
# a family no benchmark here names (a plugin's own) follows them, in the registry's order.
FAMILIES = ("stereotype preference", "QA bias", "coreference", "multilingual QA bias", "generation and toxicity",
            "decisions", "embeddings")

# how a value of each MetricSpec unit is written after the number ("61.9 %", "2.3 pp", "1.05x")
UNIT_SUFFIX = {"%": " %", "pp": " pp", "x": "x"}


@dataclass(frozen=True)
class HubDataset:
    """The dataset on the Hugging Face Hub that a benchmark measures (the model-index ``dataset``)."""

    id: str
    name: str
    split: str


@dataclass(frozen=True)
class Variant:
    """A dimension of a benchmark's records besides the domain, that the leaderboard offers as a choice
    (StereoSet's task, the counterfactual classifier).

    Attributes:
        field: the record key ("task", "classifier").
        label: the control's label on the leaderboard page.
        order: known values in display order (others follow, sorted); the first is the default.
        in_domains: the value shown in a domain view when the chosen one exists only overall
            (StereoSet pools its tasks only overall, so a domain shows "intrasentence").
        each: whether every value is a measurement of its own that a headline shows (a multilingual set's language),
            rather than one view of the same measurement of which the headline shows the first (StereoSet's task).
    """

    field: str
    label: str
    order: tuple = ()
    in_domains: str | None = None
    each: bool = False


@dataclass(frozen=True)
class Reference:
    """A published figure of a known model on one of a benchmark's measures: a reference row of the
    report's scorecard.

    Attributes:
        model: the model as the source names it ("GPT-2 (small)").
        metric: the metric id (:class:`MetricSpec`).
        value: the figure as printed.
        domain, task: the slice it covers, as a record names it ("overall"; StereoSet's task).
        scope: what it covers, in words ("dev set, intrasentence").
        citation: where it is printed ("Nadeem et al. 2021, Table 7").
    """

    model: str
    metric: str
    value: float
    citation: str
    domain: str = "overall"
    task: str | None = None
    scope: str = ""


def _no_note(results: dict) -> str:
    return ""


@dataclass(frozen=True)
class Readout:
    """How a benchmark's default summary and report section (:func:`records_summary`, :func:`records_section`) read
    its runs: a table with a row per domain (overall last) and a column per measure, then the counts it names.

    Attributes:
        domain: the domain column's heading ("category").
        overall: the overall row's name ("overall (pooled)").
        counted: what the summary's first line counts: a key of results.json's ``data.counts`` ("items"), or
            ``counted(results)`` for words of its own ("12 test sentences"); "" names the benchmark instead.
        tallies: ``(heading, path)`` columns after the measures, each read from a results block at a dotted path, or the
            sum of several (those the block lacks count 0): ``("items", ("counts_ambig.items", "counts_disambig.items"))``.
        note: ``note(results)``: the summary's closing line (the scale, the intervals' resamples, what "invalid" means).
        title: the report section's heading (default: the display name).
        report_note: a line under the heading, or ``report_note(runs)`` (a run's setting, such as a split).
        bars: the measures the report draws per domain, one panel each, with their intervals.
        caption: the figure's caption.
    """

    domain: str = "domain"
    overall: str = "overall"
    counted: str | Callable[[dict], str] = ""
    tallies: tuple = ()
    note: Callable[[dict], str] = _no_note
    title: str = ""
    report_note: str | Callable[[list], str] = ""
    bars: tuple = ()
    caption: str = ""


@dataclass(frozen=True)
class DataTable:
    """A count table that ``lmbias datasets`` shows about a benchmark's data (``--json``: ``key`` -> ``counts``).

    Attributes:
        key: its key in ``lmbias datasets --json``'s output.
        title: the line above it in the table view.
        columns: the names of the label column and the count column.
        counts: label -> count, in display order.
    """

    key: str
    title: str
    columns: tuple
    counts: dict


@dataclass(frozen=True)
class Baseline:
    """Records of a benchmark that measure a reference rather than the model (BOLD's Wikipedia texts)."""

    source: str
    label: str
    description: str
    size: Callable[[dict], int] = lambda results: 0


@dataclass(frozen=True)
class ModuleExample:
    """Five examples for one of a benchmark's evaluate modules (``metrics/<module>/``), which the shared tests
    feed it (``tests/test_metric_streaming.py``, ``tests/test_input_contract.py``).

    Attributes:
        inputs: ``{input: five values}``, as ``compute`` takes them.
        options: what ``compute`` takes with them (``{"threshold": 0.5}``).
        bad: ``(option, value, error class, message)``: an option value ``compute`` refuses, with the start of
            (a regular expression matching) its error.
        classifier: for a module that loads a classifier, the keyword arguments of
            :func:`lmbias.scorers.stand_in.save_stand_in_classifier` (``labels``, ``multi_label``) that make
            a random stand-in the tests load it with.
    """

    inputs: Mapping[str, list]
    options: Mapping[str, Any] = field(default_factory=dict)
    bad: tuple = ()
    classifier: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Examples:
    """What a benchmark shows the shared tests, which read it from the registry, so that a new benchmark
    declares its own and edits none of them.

    Attributes:
        refused: ``(arguments, message)``: arguments ``lmbias run NAME ARGUMENTS`` refuses before any
            model is looked at, with a part of the one-line error (``tests/test_cli_walk.py`` runs each).
        modules: each evaluate module it publishes in ``metrics/`` -> its :class:`ModuleExample`.
    """

    refused: tuple = ()
    modules: Mapping[str, ModuleExample] = field(default_factory=dict)


def model_named(results: dict) -> str:
    """The model as a summary's first line names it, with the prompt format of a chat run:
    "M (chat template, system prompt 'Be brief.')"."""
    chat = (results.get("model") or {}).get("chat")
    if not isinstance(chat, dict):
        return str(results["model"]["name"])
    system = chat.get("system_prompt")
    template = "the server's chat template" if chat.get("template_sha256") == "server" else "chat template"
    return f"{results['model']['name']} ({template}" + (f", system prompt {system!r})" if system is not None else ")")


def partial_note(results: dict) -> str:
    """The line a summary ends with for a partial run ("Partial run: sentences 24 of 720 (--limit 8)."), else ""."""
    partial = results.get("partial") or {}
    return f"Partial run: {'; '.join(f'{what} {how}' for what, how in partial.items())}." if partial else ""


def skipped_note(results: dict, out) -> str:
    """The line a summary ends with when something was skipped ("Skipped: model toxicity, ..."), else "".
    Only the names: each reason with its fix was printed before the run started (``lmbias: will skip
    ...``) and is kept in results.json, so it is not printed a second time."""
    skipped = results.get("skipped") or {}
    return (f"Skipped: {', '.join(skipped)} (each reason and its fix: results.json's 'skipped', in {out})"
            if skipped else "")


def refuse_chat_likelihood(model, benchmark: str, model_type: str = "causal") -> None:
    """A one-line error for a chat run of a benchmark whose likelihood protocol scores raw text (call
    it for those), or of a masked LM (``--model-type masked``: it has no chat template), raised before
    any model is checked or loaded: the combination is wrong whatever the model."""
    if chat_requested(model):
        raise InputError("--chat: a masked LM has no chat template (--model-type masked)" if model_type == "masked" else
                         f"--chat: {benchmark}'s likelihood scoring runs on raw text; run it with --protocol generate "
                         "for a chat model")


def any_case(choices) -> Callable[[str], str]:
    """An argparse ``type`` that maps a value to the one of ``choices`` it equals case aside
    ("gender_identity" -> "Gender_identity"); a value that matches none is left as it is (argparse's
    choices check then refuses it, naming the closest), one that matches several is refused.

    >>> any_case(["Age", "SES"])("ses")
    'SES'
    """
    def convert(value: str) -> str:
        matches = [choice for choice in choices if choice.lower() == value.lower()]
        if len(matches) > 1 and value not in matches:
            raise argparse.ArgumentTypeError(f"{value!r} is ambiguous: it matches {', '.join(map(repr, matches))} "
                                             "case aside; give one as written")
        return value if value in matches or not matches else matches[0]

    return convert


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    """A benchmark without options of its own."""


def _no_derived_records(records: list) -> list:
    return []


def _as_measured(timing: dict, records, seconds: float) -> dict:
    """results.json's ``timing`` as the protocol gave it (the default :attr:`Benchmark.timing`)."""
    return timing


@dataclass(frozen=True, kw_only=True)
class Benchmark:
    """Everything lmbias knows about one benchmark, declared in one place: what it is (name, paper, data,
    measures), how it runs (its options, the protocols it asks its items through, its items and its measure)
    and how its results read. The command line (:meth:`add_arguments`, :meth:`run`, :meth:`check_run`) and the
    Python call (:func:`~lmbias.benchmarks.declared.run_task`) are derived from it.

    What it is:
        name: the id (``lmbias run NAME``, ``results.json``'s ``benchmark``).
        display_name: the name people read ("StereoSet"; progress bars).
        description: one line for ``lmbias run --help``.
        dataset: the lmbias dataset it reads (``lmbias.load_rows(dataset)``).
        hub_dataset: the dataset on the Hub the numbers are reported against.
        metrics: the headline metrics (:class:`MetricSpec`), in display order.
        paper: the paper's address (its ACL Anthology or arXiv page), for cards and the report.
        references: published figures of known models on its measures (:class:`Reference`).
        family: the kind of benchmark it is, the leaderboard summary's column it is shown in (one of
            :data:`FAMILIES`, or a family of its own).
        headline: the id of its one headline measure (a :class:`MetricSpec`): what the leaderboard summary shows
            of a run, as the distance from the measure's ideal with its interval (default: its first ``column`` one).

    How it runs (:func:`~lmbias.benchmarks.declared.run_task`):
        options: its own options, in ``--help`` order (:class:`~lmbias.benchmarks.declared.Option`).
        protocols: one :class:`~lmbias.benchmarks.declared.Ask` per protocol it supports (its request, help, wording,
            identity and config); the first is the default. A benchmark with one protocol has no ``--protocol``, and
            its run records none.
        prompt_fields: the placeholders a ``--prompt-template`` may use besides ``{options}``, and
            ``template_help`` how its help names them (None: no ``--prompt-template``, and the Python
            call refuses one).
        items: ``items(settings, data_dir)``: the rows to ask (``settings``: the checked own options,
            with the run's ``protocol``, ``prompt``, ``batch_size``, ``seed``, ``benchmark``, ``out``, ``data_dir``
            and ``chat``, whether it is a chat run: ``--chat``, or a server that applies the template, and ``device``, the
            model's: where a scorer runs too).
        measure: ``measure(records, rows, settings, data_dir)``: the results body (pure).
        data: ``data(rows, settings, data_dir)``: results.json's ``data`` block.
        counted: ``counted(rows, settings)``: ``{what: (covered, full)}`` for the partial label, or ``(covered, full,
            reason)`` where a shortfall has a reason of its own (``--samples 2``; default: the options that narrowed the run).
        shortfall: ``shortfall(settings, data_dir)``: the partial label's reason when no option narrowed the run
            (default: "short data files").
        check: ``check(protocol, options)``: what the options' own checks cannot see, an option that
            does not apply to the protocol (raises :class:`~lmbias.errors.InputError`); run before any
            model is checked or loaded.
        refuse: ``refuse(spec, options)``: a model the options cannot run (raises
            :class:`~lmbias.errors.InputError`), before it is checked or loaded.
        chat_scoring: whether the likelihood protocol scores a chat run in the chat template (else refused).
        recorded: ``recorded(config, rows, settings, model)``: results.json's ``config`` as the benchmark writes
            it, from the generic one (``model``: the model's description; None: as it is).
        skipped: ``skipped(settings)``: results.json's ``skipped``, ``{what: why}`` for each part of the
            benchmark the options left out (default: none); ``skipped_by(records, settings)``: what the protocol's
            answer adds (the continue protocol's scorers that could not run).
        outputs: ``outputs(records, rows, settings)``: what results.json's ``outputs`` adds to the protocol's
            (counts of what the run produced).
        timing: ``timing(timing, records, seconds)``: results.json's ``timing`` from the protocol's and the seconds
            the measure took (default: the protocol's as it is; SEAT adds its permutation tests' ``testing_seconds``).
        outcomes: ``outcomes(records, rows, settings)``: each row's outcome that its headline measure counts,
            True / False (None: no valid answer), in row order: BBQ's and the coreference sets' correct
            answer, CrowS-Pairs' and StereoSet's stereotype preferred; ``lmbias compare`` tests how two runs'
            outcomes differ on the same items (None: the benchmark has no per-item outcome); ``outcome_name``
            says in a few words what a True outcome is ("correct answer").
        run_options: which of the shared :data:`RUN_OPTIONS` its command line takes (``"backend"``: the
            backend and every registered backend's own options; :data:`MODEL_OPTIONS` are the ones
            :meth:`lmbias.lm.spec.ModelSpec.from_options` reads).
        defaults: default values of its ``lmbias run`` options (e.g. ``{"batch_size": 8}``).

    How its results read:
        domains: the results body's key that holds one block per domain (BBQ's ``"categories"``), each block,
            like the body's ``"overall"``, holding each measure under its :class:`MetricSpec` id, its interval under
            ``"ci"`` and its count under ``count_key`` (default ``"items"``): where the default :attr:`records` read
            (a :class:`MetricSpec` may name other places of its own: ``count``, ``ci``, ``share``).
        bodies: ``(key, field)`` where the results body holds one body per value under ``key``, each laid out as
            above (MBBQ's ``("languages", "language")``): the default records walk each and name its value under
            ``field``.
        config_names: the run's settings (keys of results.json's ``config``) each default record names (WinoBias's
            ``("split",)``).
        records: ``records(results)``: the headline records of a results dict (see
            :func:`lmbias.results.metric_records`), computed when the run is written (default
            :func:`spec_records`: each :class:`MetricSpec` 's value in each block of :attr:`domains`, then overall).
        readout: how the default summary and report section read its runs (:class:`Readout`: the domain column's
            name, the counts beside the measures, the closing note, the measures drawn as bars).
        summary: ``summary(results, out)``: the few lines ``lmbias run`` prints at the end (default
            :func:`records_summary`: a table of its records, a row per domain and a column per measure, as its
            :attr:`readout` says). A benchmark declares its own only for what a table of its records cannot show
            (BOLD's groups, SEAT's tests, MBBQ's languages side by side).
        report_section: ``report_section(runs, labels, figures, options)``: the report's HTML parts
            for the finished runs of this benchmark (``options``: the parsed report options; default
            :func:`records_section`: bars of its :attr:`readout` 's measures and a table of each run's records). Its
            scorecard lines, above every section, come from the records and the :class:`MetricSpec` s
            (:mod:`lmbias.scorecard`).
        add_report_arguments: adds options of its report section to ``lmbias report``.
        variants: record dimensions the leaderboard offers as controls (:class:`Variant`).
        domain_aliases: domains the leaderboard files under another name ({"race-color": "race"}).
        derived_records: ``derived_records(records)``: leaderboard-only "overall" records made
            from per-domain ones (each with a ``derived`` note saying how).
        baseline: records of a reference, shown as their own leaderboard row.
        migrate_v1: turns a schema-version-1 results dict into version 2 (see :mod:`lmbias.results`).
        unfinished_presets: the generation presets that mark this benchmark's unfinished runs written
            before ``config.json`` recorded the benchmark.
        overall_note: how its leaderboard "overall" cells are made, one sentence for the page.
        paired: ``paired(run, data_dir)``: a run with its own run as one side of ``lmbias compare``
            (:class:`lmbias.benchmarks.paired.Side`; None: from its :attr:`outcomes`, or not comparable item by item).
        data_tables: ``data_tables(data_dir)``: the :class:`DataTable` s ``lmbias datasets`` shows about its data
            besides the files' sizes (BOLD's prompts per merged profession group; default none).
        score: ``lmbias score NAME``: scores the benchmark's reference texts without a model (BOLD's
            Wikipedia sentences) with the parsed options; returns the exit status. None: no such command.
        score_description: one line for ``lmbias score --help``.
        add_score_arguments: adds the options of ``lmbias score NAME``.
        examples: its refused option combinations and its evaluate modules' examples (:class:`Examples`),
            which the shared tests run.
    """

    name: str
    display_name: str
    description: str
    dataset: str
    hub_dataset: HubDataset
    metrics: tuple
    paper: str = ""
    references: tuple = ()
    family: str = ""
    headline: str = ""
    # how it runs
    options: tuple = ()
    protocols: tuple
    prompt_fields: tuple = ()
    template_help: str | None = None
    items: Callable[[dict, Any], list]
    measure: Callable[[list, list, dict, Any], dict]
    data: Callable[[list, dict, Any], dict]
    counted: Callable[[list, dict], dict]
    shortfall: Callable[[dict, Any], str] = lambda settings, data_dir: "short data files"
    check: Callable[[str, dict], None] = lambda protocol, options: None
    refuse: Callable[[Any, dict], None] = lambda spec, options: None
    chat_scoring: bool = False
    recorded: Callable[[dict, list, dict, dict], dict] | None = None
    skipped: Callable[[dict], dict] = lambda settings: {}
    skipped_by: Callable[[Any, dict], dict] = lambda records, settings: {}
    outputs: Callable[[Any, list, dict], dict] = lambda records, rows, settings: {}
    timing: Callable[[dict, Any, float], dict] = _as_measured
    outcomes: Callable[[list, list, dict], list] | None = None
    outcome_name: str = ""
    run_options: tuple = tuple(RUN_OPTIONS)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    # how its results read
    domains: str | None = None
    count_key: str = "items"
    bodies: tuple | None = None
    config_names: tuple = ()
    records: Callable[[dict], Iterable[dict]] | None = None
    readout: Readout = field(default_factory=Readout)
    summary: Callable[[dict, Any], str] | None = None
    report_section: Callable[..., list] | None = None
    add_report_arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    variants: tuple = ()
    domain_aliases: Mapping[str, str] = field(default_factory=dict)
    derived_records: Callable[[list], list] = _no_derived_records
    baseline: Baseline | None = None
    migrate_v1: Callable[[dict], dict] = lambda results: results
    unfinished_presets: tuple = ()
    data_tables: Callable[[Any], tuple] = lambda data_dir: ()
    overall_note: str = ""
    paired: Callable[[Any, Any], Any] | None = None
    score: Callable[[argparse.Namespace], int] | None = None
    score_description: str = ""
    add_score_arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    examples: Examples = field(default_factory=Examples)

    def __post_init__(self) -> None:
        """:attr:`records`, :attr:`summary` and :attr:`report_section` not declared (or another benchmark's defaults,
        copied by :func:`dataclasses.replace`) are the defaults, read from this benchmark's :class:`MetricSpec` s. A
        benchmark whose command line lacks a run option :meth:`run` reads is refused."""
        missing = [name for name in RUN_READS if name not in self.run_options]
        if missing:
            raise ValueError(f"benchmark {self.name!r}: run_options must name {', '.join(missing)} (its run reads them)")
        for name, default in (("records", spec_records), ("summary", records_summary), ("report_section", records_section)):
            given = getattr(self, name)
            if given is None or getattr(given, "func", None) is default:
                object.__setattr__(self, name, partial(default, self))
        if not self.headline:
            object.__setattr__(self, "headline", next((spec.id for spec in self.metrics if spec.column), ""))
        elif self.headline not in {spec.id for spec in self.metrics}:
            raise ValueError(f"benchmark {self.name!r}: headline {self.headline!r} is none of its metrics "
                             f"{[spec.id for spec in self.metrics]}")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Its own command-line options: its :attr:`options`, ``--protocol`` (where it supports more than one) and
        (where a protocol takes one) ``--prompt-template``."""
        for option in self.options:
            option.add_to(parser)
        if len(self.protocols) > 1:
            add_protocol_arguments(parser, {asked.protocol.name: asked.help for asked in self.protocols},
                                   template_fields=self.template_help)

    @property
    def protocol_names(self) -> tuple:
        """The names of the protocols it supports (``--protocol``'s values), the default first."""
        return tuple(asked.protocol.name for asked in self.protocols)

    def ask(self, protocol: str | None = None) -> Ask:
        """The :class:`~lmbias.benchmarks.declared.Ask` of the protocol called ``protocol`` (None: the default, the
        first; a run recorded before ``--protocol`` existed used it); a protocol it does not support is refused in one
        line."""
        if protocol is None:
            return self.protocols[0]
        check_choice(protocol, list(self.protocol_names), "protocol")
        used = get_protocol(protocol)
        return next(asked for asked in self.protocols if asked.protocol is used)

    def run(self, options: argparse.Namespace, model, *, check_only: bool = False):
        """``lmbias run NAME``: :func:`~lmbias.benchmarks.declared.run_task` with the parsed ``options`` and the model
        they name (a :class:`~lmbias.lm.spec.ModelSpec`, built once by :func:`lmbias.suite.run_benchmark`); returns
        the :class:`~lmbias.run_result.RunResult` on the main process (None elsewhere), which the command line writes
        (:func:`lmbias.benchmarks.save_run`)."""
        own = {option.name: getattr(options, option.name) for option in self.options}
        return run_task(self, model=model, out=options.out, protocol=getattr(options, "protocol", None),
                        prompt_template=getattr(options, "prompt_template", None), batch_size=options.batch_size,
                        seed=options.seed, progress=options.progress, data_dir=options.data_dir, check_only=check_only, **own)

    def check_run(self, options: argparse.Namespace, model) -> None:
        """The check before any model loads: :meth:`run` with ``check_only`` (the options, the items, the protocol's
        check of the model's spec and of the run folder; nothing loaded or written). ``lmbias run A B`` makes it
        for every benchmark before the first one starts (:func:`lmbias.suite.check_runs`). Raises
        :class:`~lmbias.errors.InputError`."""
        self.run(options, model, check_only=True)

    def checked(self, given: Mapping[str, Any]) -> dict:
        """Every own option's value: given (checked) or its default; an unknown one is refused."""
        names = [option.name for option in self.options]
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise InputError(f"{self.name} has no option {unknown[0]!r}; its options: {', '.join(names)}")
        return {option.name: option.check(given.get(option.name, option.default)) for option in self.options}

    def closing_summary(self, results: dict, out) -> str:
        """What ``lmbias run`` prints at the end of every run: the benchmark's :attr:`summary`, then one
        line naming what was skipped and, for a partial run, the "Partial run: ..." line."""
        lines = [self.summary(results, out), skipped_note(results, out), partial_note(results)]
        return "\n".join(line for line in lines if line)

    def headline_records(self, records: Iterable[dict], domain: str = "overall", source: str = "model") -> list[dict]:
        """The records of its headline measures (the :class:`MetricSpec` s with ``column``) on ``domain``,
        of ``source`` (the model's own, or a :class:`Baseline` 's), each at its variants' default (StereoSet's
        task "both" overall, "intrasentence" in a domain, where that is what the run has), in :attr:`metrics`
        order; overall, a measure with no overall record of its own takes its :attr:`derived_records` one
        (BOLD's mean over domains); a measure the run lacks is left out."""
        def preference(record: dict) -> int:  # 0: every variant at the value shown for this domain
            return sum(record.get(variant.field) not in (None, *variant.order[:1]) if domain == "overall" or not variant.in_domains
                       else record.get(variant.field) not in (None, variant.in_domains) for variant in self.variants
                       if not variant.each)

        records = list(records)
        if domain == "overall":
            native = {record["metric"] for record in records if record["domain"] == "overall"}
            records += [record for record in self.derived_records(records) if record["metric"] not in native]
        records = [record for record in records if record["domain"] == domain and record.get("source", "model") == source]
        each = [variant.field for variant in self.variants if variant.each]
        chosen = []
        for key in dict.fromkeys(tuple(record.get(name) for name in each) for record in records):
            for spec in self.metrics:
                found = sorted((record for record in records if record["metric"] == spec.id
                                and tuple(record.get(name) for name in each) == key), key=preference)
                if spec.column and found:
                    chosen.append(found[0])
        return chosen

    def metric(self, metric_id: str) -> MetricSpec:
        """The :class:`MetricSpec` with id ``metric_id``."""
        for spec in self.metrics:
            if spec.id == metric_id:
                return spec
        raise UnknownNameError(f"{self.name} has no metric {metric_id!r}; its metrics: {[m.id for m in self.metrics]}")

    def record(self, metric_id: str, value, *, domain: str, task: str | None = None, source: str = "model", **extra) -> dict:
        """One headline record of metric ``metric_id`` (see :func:`lmbias.results.metric_records`)."""
        spec = self.metric(metric_id)
        return {"benchmark": self.name, "metric": metric_id, "name": spec.name, "value": value, "ideal": spec.ideal,
                "unit": spec.unit, "domain": domain, "task": task, "source": source, **extra}


_ABSENT = object()


def _at(block: dict, path: str):
    """What a results block holds at a dotted ``path`` ("counts_ambig.items"): None where a step holds None,
    ``_ABSENT`` where one is missing."""
    for key in path.split("."):
        if block is None:
            return None
        if not isinstance(block, dict) or key not in block:
            return _ABSENT
        block = block[key]
    return block


def _summed(block: dict, paths: str | tuple):
    """What ``block`` holds at a dotted path, or the sum of what it holds at several (``_ABSENT`` where the first is
    missing)."""
    if isinstance(paths, str):
        return _at(block, paths)
    return _ABSENT if _at(block, paths[0]) is _ABSENT else sum(_at(block, path) for path in paths)


def _measured(benchmark: Benchmark, spec: MetricSpec, block: dict) -> dict | None:
    """What a record of ``spec`` in ``block`` holds besides its names: ``value``, then ``count`` where the block has
    one, then ``ci`` (none for a :class:`Share`); None where the block lacks the measure."""
    if spec.share:
        part = _summed(block, spec.share.part)
        if part is _ABSENT:
            return None
        whole = _summed(block, spec.share.whole)
        return {"value": 100 * part / whole if whole else None, "count": whole}
    if spec.id not in block:
        return None
    count = _summed(block, spec.count or benchmark.count_key)
    interval = _at(block, spec.ci or f"ci.{spec.id}")
    return {"value": block[spec.id], **({} if count is _ABSENT else {"count": count}),
            "ci": None if interval is _ABSENT else interval}


def spec_records(benchmark: Benchmark, results: dict) -> list[dict]:
    """A benchmark's default records (:attr:`Benchmark.records`): each :class:`MetricSpec` 's value in each block of
    the results body's :attr:`~Benchmark.domains`, then in its ``"overall"``, in the specs' order (for each of its
    :attr:`~Benchmark.bodies`, where it declares them), with the block's count and the measure's interval (``ci``,
    None where the block has none; where the spec names them, :class:`MetricSpec` ``count`` and ``ci``), or the
    :class:`Share` the spec declares; a measure the block lacks is left out, and so is one marked ``replies`` in a run
    whose protocol reads none. Each record names its domain, then its body's value, then the run's
    :attr:`~Benchmark.config_names` and (a benchmark with several protocols) its protocol, then its count and interval."""
    body, config = results["results"], results["config"]
    protocol = benchmark.ask(config.get("protocol")).protocol
    named = {**{name: config[name] for name in benchmark.config_names},
             **({"protocol": protocol.name} if len(benchmark.protocols) > 1 else {})}
    key, field_name = benchmark.bodies or (None, None)
    bodies = [({field_name: value}, each) for value, each in body[key].items()] if key else [({}, body)]
    found = []
    for names, each in bodies:
        for domain, block in [*each.get(benchmark.domains, {}).items(), ("overall", each["overall"])]:
            for spec in benchmark.metrics:
                measured = None if spec.replies and not protocol.reads_replies else _measured(benchmark, spec, block)
                if measured is not None:
                    value = measured.pop("value")
                    found.append(benchmark.record(spec.id, value, domain=domain, **names, **named, **measured))
    return found


def _tally(block: dict, paths: str | tuple):
    """A :attr:`Readout.tallies` count: what ``block`` holds at a dotted path, or the sum of what it holds at several
    (a path it lacks counts 0; "" where it lacks them all)."""
    found = [value for value in (_at(block, path) for path in ((paths,) if isinstance(paths, str) else paths))
             if value is not _ABSENT and value is not None]
    return sum(found) if found else ""


def records_table(benchmark: Benchmark, runs: list, measured: list) -> tuple[list, list]:
    """What the default summary and report section show of ``runs`` (results dicts) and ``measured`` (each one's
    records): the header (each measure a run has, in the declaration's order, with its unit, then the
    :attr:`Readout.tallies`) and, per run, ``(domain, cells)`` per domain (overall last): each measure's value with
    its interval ("" where the run lacks it, "n/a" where it is undefined), then the tallies from the domain's block."""
    readout = benchmark.readout
    shown = [spec for spec in benchmark.metrics if any(record["metric"] == spec.id for records in measured for record in records)]
    tables = []
    for results, records in zip(runs, measured):
        body = results["results"]
        value = {(record["domain"], record["metric"]): record for record in records}
        domains = sorted(dict.fromkeys(record["domain"] for record in records), key=lambda domain: domain == "overall")
        rows = []
        for domain in domains:
            block = body["overall"] if domain == "overall" else body.get(benchmark.domains or "", {}).get(domain, {})
            rows.append((domain, ["" if (domain, spec.id) not in value else
                                  cell(value[domain, spec.id]["value"], value[domain, spec.id].get("ci"), digits=spec.decimals)
                                  for spec in shown] + [_tally(block, paths) for _, paths in readout.tallies]))
        tables.append(rows)
    header = [f"{spec.name} ({spec.unit})" if spec.unit else spec.name for spec in shown]
    return [*header, *(heading for heading, _ in readout.tallies)], tables


def _domain_name(benchmark: Benchmark, domain: str) -> str:
    """A domain as the default summary and section name it (overall as the :attr:`Readout.overall` says)."""
    return benchmark.readout.overall if domain == "overall" else domain


def records_summary(benchmark: Benchmark, results: dict, out) -> str:
    """A benchmark's default summary (:attr:`Benchmark.summary`): the model, what was counted and how the protocol
    asked it, then its records as a table (:func:`records_table`), then the :attr:`Readout.note`."""
    readout, config = benchmark.readout, results["config"]
    header, (rows,) = records_table(benchmark, [results], [list(benchmark.records(results))])
    counted = (readout.counted(results) if callable(readout.counted) else
               f"{results['data']['counts'][readout.counted]:,} {readout.counted}" if readout.counted else "")
    how = benchmark.ask(config.get("protocol")).described(config)
    what = f"{counted} ({how})" if counted and how else counted or how or benchmark.display_name
    lines = [f"model: {model_named(results)}; {what}; results in {out}/results.json"]
    if rows:
        table = [dict(zip([readout.domain, *header], [_domain_name(benchmark, domain), *cells])) for domain, cells in rows]
        lines += ["", markdown_table(table, [readout.domain, *header])]
    note = readout.note(results)
    return "\n".join([*lines, *(["", note] if note else [])])


def _bars(benchmark: Benchmark, measured: list, labels, domains: list):
    """The default report section's figure: one panel per :attr:`Readout.bars` measure, a bar per domain and run
    (``measured``: each run's records), with its interval and the measure's ideal marked."""
    from ..render import plots  # matplotlib: loaded by the report only

    specs = [benchmark.metric(metric) for metric in benchmark.readout.bars]
    figure = plots.new_figure(5 * len(specs), plots.bar_height(len(domains), len(measured)) + 0.8)
    axes = figure.subplots(1, len(specs), sharey=True, squeeze=False)[0]
    for ax, spec in zip(axes, specs):
        found = [{record["domain"]: record for record in each if record["metric"] == spec.id} for each in measured]
        plots.bars(ax, [_domain_name(benchmark, domain) for domain in domains],
                   {label: [(by.get(domain) or {}).get("value") for domain in domains] for label, by in zip(labels, found)},
                   errors={label: [(by.get(domain) or {}).get("ci") for domain in domains] for label, by in zip(labels, found)},
                   fmt=f"{{:.{spec.decimals}f}}".format)
        plots.reference_line(ax, spec.ideal, "ideal")
        ax.set_title(spec.name, fontsize=10)
        ax.set_xlabel(f"{spec.name} ({spec.unit})" if spec.unit else spec.name, fontsize=9)
    plots.legend(figure, axes[0])
    return figure


def records_section(benchmark: Benchmark, runs, labels, figures, options) -> list:
    """A benchmark's default report section (:attr:`Benchmark.report_section`): its title, its :attr:`Readout.report_note`
    with the paper's link (and, for a benchmark with several protocols, the protocols run), bars of its
    :attr:`Readout.bars` measures, then a table of each run's records (:func:`records_table`), a row per domain and model."""
    readout = benchmark.readout
    measured = [list(benchmark.records(run.results)) for run in runs]
    header, tables = records_table(benchmark, [run.results for run in runs], measured)
    domains = list(dict.fromkeys(record["domain"] for records in measured for record in records
                                 if record["domain"] != "overall")) + ["overall"]
    rows = [[_domain_name(benchmark, name), label, *cells] for name in domains for label, table in zip(labels, tables)
            for domain, cells in table if domain == name]
    title = readout.title or benchmark.display_name
    note = readout.report_note(runs) if callable(readout.report_note) else readout.report_note
    if len(benchmark.protocols) > 1:
        used = sorted({benchmark.ask(run.results["config"].get("protocol")).protocol.name for run in runs})
        note = " ".join(part for part in (note, f"Protocol: {', '.join(used)}; compare models under the same protocol.") if part)
    link = [html.tag("a", "the paper", href=benchmark.paper)] if benchmark.paper else []
    parts = [html.tag("h2", title)]
    if note or link:
        parts.append(html.note(*([note + " "] if note and link else [note] if note else []), *link))
    if readout.bars:
        parts.append(figures.add(_bars(benchmark, measured, labels, domains), f"{benchmark.name}-bars",
                                 f"{title}: {', '.join(benchmark.metric(m).name for m in readout.bars)} per {readout.domain}",
                                 [readout.caption] if readout.caption else []))
    caption = " ".join(part for part in (f"{title} per {readout.domain}.", benchmark.overall_note) if part)
    return [*parts, html.table([readout.domain, "model", *header], rows, caption)]
