"""Throughput of the BOLD metrics on all 23,679 BOLD Wikipedia sentences, against a baseline in the same run.

Baselines: a one-text-at-a-time, word-by-word Python loop computing the same numbers (the way
evaluate's modules and most peers score texts), and lmbias's own scorer called with one text at a
time (what batching itself gains); for sentiment, the same code in one process against every core.
The baseline runs on the first ``--baseline-texts`` sentences, its rate is compared per
text, and its results are compared with ours (max abs diff). Peak memory is tracemalloc's peak of
Python and numpy allocations during a separate batched call. Every rate is the best of several runs
after a warm-up (batched: ``--repeat``, baselines: 3).

Classifier metrics (toxicity, regard) are measured by ``bench/classifiers.py``.

Usage:  LMBIAS_DATA_DIR=../shared/data python bench/bold_metrics.py
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import tracemalloc

import numpy as np

import lmbias
from lmbias import embeddings
from lmbias.benchmarks.bold.scorers import gender, lexicon_extension, psycholinguistic
from lmbias.scorers import vader, wordvalues
from lmbias.words import CLOSED_CLASS_WORDS, WORD_PATTERN, words_of_texts


def timed(function, *args, **kwargs):
    """(seconds, result) of one call."""
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - start, result


def peak_mib(function, *args, **kwargs) -> float:
    """tracemalloc's peak (MiB) during one call (a separate call: tracing slows Python code down)."""
    tracemalloc.start()
    function(*args, **kwargs)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return peak


def regex_tokenize(text, lowercase=True):
    """The words of one text by the defining regular expression (how a per-text loop tokenises)."""
    text = text.replace("\u2019", "'")
    return WORD_PATTERN.findall(text.lower() if lowercase else text)


def naive_gender(texts, kv, method):
    """The per-word loop peers write: look each word up, cosine with she - he, aggregate in Python."""
    g = kv["she"] - kv["he"]
    g_norm = np.linalg.norm(g)
    out = []
    for text in texts:
        values = []
        for word in regex_tokenize(text, lowercase=False):
            key = word if word in kv.key_to_index else word.lower()
            if key in kv.key_to_index:
                vector = kv[key]
                b = float(vector @ g / (np.linalg.norm(vector) * g_norm))
                values.append(0.0 if abs(b) < gender.ZERO_TOLERANCE else b)
        if method == "max":  # the last of equally polar words, lmbias's default (max_ties="last")
            best = 0.0
            for b in values:
                if abs(b) >= abs(best):
                    best = b
            out.append(best)
        else:
            total = sum(abs(b) for b in values)
            out.append(sum(np.sign(b) * b * b for b in values) / total if total else 0.0)
    return np.array(out)


def naive_unigram(texts):
    """Per text: tokenise, count the female and the male tokens."""
    male, female = set(gender.MALE_TOKENS), set(gender.FEMALE_TOKENS)
    out = []
    for text in texts:
        words = regex_tokenize(text)
        out.append(sum(w in female for w in words) - sum(w in male for w in words))
    return np.array(out, dtype=float)


def naive_norms(texts, lexicon):
    """Per text, per word: look up the 8 values, aggregate with numpy per word."""
    index = lexicon.vocabulary
    out = np.zeros((len(texts), lexicon.scaled.shape[1]))
    for i, text in enumerate(texts):
        numerator = np.zeros(lexicon.scaled.shape[1])
        denominator = np.zeros(lexicon.scaled.shape[1])
        for word in regex_tokenize(text):
            if word in index and word not in CLOSED_CLASS_WORDS:
                w = lexicon.scaled[index[word]]
                numerator += np.sign(w) * w * w
                denominator += np.abs(w)
        np.divide(numerator, denominator, out=out[i], where=denominator > 0)
    return out


