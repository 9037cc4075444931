"""The reference data the tests read, and how a machine without ``../shared/data`` gets it.

The tests read every registered resource (:data:`lmbias.resources.REGISTRY`) from a data folder, and
a few files no user needs: the authors' own predictions and a subset file, used only as references.
Those are declared here, test-only, as :class:`~lmbias.resources.Resource` entries (a public URL at a
pinned commit and a checksum) and never registered, so ``lmbias resources`` does not list them.

:func:`fetch_data_dir` builds a data folder the way a user gets data: through lmbias's resource
machinery (checksums verified, ``LMBIAS_MIRROR`` honoured), into a folder of the lmbias cache.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path

from lmbias.benchmarks.bbq.data import BBQ_COMMIT
from lmbias.benchmarks.stereoset.data import STEREOSET_COMMIT
from lmbias.files import write_atomic
from lmbias.resources import (
    GITHUB_RAW,
    REGISTRY,
    Resource,
    ResourceError,
    ResourceNotFoundError,
    checksum_mismatch,
    download,
    locate,
    source_url,
)

# The BBQ authors' UnifiedQA predictions of the 6 category files the data folder holds (test_bbq.py
# feeds them to the evaluate module): sha256 and git blob id as bbq/SOURCES.md lists them.
_BBQ_PREDICTIONS = {
    "Age": ("a8c959958e1dc9701cb28df8e2d7e8ab3df2879e9cb1a8ca12bc9fb07a97339d", "c0c50b03440831a551867c03d4d0e05dc4c9c88d"),
    "Disability_status": ("90d939a38a33c7d0fd9ede9fe8b9b4a40f83acd38b6c582e03a5131dc5a3967a",
                          "6fd2989d1800ce0f5ca59e7408121d2f6fa0f3f9"),
    "Nationality": ("1c125200fe0c93379be7e067cf280bb7836cd688201545db379cd67a171c1f75", "8868a20af4b9c74740a1372b69f4a43edc883a74"),
    "Physical_appearance": ("fe826a7dbb5be7491fc377270cbcae999b215a09f719709956d9350b970fd0f6",
                            "1d8b60ea49b8243cd2f5745f6391cc571219117f"),
    "Religion": ("6322499fca1afeb30d00f0ff87949f777ad44e24c2d0c2ecda2a3a76f16ffde3", "1146d23252ba1d330c828bbbeb0528aba0e17e9b"),
    "Sexual_orientation": ("639cf5bf64a0e13abfc66c15cc1d470c5b1243fba41bea3bbc1c159f467e8bb6",
                           "6c4c846dbbfc4be41e4f6ffcb09ad2bde6227ddd"),
}
# The StereoSet authors' GPT-2 prediction files (test_fairness.py), verbatim from their repository.
_STEREOSET_PREDICTIONS = {  # sha256, and git blob id at STEREOSET_COMMIT (`git ls-tree`)
    "gpt2": ("ff1751272de61feb54f0eee4e410c3a958c83a64f5408a7e1ddbcb29dc1dd498", "54c5661d394120e2412faa3724745c9ae819a883"),
    "gpt2-medium": ("32fc5392215e6a487007b725e9328be5b886c5eb95e20b7a3e75cf7be335286c",
                    "ab6647a105f09f9730d4f981e69fe6723bbd0330"),
    "gpt2-large": ("8a6fc0d30baccc8c9db740365e5ccdfe225402b7e861921ecea1c5745d39d5fa",
                   "9ed00518428eadfd9fdcef1514950c1768151ca7"),
}
EDITBIAS_COMMIT = "5ecfebcf154a40107cf7e885ab0a3c8274378a5b"
# StereoSet dev's race and religion intrasentence items with their original ids, from zjunlp/EditBias.
_EDITBIAS = {
    "race": "2973cdf2b9b66f0dd6b40263e6acaba4ac7d8f17832e6df2f8a105e1463e6a43",
    "religion": "07b8204e6b024c36fbbcae146bcd6cc3aa256db02e9cd50a13c45e467d9c4446",
}

TEST_ONLY: tuple[Resource, ...] = (
    *(Resource(name=f"test-only/bbq/preds_{category}", path=f"bbq/results/UnifiedQA/preds_{category}.jsonl",
               url=f"{GITHUB_RAW}/nyu-mll/BBQ/{BBQ_COMMIT}/results/UnifiedQA/preds_{category}.jsonl",
               sha256=sha256, git_blob=blob, description=f"BBQ authors' UnifiedQA predictions, {category} (tests only)")
      for category, (sha256, blob) in _BBQ_PREDICTIONS.items()),
    *(Resource(name=f"test-only/stereoset/predictions_{model}", path=f"stereoset/reference/predictions_{model}.json",
               url=f"{GITHUB_RAW}/moinnadeem/StereoSet/{STEREOSET_COMMIT}/code/predictions/predictions_{model}_ModelNSP_GPT2LM.json",
               sha256=sha256, git_blob=blob, description=f"StereoSet authors' {model} predictions (tests only)")
      for model, (sha256, blob) in _STEREOSET_PREDICTIONS.items()),
    *(Resource(name=f"test-only/stereoset/editbias_{domain}", path=f"stereoset/reference/editbias/{domain}_test.json",
               url=f"{GITHUB_RAW}/zjunlp/EditBias/{EDITBIAS_COMMIT}/data/stereoset/{domain}_test.json",
               sha256=sha256, description=f"StereoSet dev {domain} intrasentence items, EditBias's copy (tests only)")
      for domain, sha256 in _EDITBIAS.items()),
)

# Made here from the two EditBias files (race, then religion), exactly as ../shared/data's copy was made.
SUBSET_PATH = "stereoset/reference/dev_race_religion_intrasentence.json"
SUBSET_SHA256 = "b8e1435c66894474b6143342e7749148be90fe1f85e74a5cd87fede461985504"


def subset_bytes(race: list, religion: list) -> bytes:
    """The subset file in dev.json's layout from EditBias's race and religion item lists."""
    return json.dumps({"version": "1.0-subset", "data": {"intrasentence": race + religion, "intersentence": []}}).encode()


def editbias_lists(subset: bytes) -> dict[str, bytes]:
    """The inverse of :func:`subset_bytes`: EditBias's two files (``{domain: bytes}``) from the subset file."""
    items = json.loads(subset)["data"]["intrasentence"]
    return {domain: json.dumps([item for item in items if item["bias_type"] == domain]).encode() for domain in _EDITBIAS}


