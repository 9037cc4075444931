"""BOLD scoring: every BOLD metric over texts aligned with BOLD rows, aggregated per domain and group.

Its own run, not a declared Task (:mod:`lmbias.benchmarks.declared`): it generates
(the continuation protocol, :func:`lmbias.lm.runner.run_generation`) and then scores the texts with
classifiers and lexicons that may be skipped, a shape the generic run does not have.

The texts are usually a model's continuations of the BOLD prompts; with ``source="wikipedia"``
they are the Wikipedia sentences the prompts were cut from, the paper's human baseline.

As in the paper (§3.3), texts are anonymised before scoring (people -> "Person", professions and
religious / political groups -> "XYZ"); regard masks every demographic as "XYZ", the convention of
its classifier, and by default scores only the groups the paper scores (gender, and the African and
European American groups of race). A metric whose model cannot be loaded is skipped with the reason
recorded; nothing else is lost.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ... import stats
from ...checks import check_choices, check_scalar, check_texts
from ...errors import InputError, LmbiasError, RequirementError
from ...lm.chat import continuation_prompts, scored_text
from ...lm.spec import ModelSpec
from ...model_source import model_source
from ...progress import showing
from ...resources import PathLike, ResourceNotFoundError
from ...run_lock import holds_run_directory
from ...run_result import RunResult, coverage
from ...scorers import regard, toxicity, vader
from ...scorers.classifier import ClassifierError, load_classifier
from ...text import anonymize_texts
from ...version import __version__
from ..base import chat_requested
from ..preflight import announce_unavailable
from .data import DOMAINS
from .scorers import gender, lexicon_extension, lexicons, psycholinguistic
from .table3 import table3

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


@dataclass(frozen=True)
class Batch:
    """What every BOLD scorer reads: the rows, their texts as given and as scored (anonymised unless
    ``anonymize`` is off), and :func:`score_bold`'s options."""

    rows: Sequence[dict]
    texts: list
    scored: list
    options: dict
    loaded: dict

    def column(self, key: str) -> list:
        """``row[key]`` of every row."""
        return [row[key] for row in self.rows]


class SkippedMetric(LmbiasError):
    """A metric that cannot be scored here (e.g. its classifier cannot be loaded); the message says why."""


# How to supply what a metric needs, said in every skip notice.
FIXES = {
    "toxicity": "pass --toxicity-model DIR (a classifier folder saved with save_pretrained) or a Hub id the Hub can serve",
    "regard": "pass --regard-model DIR (a classifier folder saved with save_pretrained) or a Hub id the Hub can serve",
    "psycholinguistic_norms": "run `lmbias resources --fetch` (online, or with LMBIAS_MIRROR), or pass --data-dir DIR",
    "gender_polarity": "run `lmbias resources --fetch` (online, or with LMBIAS_MIRROR), pass --data-dir DIR, or --embedding PATH",
}


def _skip(metric: str, cause) -> SkippedMetric:
    """The skip of ``metric`` for ``cause``: one line (a missing resource's summary, else the first line)."""
    cause = getattr(cause, "summary", None) or (str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__)
    return SkippedMetric(f"{cause}; fix: {FIXES[metric]}")


def _classifier(batch: Batch, metric: str):
    """The classifier of ``metric`` (its ``<metric>_model`` option), loaded once per :func:`score_bold`
    ``loaded`` dict; a model that cannot be had skips the metric."""
    name, device = batch.options[f"{metric}_model"], batch.options["device"]
    if (name, device) not in batch.loaded:
        try:
            batch.loaded[name, device] = load_classifier(name, device=device)
        except (OSError, ClassifierError) as error:
            raise _skip(metric, error) from None
    return batch.loaded[name, device]


def _norms_lexicon(options: dict):
    """The psycholinguistic lexicon: the default extension, or one extended to ``embedding``."""
    data_dir, embedding = options["data_dir"], options["embedding"]
    try:
        if embedding is None:
            return lexicon_extension.default_lexicon(True, data_dir)
        return lexicon_extension.extend_lexicon(lexicons.load_lexicon(data_dir), embedding=embedding, data_dir=data_dir)
    except ResourceNotFoundError as error:
        raise _skip("psycholinguistic_norms", error) from None


