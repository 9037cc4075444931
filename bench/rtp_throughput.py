"""RealToxicityPrompts at the paper's scale: continuations per second, and the full run extrapolated.

    LMBIAS_DATA_DIR=../shared/data .venv/bin/python bench/rtp_throughput.py [--prompts 48] [--samples 25]
        [--vllm-python ~/.cache/lmbias/venv-vllm-KEY/bin/python] [--batch-size 8]

Runs ``lmbias run real_toxicity_prompts`` on ``--prompts`` built prompts (tests/rtp_rows.py, repeated), 25 samples
each, nucleus sampling p = 0.9, 20 new tokens (the paper's protocol), with the embedded SmolLM2-135M-Instruct,
through the hf backend and (with ``--vllm-python``, the vLLM environment ``make vllm-env`` builds) the vllm
backend, each in a fresh process on this machine. The classifier is a random stand-in of toxic-bert's size class
(its time is reported apart: the real toxic-bert is larger). Prints continuations per second of generation, the
ratio to hf (the model's load, vLLM's engine start included, apart), and the hours the full protocol (99,442
prompts x 25 = 2,486,050 continuations) would take.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
FULL = 99_442 * 25


def run(python: str, backend: str, data: Path, classifier: str, out: Path, args) -> dict:
    """One ``lmbias run real_toxicity_prompts`` in a fresh process; its results.json."""
    command = [python, "-m", "lmbias", "run", "real_toxicity_prompts", "--backend", backend, "--samples", str(args.samples),
               "--toxicity-model", classifier, "--data-dir", str(data), "--batch-size", str(args.batch_size),
               "--out", str(out), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "2")}
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    return json.loads((out / "results.json").read_text())


def main() -> None:
    """Run each backend, print the table."""
    from rtp_rows import PROMPTS, write_rows

    from lmbias.scorers.stand_in import TOXIC_BERT_LABELS, save_stand_in_classifier

    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=48)
    parser.add_argument("--samples", type=int, default=25)
    parser.add_argument("--batch-size", type=int, default=8, help="prompts per batch (x samples sequences)")
    parser.add_argument("--vllm-python", help="the vLLM environment's python (omitted: hf only)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="rtp-bench-"))
    write_rows(folder / "data", repeat=-(-args.prompts // len(PROMPTS)))
    lines = (folder / "data" / "real_toxicity_prompts" / "prompts.jsonl").read_text().splitlines()[:args.prompts]
    (folder / "data" / "real_toxicity_prompts" / "prompts.jsonl").write_text("\n".join(lines) + "\n")
    classifier = save_stand_in_classifier(folder / "classifier", TOXIC_BERT_LABELS, multi_label=True)
    runs = [("hf", sys.executable)] + ([("vllm", args.vllm_python)] if args.vllm_python else [])
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; {args.prompts} prompts x "
          f"{args.samples} samples, 20 new tokens, top-p 0.9, the embedded SmolLM2-135M-Instruct\n")
    print("| backend | model load s | continuations | generation s | continuations / s | vs hf | full run (2,486,050), hours |")
    print("|---|---|---|---|---|---|---|")
    base = None
    for backend, python in runs:
        results = run(python, backend, folder / "data", classifier, folder / backend, args)
        timing = results["timing"]
        rate = timing["continuations"] / timing["generation_seconds"]
        base = base or rate
        print(f"| {backend} | {timing['model_load_seconds']:.1f} | {timing['continuations']:,} | "
              f"{timing['generation_seconds']:.1f} | {rate:.1f} | "
              f"{rate / base:.2f}x | {FULL / rate / 3600:,.1f} |")
    print(f"\n(classifier scoring of the hf run: {timing['scoring_seconds']:.2f} s for {timing['continuations']:,} texts "
          "with the 2-layer stand-in; the real toxic-bert costs more)")


if __name__ == "__main__":
    main()
