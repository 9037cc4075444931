"""StereoSet scoring throughput: lmbias's batched scorer against a one-sentence-at-a-time loop.

Baseline: the practice of the StereoSet authors' code and of bias-bench: one forward pass per option
sentence (batch size 1), a (log-)softmax over the vocabulary, the values read one token at a
time. It computes the same quantity as lmbias (the mean log-probability per subword of the sentence,
intersentence given the context; intrasentence with the authors' conditioning, the first subword
given the start token and the rest given the sentence alone), so the two must agree to float32
rounding. Causal LM (default: the embedded SmolLM2-135M-Instruct), both tasks.

The batched scorer runs on every option sentence of the dev set (4,229 items x 3 = 12,687); the
loop, too slow for that on a CPU, runs on the first ``--baseline-items`` items of each task, and the
batched scorer is timed again on exactly those sentences for the speed-up.

It ends with an upper bound on any exact speed-up on this machine: the loop's time over the time
the fewest FLOPs an exact float32 scorer needs (each item's shared prefix once, the output layer only
where a scored token is predicted) would take at the measured peak of a large float32 matrix product.

Usage:  LMBIAS_DATA_DIR=../shared/data python bench/stereoset.py [--model M] [--batch-size 32]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import time

import numpy as np
import torch

import lmbias
from lmbias.benchmarks.stereoset.task import OPTIONS, score_stereoset
from lmbias.lm.loading import load_causal_lm


def one_at_a_time(lm, rows: list[dict]) -> np.ndarray:
    """(n rows, 3 options) scores from one forward pass per sentence, read token by token.

    Intrasentence follows the authors' ``eval_generative_models.py``: the first subword's
    probability comes from one pass over the start token alone (computed once), the others from a
    pass over the sentence without it. Intersentence: the option's subwords given start + context.
    """
    tokenizer, model = lm.tokenizer, lm.model
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id

    def logprobs_of(ids):
        return torch.log_softmax(model(torch.tensor([ids], device=model.device)).logits[0].float(), dim=-1)

    out = np.zeros((len(rows), len(OPTIONS)))
    with torch.inference_mode():
        initial = logprobs_of([start])[0]
        for i, row in enumerate(rows):
            for j, (ids, first) in enumerate(option_sequences(tokenizer, row)):
                logprobs = logprobs_of(ids)
                values = [logprobs[k - 1, ids[k]].item() for k in range(first, len(ids))]
                if row["task"] == "intrasentence":  # the first subword given the start token alone
                    values.insert(0, initial[ids[0]].item())
                out[i, j] = math.fsum(values) / len(values)
    return out


def option_sequences(tokenizer, row: dict) -> list[tuple[list[int], int]]:
    """Per option, the token ids the loop feeds the model and the index of the first scored token."""
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    out = []
    for option in OPTIONS:
        if row["task"] == "intrasentence":
            out.append((tokenizer.encode(row[option], add_special_tokens=False), 1))
            continue
        context = tokenizer.encode(row["context"], add_special_tokens=False)
        ids = [start] + tokenizer.encode(row["context"] + " " + row[option], add_special_tokens=False)
        first = 1
        while first - 1 < len(context) and first < len(ids) and ids[first] == context[first - 1]:
            first += 1
        out.append((ids, first))
    return out


def matmul_peak(device: str = "cpu") -> float:
    """FLOP/s of a large float32 matrix product on ``device`` (best of 10): the arithmetic ceiling."""
    a = torch.randn(2048, 2048, device=device)
    best = float("inf")
    for _ in range(12):
        _, seconds = timed(torch.matmul, a, a)
        best = min(best, seconds)
    return 2 * 2048**3 / best


def least_arithmetic(lm, rows: list[dict]) -> tuple[float, float]:
    """(FLOPs the loop does, the fewest FLOPs any exact scorer needs) for ``rows``, counting
    2 x parameters per token and position (attention's own products left out, which favours the bound).

    The fewest: each distinct prefix of an item's three sequences once (shared starts and contexts),
    no pass over a sequence's last token, and the output layer only where a scored token is predicted.
    """
    model = lm.model
    head = model.get_output_embeddings().weight.numel()
    body = sum(p.numel() for p in model.parameters()) - model.get_input_embeddings().weight.numel()
    if model.get_output_embeddings().weight is not model.get_input_embeddings().weight:
        body -= head
    loop_tokens = body_tokens = head_tokens = 0
    for row in rows:
        prefixes, scored = set(), set()
        for ids, first in option_sequences(lm.tokenizer, row):
            loop_tokens += len(ids)
            for length in range(1, len(ids)):
                prefixes.add(tuple(ids[:length]))
                if length >= first:
                    scored.add(tuple(ids[:length]))
        body_tokens += len(prefixes)
        head_tokens += len(scored)
    return 2.0 * (body + head) * loop_tokens, 2.0 * (body * body_tokens + head * head_tokens)


def batched(lm, rows: list[dict], batch_size: int) -> np.ndarray:
    """(n rows, 3 options) scores from :func:`lmbias.benchmarks.stereoset.task.score_stereoset`."""
    records = score_stereoset(lm, rows, kind="causal", batch_size=batch_size)
    by_id = {r["id"]: r for r in records}
    return np.array([[by_id[row["id"]][o] for o in OPTIONS] for row in rows])


def timed(function, *args):
    """(result, seconds) of one call, with the GPU synchronised."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    result = function(*args)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="default: the embedded SmolLM2-135M-Instruct")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--baseline-items", type=int, default=167, help="items per task for the loop (x 3 sentences)")
    parser.add_argument("--sweep", type=int, nargs="*", default=[8, 16, 32, 64], help="batch sizes to time on the subset")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32", help="float32 (the exactness check needs it), bfloat16, float16")
    args = parser.parse_args()

    lm = load_causal_lm(args.model, device=args.device, dtype=args.dtype)
    rows = lmbias.load_rows("stereoset")
    subset = [row for task in ("intrasentence", "intersentence") for row in [r for r in rows if r["task"] == task][: args.baseline_items]]
    batched(lm, subset[:4], args.batch_size)  # warm-up
    where = torch.cuda.get_device_name() if args.device.startswith("cuda") else "CPU"
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, {torch.get_num_threads()} threads; "
          f"model {lm.name}, {args.dtype}, {where}")

    loop_scores, loop_seconds = timed(one_at_a_time, lm, subset)
    sweep = {}
    for size in args.sweep:
        scores, seconds = timed(batched, lm, subset, size)
        sweep[size] = (seconds, np.abs(scores - loop_scores).max())
    full_scores, full_seconds = timed(batched, lm, rows, args.batch_size)
    position = {row["id"]: i for i, row in enumerate(rows)}
    full_on_subset = full_scores[[position[row["id"]] for row in subset]]
    n_subset, n_full = 3 * len(subset), 3 * len(rows)

    print(f"\nsubset: the first {args.baseline_items} items of each task ({n_subset:,} sentences); full dev set: {n_full:,} sentences\n")
    print("| scorer | sentences | batch size | seconds | sentences/s | speed-up vs loop | max abs diff vs loop |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    loop_rate = n_subset / loop_seconds
    print(f"| one sentence at a time (loop) | {n_subset:,} | 1 | {loop_seconds:.1f} | {loop_rate:.1f} | 1.0x | - |")
    for size, (seconds, diff) in sweep.items():
        speedup = loop_seconds / seconds
        print(f"| lmbias batched | {n_subset:,} | {size} | {seconds:.1f} | {n_subset / seconds:.1f} | {speedup:.1f}x | {diff:.1e} |")
    full_diff = np.abs(full_on_subset - loop_scores).max()
    print(f"| lmbias batched, full dev set | {n_full:,} | {args.batch_size} | {full_seconds:.1f} | {n_full / full_seconds:.1f} | "
          f"{n_full / full_seconds / loop_rate:.1f}x | {full_diff:.1e} (on the subset) |")
    worst = max([full_diff] + [diff for _, diff in sweep.values()])
    print(f"\nmax abs difference of the mean log-probabilities, batched vs loop: {worst:.1e} ({'<=' if worst <= 1e-4 else '>'} 1e-4)")

    peak = matmul_peak(args.device)
    loop_flops, least_flops = least_arithmetic(lm, subset)
    best_seconds = min(seconds for seconds, _ in sweep.values())
    print(f"\narithmetic on the subset: the loop does {loop_flops / 1e12:.2f} TFLOP ({loop_flops / loop_seconds / 1e9:.0f} GFLOP/s); "
          f"an exact scorer needs at least {least_flops / 1e12:.2f} TFLOP (shared prefixes once, no output layer where nothing is scored)")
    print(f"float32 matrix-product peak here: {peak / 1e9:.0f} GFLOP/s; the best batched run does the loop's arithmetic at "
          f"{loop_flops / best_seconds / 1e9:.0f} GFLOP/s")
    print(f"upper bound on the speed-up over the loop: {loop_seconds:.1f} s / ({least_flops / 1e12:.2f} TFLOP at {peak / 1e9:.0f} GFLOP/s) "
          f"= {loop_seconds * peak / least_flops:.1f}x")


if __name__ == "__main__":
    main()
