"""BOLD scoring: every BOLD metric over texts aligned with BOLD rows, aggregated per domain and group.

The texts are usually a model's continuations of the BOLD prompts; with ``source="wikipedia"``
they are the Wikipedia sentences the prompts were cut from, the paper's human baseline.

As in the paper (§3.3), texts are anonymised before scoring (people -> "Person", professions and
religious / political groups -> "XYZ"); regard masks every demographic as "XYZ", the convention of
its classifier, and by default scores only the groups the paper scores (gender, and the African and
European American groups of race). A metric whose model cannot be loaded is skipped with the reason
recorded; nothing else is lost.
"""

from __future__ import annotations

from ..errors import InputError, RequirementError

from collections import Counter
from typing import Optional, Sequence

import numpy as np

from .. import __version__, stats
from ..checks import check_texts
from ..results import SCHEMA_VERSION
from ..data.bold import DOMAINS
from ..resources import PathLike
from ..scorers import gender, psycholinguistic, regard, sentiment, toxicity
from ..scorers.classifier import ClassifierError, load_classifier
from ..text import anonymize_texts

METRICS = ("sentiment", "toxicity", "regard", "psycholinguistic_norms", "gender_polarity")
# BOLD §4.3: regard only where Sheng et al.'s classifier was trained (None = every group of the domain).
REGARD_GROUPS = {"gender": None, "race": ("African_Americans", "European_Americans")}
SOURCES = ("wikipedia", "prompt")


def source_texts(rows: Sequence[dict], source: str) -> list[str]:
    """The texts of BOLD ``rows`` for a built-in source: the Wikipedia sentence or the prompt."""
    if source not in SOURCES:
        raise InputError(f"source must be one of {SOURCES}, got {source!r}")
    return [row[source] for row in rows]


def per_domain(rows: Sequence[dict], labels: Sequence[str], label_names: Sequence[str], keep=None) -> dict:
    """``{domain: {"per_group", "test"}}`` of single-label results (``keep``: a boolean mask of rows)."""
    keep = np.ones(len(rows), dtype=bool) if keep is None else np.asarray(keep)
    out = {}
    for domain in dict.fromkeys(row["domain"] for row in rows):
        index = [i for i, row in enumerate(rows) if row["domain"] == domain and keep[i]]
        if not index:
            continue
        domain_labels = [labels[i] for i in index]
        groups = [rows[i]["group"] for i in index]
        out[domain] = {
            "per_group": stats.group_proportions(domain_labels, groups=groups, label_names=label_names),
            "test": stats.proportion_tests(domain_labels, groups=groups, label_names=label_names),
        }
    return out


def _regard_mask(rows: Sequence[dict], all_groups: bool) -> np.ndarray:
    if all_groups:
        return np.ones(len(rows), dtype=bool)
    def scored(row: dict) -> bool:
        allowed = REGARD_GROUPS.get(row["domain"], ())
        return allowed is None or row["group"] in allowed

    return np.array([scored(row) for row in rows], dtype=bool)


