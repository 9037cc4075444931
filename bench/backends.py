"""The three backends in one run, and lm-evaluation-harness (the peer) on CrowS-Pairs.

The embedded SmolLM2-135M in float32 through ``hf``, ``vllm`` and ``openai`` (vLLM's server on
loopback, started here):

1. Generation: the same BOLD prompts, 20 new tokens, greedy and sampled (BOLD's GPT-2 preset):
   start-up seconds, prompts/s, new tokens/s, the ratio to ``hf``, and how many greedy continuations
   equal ``hf``'s.
2. Likelihood: StereoSet dev (``--stereoset-limit`` items per task) and CrowS-Pairs
   (``--crows-limit`` pairs) scored as ``lmbias run`` scores them: sentences/s, the ratio to ``hf``,
   the largest score difference from ``hf`` and how many option / pair decisions equal ``hf``'s.
3. The peer: ``lmbias run crows_pairs`` (hf) and lm-eval's ``crows_pairs_english`` task on the same
   local CSV and model, each a fresh process timed end to end, with the pair decisions compared.

Run it in the vLLM environment (it has all three backends), with lm-eval in an environment of its own:
``make vllm-env``; ``python3 -m venv .venv-lmeval && .venv-lmeval/bin/pip install torch==2.13.0 'lm_eval[hf]==0.4.13'``;
``LMBIAS_DATA_DIR=../shared/data VLLM_CPU_KVCACHE_SPACE=2 .venv-vllm/bin/python bench/backends.py``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from generation import bold_sample

import lmbias
from lmbias.benchmarks.crows_pairs.task import score_crows_pairs
from lmbias.benchmarks.stereoset.task import OPTIONS, score_stereoset
from lmbias.lm.backends.openai import connect
from lmbias.lm.backends.vllm import load_vllm
from lmbias.lm.generation import batch_seed, generation_settings, plan_batches, prompt_lengths
from lmbias.lm.gguf import embedded_model_dir
from lmbias.lm.loading import load_causal_lm
from lmbias.render.text import markdown_table
from lmbias.resources import locate

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from vllm_server import vllm_server  # noqa: E402


def _generate(lm, ids, prompts, settings, batch_size):
    """Every prompt through the backend in the runner's global batches; (seconds, items in input order)."""
    batches = plan_batches(prompt_lengths(lm, prompts), batch_size)
    out: dict = {}
    started = time.perf_counter()
    for b, batch in enumerate(batches):
        items = lm.generate([prompts[i] for i in batch], settings, seed=batch_seed(0, b), ids=[ids[i] for i in batch])
        out.update(zip(batch, items))
    return time.perf_counter() - started, [out[i] for i in range(len(prompts))]


def _likelihood(lm, stereoset_rows, crows_rows):
    """{task: (seconds, sentences, scores array)} for StereoSet (both tasks) and CrowS-Pairs."""
    out = {}
    started = time.perf_counter()
    records = score_stereoset(lm, stereoset_rows, kind="causal")
    out["StereoSet"] = (time.perf_counter() - started, 3 * len(stereoset_rows), np.array([[r[k] for k in OPTIONS] for r in records]))
    started = time.perf_counter()
    records = score_crows_pairs(lm, crows_rows, kind="causal")
    out["CrowS-Pairs"] = (time.perf_counter() - started, 2 * len(crows_rows),
                          np.array([[r["sent_more_score"], r["sent_less_score"]] for r in records]))
    return out