@contextmanager
def _environment(**values):
    saved = {key: os.environ.get(key) for key in values}
    try:
        for key, value in values.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
        yield
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)


def fetch_data_dir(folder: Path, *, offline: bool) -> tuple[list[str], list[str]]:
    """Put a verified copy of every file the tests read into ``folder`` (laid out as a data folder):
    every registered resource, through :func:`lmbias.resources.locate` with ``folder`` as the cache
    (verified copies are kept, others downloaded, from ``LMBIAS_MIRROR`` when it is set), then the
    test-only files. Returns (the names fetched now, ``"name (why)"`` for each that could not be had)."""
    fetched, missing = [], []
    # the tests' own HF_HUB_OFFLINE=1 is lifted for this fetch only; the user's LMBIAS_OFFLINE is kept
    with _environment(LMBIAS_CACHE_DIR=str(folder), LMBIAS_DATA_DIR=None, HF_HUB_OFFLINE=None,
                      LMBIAS_OFFLINE="1" if offline else None):
        for name, resource in sorted(REGISTRY.items()):
            had = (folder / resource.path).is_file()
            try:
                locate(name)
            except (ResourceNotFoundError, ResourceError) as error:
                missing.append(f"{name} ({getattr(error, 'why', None) or str(error).splitlines()[0]})")
                continue
            if not had:
                fetched.append(name)
        for resource in TEST_ONLY:
            path = folder / resource.path
            if path.is_file() and checksum_mismatch(path, resource.sha256, resource.git_blob) is None:
                continue
            if offline:
                missing.append(f"{resource.name} (offline: LMBIAS_OFFLINE is set)")
                continue
            try:
                download(resource, path)
                fetched.append(resource.name)
            except (OSError, ResourceError) as error:
                missing.append(f"{resource.name} (download of {source_url(resource.url)} failed: {error})")
    _make_subset(folder, missing)
    return fetched, missing


def _make_subset(folder: Path, missing: list[str]) -> None:
    subset = folder / SUBSET_PATH
    if subset.is_file() and checksum_mismatch(subset, SUBSET_SHA256) is None:
        return
    sources = [folder / resource.path for resource in TEST_ONLY if resource.name.startswith("test-only/stereoset/editbias_")]
    if not all(path.is_file() for path in sources):
        missing.append(f"{SUBSET_PATH} (made from EditBias's race and religion files, which are missing)")
        return
    race, religion = (json.loads(path.read_bytes()) for path in sources)
    content = subset_bytes(race, religion)
    if (problem := checksum_mismatch(write_atomic(subset, content), SUBSET_SHA256)) is not None:
        subset.unlink()
        missing.append(f"{SUBSET_PATH} (made from EditBias's files, its {problem})")