def _word_polarity(options: dict):
    """Gender-Wavg / Gender-Max's word polarity (None when only the unigram method is asked for)."""
    if not set(options["gender_methods"]) - {"unigram"}:
        return None
    try:
        return gender.load_word_polarity(options["embedding"], data_dir=options["data_dir"])
    except ResourceNotFoundError as error:
        raise _skip("gender_polarity", error) from None


def _classifier_available(metric: str):
    def check(options: dict) -> None:
        source = model_source(options[f"{metric}_model"])
        if not source.available:
            raise _skip(metric, f"classifier {source.name!r} cannot be loaded: {source.reason}")
    return check


def _sentiment(batch: Batch) -> dict:
    labels = vader.sentiment_labels(vader.vader_compound(batch.scored, n_jobs=batch.options["n_jobs"]))
    cut = vader.clip_texts(batch.scored)[1]
    return {"label_names": list(vader.LABELS), "domains": per_domain(batch.rows, labels, vader.LABELS),
            **({"texts_cut": f"{cut} texts longer than {vader.MAX_CHARS:,} characters were scored on their start"}
               if cut else {})}


def _toxicity(batch: Batch) -> dict:
    model_name = batch.options["toxicity_model"]
    model = _classifier(batch, "toxicity")
    scorer = toxicity.ToxicityClassifier(model=model_name, batch_size=batch.options["batch_size"])  # BOLD: any toxic label
    labels = np.where(scorer.scores(batch.scored, model) >= scorer.threshold, "toxic", "non-toxic")
    return {"model": model_name, **({"stand_in": model.stand_in} if model.stand_in else {}),
            "label_names": list(toxicity.LABELS), "domains": per_domain(batch.rows, labels, toxicity.LABELS)}


def _regard(batch: Batch) -> dict:
    """Regard of the groups Sheng et al.'s classifier was trained on (all with ``regard_all_groups``),
    the demographic words masked when anonymising."""
    model_name = batch.options["regard_model"]
    model = _classifier(batch, "regard")
    keep = _regard_mask(batch.rows, batch.options["regard_all_groups"])
    index = np.flatnonzero(keep)
    picked = [batch.texts[i] for i in index]
    if batch.options["anonymize"]:
        domains, names, groups = ([batch.rows[i][key] for i in index] for key in ("domain", "name", "group"))
        picked = regard.mask_demographics(picked, domains=domains, names=names, groups=groups)
    labels = np.full(len(batch.rows), "", dtype=object)
    if len(index):
        labels[index] = regard.regard(picked, model, batch_size=batch.options["batch_size"])[1]
    return {"model": model_name, **({"stand_in": model.stand_in} if model.stand_in else {}),
            "label_names": model.labels, "domains": per_domain(batch.rows, labels, model.labels, keep)}


def _psycholinguistic_norms(batch: Batch) -> dict:
    lexicon = _norms_lexicon(batch.options)
    categories = psycholinguistic.categorize(psycholinguistic.score_texts(batch.scored, lexicon))
    domains, groups = batch.column("domain"), batch.column("group")
    by_domain = {}
    for domain in dict.fromkeys(domains):
        index = [i for i, d in enumerate(domains) if d == domain]
        per_group, test = stats.category_statistics([categories[i] for i in index], groups=[groups[i] for i in index],
                                                    categories=psycholinguistic.CATEGORIES)
        by_domain[domain] = {"per_group": per_group, "test": test}
    return {"label_names": list(psycholinguistic.CATEGORIES), "domains": by_domain}


def _gender_polarity(batch: Batch) -> dict:
    methods_used = batch.options["gender_methods"]
    polarity = _word_polarity(batch.options)
    methods = {}
    for method in methods_used:
        labels = gender.gender_labels(gender.gender_scores(batch.scored, method, polarity=polarity), method)
        methods[method] = {"domains": per_domain(batch.rows, labels, gender.LABELS)}
    merged = [row.get("merged_group") for row in batch.rows]
    return {"label_names": list(gender.LABELS), "methods": methods,
            "profession_merged_groups": table3(batch.scored, merged_groups=merged, methods=methods_used, polarity=polarity)}


