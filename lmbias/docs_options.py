"""The "Options" table of each benchmark's page (docs/benchmarks/<name>.md), generated from the options
``lmbias run NAME`` declares, so that the docs and ``--help`` cannot drift apart.

    python -m lmbias.docs_options           # rewrite the tables (make docs)
    python -m lmbias.docs_options --check   # exit 1 naming each page whose table differs

A declared benchmark's options come from its :class:`~lmbias.benchmarks.declared.Option` s (and its
protocols'); the others' from their own ``add_arguments``. Either way the table is read from the
parser the command line builds, in ``--help`` order, with the help text ``--help`` prints.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from .benchmarks import benchmarks
from .cli import HelpFormatter, _subparser, build_parser

HEADING = "## Options"
SHOWN_CHOICES = 4  # more choices than this show as the first three and "..."


def own_actions(benchmark: str) -> list[argparse.Action]:
    """The actions of ``lmbias run BENCHMARK``'s own options (the help's first group), ``--out`` and
    ``--help`` aside, in ``--help`` order."""
    parser = _subparser(build_parser(), "run", benchmark)
    group = next(group for group in parser._action_groups if group.title == "options")
    return [action for action in group._group_actions
            if action.option_strings and max(action.option_strings, key=len) not in ("--help", "--out")]


def invocation(action: argparse.Action) -> str:
    """How the option is written, as ``--help`` writes it: ``--limit N``, ``--tasks {intrasentence,intersentence} ...``,
    ``--tests TEST ...`` (a metavar instead of the choices), a flag alone."""
    flag = max(action.option_strings, key=len)
    if action.nargs == 0:
        return flag
    if action.choices is not None and action.metavar is None:  # a metavar stands for the choices, as in --help
        choices = [str(choice) for choice in action.choices]
        value = "{" + ",".join(choices if len(choices) <= SHOWN_CHOICES else [*choices[:3], "..."]) + "}"
    else:
        value = action.metavar or action.dest.upper()
    return f"{flag} {value}" + (" ..." if action.nargs in ("+", "*") else "")


def options_table(benchmark: str) -> str:
    """The Markdown table of ``lmbias run BENCHMARK``'s own options, as its page shows it."""
    formatter = HelpFormatter(f"lmbias run {benchmark}")
    rows = [f"| option | what it does (from `lmbias run {benchmark} --help`) |", "|---|---|"]
    for action in own_actions(benchmark):
        text = formatter._expand_help(action) if action.help else ""
        rows.append(f"| `{invocation(action)}` | {' '.join(text.split()).replace('|', chr(92) + '|')} |")
    return "\n".join(rows)


def with_table(page: str, table: str) -> str:
    """``page`` (a benchmark page's text) with the table under its "## Options" heading replaced by ``table``."""
    match = re.search(rf"^{HEADING}\n\n((?:\|.*\n)+)", page, flags=re.M)
    if match is None:
        raise ValueError(f"no table under a {HEADING!r} heading")
    return page[: match.start(1)] + table + "\n" + page[match.end(1):]


def pages(docs: Path) -> dict[str, Path]:
    """Benchmark name -> its page, for every benchmark lmbias itself declares (a plugin's pages are its own)."""
    return {benchmark.name: docs / "benchmarks" / f"{benchmark.name}.md" for benchmark in benchmarks()
            if benchmark.measure.__module__.startswith(f"{__package__}.benchmarks.")}


def main(argv: list[str] | None = None) -> int:
    """Rewrite (or, with ``--check``, compare) every benchmark page's options table; 1 when one differs."""
    parser = argparse.ArgumentParser(allow_abbrev=False, prog="python -m lmbias.docs_options", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 naming each page that differs")
    parser.add_argument("--docs", type=Path, default=Path(__file__).resolve().parents[1] / "docs", help="the docs folder")
    args = parser.parse_args(argv)
    problems, stale = [], []
    for name, path in pages(args.docs).items():
        try:
            text = path.read_text(encoding="utf-8")
            updated = with_table(text, options_table(name))
        except (OSError, ValueError) as error:
            problems.append(f"{path}: {error}")
            continue
        if updated != text:
            stale.append(f"{path}: its options table differs from `lmbias run {name} --help`")
            if not args.check:
                path.write_text(updated, encoding="utf-8")
    for line in stale:
        print(f"{line} (run make docs)" if args.check else f"updated {line.split(':')[0]}", file=sys.stderr)
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems or (args.check and stale) else 0

if __name__ == "__main__":
    sys.exit(main())
