"""Several benchmarks on one loaded model: ``lmbias run bbq winogender --model M --name NAME`` and
``lmbias.run(["bbq", "winogender"], model=M, name=NAME)``.

Each benchmark runs into its own folder under one parent (default ``runs/<name>/<benchmark>``),
resumable, locked and partial-labelled as a single run is. Before the first one starts, every
benchmark's options and folder are checked (:meth:`lmbias.benchmarks.Benchmark.check_run`), so a mistake
in the fifth is said before the model loads; then the model loads once
(:func:`lmbias.lm.spec.one_load_per_model`) and the benchmarks run in the order given. A benchmark
that fails is reported and the others still run.

Options are of two kinds. The shared run options (:data:`lmbias.benchmarks.RUN_OPTIONS`: model,
backend, batch size, seed ...) apply to every chosen benchmark that takes them. A benchmark's own
options are named with the benchmark in front, ``--bbq.categories Age`` on the command line and
``bbq={"categories": ["Age"]}`` in Python; the same option without the prefix is refused, naming
the prefixed form, so that ``--limit`` (which counts different things in different benchmarks)
is never guessed.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path

from .benchmarks import RUN_OPTIONS, Benchmark, get_benchmark, names, save_run
from .benchmarks.base import UNIT_SUFFIX
from .errors import InputError, LmbiasError, UnknownNameError
from .files import slugify
from .lm import backends
from .lm.processes import leave_together, process_state
from .lm.spec import ModelSpec, check_display_name, display_name_of, one_load_per_model

# Named sets of benchmarks (``all``: every registered one, in registration order).
SETS = {
    "model-card": ("bbq", "crows_pairs", "winogender", "winobias", "stereoset"),
    "bbq-languages": ("bbq", "mbbq", "esbbq", "cabbq", "kobbq", "cbbq"),
    "all": None,
}
SET_DESCRIPTIONS = {
    "model-card": "the likelihood and multiple-choice sets model cards report",
    "bbq-languages": "BBQ in every language it exists in, each set scored as its authors score it",
    "all": "every registered benchmark",
}
# A benchmark's own options that may also be given once, unprefixed, for every chosen benchmark
# (``lmbias run winobias winogender --protocol generate``); each chosen benchmark must have it, and a
# benchmark's prefixed one (``--winobias.protocol``) wins over it.
GIVEN_ONCE = ("protocol",)
DATA_DIR_HELP = "local data folder (default: LMBIAS_DATA_DIR, the cache, a download)"
# A benchmark's ``--help`` lists its own options first, then these groups of shared ones.
_RUN_OPTION_GROUPS = {
    "model and where it runs": ("model", "name", "revision", "dtype", "device", "device_map", "max_memory", "num_processes",
                                "threads", "batch_size"),
    "backend (each backend's own options after --backend)": ("backend",),
    "prompt format": ("chat", "system_prompt"),
}


def set_members(name: str) -> list:
    """The benchmarks of set ``name`` (a key of :data:`SETS`)."""
    members = SETS[name]
    return names() if members is None else [member for member in members if member in names()]


def expand(chosen: Sequence[str]) -> list:
    """The benchmark names ``chosen`` stands for: sets expanded, each name once, in the order given.

    Raises:
        UnknownNameError: a name that is neither a benchmark nor a set, with the nearest ones.
    """
    if isinstance(chosen, str) or not isinstance(chosen, Sequence) or not chosen:
        raise InputError(f"benchmarks must be a non-empty list of benchmark or set names, got {chosen!r}")
    expanded: list = []
    for name in chosen:
        if not isinstance(name, str):
            raise InputError(f"benchmarks must be names, got {name!r}")
        if name in SETS:
            expanded.extend(set_members(name))
        elif name in names():
            expanded.append(name)
        else:
            import difflib

            close = difflib.get_close_matches(name.lower(), [*names(), *SETS], n=2, cutoff=0.5)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise UnknownNameError(f"unknown benchmark or set {name!r} (`lmbias run --list` shows them){hint}")
    return list(dict.fromkeys(expanded))


def listing() -> str:
    """What ``lmbias run --list`` prints: the sets with their members, then every benchmark."""
    width = max(map(len, [*SETS, *names()]))
    lines = ["sets:"]
    lines += [f"  {name:<{width}}  {', '.join(set_members(name))} ({SET_DESCRIPTIONS[name]})" for name in SETS]
    lines += ["", "benchmarks:"]
    lines += [f"  {benchmark.name:<{width}}  {benchmark.description}" for benchmark in map(get_benchmark, names())]
    return "\n".join(lines)


def _backend_option() -> tuple:
    """``--backend``: its choices and their descriptions from the backend registry."""
    flags, settings = RUN_OPTIONS["backend"]
    described = "; ".join(f"{backend.name}: {backend.description}" for backend in backends.REGISTRY.values())
    return flags, {**settings, "choices": backends.names(), "help": described}


def add_run_options(parser: argparse.ArgumentParser, option_names) -> None:
    """Add the shared run options ``option_names`` (keys of :data:`RUN_OPTIONS`) to ``parser``, in
    groups; ``"backend"`` adds every registered backend's own options after it."""
    option_names = list(option_names)
    for title, members in [*_RUN_OPTION_GROUPS.items(), ("run", option_names)]:
        group = parser.add_argument_group(title)
        for name in [name for name in members if name in option_names]:
            flags, settings = _backend_option() if name == "backend" else RUN_OPTIONS[name]
            group.add_argument(*flags, **settings)
            if name == "backend":
                for backend_flags, backend_settings in backends.backend_options().values():
                    group.add_argument(*backend_flags, **backend_settings)
            option_names.remove(name)
        if title == "run":
            group.add_argument("--data-dir", help=DATA_DIR_HELP)


