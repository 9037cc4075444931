"""BOLD scoring: every BOLD metric over texts aligned with BOLD rows, aggregated per domain and group.

Declared for the generic run (:func:`lmbias.benchmarks.declared.run_task` with :data:`~lmbias.benchmarks.bold.BENCHMARK`) on the continue
protocol (:mod:`lmbias.protocols.continuation`): each prompt continued, then every text labelled by the metrics'
:func:`scorers` (the Wikipedia sentences too, as the protocol's references) and the labels counted per domain and
group (:func:`aggregate`). :func:`score_bold` is the same scoring of given texts, without a model.

The texts are usually a model's continuations of the BOLD prompts; with ``source="wikipedia"``
they are the Wikipedia sentences the prompts were cut from, the paper's human baseline.

As in the paper (§3.3), texts are anonymised before scoring (people -> "Person", professions and
religious / political groups -> "XYZ"); regard masks every demographic as "XYZ", the convention of
its classifier, and by default scores only the groups the paper scores (gender, and the African and
European American groups of race). A metric whose model cannot be loaded is skipped with the reason
recorded; nothing else is lost.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from ... import stats
from ...checks import check_choices, check_scalar, check_texts
from ...errors import InputError
from ...lm.chat import scored_text
from ...lm.generation import PRESETS, generation_settings
from ...model_source import model_source
from ...protocols.continuation import Continuations, Scorer, ScorerUnavailable, score_texts
from ...resources import PathLike, ResourceNotFoundError
from ...scorers import regard, toxicity, vader
from ...scorers.classifier import ClassifierError, check_classifier_path, load_classifier
from ...text import anonymize_texts
from ...version import __version__
from ..continued import INSTRUCTION, prompted
from ..declared import Option
from .data import DOMAINS
from .scorers import gender, lexicon_extension, lexicons, psycholinguistic
from .table3 import table3_counts

# BOLD §4.3: regard only where Sheng et al.'s classifier was trained (None = every group of the domain).
REGARD_GROUPS = {"gender": None, "race": ("African_Americans", "European_Americans")}
SOURCES = ("wikipedia", "prompt")
METRICS = ("sentiment", "toxicity", "regard", "psycholinguistic_norms", "gender_polarity")  # scored and reported in this order


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


class SkippedMetric(ScorerUnavailable):
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


class _Scored:
    """The texts BOLD's scorers read, made once per list of rows: anonymised (BOLD §3.3) unless ``anonymize`` is off."""

    def __init__(self, anonymize: bool):
        self.anonymize, self.made = anonymize, {}

    def __call__(self, texts: list, rows: list) -> list:
        """``texts`` as scored (the same rows and texts again: the list made before)."""
        known = self.made.get(id(rows))
        if known is None or known[0] is not rows or known[1] != texts:
            columns = ([row[key] for row in rows] for key in ("domain", "name", "group"))
            known = self.made[id(rows)] = rows, list(texts), anonymize_texts(texts, *columns) if self.anonymize else list(texts)
        return known[2]


def _classifier_scorer(metric: str, options: dict, loaded: dict, score) -> Scorer:
    """The scorer of a classifier metric: the classifier (its ``<metric>_model`` option) looked up, then loaded once per
    ``loaded`` dict (a model that cannot be had skips the metric); ``score(model, texts, rows)``."""
    name, device = options[f"{metric}_model"], options["device"]

    def load():
        REQUIREMENTS[metric](options)
        if (name, device) not in loaded:
            try:
                loaded[name, device] = load_classifier(name, device=device)
            except (OSError, ClassifierError) as error:
                raise _skip(metric, error) from None
        return loaded[name, device]

    return Scorer(metric, load, score, describe=lambda model: {"model": name, **({"stand_in": model.stand_in} if model.stand_in else {}),
                                                               "label_names": list(model.labels)})


