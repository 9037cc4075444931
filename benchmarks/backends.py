"""Generation through the ``hf`` and ``vllm`` backends, in one run: the same BOLD prompts, 20 new
tokens, greedy and sampled (BOLD's GPT-2 preset), the embedded SmolLM2-135M in float32.

Prints start-up seconds, prompts/s and new tokens/s per backend and mode, the ratio to ``hf``, and
beside them how many greedy continuations the two backends agree on. Run it in the vLLM environment
(it has both backends): ``make vllm-env``, then
``LMBIAS_DATA_DIR=../shared/data VLLM_CPU_KVCACHE_SPACE=2 .venv-vllm/bin/python benchmarks/backends.py [--prompts 500]``
"""

from __future__ import annotations

import argparse
import os
import platform
import time

from generation import bold_sample

from lmbias.lm.backends.vllm import load_vllm
from lmbias.lm.generation import batch_seed, generation_settings, plan_batches, prompt_lengths
from lmbias.lm.loading import load_causal_lm
from lmbias.text import markdown_table


def _generate(lm, ids, prompts, settings, batch_size):
    """Every prompt through the backend in the runner's global batches; (seconds, items in input order)."""
    batches = plan_batches(prompt_lengths(lm, prompts), batch_size)
    out: dict = {}
    started = time.perf_counter()
    for b, batch in enumerate(batches):
        items = lm.generate([prompts[i] for i in batch], settings, seed=batch_seed(0, b), ids=[ids[i] for i in batch])
        out.update(zip(batch, items))
    return time.perf_counter() - started, [out[i] for i in range(len(prompts))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=500)
    parser.add_argument("--hf-batch-size", type=int, default=32, help="the hf backend's batch (lmbias's default)")
    args = parser.parse_args()
    ids, prompts = bold_sample(args.prompts)
    rows, outputs = [], {}
    for backend in ("hf", "vllm"):
        started = time.perf_counter()
        lm = load_causal_lm(device="cpu", dtype="float32") if backend == "hf" else load_vllm(dtype="float32", max_model_len=512)
        startup = time.perf_counter() - started
        # vLLM batches continuously: give it every prompt at once; hf runs lmbias's global batches
        batch_size = args.hf_batch_size if backend == "hf" else len(prompts)
        for mode, preset in (("greedy", "greedy"), ("sampled", "bold-gpt2")):
            seconds, items = _generate(lm, ids, prompts, generation_settings(preset, max_new_tokens=20), batch_size)
            outputs[backend, mode] = items
            tokens = sum(item["num_tokens"] for item in items)
            rows.append({"backend": backend, "mode": mode, "start-up s": f"{startup:.1f}", "prompts/s": len(prompts) / seconds,
                         "new tokens/s": tokens / seconds})
    base = {row["mode"]: row["prompts/s"] for row in rows if row["backend"] == "hf"}
    for row in rows:
        row["vs hf"] = f"{row['prompts/s'] / base[row['mode']]:.2f}x"
        row["prompts/s"], row["new tokens/s"] = f"{row['prompts/s']:.1f}", f"{row['new tokens/s']:.0f}"
    same = sum(a["continuation"] == b["continuation"] for a, b in zip(outputs["hf", "greedy"], outputs["vllm", "greedy"]))
    print(f"machine: {platform.machine()}, {len(os.sched_getaffinity(0))} CPUs; {len(prompts)} BOLD prompts, 20 new tokens, "
          "embedded SmolLM2-135M float32\n")
    print(markdown_table(rows, list(rows[0])))
    print(f"\ngreedy continuations identical in both backends: {same} of {len(prompts)}")


if __name__ == "__main__":
    main()
