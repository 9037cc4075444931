"""What a command costs before it does anything: ``lmbias --help``, ``lmbias run --list`` and ``lmbias run
--help``, against a bare ``python -c pass`` and ``python -c "import numpy"`` in the same run (the ratio is
what the machine's speed and load cancel out of).

    python bench/startup.py [--repeat 5]

Each command runs ``--repeat`` times as a subprocess of this interpreter; the table gives the median wall
time and the median CPU time (user + system of the child, from ``resource.getrusage``), which a loaded
machine inflates far less than wall time.
"""

import argparse
import resource
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "python -c 'import numpy'": ["-c", "import numpy"],
    "lmbias --help": ["-m", "lmbias", "--help"],
    "lmbias run --list": ["-m", "lmbias", "run", "--list"],
    "lmbias run --help": ["-m", "lmbias", "run", "--help"],
}


def timed(argv: list) -> tuple:
    """(wall seconds, CPU seconds) of one run of ``python argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, *argv], check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__, allow_abbrev=False)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = {name: [timed(argv) for _ in range(args.repeat)] for name, argv in COMMANDS.items()}
    base = statistics.median(cpu for _, cpu in rows["python -c pass"])
    print(f"| command | wall s (median of {args.repeat}) | CPU s | CPU / python -c pass |")
    print("|---|---|---|---|")
    for name, runs in rows.items():
        wall, cpu = statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)
        print(f"| `{name}` | {wall:.2f} | {cpu:.2f} | {cpu / base:.1f}x |")


if __name__ == "__main__":
    main()