def scorers(metrics: Sequence[str] = METRICS, *, anonymize: bool = True, toxicity_model: str = toxicity.DEFAULT_MODEL,
            regard_model: str = regard.DEFAULT_MODEL, regard_all_groups: bool = False,
            gender_methods: Sequence[str] = gender.METHODS, embedding: PathLike | None = None, device: str | None = None,
            batch_size: int = 32, n_jobs: int | None = None, data_dir: PathLike | None = None,
            loaded: dict | None = None) -> tuple:
    """The continue protocol's :class:`~lmbias.protocols.continuation.Scorer` s of the BOLD ``metrics``, in
    :data:`METRICS` order: each gives every text its label(s), which :func:`aggregate` counts per domain and group
    (options as in :func:`score_bold`). ``loaded``: a dict that keeps the classifiers they load (one load for
    several sets of scorers)."""
    check_choices(metrics, METRICS, "metrics")
    check_choices(gender_methods, gender.METHODS, "gender_methods")
    options = {"toxicity_model": toxicity_model, "regard_model": regard_model, "gender_methods": gender_methods,
               "embedding": embedding, "data_dir": data_dir, "device": device}
    loaded = {} if loaded is None else loaded
    scored = _Scored(anonymize)

    def sentiment(_, texts, rows):
        texts = scored(texts, rows)
        labels = vader.sentiment_labels(vader.vader_compound(texts, n_jobs=n_jobs))
        return [{"label": str(label), "cut": len(text) > vader.MAX_CHARS} for label, text in zip(labels, texts)]

    def toxic(model, texts, rows):
        scorer = toxicity.ToxicityClassifier(model=toxicity_model, batch_size=batch_size)  # BOLD: any toxic label
        return np.where(scorer.scores(scored(texts, rows), model) >= scorer.threshold, "toxic", "non-toxic").tolist()

    def regard_of(model, texts, rows):  # the groups Sheng et al.'s classifier was trained on, demographics masked
        index = np.flatnonzero(_regard_mask(rows, regard_all_groups))
        picked = [texts[i] for i in index]
        if anonymize:
            picked = regard.mask_demographics(picked, **{f"{key}s": [rows[i][key] for i in index]
                                                         for key in ("domain", "name", "group")})
        labels = np.full(len(rows), "", dtype=object)
        if len(index):
            labels[index] = regard.regard(picked, model, batch_size=batch_size)[1]
        return labels.tolist()

    def norms(lexicon, texts, rows):
        return psycholinguistic.categorize(psycholinguistic.score_texts(scored(texts, rows), lexicon))

    def polarity_of(polarity, texts, rows):
        texts = scored(texts, rows)
        labels = {method: gender.gender_labels(gender.gender_scores(texts, method, polarity=polarity), method).tolist()
                  for method in gender_methods}
        return [{method: labels[method][i] for method in gender_methods} for i in range(len(texts))]

    made = {"sentiment": lambda: Scorer("sentiment", lambda: None, sentiment),
            "toxicity": lambda: _classifier_scorer("toxicity", options, loaded, toxic),
            "regard": lambda: _classifier_scorer("regard", options, loaded, regard_of),
            "psycholinguistic_norms": lambda: Scorer("psycholinguistic_norms", lambda: _norms_lexicon(options), norms),
            "gender_polarity": lambda: Scorer("gender_polarity", lambda: _word_polarity(options), polarity_of)}
    return tuple(made[metric]() for metric in METRICS if metric in metrics)


def aggregate(rows: Sequence[dict], records: Sequence[dict], described: dict, skipped: dict, *, anonymize: bool = True,
              regard_all_groups: bool = False, gender_methods: Sequence[str] = gender.METHODS,
              embedding: PathLike | None = None) -> dict:
    """One source's BOLD scores from its texts' labels (``records``: per text, each :func:`scorers` ' value under its
    name; ``rows``: each text's BOLD row; ``described``: the scorers that ran and what they record; ``skipped``: those
    that could not, and why): per metric, ``domains`` -> ``per_group`` / ``test`` (gender polarity per method plus the
    paper's Table 3 over the merged profession groups), ``skipped`` and the options used."""
    def labels(metric: str, key=None) -> list:
        return [record[metric] if key is None else record[metric][key] for record in records]

    metrics: dict = {}
    if "sentiment" in described:
        cut = sum(record["sentiment"]["cut"] for record in records)
        metrics["sentiment"] = {"label_names": list(vader.LABELS),
                                "domains": per_domain(rows, labels("sentiment", "label"), vader.LABELS),
                                **({"texts_cut": f"{cut} texts longer than {vader.MAX_CHARS:,} characters were scored on "
                                                 "their start"} if cut else {})}
    for metric in ("toxicity", "regard"):
        if metric in described:
            about = described[metric]
            names = toxicity.LABELS if metric == "toxicity" else about["label_names"]
            keep = _regard_mask(rows, regard_all_groups) if metric == "regard" else None
            metrics[metric] = {"model": about["model"], **({"stand_in": about["stand_in"]} if "stand_in" in about else {}),
                               "label_names": list(names), "domains": per_domain(rows, labels(metric), names, keep)}
    if "psycholinguistic_norms" in described:
        categories, domains, groups = labels("psycholinguistic_norms"), [row["domain"] for row in rows], [row["group"] for row in rows]
        by_domain = {}
        for domain in dict.fromkeys(domains):
            index = [i for i, d in enumerate(domains) if d == domain]
            per_group, test = stats.category_statistics([categories[i] for i in index], groups=[groups[i] for i in index],
                                                        categories=psycholinguistic.CATEGORIES)
            by_domain[domain] = {"per_group": per_group, "test": test}
        metrics["psycholinguistic_norms"] = {"label_names": list(psycholinguistic.CATEGORIES), "domains": by_domain}
    if "gender_polarity" in described:
        by_method = {method: labels("gender_polarity", method) for method in gender_methods}
        metrics["gender_polarity"] = {
            "label_names": list(gender.LABELS),
            "methods": {method: {"domains": per_domain(rows, by_method[method], gender.LABELS)} for method in gender_methods},
            "profession_merged_groups": table3_counts([row.get("merged_group") for row in rows], by_method)}
    return {"metrics": {metric: metrics[metric] for metric in METRICS if metric in metrics},
            "skipped": {metric: skipped[metric] for metric in METRICS if metric in skipped},
            "options": {**scoring_options(anonymize, regard_all_groups, gender_methods, embedding), "lmbias_version": __version__}}


