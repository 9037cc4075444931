"""Generation throughput: lmbias's batched generator against a one-prompt-at-a-time pipeline loop.

Baseline: ``transformers.pipeline("text-generation")`` called once per prompt (the common practice of
peers), same model, same sampling settings (BOLD GPT-2 preset: top-k 40, top-p 0.95, 20 new tokens).
Then the resumable runner with 1 and with 2 processes (torchrun, gloo) over the same prompts.

Usage:  LMBIAS_DATA_DIR=../shared/data python bench/generation.py [--model M] [--prompts 256]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import torch

import lmbias
from lmbias.lm.generation import generate_batch, generation_settings, plan_batches, prompt_lengths
from lmbias.lm.loading import load_causal_lm
from lmbias.lm.runner import run_generation


def bold_sample(n: int) -> tuple[list[str], list[str]]:
    """The first ``n`` BOLD prompts taken round-robin over the 43 groups (a mix of lengths)."""
    rows = lmbias.load_rows("bold")
    by_group: dict = {}
    for row in rows:
        by_group.setdefault(row["group"], []).append(row)
    picked = []
    while len(picked) < n:
        for group_rows in by_group.values():
            if group_rows and len(picked) < n:
                picked.append(group_rows.pop(0))
    return [r["id"] for r in picked], [r["prompt"] for r in picked]


def worker(args) -> None:
    """Run the resumable runner (under torchrun for several processes); rank 0 prints the timing."""
    ids, prompts = bold_sample(args.prompts)
    settings = generation_settings("bold-gpt2", max_new_tokens=args.new_tokens)
    start = time.perf_counter()
    records = run_generation(
        lambda dist: load_causal_lm(args.model, device=args.device), ids, prompts, args.worker, settings=settings,
        model_name=str(args.model), preset="bold-gpt2", batch_size=args.batch_size, progress=False,
    )
    if records is not None:
        print(json.dumps({"seconds": time.perf_counter() - start, "tokens": sum(r["num_tokens"] for r in records)}))


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="default: the embedded SmolLM2-135M-Instruct")
    parser.add_argument("--prompts", type=int, default=256)
    parser.add_argument("--baseline-prompts", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--processes", type=int, nargs="*", default=[1, 2], help="runner rows: process counts (torchrun)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)

    from transformers import pipeline

    lm = load_causal_lm(args.model, device=args.device)
    ids, prompts = bold_sample(args.prompts)
    settings = generation_settings("bold-gpt2", max_new_tokens=args.new_tokens)
    where = torch.cuda.get_device_name() if args.device.startswith("cuda") else "CPU"
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {where}; model {lm.name}; {len(prompts)} BOLD prompts, "
          f"{args.new_tokens} new tokens, BOLD GPT-2 sampling\n")
    print("| method | prompts | seconds | prompts/s | new tokens/s | vs baseline |")
    print("|---|---:|---:|---:|---:|---:|")

    generator = pipeline("text-generation", model=lm.model, tokenizer=lm.tokenizer, device=lm.model.device)
    baseline = prompts[: args.baseline_prompts]
    start = time.perf_counter()
    tokens = 0
    for prompt in baseline:
        out = generator(prompt, max_new_tokens=args.new_tokens, do_sample=True, top_k=40, top_p=0.95, return_full_text=False)
        tokens += len(lm.tokenizer(out[0]["generated_text"])["input_ids"])
    base_seconds = time.perf_counter() - start
    base_rate = len(baseline) / base_seconds
    print(
        f"| pipeline, one prompt at a time | {len(baseline)} | {base_seconds:.1f} | {base_rate:.2f} | {tokens / base_seconds:.0f} | 1.0x |"
    )

    batches = plan_batches(prompt_lengths(lm, prompts), args.batch_size)
    start = time.perf_counter()
    tokens = 0
    for b, batch in enumerate(batches):
        tokens += sum(r["num_tokens"] for r in generate_batch(lm, [prompts[i] for i in batch], settings, seed=b))
    seconds = time.perf_counter() - start
    print(f"| lmbias batched (batch {args.batch_size}), 1 process | {len(prompts)} | {seconds:.1f} | {len(prompts) / seconds:.2f} | "
          f"{tokens / seconds:.0f} | {len(prompts) / seconds / base_rate:.1f}x |")

    for n in args.processes:
        with tempfile.TemporaryDirectory() as out:
            command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(n), "--master_addr", "127.0.0.1",
                       "--master_port", str(29700 + n), __file__, "--worker", os.path.join(out, "run"),
                       "--prompts", str(args.prompts), "--new-tokens", str(args.new_tokens), "--batch-size", str(args.batch_size),
                       "--device", args.device]
            if args.model:
                command += ["--model", args.model]
            result = subprocess.run(command, capture_output=True, text=True, check=True)
            timing = json.loads(result.stdout.strip().splitlines()[-1])
        rate = len(prompts) / timing["seconds"]
        print(f"| lmbias runner, {n} process{'es' if n > 1 else ''} (torchrun, incl. load) | {len(prompts)} | {timing['seconds']:.1f} | "
              f"{rate:.2f} | {timing['tokens'] / timing['seconds']:.0f} | {rate / base_rate:.1f}x |")


if __name__ == "__main__":
    main()
