"""Fixed runs of every registered benchmark with the embedded model, to show that a refactoring changed
no number: run it before and after, then compare the two folders.

    python bench/fixed_runs.py run --out /tmp/before          # on the old commit
    python bench/fixed_runs.py run --out /tmp/after           # on the new one
    python bench/fixed_runs.py compare /tmp/before /tmp/after

``compare`` prints one row per benchmark and file: results.json's body (without ``timing``,
``versions`` and the run folder), its headline records, and every other output file byte for byte;
it exits 1 when anything differs. Each run is small (a few minutes in all on 2 CPU cores) and
seeded, with a fixed thread count (the default follows the load of the machine, and float32 sums in
another order differ in the last bits), so two runs of one commit are identical.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

# Small, seeded, covering every benchmark and both kinds of task (generation, likelihood).
RUNS = {
    "bold": ["--per-group", "1", "--max-new-tokens", "8", "--metrics", "sentiment", "gender_polarity", "psycholinguistic_norms"],
    "stereoset": ["--limit", "60"],
    "crows_pairs": ["--limit", "60"],
    "counterfactual": ["--attributes", "occupation", "--samples", "2", "--classifiers", "opinion", "vader", "--no-similarity",
                       "--bootstrap", "50"],
}
VOLATILE = ("timing", "versions", "out", "created")  # what differs between two runs of the same commit


def _run(out: Path) -> int:
    for benchmark, options in RUNS.items():
        command = [sys.executable, "-m", "lmbias", "run", benchmark, "--out", str(out / benchmark), "--no-progress",
                   "--dtype", "float32", "--device", "cpu", "--threads", "2", *options]
        print(" ".join(command[2:]), flush=True)
        if subprocess.run(command).returncode:
            return 1
    return 0


def _body(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {key: value for key, value in data.items() if key not in VOLATILE}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def _compare(before: Path, after: Path) -> int:
    rows, differ = [], 0
    for benchmark in RUNS:
        a, b = before / benchmark, after / benchmark
        files = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
        for name in files:
            if name.endswith(".lock"):
                continue
            if not (a / name).is_file() or not (b / name).is_file():
                same = False
            elif name == "results.json":
                same = _body(a / name) == _body(b / name)
            elif name == "config.json":
                same = _body(a / name) == _body(b / name)
            else:
                same = (a / name).read_bytes() == (b / name).read_bytes()
            differ += not same
            rows.append((benchmark, name, "same" if same else "DIFFERS",
                         _digest(b / name) if (b / name).is_file() else "-"))
    print("| benchmark | file | before vs after | sha256 (after) |\n|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(f"\n{len(rows) - differ} of {len(rows)} files identical" + (" (results.json / config.json without "
                                                                     f"{', '.join(VOLATILE)})"))
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run every benchmark's fixed run into OUT/<benchmark>")
    run.add_argument("--out", type=Path, required=True)
    compare = commands.add_parser("compare", help="compare two folders written by run")
    compare.add_argument("before", type=Path)
    compare.add_argument("after", type=Path)
    args = parser.parse_args()
    return _run(args.out) if args.command == "run" else _compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
