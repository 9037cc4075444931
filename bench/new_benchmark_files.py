"""Which files a new benchmark touched outside the places that are its own (issue 48's measure).

    python bench/new_benchmark_files.py main..peh          # what the branch peh changed since it left main
    python bench/new_benchmark_files.py 1a2b3c4 5d6e7f8    # what these commits changed (each against its parent)
    python bench/new_benchmark_files.py main..peh --name political_even_handedness --repo ../other-clone

A new benchmark NAME owns (the goal set):

- its folder ``lmbias/benchmarks/NAME/``;
- its evaluate module folder ``metrics/NAME/`` (or ``metrics/NAME_*/`` for a benchmark that publishes several
  modules, like BOLD's ``bold_sentiment`` ...);
- its page ``docs/benchmarks/NAME.md``;
- its test ``tests/test_NAME.py``;
- one registration line in ``setup.cfg``: ``setup.cfg`` counts as its own only where the change is nothing but
  lines ``<name> = lmbias.benchmarks.NAME...:<OBJECT>`` added to the ``lmbias.benchmarks`` group (the text after
  the change, without those lines, equals the text before it); a line in another group (``lmbias.datasets``) or
  in ``packages`` is a change outside the goal set.

NAME is every folder under ``lmbias/benchmarks/`` that the change adds (``--name`` gives it instead). The table
lists every changed file, whether it is in the goal set, and its added / removed lines; the last line counts
the files outside the goal set. With ``A..B`` (or ``A...B``) the change is ``git diff $(git merge-base A B) B``;
with commits, the union of each commit's change against its first parent.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import PurePosixPath

SETUP = "setup.cfg"


def git(repo: str, *args: str) -> str:
    """The standard output of ``git -C repo ARGS`` (a failing command: SystemExit with git's own message)."""
    done = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"new_benchmark_files: git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def changes(repo: str, revisions: list[str]) -> list[tuple[str, str]]:
    """The ``(before, after)`` commit pairs whose diffs make up the change ``revisions`` names."""
    if len(revisions) == 1 and ".." in revisions[0]:
        base, _, tip = revisions[0].replace("...", "..").partition("..")
        tip = tip or "HEAD"
        return [(git(repo, "merge-base", base or "HEAD", tip).strip(), git(repo, "rev-parse", tip).strip())]
    pairs = []
    for revision in revisions:
        commit = git(repo, "rev-parse", f"{revision}^{{commit}}").strip()
        parents = git(repo, "rev-list", "--parents", "-n", "1", commit).split()[1:]
        if not parents:
            raise SystemExit(f"new_benchmark_files: {revision} has no parent to compare with")
        pairs.append((parents[0], commit))
    return pairs


def numstat(repo: str, before: str, after: str) -> dict:
    """``path -> (added, removed)`` lines between two commits (a binary file: ``(None, None)``)."""
    found = {}
    for line in git(repo, "diff", "--numstat", "--no-renames", before, after).splitlines():
        added, removed, path = line.split("\t", 2)
        found[path] = (None, None) if added == "-" else (int(added), int(removed))
    return found


def new_folders(repo: str, before: str, after: str) -> set:
    """The folders under ``lmbias/benchmarks/`` that exist at ``after`` and not at ``before``."""
    def folders(commit: str) -> set:
        listed = git(repo, "ls-tree", "-d", "--name-only", commit, "lmbias/benchmarks/").split()
        return {PurePosixPath(path).name for path in listed}

    return folders(after) - folders(before)


def only_registration(repo: str, before: str, after: str, names: set) -> bool:
    """Whether ``setup.cfg``'s change is nothing but registration lines of ``names`` added to the ``lmbias.benchmarks``
    entry-point group."""
    def text(commit: str) -> str:
        shown = subprocess.run(["git", "-C", repo, "show", f"{commit}:{SETUP}"], capture_output=True, text=True)
        return shown.stdout if shown.returncode == 0 else ""

    line = re.compile(r"^\s+[\w.-]+\s*=\s*lmbias\.benchmarks\.(" + "|".join(map(re.escape, sorted(names))) +
                      r")(\.[\w.]+)?:\w+\s*$")
    kept, group = [], None
    for row in text(after).splitlines():
        heading = re.match(r"^([\w.-]+)\s*=\s*$|^\[", row)  # an entry-point group's first line, or a section
        if heading:
            group = heading.group(1)
        if not (names and group == "lmbias.benchmarks" and line.match(row)):
            kept.append(row)
    return kept == text(before).splitlines()


def owned(path: str, names: set) -> bool:
    """Whether ``path`` is in the goal set of one of the benchmarks ``names`` (setup.cfg aside)."""
    for name in names:
        if (path.startswith(f"lmbias/benchmarks/{name}/") or path in (f"docs/benchmarks/{name}.md", f"tests/test_{name}.py")
                or re.match(rf"metrics/{re.escape(name)}(_[\w-]+)?/", path)):
            return True
    return False


def table(repo: str, revisions: list[str], names: set | None = None) -> tuple[list[dict], set]:
    """Every file the change touched: ``{"path", "added", "removed", "own"}`` rows (sorted: outside the goal set
    first, then by path), and the benchmark names the goal set was made for."""
    pairs = changes(repo, revisions)
    if names is None:
        names = set().union(*(new_folders(repo, before, after) for before, after in pairs))
    rows: dict = {}
    for before, after in pairs:
        for path, (added, removed) in numstat(repo, before, after).items():
            own = only_registration(repo, before, after, names) if path == SETUP else owned(path, names)
            row = rows.setdefault(path, {"path": path, "added": 0, "removed": 0, "own": True})
            if added is None:
                row["added"] = row["removed"] = None
            elif row["added"] is not None:
                row["added"] += added
                row["removed"] += removed
            row["own"] = row["own"] and own
    return sorted(rows.values(), key=lambda row: (row["own"], row["path"])), names


def render(rows: list[dict], names: set) -> str:
    """The table as Markdown, with the count of files outside the goal set."""
    lines = [f"benchmark folders: {', '.join(sorted(names)) or 'none found (give --name)'}", "",
             "| file | its own | lines +/- |", "|---|---|---|"]
    for row in rows:
        counted = "binary" if row["added"] is None else f"+{row['added']} -{row['removed']}"
        lines.append(f"| {row['path']} | {'yes' if row['own'] else 'NO'} | {counted} |")
    outside = sum(not row["own"] for row in rows)
    lines += ["", f"{outside} of {len(rows)} changed files are outside the goal set (its folder, its evaluate module "
                  "folder, its docs page, its test, one registration line in setup.cfg)"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the table for the change the command line names."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("revisions", nargs="+", help="a range A..B, or one or more commits")
    parser.add_argument("--name", action="append", help="the benchmark's folder name under lmbias/benchmarks/ "
                        "(repeatable; default: every folder the change adds)")
    parser.add_argument("--repo", default=".", help="the git repository (default: the current directory)")
    options = parser.parse_args(argv)
    rows, names = table(options.repo, options.revisions, set(options.name) if options.name else None)
    print(render(rows, names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
