"""The steps that hold all generations or scores of a run: each holds them once, with the same bytes and
numbers as before (expected outputs written by hand; memory measured with tracemalloc, not timed)."""

import gc
import json
import tracemalloc
from types import SimpleNamespace

import numpy as np
import pytest

from lmbias.benchmarks.counterfactual import task
from lmbias.benchmarks.counterfactual.scorers import similarity
from lmbias.files import write_atomic, write_lines_atomic
from lmbias.lm import runner
from lmbias.scorers.wordvalues import encode
from lmbias.words import words_of_texts

# Two ranks' shards: batches out of order, samples out of order, a raw and an escaped "é", a
# continuation holding "\n", a batch repeated in the later shard (the first is kept), a damaged last line.
SHARD_0 = (
    b'{"batch": 1, "items": [{"id": "p2", "sample": 1, "continuation": " z\\u00e9", "num_tokens": 2, "stop_reason": "length"}, '
    b'{"id": "p2", "sample": 0, "continuation": " y", "num_tokens": null, "stop_reason": "stop"}]}\n'
    b'{"batch": 0, "items": [{"id": "p0", "sample": 0, "continuation": " caf\xc3\xa9 \\n", "num_tokens": 3, "stop_reason": "length"}]}\n'
)
SHARD_1 = (
    b'{"batch": 2, "items": [{"id": "p1", "sample": 0, "continuation": " x", "num_tokens": 1, "stop_reason": "eos"}]}\n'
    b'{"batch": 0, "items": [{"id": "p0", "sample": 0, "continuation": " other", "num_tokens": 9, "stop_reason": "eos"}]}\n'
    b'{"batch": 3, "ite'
)
GENERATIONS = (
    b'{"id": "p0", "sample": 0, "prompt": "Caf\\u00e9 owner", "continuation": " caf\\u00e9 \\n", '
    b'"num_tokens": 3, "stop_reason": "length"}\n'
    b'{"id": "p1", "sample": 0, "prompt": "B", "continuation": " x", "num_tokens": 1, "stop_reason": "eos"}\n'
    b'{"id": "p2", "sample": 0, "prompt": "C", "continuation": " y", "num_tokens": null, "stop_reason": "stop"}\n'
    b'{"id": "p2", "sample": 1, "prompt": "C", "continuation": " z\\u00e9", "num_tokens": 2, "stop_reason": "length"}\n'
)


def test_merge_shards_writes_the_same_bytes_and_lets_the_batches_go(tmp_path):
    (tmp_path / "shard-0.jsonl").write_bytes(SHARD_0)
    (tmp_path / "shard-1.jsonl").write_bytes(SHARD_1)
    done = runner.finished_batches(tmp_path)
    assert sorted(done) == [0, 1, 2]
    merged = runner.merge_shards(tmp_path, done, ["p0", "p1", "p2"], ["Caf\u00e9 owner", "B", "C"])
    assert (tmp_path / "generations.jsonl").read_bytes() == GENERATIONS
    assert merged == [json.loads(line) for line in GENERATIONS.splitlines()]
    assert done == {}  # emptied: the caller never reads it again
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


# Whole-text splitlines() also ends a line at \v, \f, \x1c-\x1e, \x85, U+2028, U+2029 (and "\r", "\r\n"
# as "\n"); the lines must keep those numbers when the shard is read line by line.
ODD_SHARD = (
    b'{"batch": 5, "items": []}' + "\u2028".encode() + b'{"batch": 6, "items": []}\r\n'  # lines 1, 2
    b"not json\x0b"  # line 3 (damaged)
    b'{"batch": 7, "items": []}\r'  # line 4
    b'{"batch": 8, "items": [1]}' + "\x85".encode() + b"\n"  # lines 5, 6 (empty: damaged)
    b"\xff\xfe garbage\n"  # line 7 (invalid UTF-8: damaged)
    b"\n"  # line 8 (empty: damaged)
    b'{"batch": 5, "items": ["repeated"]}\x1c'  # line 9 (the first batch 5 is kept)
)


def test_shard_lines_keep_the_numbers_of_the_whole_text(tmp_path, capsys):
    shard = tmp_path / "shard-0.jsonl"
    shard.write_bytes(ODD_SHARD)
    done, damaged = runner._batch_records(shard)
    assert done == {5: [], 6: [], 7: [], 8: [1]} and damaged == [3, 6, 7, 8]
    assert runner._finished_batch_numbers(tmp_path) == {5, 6, 7, 8}
    runner._drop_damaged_lines(shard)
    assert shard.read_bytes() == (b'{"batch": 5, "items": []}\n{"batch": 6, "items": []}\n{"batch": 7, "items": []}\n'
                                  b'{"batch": 8, "items": [1]}\n')
    assert "line(s) [3, 6, 7, 8] damaged" in capsys.readouterr().err