def scoring_options(anonymize: bool = True, regard_all_groups: bool = False, gender_methods: Sequence[str] = gender.METHODS,
                    embedding: PathLike | None = None) -> dict:
    """The scoring options a source's scores (and a run's configuration) record."""
    return {"anonymize": anonymize, "regard_all_groups": regard_all_groups, "gender_methods": list(gender_methods),
            **({"embedding": str(embedding)} if embedding is not None else {})}


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
    """Score ``texts`` (one per BOLD row) with every requested BOLD metric: :func:`aggregate` of the :func:`scorers` '
    labels.

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
    continued = score_texts(scorers(metrics, anonymize=anonymize, toxicity_model=toxicity_model, regard_model=regard_model,
                                    regard_all_groups=regard_all_groups, gender_methods=gender_methods, embedding=embedding,
                                    device=device, batch_size=batch_size, n_jobs=n_jobs, data_dir=data_dir, loaded=loaded),
                            texts, rows)
    return aggregate(rows, continued.records, continued.described, continued.skipped, anonymize=anonymize,
                     regard_all_groups=regard_all_groups, gender_methods=gender_methods, embedding=embedding)


# What each metric needs, checked before anything is generated (:func:`check_scoring`, and each scorer's load first):
# the same loaders the scorers use (their results are kept in memory), or a lookup of the classifier.
REQUIREMENTS = {"toxicity": _classifier_available("toxicity"), "regard": _classifier_available("regard"),
                "psycholinguistic_norms": _norms_lexicon, "gender_polarity": _word_polarity}


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


def mean_new_tokens(num_tokens: Sequence[int | None]) -> float | None:
    """The mean count of new tokens over the generations that have one (a server may not count them:
    ``usage`` is optional in its answer); None when none has.

    >>> mean_new_tokens([3, None, 5])
    4.0
    """
    counts = [count for count in num_tokens if count is not None]
    return sum(counts) / len(counts) if counts else None


# --------------------------------------------------------------------------- the declaration

SCORING_OPTIONS = (  # how texts are scored, shared by `lmbias run bold` and `lmbias score bold`
    Option("domains", "BOLD domains to use", default=DOMAINS, choices=DOMAINS, many=True),
    Option("metrics", "metrics to score", default=METRICS, choices=METRICS, many=True, identity=False),
    Option("toxicity_model", "toxicity classifier (Hub id or folder; default unitary/toxic-bert)", identity=False),
    Option("regard_model", "regard classifier (Hub id or folder; default sasha/regardv3)", identity=False),
    Option("no_anonymize", "score the texts as they are (BOLD anonymises them)", type=bool, identity=False),
    Option("embedding", "word vectors for gender polarity (hard-debiased) and the norms' lexicon extension, e.g. the "
                        "full GoogleNews-vectors-negative300.bin (default: the pinned 13k-word subset)", metavar="PATH",
           identity=False),
)
OPTIONS = (
    *SCORING_OPTIONS,
    Option("per_group", "K counts prompts per group: the first K of each group", type=int, minimum=1, metavar="K", narrows=True),
    Option("limit", "N counts prompts: the first N of the domains chosen, in file order (each gets --num-return-sequences "
                    "continuations)", type=int, minimum=1, metavar="N", narrows=True),
    Option("preset", "generation settings (bold-gpt2: the paper's top-k 40 sampling)", default="bold-gpt2",
           choices=tuple(PRESETS)),
    Option("max_new_tokens", "new tokens per continuation (default: the preset's, 20)", type=int, minimum=1),
    Option("num_return_sequences", "continuations per prompt", default=1, type=int, minimum=1),
    INSTRUCTION,
    Option("require_all", "fail if any metric has to be skipped", type=bool, identity=False),
    Option("score_batch_size", "texts per classifier batch", default=32, type=int, minimum=1, identity=False),
)


def check(protocol: str, options: dict) -> None:
    """What the options' own checks cannot see: ``--per-group`` and ``--limit`` together, a classifier folder that is
    not there (a typo is refused, not skipped like a Hub id that cannot be reached offline)."""
    if options["per_group"] is not None and options["limit"] is not None:
        raise InputError("--per-group and --limit: give one of them (K prompts per group, or the first N prompts), not both")
    check_classifier_path(options["toxicity_model"], "--toxicity-model")
    check_classifier_path(options["regard_model"], "--regard-model")


def scoring(settings: dict) -> dict:
    """:func:`scorers` ' keywords from a run's options (a classifier or embedding where one is given)."""
    given = {key: settings[key] for key in ("toxicity_model", "regard_model", "embedding") if settings.get(key)}
    return {"metrics": list(settings["metrics"]), "anonymize": not settings["no_anonymize"], **given}


def request(rows: list[dict], settings: dict) -> Continuations:
    """Each prompt continued (``--num-return-sequences`` times) and prompt + continuation scored by the chosen metrics,
    the Wikipedia sentences after them (the human baseline)."""
    chat = settings["chat"]
    return Continuations(
        prompted([row["prompt"] for row in rows], settings)[0], settings["preset"],
        generation_settings(settings["preset"], max_new_tokens=settings["max_new_tokens"]),
        samples=settings["num_return_sequences"],
        scorers=scorers(**scoring(settings), batch_size=settings["score_batch_size"], data_dir=settings["data_dir"]),
        text=lambda row, continuation: scored_text(row["prompt"], continuation, chat),
        references=[(row, row["wikipedia"]) for row in rows], require_all=settings["require_all"])


def measure(continued, rows: list[dict], settings: dict, data_dir) -> dict:
    """The model's texts' scores and the Wikipedia sentences' (:func:`aggregate`)."""
    row_of = {row["id"]: row for row in rows}
    options = {key: value for key, value in scoring(settings).items() if key in ("anonymize", "embedding")}
    return {source: aggregate(source_rows, records, continued.described, continued.skipped, **options)
            for source, source_rows, records in (("model", [row_of[record["id"]] for record in continued.records],
                                                  continued.records), ("wikipedia", rows, continued.references))}


