"""Shared fixtures: the reference data folder, an isolated cache, no network by default."""

import os
from pathlib import Path

import pytest

# No test reaches the Hugging Face Hub; say so before huggingface_hub is imported, so that a
# missing model fails at once instead of after network retries.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]


def _reference_data_dir() -> Path:
    candidates = [os.environ.get("LMBIAS_DATA_DIR", ""), REPO.parent / "shared" / "data", "/work/shared/data"]
    for candidate in candidates:
        if candidate and (Path(candidate) / "bold" / "prompts").is_dir():
            return Path(candidate)
    raise RuntimeError(
        "the reference data folder (bold/, stereoset/, crows_pairs/ ...) was not found; set LMBIAS_DATA_DIR"
    )


DATA_DIR = _reference_data_dir()


@pytest.fixture
def data_dir() -> Path:
    """The reference data folder (read-only)."""
    return DATA_DIR


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path_factory, monkeypatch):
    """Each test gets an empty lmbias cache and datasets cache, offline, with the reference data dir."""
    monkeypatch.setenv("LMBIAS_DATA_DIR", str(DATA_DIR))
    monkeypatch.setenv("LMBIAS_CACHE_DIR", str(tmp_path_factory.mktemp("lmbias-cache")))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path_factory.mktemp("hf-datasets")))
    monkeypatch.setenv("LMBIAS_OFFLINE", "1")
    monkeypatch.delenv("LMBIAS_VERIFY", raising=False)
