"""Run a command and print its wall time and peak resident memory (its largest process, children included).

``python bench/peak_rss.py -- lmbias run crows_pairs ...`` prints one line after the command's output:
``wall 81.2 s, peak RSS 1,234 MiB``. The peak comes from ``getrusage(RUSAGE_CHILDREN).ru_maxrss``: the
largest resident set of any waited-for descendant (Linux reports KiB), so a run's worker processes count
one at a time, not summed.
"""

import resource
import subprocess
import sys
import time


def main() -> None:
    command = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    if not command:
        raise SystemExit("usage: python bench/peak_rss.py -- COMMAND [ARGS...]")
    started = time.perf_counter()
    code = subprocess.call(command)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"wall {seconds:.1f} s, peak RSS {peak:,.0f} MiB, exit {code}: {' '.join(command)}", flush=True)
    sys.exit(code)


if __name__ == "__main__":
    main()