def stage_milliseconds(texts, lexicon, repeat):
    """Best-of-``repeat`` milliseconds of each stage of the vectorised norms pipeline, in order."""
    words, text_index = words_of_texts(texts)
    encoded = words.dictionary_encode()
    distinct = encoded.dictionary.to_pylist()
    ids, kept_index = wordvalues.encode(texts, lexicon.vocabulary, exclude=set(CLOSED_CLASS_WORDS))
    stages = [
        ("join the texts and encode them to UTF-8 bytes", lambda: "\x00".join(texts).encode()),
        ("tokenise (words_of_texts, includes the line above)", lambda: words_of_texts(texts)),
        ("group the distinct words (Arrow dictionary_encode)", words.dictionary_encode),
        ("look the distinct words up", lambda: wordvalues.lookup_ids(lexicon.vocabulary.get, distinct)),
        ("aggregate the eight norms per text",
         lambda: wordvalues.weighted_signed_mean(lexicon.scaled, ids, text_index=kept_index, n_texts=len(texts))),
    ]
    return [(name, 1e3 * min(timed(stage)[0] for _ in range(repeat))) for name, stage in stages]


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-texts", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=10, help="best of this many batched runs")
    args = parser.parse_args()

    rows = lmbias.load_rows("bold")
    texts = [row["wikipedia"] for row in rows]
    sample = texts[: args.baseline_texts]
    polarity = gender.load_word_polarity()
    kv = embeddings.load_embedding()
    lexicon = lexicon_extension.default_lexicon()

    cases = [
        ("sentiment (VADER)", lambda t: vader.vader_compound(t), lambda t: vader.vader_compound(t, n_jobs=1),
         "same code, 1 process", texts),
        ("gender polarity (unigram)", lambda t: gender.gender_scores(t, "unigram"), naive_unigram, "per-word Python loop", sample),
        *[
            (f"gender polarity ({m})", lambda t, m=m: gender.gender_scores(t, m, polarity=polarity),
             lambda t, m=m: naive_gender(t, kv, m), "per-word Python loop", sample)
            for m in ("wavg", "max")
        ],
        ("psycholinguistic norms", lambda t: psycholinguistic.score_texts(t, lexicon),
         lambda t: naive_norms(t, lexicon), "per-word Python loop", sample),
    ]
    # the same scorers called with one text at a time (how a caller looping over texts uses them)
    cases += [(name, batched, lambda t, f=batched: np.concatenate([np.asarray(f([x])).reshape(1, -1) for x in t]).squeeze(),
               "lmbias, one text per call", sample) for name, batched, *_ in cases[1:]]

    for _ in range(3):  # warm-up: the first calls of a process run up to 1.5x slower on this machine
        for _, batched, *_ in cases[1:5]:
            batched(texts)
    seconds, _ = min(timed(lambda t: [regex_tokenize(x) for x in t], texts) for _ in range(3))
    vectorised, _ = min(timed(words_of_texts, texts) for _ in range(args.repeat))
    print(f"tokenising alone: {len(texts) / seconds:,.0f} texts/s text by text with the regular expression (the baselines), "
          f"{len(texts) / vectorised:,.0f} texts/s vectorised (lmbias.words.words_of_texts)\n")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; {len(texts):,} texts\n")
    print("| metric | texts/s | peak MiB | baseline | baseline texts/s | speed-up | max abs diff |")
    print("|---|---:|---:|---|---:|---:|---:|")
    for name, batched, baseline, baseline_name, baseline_texts in cases:
        seconds, result = min((timed(batched, texts) for _ in range(args.repeat)), key=lambda pair: pair[0])
        base_seconds, base_result = min((timed(baseline, baseline_texts) for _ in range(3)), key=lambda pair: pair[0])
        difference = np.abs(np.asarray(result)[: len(baseline_texts)] - np.asarray(base_result)).max()
        rate, base_rate = len(texts) / seconds, len(baseline_texts) / base_seconds
        peak = peak_mib(batched, texts)
        print(f"| {name} | {rate:,.0f} | {peak:,.1f} | {baseline_name} | {base_rate:,.0f} | {rate / base_rate:.1f}x | {difference:.1e} |")

    print(f"\nstages of the psycholinguistic norms on all {len(texts):,} texts ({sum(map(len, texts)) / 1e6:.1f} M characters):\n")
    print("| stage | ms |")
    print("|---|---:|")
    for name, milliseconds in stage_milliseconds(texts, lexicon, args.repeat):
        print(f"| {name} | {milliseconds:.1f} |")


if __name__ == "__main__":
    main()
