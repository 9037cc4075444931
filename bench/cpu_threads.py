"""CPU threads for likelihood scoring on a shared machine: why ``--threads`` defaults to the free CPUs.

Scores the same CrowS-Pairs sentences with the embedded SmolLM2-135M (causal log-likelihood, the
``lmbias run crows_pairs`` path) at each thread count, first on an idle machine, then while other
programs keep some CPUs busy (one busy-looping process per "busy" CPU). Prints sentences/s, the
ratio to torch's default thread count (all CPUs), and the count :func:`lmbias.lm.processes.cpu_threads`
picks in that situation. Usage: ``LMBIAS_DATA_DIR=../shared/data .venv/bin/python bench/cpu_threads.py``
"""

from __future__ import annotations

import multiprocessing
import os
import time

import torch

import lmbias
from lmbias.lm.likelihood import token_logprobs
from lmbias.lm.loading import load_causal_lm
from lmbias.lm.processes import cpu_threads
from lmbias.render.text import markdown_table

SENTENCES = 400
REPEATS = 3


def _spin(stop):
    while not stop.is_set():
        pass


def _rate(lm, texts, threads: int) -> float:
    torch.set_num_threads(threads)
    best = 0.0
    for _ in range(REPEATS):
        started = time.perf_counter()
        token_logprobs(lm.model, lm.tokenizer, texts, batch_size=32)
        best = max(best, len(texts) / (time.perf_counter() - started))
    return best


def main() -> None:
    pairs = lmbias.load_rows("crows_pairs")[: SENTENCES // 2]
    texts = [row[key] for row in pairs for key in ("sent_more", "sent_less")]
    lm = load_causal_lm(device="cpu")
    cpus = len(os.sched_getaffinity(0))
    token_logprobs(lm.model, lm.tokenizer, texts[:32], batch_size=32)  # warm-up
    rows = []
    for busy in range(cpus):
        stop = multiprocessing.Event()
        spinners = [multiprocessing.Process(target=_spin, args=(stop,)) for _ in range(busy)]
        for spinner in spinners:
            spinner.start()
        time.sleep(1)
        chosen = cpu_threads()
        rates = {threads: _rate(lm, texts, threads) for threads in range(1, cpus + 1)}
        stop.set()
        for spinner in spinners:
            spinner.join()
        for threads, rate in rates.items():
            rows.append({"busy CPUs (other programs)": busy, "threads": threads, "sentences/s": f"{rate:.1f}",
                         "vs all CPUs": f"{rate / rates[cpus]:.2f}x", "lmbias default": "yes" if threads == chosen else ""})
    print(f"machine: {os.uname().machine}, {cpus} CPUs, torch {torch.__version__}; {len(texts)} CrowS-Pairs sentences, "
          f"best of {REPEATS}\n")
    print(markdown_table(rows, list(rows[0])))


if __name__ == "__main__":
    main()
