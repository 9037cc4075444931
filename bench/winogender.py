"""Winogender likelihood resolution: lmbias vs lm-evaluation-harness's ``winogender_all`` task, on the same
model folder and all 720 sentences, each in a fresh process, alternating; the same decision is expected
on every sentence (both use the prompt "<sentence> ‘He’ refers to the" and score " <occupation>" and
" <participant>").

    LMBIAS_DATA_DIR=../shared/data python bench/winogender.py --lm-eval-python /tmp/lmeval/bin/python

The harness's items are built from Rudinger et al.'s ``all_sentences.tsv`` the way the Hub dataset
``oskarvanderwal/winogender`` lays them out (``sentid``, ``sentence``, ``pronoun``: the sentence's one
pronoun, ``occupation``, ``participant``, ``gender``, ``target``, ``label`` from the sentence id), here,
independently of lmbias's loader. Prints the seconds (model load included, as the harness's call
includes it), the ratio, tokens run per sentence, the agreement and the largest log-likelihood
difference, and both tools' accuracy.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PRONOUNS = {"he", "his", "him", "she", "her", "they", "their", "them"}
LMBIAS = """
import json, time
started = time.perf_counter()
import torch
torch.set_num_threads({threads})
from lmbias.benchmarks.coreference import score_referents
from lmbias.benchmarks.winogender.data import load_rows
from lmbias.lm.loading import load_causal_lm
rows = load_rows("all")
lm = load_causal_lm({model!r}, dtype="float32", device="cpu")
records = score_referents(lm, rows, batch_size={batch_size})
print(json.dumps({{"seconds": time.perf_counter() - started, "items": records}}))
"""


def harness_items(path: Path) -> list[dict]:
    """The harness's dataset rows from ``all_sentences.tsv`` (the layout of oskarvanderwal/winogender)."""
    items = []
    with open(path, newline="", encoding="utf-8") as handle:
        for record in csv.DictReader(handle, delimiter="\t"):
            occupation, participant, answer, gender = record["sentid"].split(".")[:4]
            found = [w for w in re.findall(r"[a-z]+", record["sentence"].lower()) if w in PRONOUNS]
            assert len(found) == 1, record
            items.append({"sentid": record["sentid"], "sentence": record["sentence"], "pronoun": found[0], "occupation": occupation,
                          "participant": participant, "gender": gender, "target": [occupation, participant][int(answer)],
                          "label": int(answer)})
    return items


def tokens_per_sentence(model: str, items: list[dict]) -> dict:
    """Tokens run per sentence: the prompt once plus both answers' rest (lmbias); both whole sequences (the harness)."""
    from lmbias.benchmarks.coreference import referent_prompt
    from lmbias.lm.loading import load_causal_lm

    tokenizer = load_causal_lm(model, device="cpu").tokenizer
    shared = whole = 0
    for item in items:
        prompt = referent_prompt(item["sentence"], item["pronoun"])
        base = len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
        lengths = [len(tokenizer(prompt + " " + candidate, add_special_tokens=False)["input_ids"])
                   for candidate in (item["occupation"], item["participant"])]
        shared += base + sum(n - base for n in lengths)
        whole += sum(lengths)
    return {"lmbias": shared / len(items), "lm-eval": whole / len(items)}


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--lm-eval-python", required=True, help="the Python of an environment with lm-eval 0.4.13")
    parser.add_argument("--model", help="model folder (default: the embedded model's converted folder)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    from lmbias.lm.gguf import embedded_model_dir
    from lmbias.lm.loading import load_causal_lm
    from lmbias.resources import locate

    if args.model is None:
        load_causal_lm(device="cpu")  # converts the embedded model once
    model = args.model or str(embedded_model_dir())
    items = harness_items(locate("winogender/sentences"))
    times: dict = {"lmbias": [], "lm-eval": []}
    with tempfile.TemporaryDirectory() as folder:
        items_file = Path(folder) / "items.jsonl"
        items_file.write_text("".join(json.dumps(item) + "\n" for item in items))
        for _ in range(args.rounds):
            code = LMBIAS.format(threads=args.threads, model=model, batch_size=args.batch_size)
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
            ours = json.loads(done.stdout.strip().splitlines()[-1])
            times["lmbias"].append(ours["seconds"])
            done = subprocess.run([args.lm_eval_python, str(Path(__file__).with_name("peer_lm_eval_winogender.py")), model,
                                   str(items_file), "--threads", str(args.threads)], capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"lm-eval failed:\n{done.stderr[-3000:]}")
            theirs = json.loads(done.stdout.strip().splitlines()[-1])
            times["lm-eval"].append(theirs["seconds"])
    assert [r["id"] + ".txt" for r in ours["items"]] == [item["sentid"] for item in items]
    same = sum(r["prediction"] == h["decision"] for r, h in zip(ours["items"], theirs["items"]))
    largest = max(abs(a - b) for r, h in zip(ours["items"], theirs["items"]) for a, b in zip(r["scores"], h["lls"]))
    accuracy = 100 * sum(r["prediction"] == item["label"] for r, item in zip(ours["items"], items)) / len(items)
    tokens = tokens_per_sentence(model, items)
    best = {tool: min(values) for tool, values in times.items()}
    print(f"{len(items)} Winogender sentences, {args.threads} threads, {time.strftime('%Y-%m-%d')}\n")
    print(f"| tool | seconds (best of {args.rounds}) | vs lm-eval | tokens run per sentence | accuracy (%) |")
    print("|---|---|---|---|---|")
    for tool, acc in (("lmbias", accuracy), ("lm-eval", 100 * theirs["acc"])):
        print(f"| {tool} | {best[tool]:.1f} | {best['lm-eval'] / best[tool]:.2f}x | {tokens[tool]:.1f} | {acc:.2f} |")
    print(f"\nsame decision as lm-eval's winogender_all: {same} of {len(items)}; largest log-likelihood difference {largest:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