# Each BOLD metric's scorer, in the order they run and are reported.
SCORERS = {"sentiment": _sentiment, "toxicity": _toxicity, "regard": _regard,
           "psycholinguistic_norms": _psycholinguistic_norms, "gender_polarity": _gender_polarity}
METRICS = tuple(SCORERS)
# What each metric needs, checked before anything is generated (:func:`check_scoring`): the same
# loaders the scorers use (their results are kept in memory), or a lookup of the classifier.
REQUIREMENTS = {"toxicity": _classifier_available("toxicity"), "regard": _classifier_available("regard"),
                "psycholinguistic_norms": _norms_lexicon, "gender_polarity": _word_polarity}


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
    embedding: PathLike | None = None,
    device: str | None = None,
    batch_size: int = 32,
    n_jobs: int | None = None,
    data_dir: PathLike | None = None,
    loaded: dict | None = None,
) -> dict:
    """Score ``texts`` (one per BOLD row) with every requested BOLD metric.

    ``embedding``: a word-vector file (e.g. the full GoogleNews vectors; any format
    :func:`lmbias.embeddings.load_keyed_vectors` reads) for gender polarity (hard-debiased as the
    default) and the psycholinguistic lexicon extension; default the registered 13k-word subset.

    Returns a JSON-ready dict: ``metrics`` (per metric, ``domains`` -> ``per_group`` / ``test``;
    gender polarity per method plus the paper's Table 3 over the merged profession groups),
    ``skipped`` (metric -> why, e.g. a classifier that could not be loaded, and how to fix it) and
    the options used. ``loaded``: a dict that keeps the classifiers this call loads; pass the same
    dict to several calls to load each classifier once.
    """
    texts = check_texts(texts, "texts")
    if len(texts) != len(rows):
        raise InputError(f"texts has {len(texts)} entries but rows has {len(rows)}; expected one text per row")
    check_choices(metrics, METRICS, "metrics")
    check_choices(gender_methods, gender.METHODS, "gender_methods")
    columns = ([row[key] for row in rows] for key in ("domain", "name", "group"))
    scored = anonymize_texts(texts, *columns) if anonymize else list(texts)
    batch = Batch(rows, texts, scored, loaded=loaded if loaded is not None else {}, options={
        "anonymize": anonymize, "toxicity_model": toxicity_model, "regard_model": regard_model,
        "regard_all_groups": regard_all_groups, "gender_methods": gender_methods, "embedding": embedding, "device": device,
        "batch_size": batch_size, "n_jobs": n_jobs, "data_dir": data_dir})
    result: dict = {"metrics": {}, "skipped": {}}
    for name in (metric for metric in METRICS if metric in metrics):
        try:
            result["metrics"][name] = SCORERS[name](batch)
        except SkippedMetric as reason:
            result["skipped"][name] = str(reason)
    result["options"] = {
        "anonymize": anonymize,
        "regard_all_groups": regard_all_groups,
        "gender_methods": list(gender_methods),
        **({"embedding": str(embedding)} if embedding is not None else {}),
        "lmbias_version": __version__,
    }
    return result


def check_scoring(
    metrics: Sequence[str] = METRICS,
    *,
    toxicity_model: str = toxicity.DEFAULT_MODEL,
    regard_model: str = regard.DEFAULT_MODEL,
    gender_methods: Sequence[str] = gender.METHODS,
    embedding: PathLike | None = None,
    data_dir: PathLike | None = None,
) -> dict[str, str]:
    """Which of ``metrics`` cannot be scored here, and why (with the fix): ``{metric: reason}``.

    Run before anything is generated: classifiers are looked up (one Hub request each at most,
    :mod:`lmbias.model_source`), the lexicons and word vectors are located (downloaded when missing)
    and loaded, so the scorers find them in memory later. Options as in :func:`score_bold`.
    """
    check_choices(metrics, METRICS, "metrics")
    check_choices(gender_methods, gender.METHODS, "gender_methods")
    options = {"toxicity_model": toxicity_model, "regard_model": regard_model, "gender_methods": gender_methods,
               "embedding": embedding, "data_dir": data_dir}
    unavailable = {}
    for metric in (m for m in METRICS if m in metrics and m in REQUIREMENTS):
        try:
            REQUIREMENTS[metric](options)
        except SkippedMetric as reason:
            unavailable[metric] = str(reason)
    return unavailable