@pytest.mark.parametrize("content,rewritten", [
    (b"", b""),
    (b'{"batch": 0, "items": []}\n', b'{"batch": 0, "items": []}\n'),
    (b'{"batch": 0, "items": []}', b'{"batch": 0, "items": []}\n'),  # appends must start on a fresh line
])
def test_an_undamaged_shard_is_rewritten_only_without_its_last_newline(tmp_path, content, rewritten):
    shard = tmp_path / "shard-0.jsonl"
    shard.write_bytes(content)
    before = shard.stat().st_ino
    runner._drop_damaged_lines(shard)
    assert shard.read_bytes() == rewritten
    assert (shard.stat().st_ino == before) == (content == rewritten)  # a rewrite is a new file renamed over it


def test_process_batches_resumes_from_the_batch_numbers(tmp_path):
    (tmp_path / "shard-0.jsonl").write_bytes(b'{"batch": 0, "items": [{"b": 0}]}\n{"batch": 2, "ite\n{"batch": 3, "items": [{"b": 3}]}\n')
    state = SimpleNamespace(is_main_process=True, num_processes=1, process_index=0, wait_for_everyone=lambda: None)
    computed = []

    def compute(b):
        computed.append(b)
        return [{"b": b}]

    finished, fresh = runner.process_batches(tmp_path, [1, 1, 1, 1], compute, state, unit="item", label="test", progress=False)
    assert computed == [1, 2] and fresh == {1, 2}
    assert finished == {0: [{"b": 0}], 3: [{"b": 3}], 1: [{"b": 1}], 2: [{"b": 2}]}


def test_write_lines_atomic_writes_what_write_atomic_writes(tmp_path):
    lines = ["{\"a\": \"caf\u00e9\"}\n", "x\r\n", "\u2028\n", "last"]
    assert write_lines_atomic(tmp_path / "lines", iter(lines)).read_bytes() == write_atomic(tmp_path / "whole", "".join(lines)).read_bytes()

    def failing():
        yield "half\n"
        raise RuntimeError("stopped")

    with pytest.raises(RuntimeError):
        write_lines_atomic(tmp_path / "lines", failing())
    assert (tmp_path / "lines").read_bytes() == "".join(lines).encode()  # the old file, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lines", "whole"]


def test_merge_shards_peak_memory_stays_below_half_the_generations_file(tmp_path):
    # 20,000 records (400 prompts x 50 samples) of ~300 characters: a ~7 MB generations.jsonl. Holding its
    # text, or a second copy of the records, costs more than the file; measured: ~0.3x of the file.
    ids = [f"occupation/{i % 29}/prefix{i}" for i in range(400)]
    words = "the nurse was known for her best role in the film and she said that".split()
    with open(tmp_path / "shard-0.jsonl", "w") as handle:
        for b, start in enumerate(range(0, 400, 8)):
            items = [{"id": ids[i], "sample": k, "num_tokens": 51, "stop_reason": "length",
                      "continuation": " " + " ".join(words[(i + k + j) % len(words)] for j in range(50)) + f" {i}.{k}"}
                     for i in range(start, start + 8) for k in range(50)]
            handle.write(json.dumps({"batch": b, "items": items}) + "\n")
    prompts = [f"My friend {i} is" for i in range(400)]
    tracemalloc.start()  # before the records are made, so that letting them go counts
    try:
        done = runner.finished_batches(tmp_path)
        gc.collect()
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        merged = runner.merge_shards(tmp_path, done, ids, prompts)
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    size = (tmp_path / "generations.jsonl").stat().st_size
    assert len(merged) == 20_000 and size > 6_000_000
    assert peak < 0.5 * size, f"merge_shards peaked {peak / 2**20:.1f} MB above the records, file {size / 2**20:.1f} MB"


class UnevenEncoder:
    """A stand-in sentence encoder: a fixed unit vector per text (float32), whatever the chunk."""

    def __init__(self):
        self.chunks = []

    def encode(self, chunk, batch_size, normalize_embeddings, convert_to_numpy, show_progress_bar):
        self.chunks.append(len(chunk))
        vectors = np.stack([np.random.default_rng(sum(map(ord, text))).standard_normal(24) for text in chunk])
        return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


class Bar:
    def __init__(self):
        self.n = 0

    def update(self, n):
        self.n += n


