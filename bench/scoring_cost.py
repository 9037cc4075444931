"""The one option-scoring implementation against the code before it (issue 48): time and peak memory.

Each run is ``python -m lmbias run BENCHMARK --threads 1 --no-progress ...`` with the embedded model, in
a fresh process whose ``PYTHONPATH`` is either the old tree (a worktree of the commit before, e.g.
``git worktree add /tmp/scoring-before e9a2d01``) or this one. Both run on the same items in
alternating order (round 1 before first, round 2 after first, ...), so that a change in the machine's
load falls on both. Per run: the wall seconds end to end (model load included), the scoring seconds
results.json records (``timing.scoring_seconds``), and the process's peak resident memory (its own,
from ``wait4``). The scores files of the two trees are compared byte for byte.

Printed: one row per benchmark and round, the ratios after / before (time: < 1 is faster; memory: <= 1
is no more), and the medians; the machine and its load average before and after.

Usage: ``LMBIAS_DATA_DIR=../shared/data .venv/bin/python bench/scoring_cost.py --before /tmp/scoring-before
[--rounds 3] [--benchmarks crows_pairs stereoset bbq winogender]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
RUNS = {  # the same items on both trees
    "crows_pairs": ["--limit", "100"],
    "stereoset": ["--tasks", "intrasentence", "--limit", "150"],
    "bbq": ["--categories", "Age", "--limit", "10"],  # 40 items, three answers each: the option scorer
    "winogender": ["--limit", "30"],  # 90 sentences, two people each: the option scorer
}


def run_once(tree: Path, benchmark: str, out: Path) -> dict:
    """One run of ``benchmark`` with ``tree``'s lmbias: wall seconds, scoring seconds, peak RSS (MiB)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, "-m", "lmbias", "run", benchmark, "--threads", "1", "--no-progress", "--out", str(out),
               *RUNS[benchmark]]
    started = time.perf_counter()
    with open(out.parent / f"{out.name}.log", "wb") as log:
        process = subprocess.Popen(command, env=env, cwd=out.parent, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed; see {out.parent / f'{out.name}.log'}")
    timing = json.loads((out / "results.json").read_text())["timing"]
    return {"wall": wall, "scoring": timing["scoring_seconds"], "rss": usage.ru_maxrss / 1024,
            "scores": (out / "scores.jsonl").read_bytes()}


def main() -> None:
    """Run the rounds and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--before", required=True, type=Path, help="a worktree of the commit before the change")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per benchmark, alternating which tree runs first")
    parser.add_argument("--benchmarks", nargs="+", default=list(RUNS), choices=list(RUNS))
    args = parser.parse_args()
    if not (args.before / "lmbias" / "__init__.py").is_file():
        raise SystemExit(f"--before {args.before}: no lmbias/ there; expected a worktree of the old commit")
    trees = {"before": args.before.resolve(), "after": HERE}
    load = os.getloadavg()
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").is_file() else platform.processor()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {cpu}; load average "
          f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the start", flush=True)
    rows, ratios = [], {}
    with tempfile.TemporaryDirectory() as folder:
        for benchmark in args.benchmarks:
            for round_ in range(1, args.rounds + 1):
                order = ("before", "after") if round_ % 2 else ("after", "before")
                got = {tree: run_once(trees[tree], benchmark, Path(folder) / f"{benchmark}-{round_}-{tree}") for tree in order}
                same = got["before"]["scores"] == got["after"]["scores"]
                ratio = {key: got["after"][key] / got["before"][key] for key in ("wall", "scoring", "rss")}
                ratios.setdefault(benchmark, []).append(ratio)
                rows.append(f"| {benchmark} | {round_} | {order[0]} | {got['before']['wall']:.1f} | {got['after']['wall']:.1f} | "
                            f"{ratio['wall']:.3f} | {got['before']['scoring']:.1f} | {got['after']['scoring']:.1f} | "
                            f"{ratio['scoring']:.3f} | {got['before']['rss']:,.0f} | {got['after']['rss']:,.0f} | "
                            f"{ratio['rss']:.3f} | {'yes' if same else 'NO'} |")
                print(rows[-1], flush=True)
            medians = {key: statistics.median(r[key] for r in ratios[benchmark]) for key in ("wall", "scoring", "rss")}
            rows.append(f"| {benchmark} | median | | | | {medians['wall']:.3f} | | | {medians['scoring']:.3f} | | | "
                        f"{medians['rss']:.3f} | |")
    load = os.getloadavg()
    print(f"\nload average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end\n")
    print("| benchmark | round | first | wall s before | wall s after | after / before | scoring s before | scoring s after "
          "| after / before | peak RSS MiB before | peak RSS MiB after | after / before | scores.jsonl identical |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
