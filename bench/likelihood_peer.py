"""Likelihood scoring against lm-evaluation-harness (the peer): CrowS-Pairs and StereoSet, whole sets.

The same model folder (default: the embedded SmolLM2-135M, float32), the same local data, each tool in
a fresh process of its own environment, timed end to end (model load included), in alternating order
(round 1 lmbias first, round 2 the harness first, ...):

- CrowS-Pairs, all 1,508 pairs: ``lmbias run crows_pairs`` against lm-eval's ``crows_pairs_english``
  task read from the same CSV (``bench/peer_lm_eval.py``).
- StereoSet dev, all 4,229 items: lmbias's ``score_stereoset(..., causal_prefix="bos")`` (every
  subword after the start token; the run's default is the authors' ``bos-first``, which lm-eval cannot
  express) against two multiple-choice tasks computing the same (``bench/peer_lm_eval_stereoset.py``).

Printed: seconds per run, the ratio (harness / lmbias, per round and the median), identical decisions
(CrowS-Pairs: which sentence scores higher; StereoSet: the order of each item's three mean
log-probabilities), the largest score difference, and token positions run per item: the harness (each
sequence but its last token), lmbias before (one pass per whole sequence, the scorer until this change)
and after (each shared start once, :func:`lmbias.lm.shared_prefixes.prefix_groups`), with the bound
the shared starts allow.

Usage: ``LMBIAS_DATA_DIR=../shared/data .venv/bin/python bench/likelihood_peer.py --lm-eval-python
.venv-lmeval/bin/python [--rounds 2] [--benchmarks crows_pairs stereoset]``; lm-eval's environment:
``python3 -m venv .venv-lmeval && .venv-lmeval/bin/pip install torch==2.13.0 'lm_eval[hf]==0.4.13'``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import lmbias
from lmbias.benchmarks.stereoset.task import OPTIONS
from lmbias.lm import likelihood
from lmbias.lm.gguf import embedded_model_dir
from lmbias.lm.shared_prefixes import prefix_groups, tokens_computed
from lmbias.render.text import markdown_table
from lmbias.resources import locate

HERE = Path(__file__).parent
BENCHMARKS = ("crows_pairs", "stereoset")


PEAK_RSS: dict[str, float] = {}  # command's first words -> the largest peak resident memory seen, MiB


def _timed(command: list[str], env: dict | None = None, cwd: str | None = None) -> tuple[float, str, float]:
    """Run ``command`` (in ``cwd``); its wall seconds, standard output and peak resident memory in MiB (its own,
    from ``wait4``), which is also kept in :data:`PEAK_RSS`."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, env=env, cwd=cwd)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(command)} failed:\n{stderr[-3000:]}")
    key = " ".join(Path(c).name for c in command[1:4])
    PEAK_RSS[key] = max(PEAK_RSS.get(key, 0.0), usage.ru_maxrss / 1024)
    return seconds, stdout, usage.ru_maxrss / 1024


def _stereoset_child(model_dir: str, batch_size: int, threads: int, device: str) -> None:
    """In a fresh process: load the model and score the whole dev set as the peer does; print JSON."""
    import torch

    from lmbias.benchmarks.stereoset.task import score_stereoset
    from lmbias.lm.loading import load_causal_lm

    torch.set_num_threads(threads)
    lm = load_causal_lm(model_dir, device=device, dtype="float32")
    records = score_stereoset(lm, lmbias.load_rows("stereoset"), batch_size=batch_size, causal_prefix="bos")
    print(json.dumps([[r[o] for o in OPTIONS] for r in records]))


def _tree_env(tree: Path) -> dict:
    """This environment with ``PYTHONPATH`` naming ``tree``, whose ``lmbias`` a child process then imports, and
    ``LMBIAS_DATA_DIR`` made absolute (the child runs in another folder)."""
    data = {"LMBIAS_DATA_DIR": str(Path(os.environ["LMBIAS_DATA_DIR"]).resolve())} if os.environ.get("LMBIAS_DATA_DIR") else {}
    return {**os.environ, "PYTHONPATH": str(Path(tree).resolve()), **data}


