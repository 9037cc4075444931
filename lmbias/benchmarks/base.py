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
from typing import Any

from ..errors import InputError, UnknownNameError
from ..lm.backends import DEFAULT_BACKEND
from ..lm.spec import DTYPES

# The options every ``lmbias run BENCHMARK`` may share, defined once; a benchmark lists the ones its
# ``run`` reads (Benchmark.run_options) and may change their defaults (Benchmark.defaults).
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
    """

    id: str
    name: str
    unit: str
    ideal: float
    higher_is_better: bool | None
    decimals: int
    description: str
    column: bool = True


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


def chat_requested(model) -> bool:
    """Whether a run of ``model`` (a :class:`~lmbias.lm.spec.ModelSpec`) is a chat run, known from its
    options alone, before anything is checked or loaded: ``--chat``, or a backend whose server
    applies the chat template (``openai-chat``)."""
    return model.chat is True or model.engine.chat == "server"


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


@dataclass(frozen=True)
class Benchmark:
    """Everything lmbias knows about one benchmark, declared in one place.

    Attributes:
        name: the id (``lmbias run NAME``, ``results.json``'s ``benchmark``).
        display_name: the name people read ("StereoSet").
        description: one line for ``lmbias run --help``.
        dataset: the lmbias dataset it reads (``lmbias.load_rows(dataset)``).
        hub_dataset: the dataset on the Hub the numbers are reported against.
        metrics: the headline metrics (:class:`MetricSpec`), in display order.
        run_options: which of the shared :data:`RUN_OPTIONS` its ``run`` reads (``"backend"``: the
            backend and every registered backend's own options; :data:`MODEL_OPTIONS` are the ones
            :meth:`lmbias.lm.spec.ModelSpec.from_options` reads).
        add_arguments: adds the benchmark's own options to its ``lmbias run`` parser.
        run: ``run(options, model)`` with the parsed options (an ``argparse.Namespace``) and the model
            they name (a :class:`~lmbias.lm.spec.ModelSpec`, built once by :func:`lmbias.suite.run_benchmark`):
            runs the benchmark and returns a :class:`~lmbias.run_result.RunResult` on the main process (None elsewhere);
            the command line writes it (:func:`lmbias.benchmarks.save_run`).
        records: ``records(results)``: the headline records of a results dict (see
            :func:`lmbias.results.metric_records`), computed when the run is written.
        summary: ``summary(results, out)``: the few lines ``lmbias run`` prints at the end.
        report_section: ``report_section(runs, labels, figures, options)``: the report's HTML parts
            for the finished runs of this benchmark (``options``: the parsed report options).
        add_report_arguments: adds options of its report section to ``lmbias report``.
        defaults: default values of its ``lmbias run`` options (e.g. ``{"batch_size": 8}``).
        variants: record dimensions the leaderboard offers as controls (:class:`Variant`).
        domain_aliases: domains the leaderboard files under another name ({"race-color": "race"}).
        derived_records: ``derived_records(records)``: leaderboard-only "overall" records made
            from per-domain ones (each with a ``derived`` note saying how).
        baseline: records of a reference, shown as their own leaderboard row.
        migrate_v1: turns a schema-version-1 results dict into version 2 (see :mod:`lmbias.results`).
        score: ``lmbias score NAME``: scores the benchmark's reference texts without a model (BOLD's
            Wikipedia sentences) with the parsed options; returns the exit status. None: no such command.
        score_description: one line for ``lmbias score --help``.
        add_score_arguments: adds the options of ``lmbias score NAME``.
        overall_note: how its leaderboard "overall" cells are made, one sentence for the page.
        paper: the paper's address (its ACL Anthology or arXiv page), for cards and the report.
        references: published figures of known models on its measures (:class:`Reference`).
        task: its :class:`~lmbias.benchmarks.declared.Task` where it is declared for the generic run (None:
            its own run), for what reads its items again (``lmbias compare``).
        paired: ``paired(run, data_dir)``: a run with its own run as one side of ``lmbias compare``
            (:class:`lmbias.benchmarks.paired.Side`; None: from its Task, or not comparable item by item).
        data_tables: ``data_tables(data_dir)``: the :class:`DataTable` s ``lmbias datasets`` shows about its data
            besides the files' sizes (BOLD's prompts per merged profession group; default none).
        unfinished_presets: the generation presets that mark this benchmark's unfinished runs written
            before ``config.json`` recorded the benchmark.
        examples: its refused option combinations and its evaluate modules' examples (:class:`Examples`),
            which the shared tests run.
    """

    name: str
    display_name: str
    description: str
    dataset: str
    hub_dataset: HubDataset
    metrics: tuple
    run: Callable[[argparse.Namespace, Any], Any]
    records: Callable[[dict], Iterable[dict]]
    summary: Callable[[dict, Any], str]
    report_section: Callable[..., list]
    run_options: tuple = tuple(RUN_OPTIONS)
    add_arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    add_report_arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    defaults: Mapping[str, Any] = field(default_factory=dict)
    variants: tuple = ()
    domain_aliases: Mapping[str, str] = field(default_factory=dict)
    derived_records: Callable[[list], list] = _no_derived_records
    baseline: Baseline | None = None
    migrate_v1: Callable[[dict], dict] = lambda results: results
    unfinished_presets: tuple = ()
    data_tables: Callable[[Any], tuple] = lambda data_dir: ()
    overall_note: str = ""
    paper: str = ""
    references: tuple = ()
    task: Any = None
    paired: Callable[[Any, Any], Any] | None = None
    score: Callable[[argparse.Namespace], int] | None = None
    score_description: str = ""
    add_score_arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    examples: Examples = field(default_factory=Examples)

    def check_run(self, options: argparse.Namespace, model) -> None:
        """The check before any model loads, of a run with the parsed ``options`` and the model they name: its
        :attr:`task`'s (:meth:`~lmbias.benchmarks.declared.Task.check_run`: every option, the items, the protocol's
        check of the model's spec and of the run folder; nothing loaded or written). A benchmark with its own
        ``run`` and no Task has none, and is checked when it runs. Raises :class:`~lmbias.errors.InputError`."""
        if self.task is not None:
            self.task.check_run(options, model)

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
