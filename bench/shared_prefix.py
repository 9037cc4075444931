"""The shared-prefix scorer against one pass per whole sequence, in one process, on the same model.

Every likelihood benchmark's causal scores go through :func:`lmbias.lm.likelihood._shared_prefix_logprobs`
(each shared start once); with it switched off they come from one pass over each whole sequence (the
scorer before). Both run alternately (``--rounds``) on the whole CrowS-Pairs (1,508 pairs) and the whole
StereoSet dev set (4,229 items, the run's default conditioning), timed around the scoring call (the
model loaded once). Printed per benchmark: seconds, the speed-up, the largest score difference and
identical decisions (CrowS-Pairs: the higher sentence; StereoSet: the order of each item's three scores).

Usage: ``LMBIAS_DATA_DIR=../shared/data .venv/bin/python bench/shared_prefix.py [--model M] [--device cuda]
[--batch-size 32] [--rounds 2]``
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np
import torch

import lmbias
from lmbias.benchmarks.crows_pairs.task import score_crows_pairs
from lmbias.benchmarks.stereoset.task import OPTIONS, score_stereoset
from lmbias.lm import likelihood
from lmbias.lm.loading import load_causal_lm
from lmbias.render.text import markdown_table

SHARED = likelihood._shared_prefix_logprobs


def scores(lm, benchmark: str, batch_size: int) -> np.ndarray:
    if benchmark == "crows_pairs":
        records = score_crows_pairs(lm, lmbias.load_rows("crows_pairs"), batch_size=batch_size)
        return np.array([[r["sent_more_score"], r["sent_less_score"]] for r in records])
    records = score_stereoset(lm, lmbias.load_rows("stereoset"), batch_size=batch_size)
    return np.array([[r[o] for o in OPTIONS] for r in records])


def timed(lm, benchmark: str, batch_size: int, shared: bool, device: str) -> tuple[float, np.ndarray]:
    likelihood._shared_prefix_logprobs = SHARED if shared else (lambda *args: None)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    started = time.perf_counter()
    values = scores(lm, benchmark, batch_size)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - started, values


def decisions(values: np.ndarray) -> np.ndarray:
    if values.shape[1] == 2:
        return values[:, :1] > values[:, 1:]
    return np.sign(values[:, [0, 0, 1]] - values[:, [1, 2, 2]])


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a causal LM (default: the embedded SmolLM2-135M-Instruct)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--benchmarks", nargs="+", default=["crows_pairs", "stereoset"])
    args = parser.parse_args()
    lm = load_causal_lm(args.model, device=args.device, dtype="float32")
    name = torch.cuda.get_device_name() if args.device.startswith("cuda") else f"{os.cpu_count()} CPU cores"
    print(f"machine: {platform.machine()}, {name}, torch {torch.__version__}, {torch.get_num_threads()} threads; "
          f"model {args.model or 'embedded SmolLM2-135M-Instruct'}, float32, batch size {args.batch_size}\n")
    timed(lm, "crows_pairs", args.batch_size, True, args.device)  # warm-up (kernels, caches)
    rows = []
    for benchmark in args.benchmarks:
        runs = {True: [], False: []}
        for round_ in range(args.rounds):
            for shared in ((False, True) if round_ % 2 == 0 else (True, False)):
                runs[shared].append(timed(lm, benchmark, args.batch_size, shared, args.device))
                print(f"{benchmark} round {round_ + 1} {'shared' if shared else 'whole'}: {runs[shared][-1][0]:.2f} s", flush=True)
        whole, shared = runs[False][0][1], runs[True][0][1]
        seconds = {k: statistics.median(s for s, _ in v) for k, v in runs.items()}
        rows.append({"benchmark": benchmark, "whole sequences s": f"{seconds[False]:.2f}", "shared prefixes s": f"{seconds[True]:.2f}",
                     "speed-up": f"{seconds[False] / seconds[True]:.2f}x",
                     "largest difference": f"{np.abs(whole - shared).max():.1e}",
                     "largest relative difference": f"{(np.abs(whole - shared) / np.abs(whole)).max():.1e}",
                     "same decisions": f"{int(np.all(decisions(whole) == decisions(shared), axis=1).sum())} of {len(whole)}"})
    print("\n" + markdown_table(rows, list(rows[0])))


if __name__ == "__main__":
    main()