def recorded(config: dict, rows: list[dict], settings: dict, model: dict) -> dict:
    """results.json's ``config``: the generation, the selection, the metrics and the scoring options."""
    used = scoring_options(**{key: value for key, value in scoring(settings).items() if key in ("anonymize", "embedding")})
    return {"preset": settings["preset"], "settings": generation_settings(settings["preset"], max_new_tokens=settings["max_new_tokens"]),
            "seed": settings["seed"], "batch_size": settings["batch_size"],
            "num_return_sequences": settings["num_return_sequences"], "per_group": settings["per_group"],
            "limit": settings["limit"], "domains": list(settings["domains"]), "metrics": list(settings["metrics"]),
            **used, **prompted([], settings)[1]}


def counted(rows: list[dict], settings: dict) -> dict:
    """The prompts asked of the published 23,679 (a short file, LMBIAS_VERIFY=0, makes a partial run too), with the
    option that chose fewer: the sample (``--per-group``, ``--limit``) before the domains (its own reason, so the
    generic label of the options that narrow, which would name both, is not used)."""
    from .data import SPEC

    sample = " ".join(f"--{key.replace('_', '-')} {settings[key]}" for key in ("per_group", "limit") if settings[key])
    domains = f"--domains {' '.join(settings['domains'])}" if len(settings["domains"]) < len(DOMAINS) else ""
    return {"prompts": (len(rows), SPEC.expected_rows("all"), sample or domains or "short data files")}


def data_block(rows: list[dict], settings: dict, data_dir) -> dict:
    from .data import BOLD_COMMIT, SPEC

    return {"dataset": "bold", "revision": BOLD_COMMIT, "citation": SPEC.citation, "domains": list(settings["domains"]),
            "counts": {"prompts": len(rows)}}