def _crows_pairs(peer_python: str, model_dir: str, folder: str, batch_size: int, threads: int, device: str,
                 env: dict | None = None):
    """``(ours, theirs)``: each runs the whole CrowS-Pairs once, returning ``(seconds, output, peak MiB)``; ours's
    output is its run folder. ``env``: lmbias's environment (default: ``PYTHONPATH`` naming this script's tree; it
    runs in ``folder``, so that the current folder's ``lmbias`` is not the one imported)."""
    env = env or _tree_env(HERE.parent)

    def ours():
        out = f"{folder}/crows-{time.monotonic_ns()}"
        seconds, _, peak = _timed([sys.executable, "-m", "lmbias", "run", "crows_pairs", "--model", model_dir, "--dtype", "float32",
                                   "--no-progress", "--threads", str(threads), "--batch-size", str(batch_size), "--device", device,
                                   "--out", out], env=env, cwd=folder)
        return seconds, out, peak

    def theirs():
        seconds, stdout, peak = _timed([peer_python, str(HERE / "peer_lm_eval.py"), model_dir, str(locate("crows_pairs")),
                                        "--batch-size", str(batch_size), "--device", device],
                                       env={**os.environ, "OMP_NUM_THREADS": str(threads)})
        return seconds, json.loads(stdout.splitlines()[-1]), peak

    return ours, theirs


def _stereoset(peer_python: str, model_dir: str, folder: str, batch_size: int, threads: int, device: str,
               env: dict | None = None):
    """``(ours, theirs)`` as :func:`_crows_pairs`; both outputs are the scores."""
    env = env or _tree_env(HERE.parent)
    items = Path(folder, "stereoset.jsonl")
    items.write_text("".join(json.dumps({k: r[k] for k in ("id", "task", "context", *OPTIONS)}) + "\n"
                             for r in lmbias.load_rows("stereoset")))

    def ours():
        seconds, stdout, peak = _timed([sys.executable, str(Path(__file__).resolve()), "--child-stereoset", model_dir,
                                        "--batch-size", str(batch_size), "--threads", str(threads), "--device", device],
                                       env=env, cwd=folder)
        return seconds, json.loads(stdout.splitlines()[-1]), peak

    def theirs():
        seconds, stdout, peak = _timed([peer_python, str(HERE / "peer_lm_eval_stereoset.py"), model_dir, str(items),
                                        "--batch-size", str(batch_size), "--threads", str(threads), "--device", device])
        return seconds, json.loads(stdout.splitlines()[-1]), peak

    return ours, theirs


def _decisions(benchmark: str, ours, theirs) -> tuple[str, float]:
    """Identical decisions and the largest score difference, lmbias against the harness."""
    if benchmark == "crows_pairs":
        records = [json.loads(line) for line in (Path(ours) / "scores.jsonl").read_text().splitlines()]
        a = np.array([[r["sent_more_score"], r["sent_less_score"]] for r in records])
        b = np.array(theirs["pairs"])
        same = int(np.sum((a[:, 0] > a[:, 1]) == (b[:, 0] > b[:, 1])))
        return f"{same} of {len(a)} pairs", float(np.abs(a - b).max())
    a = np.array(ours)
    b = np.array([[s / n for s, n in zip(item["sums"], item["counts"])] for item in theirs["items"]])
    order = lambda x: np.sign(x[:, [0, 0, 1]] - x[:, [1, 2, 2]])  # noqa: E731 - the three pairwise comparisons
    same = int(np.all(order(a) == order(b), axis=1).sum())
    return f"{same} of {len(a)} items", float(np.abs(a - b).max())


