"""BBQ likelihood scoring: lmbias (the prompt computed once for the three answers) vs
lm-evaluation-harness's ``bbq`` task, on the same model folder and the same items, each in a fresh
process, alternating.

    LMBIAS_DATA_DIR=../shared/data python bench/bbq.py --per-category 52 --lm-eval-python /tmp/lmeval/bin/python

The items: a fixed, stratified sample of the 6 category files held in the data folder (Age,
Disability_status, Nationality, Physical_appearance, Religion, Sexual_orientation): the first
``--per-category`` items of each, which are whole groups of four (ambiguous / disambiguated x negative /
non-negative). Both tools get the prompt "{context}\\n\\nQ: {question}\\nA:" and score answers as " " +
answer. The harness scores twelve choices per item (the two non-unknown answers and ten phrasings of
"unknown"); lmbias scores the item's three. Decisions are compared where the prompts are the same: the
best of the item's own three answers by the harness's log-likelihoods vs lmbias's (``--decision sum``);
the harness's own twelve-way decision is compared too, and the difference is the twelve choices' effect.
Prints a table with the seconds (model load included, as the harness's call includes it), the ratio,
the full set's time extrapolated from items per second, tokens run per item, and the agreement.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HELD = ["Age", "Disability_status", "Nationality", "Physical_appearance", "Religion", "Sexual_orientation"]
FULL_SET = 58_492
LMBIAS = """
import json, sys, time
started = time.perf_counter()
import torch
torch.set_num_threads({threads})
from lmbias.benchmarks.bbq.data import read_category
from lmbias.benchmarks.bbq.task import score_bbq
from lmbias.lm.loading import load_causal_lm
rows = [row for category in {categories!r} for row in read_category(category)[:{per_category}]]
lm = load_causal_lm({model!r}, dtype="float32", device="cpu")
records = score_bbq(lm, rows, batch_size={batch_size})
print(json.dumps({{"seconds": time.perf_counter() - started, "items": records}}))
"""


def run_lmbias(args, model: str) -> dict:
    code = LMBIAS.format(threads=args.threads, categories=HELD, per_category=args.per_category, model=model,
                         batch_size=args.batch_size)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_harness(args, model: str, items_file: Path) -> dict:
    script = Path(__file__).with_name("peer_lm_eval_bbq.py")
    done = subprocess.run([args.lm_eval_python, str(script), model, str(items_file), "--threads", str(args.threads)],
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"lm-eval failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def token_counts(model: str, rows: list[dict]) -> dict:
    """Tokens run per item: lmbias's shared prompt once plus each answer's rest; the same three whole
    sequences; the harness's twelve whole sequences."""
    from lmbias.benchmarks.bbq.task import prompt
    from lmbias.lm.loading import load_causal_lm

    tokenizer = load_causal_lm(model, device="cpu").tokenizer
    shared = three = twelve = 0
    unknowns = ["Unknown", "Cannot answer", "Can't be determined", "Cannot be determined", "Can't answer", "Not known",
                "Not enough info", "Not enough information", "Not answerable", "Undetermined"]  # the harness's ten
    for row in rows:
        text = prompt(row)
        sequences = [tokenizer(text + " " + row[f"ans{i}"], add_special_tokens=False)["input_ids"] for i in range(3)]
        prefix = 0
        while all(len(s) > prefix + 1 and s[prefix] == sequences[0][prefix] for s in sequences):
            prefix += 1
        shared += 1 + prefix + sum(len(s) - prefix for s in sequences)  # 1: the start token
        three += sum(1 + len(s) for s in sequences)
        unknown = next(i for i in range(3) if row["answer_groups"][i] == "unknown")
        others = [row[f"ans{i}"] for i in range(3) if i != unknown] + unknowns
        twelve += sum(len(tokenizer(text + " " + answer, add_special_tokens=False)["input_ids"]) for answer in others)
    return {"lmbias": shared / len(rows), "three whole sequences": three / len(rows), "lm-eval": twelve / len(rows)}


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--per-category", type=int, default=52, help="items per category (a multiple of 4)")
    parser.add_argument("--lm-eval-python", required=True, help="the Python of an environment with lm-eval 0.4.13")
    parser.add_argument("--model", help="model folder (default: the embedded model's converted folder)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16, help="lmbias: items per pass")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    from lmbias.benchmarks.bbq.data import read_category
    from lmbias.lm.gguf import embedded_model_dir
    from lmbias.lm.loading import load_causal_lm
    from lmbias.resources import locate

    if args.model is None:
        load_causal_lm(device="cpu")  # converts the embedded model once
    model = args.model or str(embedded_model_dir())
    rows = [row for category in HELD for row in read_category(category)[:args.per_category]]
    raw = {c: [json.loads(line) for line in locate(f"bbq/{c}").read_text().splitlines()][:args.per_category] for c in HELD}
    with tempfile.TemporaryDirectory() as folder:
        items_file = Path(folder) / "items.jsonl"
        items_file.write_text("".join(json.dumps(item) + "\n" for c in HELD for item in raw[c]))
        times: dict = {"lmbias": [], "lm-eval": []}
        for _ in range(args.rounds):
            ours = run_lmbias(args, model)
            times["lmbias"].append(ours["seconds"])
            theirs = run_harness(args, model, items_file)
            times["lm-eval"].append(theirs["seconds"])
    same_three = sum(r["prediction_sum"] == max(range(3), key=lambda i: h["lls"][i]) for r, h in zip(ours["items"], theirs["items"]))
    same_twelve = sum(r["prediction_sum"] == h["decision"] for r, h in zip(ours["items"], theirs["items"]))
    largest = max(abs(a - b) for r, h in zip(ours["items"], theirs["items"]) for a, b in zip(r["scores"], h["lls"]))
    tokens = token_counts(model, rows)
    best = {tool: min(values) for tool, values in times.items()}
    print(f"{len(rows)} items ({args.per_category} from each of {', '.join(HELD)}), {args.threads} threads, "
          f"{time.strftime('%Y-%m-%d')}\n")
    print(f"| tool | seconds (best of {args.rounds}) | vs lm-eval | full set, extrapolated (min) | tokens run per item |")
    print("|---|---|---|---|---|")
    for tool in ("lmbias", "lm-eval"):
        print(f"| {tool} | {best[tool]:.1f} | {best['lm-eval'] / best[tool]:.2f}x | {best[tool] / len(rows) * FULL_SET / 60:.0f} "
              f"| {tokens[tool]:.0f} |")
    print(f"\nsame decision as lm-eval's log-likelihoods over the item's three answers: {same_three} of {len(rows)}; "
          f"largest log-likelihood difference {largest:.2e}")
    print(f"same decision as lm-eval's own twelve-choice decision: {same_twelve} of {len(rows)}")
    print(f"tokens per item if the three answers were scored as whole sequences: {tokens['three whole sequences']:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