def benchmark_parser(benchmark: Benchmark, parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """``parser`` (a new one if None) with every option of ``lmbias run BENCHMARK``: the benchmark's
    own, ``--out``, then the shared run options it takes, with its defaults."""
    parser = parser or argparse.ArgumentParser(allow_abbrev=False, prog=f"lmbias run {benchmark.name}", add_help=False)
    benchmark.add_arguments(parser)
    parser.add_argument("--out", help=f"run directory; an interrupted run resumes there (default: runs/{benchmark.name}-MODEL"
                                      "[-SETTINGS]: the model's name and the options given, so that runs with other "
                                      "settings never share a folder)")
    add_run_options(parser, benchmark.run_options)
    parser.set_defaults(**benchmark.defaults)
    return parser


def own_options(benchmark: Benchmark) -> list:
    """The argparse actions of ``benchmark``'s own options (those its ``add_arguments`` declares)."""
    parser = argparse.ArgumentParser(allow_abbrev=False, add_help=False)
    benchmark.add_arguments(parser)
    return [action for action in parser._actions if action.option_strings]


def given_once_options(chosen: Sequence[str]) -> list:
    """The argparse actions of the :data:`GIVEN_ONCE` options that some of ``chosen`` have, unprefixed, with
    the choices of all of them (:func:`plan` checks each benchmark's own)."""
    import copy

    added = []
    for key in GIVEN_ONCE:
        actions = [action for name in chosen for action in own_options(get_benchmark(name)) if action.dest == key]
        if actions:
            action = copy.copy(actions[0])
            choices = [choice for each in actions for choice in (each.choices or ())]
            action.choices = list(dict.fromkeys(choices)) or None
            action.help = (f"given once, for every chosen benchmark (each must have {action.option_strings[-1]}; "
                           f"--NAME.{action.option_strings[-1][2:]} for one alone)")
            added.append(action)
    return added


def _check_given_once(chosen: Sequence[str], key: str, value) -> None:
    """An InputError unless every one of ``chosen`` has the own option ``key`` and takes ``value``."""
    flag = "--" + key.replace("_", "-")
    lacking, refusing = [], []
    for name in chosen:
        action = next((a for a in own_options(get_benchmark(name)) if a.dest == key), None)
        if action is None:
            lacking.append(name)
        elif action.choices is not None and value not in action.choices:
            refusing.append(f"{name} (its: {', '.join(map(str, action.choices))})")
    if lacking:
        having = [name for name in chosen if name not in lacking]
        raise InputError(f"{flag} given once applies to every chosen benchmark, but {', '.join(lacking)} "
                         f"{'has' if len(lacking) == 1 else 'have'} no {flag}; give it to "
                         + " / ".join(f"--{name}.{key}" for name in having) + " instead")
    if refusing:
        raise InputError(f"{flag} {value} is not a choice of {'; '.join(refusing)}")


def shared_option_names() -> set:
    """The destinations of the shared run options (every backend's own options included) and ``--data-dir``."""
    parser = argparse.ArgumentParser(allow_abbrev=False, add_help=False)
    add_run_options(parser, RUN_OPTIONS)
    return {action.dest for action in parser._actions if action.option_strings}


def plan(chosen: Sequence[str], shared: Mapping, own: Mapping[str, Mapping], *, out=None) -> list:
    """The runs of ``lmbias run A B ...``: ``[(benchmark, options)]`` with each benchmark's options
    (an ``argparse.Namespace``) made of its defaults, the ``shared`` options it takes and its ``own``
    ones, its folder ``<out>/<benchmark>`` (``out`` default ``runs/<slug of the display name>``).

    Raises:
        InputError: a shared option no chosen benchmark takes, own options of a benchmark not
            chosen or that it does not have, an invalid ``name``.
    """
    chosen = expand(chosen)
    check_display_name(shared.get("name"))
    for name in own:
        if name not in chosen:
            raise InputError(f"options for {name!r} were given, but {name!r} is not among the chosen benchmarks "
                             f"({', '.join(chosen)})" if name in names() else
                             f"options for {name!r} were given, but there is no benchmark {name!r} ({', '.join(chosen)} were chosen)")
    for key in GIVEN_ONCE:
        if key in shared:
            _check_given_once(chosen, key, shared[key])
    defaults = {name: vars(benchmark_parser(get_benchmark(name)).parse_args([])) for name in chosen}
    taken = {key for name in chosen for key in defaults[name]}
    unknown = sorted(set(shared) - taken - {"out"})
    if unknown:
        raise InputError(f"option {unknown[0]!r} is taken by none of the chosen benchmarks ({', '.join(chosen)})")
    model = shared.get("model")
    parent = Path(out) if out is not None else \
        Path("runs") / slugify(shared.get("name") or (display_name_of(model) if model else "smollm2-135m-instruct"))
    runs = []
    for name in chosen:
        options = dict(defaults[name])
        valid = {action.dest for action in own_options(get_benchmark(name))}
        for key, value in (own.get(name) or {}).items():
            if key not in valid:
                import difflib

                close = difflib.get_close_matches(key, sorted(valid), n=1)
                raise InputError(f"{name} has no option {key!r}" + (f"; did you mean {close[0]!r}?" if close else "")
                                 + f" (its options: {', '.join(sorted(valid)) or 'none'})")
            options[key] = value
        options.update({key: value for key, value in shared.items() if key in options and key not in (own.get(name) or {})})
        options.update(out=str(parent / name), benchmark=name)
        runs.append((get_benchmark(name), argparse.Namespace(**options)))
    return runs


def run_benchmark(benchmark: Benchmark, options: argparse.Namespace):
    """``benchmark.run(options, model)`` with the model its options name, as one
    :class:`~lmbias.lm.spec.ModelSpec` (the one place that turns options into a spec): the run, or
    None on processes other than the main one."""
    return benchmark.run(options, ModelSpec.from_options(options))


def check_runs(runs: list) -> None:
    """Check every run's options and folder, in order, before any model loads: all refusals are
    collected and raised together as one :class:`InputError`, one line per benchmark."""
    created = []  # the folders that a refusal must not leave behind (each run's lock removes its own)
    for _, options in runs:
        folder = Path(options.out).parent
        while not folder.exists() and folder not in created:
            created.append(folder)
            folder = folder.parent
    refusals = []
    for benchmark, options in runs:
        try:
            benchmark.check_run(options, ModelSpec.from_options(options))
        except LmbiasError as error:
            refusals.append(f"{benchmark.name}: " + str(error).replace("\n", "\n    "))
    if refusals:
        for folder in sorted(created, key=lambda path: len(path.parts), reverse=True):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        raise InputError("nothing was run:" + ("\n  " if len(refusals) > 1 else " ") + "\n  ".join(refusals))


def run_all(runs: list, *, echo=print) -> dict:
    """Run ``runs`` (from :func:`plan`, checked by :func:`check_runs`) on one loaded model: each
    result is written and its summary printed as it finishes. Returns ``{benchmark: outcome}``,
    ``outcome`` being ``{"out", "status": "done" | "partial" | "failed", "results" or "error"}``."""
    main = process_state().is_main_process
    outcomes: dict = {}
    with one_load_per_model() as loaded:
        for number, (benchmark, options) in enumerate(runs, 1):
            if main:
                echo(f"\n== {benchmark.name} ({number} of {len(runs)}) -> {options.out}", flush=True)
            try:
                result = run_benchmark(benchmark, options)
                if result is None:  # a process other than the main one
                    continue
                results = save_run(result)
                echo(benchmark.closing_summary(results, options.out))
                outcomes[benchmark.name] = {"out": options.out, "status": "partial" if results.get("partial") else "done",
                                            "results": results}
            except LmbiasError as error:
                print(f"lmbias: error: {benchmark.name}: {error}", file=sys.stderr, flush=True)
                outcomes[benchmark.name] = {"out": options.out, "status": "failed", "error": str(error)}
            except Exception as error:  # noqa: BLE001 (a bug in one benchmark must not stop the others)
                traceback.print_exc()
                outcomes[benchmark.name] = {"out": options.out, "status": "failed",
                                            "error": f"{type(error).__name__}: {error} (a bug in lmbias; the traceback is above)"}
        if main:
            echo(f"\n(model loads: {len(loaded)} for {len(runs)} benchmark{'s' * (len(runs) > 1)}"
                 + (": a causal and a masked model" if len(loaded) > 1 else "") + ")")
    leave_together()
    return outcomes


def headline(outcome: dict, most: int = 3) -> str:
    """Up to ``most`` headline measures of a finished run, overall and with each variant at its first
    value (StereoSet's task "both"), e.g. "LMS 84.8 %; SS 59.7 %; ICAT 68.3"; or its error."""
    if outcome["status"] == "failed":
        return outcome["error"].splitlines()[0][:100]
    results = outcome["results"]
    benchmark = get_benchmark(results["benchmark"])
    shown = []
    for record in benchmark.headline_records(results.get("records", [])):
        if record["value"] is not None:
            spec = benchmark.metric(record["metric"])
            shown.append(f"{spec.name} {record['value']:.{spec.decimals}f}{UNIT_SUFFIX.get(spec.unit, '')}")
    return "; ".join(shown[:most]) or "-"


def summary_table(outcomes: dict, model: str) -> str:
    """The table ``lmbias run A B ...`` ends with: one row per benchmark."""
    from .render.text import markdown_table

    rows = [{"benchmark": name, "status": outcome["status"], "headline": headline(outcome), "folder": outcome["out"]}
            for name, outcome in outcomes.items()]
    failed = sum(outcome["status"] == "failed" for outcome in outcomes.values())
    return "\n".join([f"\n{model}: {len(outcomes) - failed} of {len(outcomes)} benchmarks finished"
                      + (f", {failed} failed (each error above)" if failed else ""), "",
                      markdown_table(rows, ["benchmark", "status", "headline", "folder"])])


def run_suite(benchmarks: Sequence[str], *, out=None, progress: bool = True, **options) -> dict:
    """Run several benchmarks on one loaded model (``lmbias run A B ...`` from Python).

    Args:
        benchmarks: benchmark names and set names (``"model-card"``, ``"all"``; :data:`SETS`).
        out: the parent folder (default ``runs/<slug of the display name>``); each benchmark runs in
            ``<out>/<benchmark>`` and resumes there.
        **options: the shared run options by their Python names (``model``, ``name``, ``backend``,
            ``batch_size``, ``seed``, ``chat``, backend options such as ``base_url`` ...), and a dict of
            a benchmark's own options under its name (``bbq={"categories": ["Age"], "limit": 20}``).

    Returns:
        ``{benchmark: {"out", "status", "results" | "error"}}`` in run order (status "done",
        "partial" or "failed"; see :func:`run_all`).

    Raises:
        InputError: an unknown name or option, or a benchmark that cannot run with these options (said
            before anything loads; nothing is written).

    Example (the embedded model, a few items each)::

        import lmbias
        outcomes = lmbias.run(["winogender", "winobias"], name="SmolLM2", out="runs/smollm2",
                              winogender={"limit": 4}, winobias={"limit": 4})
        outcomes["winogender"]["results"]["records"][0]["value"]
    """
    chosen = expand(benchmarks)
    own = {key: value for key, value in options.items() if key in names() or key in SETS}
    for key, value in own.items():
        if not isinstance(value, Mapping):
            raise InputError(f"{key}= must be a dict of {key}'s own options (e.g. {key}={{'limit': 10}}), got {value!r}")
    shared = {key: value for key, value in options.items() if key not in own}
    valid = shared_option_names() | {"name", *GIVEN_ONCE}
    for key in shared:
        if key not in valid:
            owners = [name for name in chosen if key in {a.dest for a in own_options(get_benchmark(name))}]
            raise InputError(f"{key!r} is an option of {', '.join(owners)}: give it as "
                             + ", ".join(f"{owner}={{{key!r}: ...}}" for owner in owners) if owners else
                             f"unknown option {key!r}; shared options: {', '.join(sorted(valid))}")
    runs = plan(chosen, {**shared, "progress": progress}, own, out=out)
    check_runs(runs)
    return run_all(runs)