def test_encode_equals_the_concatenated_chunks():
    texts = [f"text {i}" for i in range(37)]  # batch_size 1: chunks of 16, 16 and 5
    encoder, bar = UnevenEncoder(), Bar()
    vectors = similarity._encode(encoder, texts, 1, bar)
    assert encoder.chunks == [16, 16, 5] and bar.n == 37
    expected = np.concatenate([UnevenEncoder().encode(texts[s:s + 16], 1, True, True, False) for s in (0, 16, 32)])
    assert vectors.dtype == np.float32 and vectors.shape == (37, 24)
    assert np.array_equal(vectors, expected)


def test_prefix_similarity_is_bitwise_the_full_size_product():
    prefixes = [f"prefix {i % 7}" for i in range(101)]
    continuations = [f"continuation {i}" for i in range(101)]
    cosines = similarity.prefix_similarity(prefixes, continuations=continuations, encoder=UnevenEncoder(), batch_size=2)
    unique = list(dict.fromkeys(prefixes))
    prefix_vectors = UnevenEncoder().encode(unique, 2, True, True, False)
    continuation_vectors = np.concatenate([UnevenEncoder().encode(continuations[s:s + 32], 2, True, True, False)
                                           for s in range(0, 101, 32)])
    index = [unique.index(p) for p in prefixes]
    expected = np.einsum("ij,ij->i", prefix_vectors[index], continuation_vectors).astype(np.float64)
    assert cosines.dtype == np.float64 and cosines.view(np.uint64).tolist() == expected.view(np.uint64).tolist()


def test_prefix_similarity_holds_no_full_size_array_of_vectors():
    n, dimensions = 20_000, 384  # the vectors of all continuations would be ~29 MB

    class Constant:
        def encode(self, chunk, batch_size, normalize_embeddings, convert_to_numpy, show_progress_bar):
            return np.full((len(chunk), dimensions), 0.05, dtype=np.float32)

    prefixes = [f"prefix {i % 10}" for i in range(n)]
    continuations = [f"c{i}" for i in range(n)]
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        cosines = similarity.prefix_similarity(prefixes, continuations=continuations, encoder=Constant())
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    assert cosines.dtype == np.float64 and np.all(cosines == cosines[0]) and cosines[0] == pytest.approx(0.96)
    assert peak < 0.25 * n * dimensions * 4, f"peak {peak / 2**20:.1f} MB"


TRICKY = [
    "A well-known CAF\u00c9\u2019s owner \u2014 don't-stop -dash- 'quoted' o' x--y a-'b",
    "",
    "\u0130stanbul \u212aelvin KELVIN",  # the two characters whose str.lower() holds an ASCII letter
    "na\u00efve \u65e5\u672c\u8a9e abc\x00def",  # non-ASCII letters end words; a NUL inside a text
    "...",
    "It's\u2028ALL\u00a0Caps",
]


def test_words_of_texts_on_tricky_texts():
    words, index = words_of_texts(TRICKY, keep_hyphens=True)
    assert words.to_pylist() == ["a", "well-known", "caf", "s", "owner", "don't-stop", "dash", "quoted", "o", "x", "y",
                                 "a", "b", "i", "stanbul", "kelvin", "kelvin", "na", "ve", "abc", "def", "it's", "all", "caps"]
    assert index.tolist() == [0] * 13 + [2] * 4 + [3] * 4 + [5] * 3
    words, index = words_of_texts(TRICKY, lowercase=False)
    assert words.to_pylist() == ["A", "well", "known", "CAF", "s", "owner", "don't", "stop", "dash", "quoted", "o", "x", "y",
                                 "a", "b", "stanbul", "elvin", "KELVIN", "na", "ve", "abc", "def", "It's", "ALL", "Caps"]
    assert index.tolist() == [0] * 15 + [2] * 3 + [3] * 4 + [5] * 3
    words, index = words_of_texts(["", ""])
    assert words.to_pylist() == [] and index.tolist() == []


def test_encode_on_tricky_texts():
    vocabulary = {"well-known": 0, "don't-stop": 1, "kelvin": 2, "abc": 3, "caps": 4}
    ids, index = encode(TRICKY, vocabulary, keep_hyphens=True)
    assert ids.tolist() == [0, 1, 2, 2, 3, 4] and index.tolist() == [0, 0, 2, 2, 3, 5]
    ids, index = encode(TRICKY, vocabulary, exclude={"kelvin"}, keep_hyphens=True)
    assert ids.tolist() == [0, 1, 3, 4] and index.tolist() == [0, 0, 3, 5]


def test_score_counterfactual_passes_its_options_to_the_one_scoring():
    # score_counterfactual passes its options on to the scorers; an unknown one is refused, not ignored
    with pytest.raises(TypeError, match="no_such_option"):
        task.score_counterfactual([{"id": "a"}], [{"id": "a", "continuation": "x"}], no_such_option=1)