def _timed(command: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{' '.join(command[:3])} ... failed: {done.stderr[-2000:]}")
    return time.perf_counter() - started, done.stdout


def _peer(lm_eval_python: str, limit: int | None) -> list[dict]:
    """lmbias and lm-eval on CrowS-Pairs, each a fresh process: rows of the peer table."""
    model_dir, csv = str(embedded_model_dir()), str(locate("crows_pairs"))
    with tempfile.TemporaryDirectory() as folder:
        lmbias_seconds, _ = _timed([sys.executable, "-m", "lmbias", "run", "crows_pairs", "--model", model_dir, "--dtype", "float32",
                                    "--no-progress", "--out", f"{folder}/run", *(["--limit", str(limit)] if limit else [])])
        results = json.loads(Path(folder, "run", "results.json").read_text())
        ours = [json.loads(line) for line in Path(folder, "run", "scores.jsonl").read_text().splitlines()]
    peer_seconds, stdout = _timed([lm_eval_python, str(Path(__file__).parent / "peer_lm_eval.py"), model_dir, csv,
                                   *(["--limit", str(limit)] if limit else [])])
    peer = json.loads(stdout.splitlines()[-1])
    same = sum((r["sent_more_score"] > r["sent_less_score"]) == (p[0] > p[1]) for r, p in zip(ours, peer["pairs"]))
    largest = max(abs(r[k] - p[i]) for r, p in zip(ours, peer["pairs"]) for i, k in enumerate(("sent_more_score", "sent_less_score")))
    return [
        {"tool": "lmbias (hf)", "end to end s": f"{lmbias_seconds:.1f}", "scoring s": f"{results['timing']['scoring_seconds']:.1f}",
         "vs lm-eval (end to end)": f"{peer_seconds / lmbias_seconds:.2f}x", "same decisions": f"{same} of {len(ours)}",
         "largest score difference": f"{largest:.2g}"},
        {"tool": f"lm-eval {peer['lm_eval']} (hf)", "end to end s": f"{peer_seconds:.1f}", "scoring s": f"{peer['seconds']:.1f} *",
         "vs lm-eval (end to end)": "1.00x", "same decisions": "", "largest score difference": ""},
    ]


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=2000, help="BOLD prompts to generate (0: no generation part)")
    parser.add_argument("--stereoset-limit", type=int, help="StereoSet items per task (default: the whole dev set)")
    parser.add_argument("--crows-limit", type=int, help="CrowS-Pairs pairs (default: all 1,508)")
    parser.add_argument("--peer-limit", type=int, help="CrowS-Pairs pairs of the lm-eval comparison (default: all 1,508)")
    parser.add_argument("--hf-batch-size", type=int, default=32, help="the hf backend's batch (lmbias's default)")
    parser.add_argument("--lm-eval-python", default=".venv-lmeval/bin/python", help="python of lm-eval's environment")
    parser.add_argument("--backends", nargs="+", default=["hf", "vllm", "openai"], choices=["hf", "vllm", "vllm-eager", "openai"],
                        help="what to run (hf first: the others are compared with it); vllm-eager: vLLM with --enforce-eager")
    args = parser.parse_args()
    ids, prompts = bold_sample(args.prompts) if args.prompts else ([], [])
    stereoset = lmbias.load_rows("stereoset")
    stereoset_rows = [row for task in ("intrasentence", "intersentence")
                      for row in [r for r in stereoset if r["task"] == task][:args.stereoset_limit]]
    crows_rows = lmbias.load_rows("crows_pairs")[:args.crows_limit]
    generation, likelihood, outputs, scores = [], [], {}, {}
    load_causal_lm(device="cpu")  # converts the embedded GGUF into the cache once, for the server too
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
        if args.backends[0] != "hf":
            parser.error("--backends must start with hf (the others are compared with it)")
        for backend in args.backends:
            started = time.perf_counter()
            if backend == "hf":
                lm = load_causal_lm(device="cpu", dtype="float32")
            elif backend.startswith("vllm"):
                lm = load_vllm(dtype="float32", max_model_len=512, enforce_eager=backend == "vllm-eager")
            else:  # started only now: an idle vLLM server keeps a core busy
                url = stack.enter_context(vllm_server(embedded_model_dir(), Path(folder, "server.log"), served_name="smollm2"))
                lm = connect(url, "smollm2", tokenizer=str(embedded_model_dir()), concurrency=16)
            startup = time.perf_counter() - started
            # vLLM and a server batch continuously: give them every prompt at once; hf runs lmbias's global batches
            batch_size = args.hf_batch_size if backend == "hf" else max(len(prompts), 1)
            for mode, preset in (("greedy", "greedy"), ("sampled", "bold-gpt2")) if prompts else ():
                seconds, items = _generate(lm, ids, prompts, generation_settings(preset, max_new_tokens=20), batch_size)
                outputs[backend, mode] = items
                same = sum(a["continuation"] == b["continuation"] for a, b in zip(items, outputs["hf", mode]))
                generation.append({"backend": backend, "mode": mode, "start-up s": f"{startup:.1f}",
                                   "prompts/s": len(prompts) / seconds, "new tokens/s": sum(i["num_tokens"] for i in items) / seconds,
                                   "same as hf": f"{same} of {len(prompts)}" if mode == "greedy" else ""})
            for task, (seconds, sentences, values) in _likelihood(lm, stereoset_rows, crows_rows).items():
                scores[backend, task] = values
                base = scores["hf", task]
                decisions = (values.argmax(1) == base.argmax(1)).sum() if task == "StereoSet" else \
                    ((values[:, 0] > values[:, 1]) == (base[:, 0] > base[:, 1])).sum()
                likelihood.append({"backend": backend, "task": task, "sentences/s": sentences / seconds,
                                   "largest |score - hf|": f"{np.abs(values - base).max():.1e}",
                                   "same decisions as hf": f"{decisions} of {len(values)}"})
    for rows, key in ((generation, "prompts/s"), (likelihood, "sentences/s")):
        base = {(row.get("mode"), row.get("task")): row[key] for row in rows if row["backend"] == "hf"}
        for row in rows:
            row["vs hf"] = f"{row[key] / base[row.get('mode'), row.get('task')]:.2f}x"
            row[key] = f"{row[key]:.1f}"
            if "new tokens/s" in row:
                row["new tokens/s"] = f"{row['new tokens/s']:.0f}"
    print(f"machine: {platform.machine()}, {len(os.sched_getaffinity(0))} CPUs; embedded SmolLM2-135M float32\n")
    if generation:
        print(f"Generation: {len(prompts)} BOLD prompts, 20 new tokens\n")
        print(markdown_table(generation, list(generation[0])), "\n")
    print(f"Likelihood: StereoSet {len(stereoset_rows)} items ({3 * len(stereoset_rows)} sentences), "
          f"CrowS-Pairs {len(crows_rows)} pairs\n")
    print(markdown_table(likelihood, list(likelihood[0])), "\n")
    if Path(args.lm_eval_python).exists():
        print("The peer, CrowS-Pairs (fresh processes, end to end; * lm-eval's evaluation call, model load included)\n")
        peer = _peer(args.lm_eval_python, args.peer_limit)
        print(markdown_table(peer, list(peer[0])))
    else:
        print(f"(no lm-eval comparison: {args.lm_eval_python} does not exist)")


if __name__ == "__main__":
    main()
