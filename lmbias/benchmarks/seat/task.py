"""SEAT (May et al. 2019) with a language model, as bias-bench runs it, declared for the generic run
(:func:`lmbias.benchmarks.declared.run_task`) on the embed protocol (:mod:`lmbias.protocols.embedding`):
an item is a test, its texts the distinct examples of its four sets; every distinct text of the chosen
tests is embedded once as bias-bench's ``_encode`` does (the unit-length mean last hidden state, as
:func:`lmbias.benchmarks.seat.encode.sentence_embeddings`), then each test's effect size and permutation
p-value (:func:`lmbias.benchmarks.seat.measure.seat_test`) and the mean |effect size| per bias type and
over the tests.

The examples of a set are distinct, as in bias-bench (its encodings are a dict keyed by the text): an
example given twice in a set counts once, and ``n`` in the results counts the distinct ones. A test
whose two target sets then differ in size is refused, naming its file (none of the shipped files is).

A run takes seconds to minutes, so it does not resume part-way: it checks its ``--out`` before the
model loads (a folder holding another benchmark's run, or a SEAT run with other settings, is refused)
and writes ``results.json`` at the end.
"""

from __future__ import annotations

from ...protocols.embedding import Embeddings
from ...resources import ResourceError, locate
from .data import BIAS_BENCH_COMMIT, BIAS_TYPES, DEFAULT_TESTS, SETS, SPEC, bias_type, load_test
from .measure import seat_test, summarize

ENCODING = ("mean over all token positions of the base model's last hidden state (each text alone, the tokenizer's "
            "default special tokens), divided by its L2 norm: bias-bench's _encode")


def distinct_sets(test: str, data_dir=None) -> dict[str, dict]:
    """A test's four sets with each example once (first occurrence order): ``{set: {"category", "examples"}}``.

    Raises:
        ResourceError: its two target sets differ in size (the permutation test needs as many of each); names the file.
    """
    sets = {name: {"category": block["category"], "examples": list(dict.fromkeys(block["examples"]))}
            for name, block in load_test(test, data_dir).items()}
    x, y = len(sets["targ1"]["examples"]), len(sets["targ2"]["examples"])
    if x != y:
        raise ResourceError(f"{locate(f'seat/{test}', data_dir)}: targ1 has {x} distinct examples but targ2 has {y}; SEAT's "
                            "permutation test needs as many of each")
    return sets


def items(settings: dict, data_dir) -> list[dict]:
    """One row per chosen test: its ``id`` (the test's name) and its four ``sets`` (:func:`distinct_sets`)."""
    return [{"id": test, "sets": distinct_sets(test, data_dir)} for test in settings["tests"]]


def request(rows: list[dict], settings: dict) -> Embeddings:
    """Each test's examples, set after set (:data:`~lmbias.benchmarks.seat.data.SETS`), embedded unit-length."""
    return Embeddings([[text for name in SETS for text in row["sets"][name]["examples"]] for row in rows],
                      model_type=settings["model_type"], normalize=True)


def measure(records: list[dict], rows: list[dict], settings: dict, data_dir) -> dict:
    """Each test's effect size and p-value (:func:`seat_test` on its sets' vectors, ``n_samples`` and ``seed``
    as given), with its bias type and the sets' categories; the mean |effect size| per bias type and overall."""
    found = {}
    for row, record in zip(rows, records):
        vectors, start = {}, 0
        for name in SETS:
            size = len(row["sets"][name]["examples"])
            vectors[name], start = record["embeddings"][start:start + size], start + size
        result = seat_test(*(vectors[name] for name in SETS), n_samples=settings["n_samples"], seed=settings["seed"])
        found[row["id"]] = {"bias_type": bias_type(row["id"]), **result,
                            "categories": {name: row["sets"][name]["category"] for name in SETS}}
    return {"tests": found, **summarize(found, BIAS_TYPES)}


def data(rows: list[dict], settings: dict, data_dir) -> dict:
    """results.json's ``data``: bias-bench's commit, the citation, the tests and the distinct texts."""
    texts = {text for row in rows for block in row["sets"].values() for text in block["examples"]}
    return {"dataset": "seat", "split": "test", "revision": BIAS_BENCH_COMMIT, "citation": SPEC.citation,
            "counts": {"tests": len(rows), "texts": len(texts)}}


def counted(rows: list[dict], settings: dict) -> dict:
    """bias-bench's 17 reported tests among those run."""
    return {"bias-bench tests": (sum(row["id"] in DEFAULT_TESTS for row in rows), len(DEFAULT_TESTS))}


def recorded(config: dict, rows: list[dict], settings: dict, model: dict) -> dict:
    """results.json's config: the options, batch size, seed and dtype, and how a text was encoded (:data:`ENCODING`)."""
    return {**{key: config[key] for key in ("tests", "model_type", "n_samples", "seed", "batch_size", "dtype")},
            "encoding": ENCODING}