def score_bold(
    rows: Sequence[dict],
    texts: Sequence[str],
    *,
    metrics: Sequence[str] = METRICS,
    anonymize: bool = True,
    toxicity_model: str = toxicity.DEFAULT_MODEL,
    regard_model: str = regard.DEFAULT_MODEL,
    regard_all_groups: bool = False,
    gender_methods: Sequence[str] = gender.METHODS,
    device: Optional[str] = None,
    batch_size: int = 32,
    n_jobs: Optional[int] = None,
    data_dir: Optional[PathLike] = None,
) -> dict:
    """Score ``texts`` (one per BOLD row) with every requested BOLD metric.

    Returns a JSON-ready dict: ``metrics`` (per metric, ``domains`` -> ``per_group`` / ``test``;
    gender polarity per method plus the paper's Table 3 over the merged profession groups),
    ``skipped`` (metric -> why, e.g. a classifier that could not be loaded) and the options used.
    """
    texts = check_texts(texts, "texts")
    if len(texts) != len(rows):
        raise InputError(f"texts has {len(texts)} entries but rows has {len(rows)}; expected one text per row")
    unknown = set(metrics) - set(METRICS)
    if unknown:
        raise InputError(f"metrics {sorted(unknown)} are unknown; valid: {list(METRICS)}")
    domains = [row["domain"] for row in rows]
    names = [row["name"] for row in rows]
    groups = [row["group"] for row in rows]
    scored = anonymize_texts(texts, domains, names, groups) if anonymize else list(texts)
    result: dict = {"metrics": {}, "skipped": {}}

    if "sentiment" in metrics:
        labels = sentiment.sentiment_labels(sentiment.vader_compound(scored, n_jobs=n_jobs))
        result["metrics"]["sentiment"] = {"label_names": list(sentiment.LABELS), "domains": per_domain(rows, labels, sentiment.LABELS)}

    for name, model_name in (("toxicity", toxicity_model), ("regard", regard_model)):
        if name not in metrics:
            continue
        try:
            model = load_classifier(model_name, device=device)
        except (OSError, ClassifierError) as error:
            result["skipped"][name] = f"classifier {model_name!r} could not be loaded: {error}"
            continue
        if name == "toxicity":
            _, labels, _ = toxicity.toxicity(scored, model, batch_size=batch_size)
            result["metrics"][name] = {"model": model_name, "label_names": list(toxicity.LABELS), "domains": per_domain(rows, labels, toxicity.LABELS)}
        else:
            keep = _regard_mask(rows, regard_all_groups)
            index = np.flatnonzero(keep)
            picked = [texts[i] for i in index]
            if anonymize:
                picked = regard.mask_demographics(picked, domains=[domains[i] for i in index], names=[names[i] for i in index], groups=[groups[i] for i in index])
            labels = np.full(len(rows), "", dtype=object)
            if len(index):
                labels[index] = regard.regard(picked, model, batch_size=batch_size)[1]
            result["metrics"][name] = {"model": model_name, "label_names": model.labels, "domains": per_domain(rows, labels, model.labels, keep)}

    if "psycholinguistic_norms" in metrics:
        categories = psycholinguistic.categorize(psycholinguistic.score_texts(scored, data_dir=data_dir))
        by_domain = {}
        for domain in dict.fromkeys(domains):
            index = [i for i, d in enumerate(domains) if d == domain]
            per_group, test = stats.category_statistics([categories[i] for i in index], groups=[groups[i] for i in index], categories=psycholinguistic.CATEGORIES)
            by_domain[domain] = {"per_group": per_group, "test": test}
        result["metrics"]["psycholinguistic_norms"] = {"label_names": list(psycholinguistic.CATEGORIES), "domains": by_domain}

    if "gender_polarity" in metrics:
        polarity = gender.load_word_polarity(data_dir=data_dir) if set(gender_methods) - {"unigram"} else None
        methods = {}
        for method in gender_methods:
            labels = gender.gender_labels(gender.gender_scores(scored, method, polarity=polarity), method)
            methods[method] = {"domains": per_domain(rows, labels, gender.LABELS)}
        merged = [row.get("merged_group") for row in rows]
        result["metrics"]["gender_polarity"] = {
            "label_names": list(gender.LABELS),
            "methods": methods,
            "profession_merged_groups": gender.table3(scored, merged_groups=merged, methods=gender_methods, polarity=polarity),
        }

    result["options"] = {
        "anonymize": anonymize,
        "regard_all_groups": regard_all_groups,
        "gender_methods": list(gender_methods),
        "lmbias_version": __version__,
    }
    return result


def score_bold_source(
    source: str = "wikipedia",
    *,
    domains: Sequence[str] = DOMAINS,
    per_group: Optional[int] = None,
    data_dir: Optional[PathLike] = None,
    **options,
) -> dict:
    """:func:`score_bold` on a built-in source ("wikipedia" or "prompt") of the chosen BOLD domains.

    ``per_group`` keeps the first K rows of each group (a quick look); default all rows.
    """
    rows = select_rows(domains, per_group=per_group, data_dir=data_dir)
    result = score_bold(rows, source_texts(rows, source), data_dir=data_dir, **options)
    result["source"] = source
    result["n_texts"] = len(rows)
    result["domains"] = list(domains)
    return result




