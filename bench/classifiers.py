"""Classifier metrics (BOLD toxicity and regard): batched scoring against one text at a time.

Both metrics are "a sequence-classification model over texts" (`lmbias.scorers.classifier`). No
real toxicity or regard model installs offline, so this script builds a BERT classifier with random
weights: timing depends on the architecture and the token counts, not on the weights.

* ``--size tiny``: 2 layers, 64 wide (a CPU smoke figure).
* ``--size base``: BERT-base (12 layers, 768 wide, 6 labels: the shape of unitary/toxic-bert), with a
  word-level vocabulary of the 30,000 most frequent words of the texts (about the token counts of
  bert-base-uncased on this English text).

Texts: BOLD Wikipedia sentences. Baseline: the same model and code with batch size 1 (one text at a
time, the way a pipeline loop scores) on the first ``--baseline-texts``, against the batched scorer
(length-sorted batches, fp16 on a GPU: lmbias's default there) on the same texts; then the batched
scorer alone on ``--texts`` (default all 23,679).

Usage:  LMBIAS_DATA_DIR=../shared/data python bench/classifiers.py [--size base] [--device cuda]
"""

from __future__ import annotations

import argparse
import collections
import os
import platform
import re
import tempfile
import time

import numpy as np
import torch
import transformers

import lmbias
from lmbias.scorers.classifier import load_classifier

TOXIC_BERT_LABELS = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]


def build_classifier(folder: str, size: str, texts: list[str]) -> str:
    """Save a random-weight BERT classifier and a word-level WordPiece vocabulary to ``folder``."""
    if size == "tiny":
        words = sorted(set("the a of and in is was to he she".split()))
        shape = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128)
    else:
        counts = collections.Counter(w for t in texts for w in re.findall(r"[a-z]+|[^a-z\s]", t.lower()))
        words = [w for w, _ in counts.most_common(30_000)]
        shape = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072)
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    vocab = list(dict.fromkeys(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + letters + [f"##{c}" for c in letters] + words))
    with open(os.path.join(folder, "vocab.txt"), "w") as handle:
        handle.write("\n".join(vocab))
    config = transformers.BertConfig(
        vocab_size=len(vocab), id2label=dict(enumerate(TOXIC_BERT_LABELS)),
        label2id={label: i for i, label in enumerate(TOXIC_BERT_LABELS)}, problem_type="multi_label_classification", **shape,
    )
    torch.manual_seed(0)
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    transformers.BertTokenizer(vocab=os.path.join(folder, "vocab.txt")).save_pretrained(folder)
    return folder


def timed(function, *args, **kwargs):
    """(seconds, result) of one call, with the GPU synchronised."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    result = function(*args, **kwargs)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=["tiny", "base"], default="tiny")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--texts", type=int, default=None, help="texts for the batched run (default: all)")
    parser.add_argument("--baseline-texts", type=int, default=512)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[32])
    args = parser.parse_args()

    texts = [row["wikipedia"] for row in lmbias.load_rows("bold")][: args.texts]
    with tempfile.TemporaryDirectory() as folder:
        model = load_classifier(build_classifier(folder, args.size, texts), device=args.device)
        device = torch.cuda.get_device_name() if args.device.startswith("cuda") else f"{platform.machine()} CPU, {os.cpu_count()} cores"
        print(f"device: {device}; torch {torch.__version__}; model: random BERT-{args.size}, "
              f"{sum(p.numel() for p in model.model.parameters()) / 1e6:.1f}M parameters, {model.model.dtype}\n")
        some = texts[: args.baseline_texts]
        model.probabilities(some[:64], batch_size=32)  # warm-up
        base_seconds, base_result = timed(model.probabilities, some, batch_size=1)
        base_rate = len(some) / base_seconds
        print("| run | texts | batch size | seconds | texts/s | speed-up | max abs diff vs batch 1 |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        print(f"| one text at a time | {len(some):,} | 1 | {base_seconds:.2f} | {base_rate:,.0f} | 1.0x | - |")
        for size in args.batch_sizes:
            seconds, result = timed(model.probabilities, some, batch_size=size)
            difference = np.abs(result - base_result).max()
            rate = len(some) / seconds
            print(
                f"| batched, length-sorted | {len(some):,} | {size} | {seconds:.2f} | {rate:,.0f} "
                f"| {rate / base_rate:.1f}x | {difference:.1e} |"
            )
        seconds, _ = timed(model.probabilities, texts, batch_size=args.batch_sizes[-1])
        print(f"| batched, all texts | {len(texts):,} | {args.batch_sizes[-1]} | {seconds:.2f} | {len(texts) / seconds:,.0f} | - | - |")

if __name__ == "__main__":
    main()