def _tokens(benchmark: str, model_dir: str) -> dict:
    """Token positions per item: the harness, lmbias with whole sequences, lmbias with shared starts."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    start = [tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id]
    if benchmark == "crows_pairs":
        rows = lmbias.load_rows("crows_pairs")
        sequences = [start + ids for ids in likelihood._encode(tokenizer, [r[k] for r in rows for k in ("sent_more", "sent_less")])]
    else:
        rows = lmbias.load_rows("stereoset")
        intra = [r for r in rows if r["task"] == "intrasentence"]
        inter = [r for r in rows if r["task"] == "intersentence"]
        sequences = [start + ids for ids in likelihood._encode(tokenizer, [r[o] for r in intra for o in OPTIONS])]
        sequences += [item[0] for item in likelihood._continuation_items(
            tokenizer, [r["context"] for r in inter for _ in OPTIONS], [r[o] for r in inter for o in OPTIONS], " ", "bos")]
    groups = prefix_groups(sequences, max_members=32)
    n = len(rows)
    return {"harness": sum(len(s) - 1 for s in sequences) / n, "before": sum(map(len, sequences)) / n,
            "after": tokens_computed(sequences, groups) / n}


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--lm-eval-python", default=".venv-lmeval/bin/python")
    parser.add_argument("--model", help="a causal LM folder (default: the embedded model, converted)")
    parser.add_argument("--benchmarks", nargs="+", choices=BENCHMARKS, default=list(BENCHMARKS))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--child-stereoset", metavar="MODEL_DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_stereoset:
        return _stereoset_child(args.child_stereoset, args.batch_size, args.threads, args.device)
    if not shutil.which(args.lm_eval_python):
        raise SystemExit(f"--lm-eval-python {args.lm_eval_python} does not exist (see this script's docstring)")
    if args.model is None:
        from lmbias.lm.loading import load_causal_lm

        load_causal_lm(device="cpu")  # converts the embedded model once
    model_dir = args.model or str(embedded_model_dir())
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {args.threads} threads each; model {model_dir}, float32, "
          f"batch size {args.batch_size}\n")
    rows, token_rows = [], []
    for benchmark in args.benchmarks:
        with tempfile.TemporaryDirectory() as folder:
            ours, theirs = (_crows_pairs if benchmark == "crows_pairs" else _stereoset)(
                args.lm_eval_python, model_dir, folder, args.batch_size, args.threads, args.device)
            ratios = []
            for round_ in range(args.rounds):
                order = (("lmbias", ours), ("lm-eval", theirs)) if round_ % 2 == 0 else (("lm-eval", theirs), ("lmbias", ours))
                seconds, outputs = {}, {}
                for name, run in order:
                    seconds[name], outputs[name], _ = run()
                    print(f"{benchmark} round {round_ + 1}: {name} {seconds[name]:.1f} s", flush=True)
                ratios.append(seconds["lm-eval"] / seconds["lmbias"])
                same, largest = _decisions(benchmark, outputs["lmbias"], outputs["lm-eval"])
                rows.append({"benchmark": benchmark, "round": round_ + 1, "first": order[0][0],
                             "lmbias s": f"{seconds['lmbias']:.1f}", "lm-eval s": f"{seconds['lm-eval']:.1f}",
                             "speed-up": f"{ratios[-1]:.2f}x", "same decisions": same, "largest difference": f"{largest:.1e}"})
            rows.append({"benchmark": benchmark, "round": "median", "first": "", "lmbias s": "", "lm-eval s": "",
                         "speed-up": f"{statistics.median(ratios):.2f}x", "same decisions": "", "largest difference": ""})
        tokens = _tokens(benchmark, model_dir)
        token_rows.append({"benchmark": benchmark, **{k: f"{v:.1f}" for k, v in tokens.items()},
                           "after / before": f"{tokens['after'] / tokens['before']:.3f}",
                           "bound on the speed-up from tokens": f"{tokens['harness'] / tokens['after']:.2f}x"})
    columns = ["benchmark", "round", "first", "lmbias s", "lm-eval s", "speed-up", "same decisions", "largest difference"]
    print("\n" + markdown_table(rows, columns))
    print("\nToken positions run per item (padding not counted)\n")
    print(markdown_table(token_rows, list(token_rows[0])))
    print("\nPeak resident memory of each process (MiB)\n")
    print(markdown_table([{"process": k, "peak RSS MiB": f"{v:,.0f}"} for k, v in PEAK_RSS.items()], ["process", "peak RSS MiB"]))


if __name__ == "__main__":
    main()