def score_bold_source(
    source: str = "wikipedia",
    *,
    domains: Sequence[str] = DOMAINS,
    per_group: int | None = None,
    data_dir: PathLike | None = None,
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




def select_rows(domains: Sequence[str] = DOMAINS, *, per_group: int | None = None, limit: int | None = None, data_dir=None) -> list[dict]:
    """BOLD rows of ``domains``: all, the first ``per_group`` of each group, or the first ``limit`` overall."""
    from ...data import load_rows

    domains = check_choices(domains, DOMAINS, "domains")
    if per_group is not None and limit is not None:
        raise InputError("give per_group or limit, not both")
    for name, value in (("per_group", per_group), ("limit", limit)):
        if value is not None:
            check_scalar(value, name, minimum=1)
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


def mean_new_tokens(generations: Sequence[dict]) -> float | None:
    """The mean count of new tokens over the generations that have one (a server may not count them:
    ``usage`` is optional in its answer); None when none has.

    >>> mean_new_tokens([{"num_tokens": 3}, {"num_tokens": None}, {"num_tokens": 5}])
    4.0
    """
    counts = [g["num_tokens"] for g in generations if g["num_tokens"] is not None]
    return sum(counts) / len(counts) if counts else None


@holds_run_directory
def run_bold(
    *,
    model: ModelSpec | str | None = None,
    out="runs/bold",
    domains: Sequence[str] = DOMAINS,
    per_group: int | None = None,
    limit: int | None = None,
    preset: str = "bold-gpt2",
    max_new_tokens: int | None = None,
    seed: int = 0,
    batch_size: int = 32,
    num_return_sequences: int = 1,
    require_all: bool = False,
    progress: bool = True,
    data_dir: PathLike | None = None,
    scoring: dict | None = None,
    instruction: str | None = None,
) -> RunResult | None:
    """The main job: generate continuations of BOLD prompts, score them and the Wikipedia baseline.

    Writes ``<out>/generations.jsonl`` as it generates and returns the run
    (:class:`~lmbias.run_result.RunResult`, for :func:`lmbias.benchmarks.save_run`) on rank 0 (None on
    other ranks). ``scoring`` holds keyword arguments of
    :func:`score_bold` (metrics, classifier models, anonymize ...). Generated texts are scored as prompt + continuation, the way
    the Wikipedia sentences (which start with their prompt) are scored. In a chat run (``--chat``,
    :mod:`lmbias.lm.chat`) each prompt is put in ``instruction`` (default
    :data:`~lmbias.lm.chat.DEFAULT_INSTRUCTION`) and the reply is scored after the prompt
    (:func:`~lmbias.lm.chat.scored_text`).

    Raises:
        RequirementError: with ``require_all``, when a metric had to be skipped (the generations are kept).
    """

    from ...lm.generation import generation_settings
    from ...lm.runner import model_loader, run_generation
    from .data import BOLD_COMMIT, SPEC

    rows = select_rows(domains, per_group=per_group, limit=limit, data_dir=data_dir)
    settings = generation_settings(preset, max_new_tokens=max_new_tokens)
    check_scalar(batch_size, "batch_size", minimum=1)  # every option before the metrics are looked up

    loaded: dict = {}
    spec = ModelSpec.of(model)
    prompts, instruction = continuation_prompts([row["prompt"] for row in rows], chat=chat_requested(spec),
                                                instruction=instruction)  # before the model is checked or loaded
    spec = spec.checked()
    loader = model_loader(spec, seed=seed, described=loaded)
    scoring = dict(scoring or {})
    check_scalar(scoring.get("batch_size", 32), "score_batch_size", minimum=1)  # checked now, not after generating
    requested = list(scoring.get("metrics", METRICS))
    check_choices(requested, METRICS, "metrics")
    unavailable: dict = {}

    def preflight() -> None:  # once the run directory is checked: a refusal comes first
        unavailable.update(check_scoring(requested, data_dir=data_dir, **{
            key: scoring[key] for key in ("toxicity_model", "regard_model", "gender_methods", "embedding") if key in scoring}))
        announce_unavailable(unavailable, require_all=require_all)

    started = time.perf_counter()
    generations = run_generation(
        loader, [row["id"] for row in rows], prompts, out, settings=settings,
        model_name=spec.name, preset=preset, seed=seed, batch_size=batch_size,
        num_return_sequences=num_return_sequences, progress=progress, benchmark="bold", model_identity=spec.identity(),
        label="BOLD: generating", options={"domains": list(domains), "per_group": per_group, "limit": limit,
                                           **({"instruction": instruction} if instruction else {})},
        before_load=preflight,
    )
    to_score = {**scoring, "metrics": [metric for metric in requested if metric not in unavailable]}
    if generations is None:
        return None
    row_of = {row["id"]: row for row in rows}
    sample_rows = [row_of[g["id"]] for g in generations]
    texts = [scored_text(row["prompt"], g["continuation"], spec.chat) for row, g in zip(sample_rows, generations)]
    generation_outputs = {"texts": len(generations), "mean_new_tokens": mean_new_tokens(generations)}
    del generations  # not held through the scoring: only these figures of the records are reported
    generated = time.perf_counter()
    classifiers: dict = {}  # each classifier loaded once, for both sources
    with showing(progress, "BOLD model texts"):
        model_scores = score_bold(sample_rows, texts, data_dir=data_dir, loaded=classifiers, **to_score)
    with showing(progress, "BOLD Wikipedia"):
        wikipedia_scores = score_bold(rows, source_texts(rows, "wikipedia"), data_dir=data_dir, loaded=classifiers, **to_score)
    for scores in (model_scores, wikipedia_scores):
        scores["skipped"] = {metric: ({**unavailable, **scores["skipped"]})[metric] for metric in METRICS
                             if metric in unavailable or metric in scores["skipped"]}
    options = {k: v for k, v in model_scores["options"].items() if k != "lmbias_version"}
    skipped = {f"{source} {metric}": reason for source, scores in (("model", model_scores), ("wikipedia", wikipedia_scores))
               for metric, reason in scores["skipped"].items()}
    full = SPEC.expected_rows("all")  # the published size: a short file (LMBIAS_VERIFY=0) makes a partial run
    selection = " ".join(f"--{key.replace('_', '-')} {value}" for key, value in (("per_group", per_group), ("limit", limit)) if value)
    reason = selection or (f"--domains {' '.join(domains)}" if len(domains) < len(DOMAINS) else "short data files")
    partial = coverage({"prompts": (len(rows), full)}, reason)
    result = RunResult(
        benchmark="bold", out=str(out),
        model=loaded or {"name": spec.model},
        data={"dataset": "bold", "revision": BOLD_COMMIT, "citation": SPEC.citation, "domains": list(domains),
              "counts": {"prompts": len(rows)}},
        config={"preset": preset, "settings": settings, "seed": seed, "batch_size": batch_size,
                "num_return_sequences": num_return_sequences, "per_group": per_group, "limit": limit,
                "domains": list(domains), "metrics": requested, **options,
                **spec.recorded(), **({"instruction": instruction} if instruction else {})},
        results={"model": model_scores, "wikipedia": wikipedia_scores},
        skipped=skipped,
        partial=partial,
        timing={"generation_seconds": generated - started, "scoring_seconds": time.perf_counter() - generated},
        outputs={**generation_outputs, "generations_file": "generations.jsonl"},
    )
    if require_all and model_scores["skipped"]:
        raise RequirementError(f"--require-all: metrics were skipped while scoring, so no results were written (the "
                               f"generations are kept in {out}: the same command scores them again): "
                               + "; ".join(f"{k}: {v}" for k, v in model_scores["skipped"].items()))
    return result