def select_rows(domains: Sequence[str] = DOMAINS, *, per_group: Optional[int] = None, limit: Optional[int] = None, data_dir=None) -> list[dict]:
    """BOLD rows of ``domains``: all, the first ``per_group`` of each group, or the first ``limit`` overall."""
    from ..data import load_rows

    bad = [d for d in domains if d not in DOMAINS]
    if bad:
        raise InputError(f"domains {bad} are unknown; valid: {list(DOMAINS)}")
    if per_group is not None and limit is not None:
        raise InputError("give per_group or limit, not both")
    for name, value in (("per_group", per_group), ("limit", limit)):
        if value is not None and value < 1:
            raise InputError(f"{name} must be >= 1, got {value}")
    rows = [row for domain in domains for row in load_rows("bold", domain, data_dir=data_dir)]
    if per_group is not None:
        taken: Counter = Counter()
        kept = []
        for row in rows:
            taken[row["group"]] += 1
            if taken[row["group"]] <= per_group:
                kept.append(row)
        rows = kept
    return rows[:limit] if limit is not None else rows


def run_bold(
    *,
    model: Optional[str] = None,
    out="runs/bold",
    domains: Sequence[str] = DOMAINS,
    per_group: Optional[int] = None,
    limit: Optional[int] = None,
    preset: str = "bold-gpt2",
    max_new_tokens: Optional[int] = None,
    seed: int = 0,
    batch_size: int = 32,
    num_return_sequences: int = 1,
    dtype: Optional[str] = None,
    device: Optional[str] = None,
    require_all: bool = False,
    progress: bool = True,
    data_dir: Optional[PathLike] = None,
    scoring: Optional[dict] = None,
) -> Optional[dict]:
    """The main job: generate continuations of BOLD prompts, score them and the Wikipedia baseline.

    Writes ``<out>/generations.jsonl`` and ``<out>/results.json`` (schema in the README) and returns
    the results on rank 0 (None on other ranks). ``scoring`` holds keyword arguments of
    :func:`score_bold` (metrics, classifier models, anonymize ...). Generated texts are scored as prompt + continuation, the way
    the Wikipedia sentences (which start with their prompt) are scored.

    Raises:
        RequirementError: with ``require_all``, when a metric had to be skipped (the generations are kept).
    """
    import json
    from pathlib import Path

    from ..data.bold import SPEC
    from ..lm.generation import generation_settings
    from ..lm.loading import load_causal_lm
    from ..lm.runner import library_versions, run_generation
    from ..resources import BOLD_COMMIT

    rows = select_rows(domains, per_group=per_group, limit=limit, data_dir=data_dir)
    settings = generation_settings(preset, max_new_tokens=max_new_tokens)

    def loader(dist):
        lm = dist.main_first(lambda: load_causal_lm(model, dtype=dtype, device=dist.device(device)))
        loaded["name"], loaded["source"] = lm.name, lm.source
        return lm

    loaded: dict = {}
    generations = run_generation(
        loader, [row["id"] for row in rows], [row["prompt"] for row in rows], out, settings=settings,
        model_name=model or "embedded:smollm2-135m-instruct", preset=preset, seed=seed, batch_size=batch_size,
        num_return_sequences=num_return_sequences, progress=progress,
    )
    if generations is None:
        return None
    row_of = {row["id"]: row for row in rows}
    sample_rows = [row_of[g["id"]] for g in generations]
    texts = [g["prompt"] + g["continuation"] for g in generations]
    scoring = scoring or {}
    model_scores = score_bold(sample_rows, texts, data_dir=data_dir, **scoring)
    wikipedia_scores = score_bold(rows, source_texts(rows, "wikipedia"), data_dir=data_dir, **scoring)
    results = {
        "schema_version": SCHEMA_VERSION,
        "benchmark": "bold",
        "model": {"name": loaded.get("name", model), "source": loaded.get("source")},
        "data": {"dataset": "bold", "revision": BOLD_COMMIT, "citation": SPEC.citation, "domains": list(domains), "prompts": len(rows)},
        "generation": {
            "preset": preset, "settings": settings, "seed": seed, "batch_size": batch_size,
            "num_return_sequences": num_return_sequences, "texts": len(generations),
            "mean_new_tokens": sum(g["num_tokens"] for g in generations) / len(generations),
            "file": "generations.jsonl",
        },
        "selection": {"per_group": per_group, "limit": limit},
        "results": {"model": model_scores, "wikipedia": wikipedia_scores},
        "versions": library_versions(),
    }
    Path(out, "results.json").write_text(json.dumps(results, indent=2) + "\n")
    skipped = model_scores["skipped"]
    if require_all and skipped:
        raise RequirementError(f"--require-all: metrics were skipped: {'; '.join(f'{k}: {v}' for k, v in skipped.items())}")
    return results

