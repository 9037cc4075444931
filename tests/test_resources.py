"""The resource registry and its lookup order: data_dir, LMBIAS_DATA_DIR, cache, download."""

import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from lmbias import resources
from lmbias.resources import REGISTRY, ResourceError, ResourceNotFoundError, locate, locate_first


def copy_resource(name: str, source: Path, target_dir: Path) -> Path:
    path = REGISTRY[name].path
    (target_dir / path).parent.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copyfile(source / path, target_dir / path))


def test_registry_entries_name_real_files_with_their_checksums(data_dir):
    checked = 0
    for name, resource in REGISTRY.items():
        path = data_dir / resource.path
        if resource.sha256 is None:
            continue
        assert path.is_file(), name
        assert hashlib.sha256(path.read_bytes()).hexdigest() == resource.sha256, name
        checked += 1
    assert checked == len([r for r in REGISTRY.values() if r.sha256])
    assert REGISTRY["bold/prompts/gender"].url.startswith("https://raw.githubusercontent.com/amazon-science/bold/")
    assert REGISTRY["stereoset/dev"].url.endswith("moinnadeem/StereoSet/" + resources.STEREOSET_COMMIT + "/data/dev.json")
    assert "nyu-mll/crows-pairs" in REGISTRY["crows_pairs"].url


def test_lookup_order_argument_then_environment_then_cache(data_dir, tmp_path, monkeypatch):
    argument_dir, env_dir = tmp_path / "arg", tmp_path / "env"
    cache = Path(resources.cache_dir())
    for directory in (argument_dir, env_dir, cache):
        copy_resource("crows_pairs", data_dir, directory)
    monkeypatch.setenv("LMBIAS_DATA_DIR", str(env_dir))
    assert locate("crows_pairs", argument_dir) == argument_dir / REGISTRY["crows_pairs"].path
    assert locate("crows_pairs") == env_dir / REGISTRY["crows_pairs"].path
    monkeypatch.delenv("LMBIAS_DATA_DIR")
    assert locate("crows_pairs") == cache / REGISTRY["crows_pairs"].path


def test_missing_offline_error_names_resource_every_place_and_the_remedy(tmp_path, monkeypatch):
    monkeypatch.setenv("LMBIAS_DATA_DIR", str(tmp_path / "empty"))
    with pytest.raises(ResourceNotFoundError) as info:
        locate("bold/prompts/race", tmp_path / "nothing")
    message = str(info.value)
    assert "'bold/prompts/race'" in message
    assert str(tmp_path / "nothing" / "bold/prompts/race_prompt.json") in message
    assert str(tmp_path / "empty" / "bold/prompts/race_prompt.json") in message
    assert str(resources.cache_dir()) in message
    assert "offline" in message and "LMBIAS_DATA_DIR" in message and "data_dir" in message


def test_hf_hub_offline_also_means_offline(monkeypatch):
    monkeypatch.delenv("LMBIAS_OFFLINE")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert not resources.is_offline()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert resources.is_offline()
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    assert not resources.is_offline()


def test_unknown_resource_lists_the_known_ones():
    with pytest.raises(KeyError, match="crows_pairs"):
        locate("crows-pairs")


def test_truncated_local_file_fails_its_checksum_naming_the_file(data_dir, tmp_path):
    path = copy_resource("bold/prompts/gender", data_dir, tmp_path)
    path.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(ResourceError) as info:
        locate("bold/prompts/gender", tmp_path)
    assert str(path) in str(info.value) and "expected " + REGISTRY["bold/prompts/gender"].sha256 in str(info.value)
    assert locate("bold/prompts/gender", tmp_path, verify_checksum=False) == path


class _Server:
    """A loopback HTTP server over a folder, for download tests."""

    def __init__(self, root: Path):
        handler = lambda *args, **kwargs: http.server.SimpleHTTPRequestHandler(  # noqa: E731
            *args, directory=str(root), **kwargs
        )
        http.server.SimpleHTTPRequestHandler.log_message = lambda *args: None
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def served(data_dir, tmp_path, monkeypatch):
    """CrowS-Pairs served on loopback; the registry entry points at it; downloads allowed."""
    root = tmp_path / "www"
    copy_resource("crows_pairs", data_dir, root)
    server = _Server(root)
    served_url = f"{server.url}/crows_pairs/crows_pairs_anonymized.csv"
    monkeypatch.setitem(REGISTRY, "crows_pairs", replace(REGISTRY["crows_pairs"], url=served_url))
    monkeypatch.delenv("LMBIAS_OFFLINE")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("LMBIAS_DATA_DIR")
    yield server
    server.close()


def test_download_into_cache_verifies_checksum(served, data_dir):
    path = locate("crows_pairs")
    assert path == resources.cache_dir() / REGISTRY["crows_pairs"].path
    assert path.read_bytes() == (data_dir / REGISTRY["crows_pairs"].path).read_bytes()
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left


def test_download_with_wrong_checksum_saves_nothing(served, monkeypatch):
    monkeypatch.setitem(REGISTRY, "crows_pairs", replace(REGISTRY["crows_pairs"], sha256="0" * 64))
    with pytest.raises(ResourceError, match="nothing was saved"):
        locate("crows_pairs")
    folder = resources.cache_dir() / "crows_pairs"
    assert not folder.exists() or list(folder.iterdir()) == []


def test_failed_download_is_reported_with_the_places_looked(served, monkeypatch):
    broken = replace(REGISTRY["crows_pairs"], url=f"{served.url}/no/such/file.csv")
    monkeypatch.setitem(REGISTRY, "crows_pairs", broken)
    with pytest.raises(ResourceNotFoundError, match=r"download of .*no/such/file.csv failed.*404"):
        locate("crows_pairs")


def test_locate_first_prefers_any_local_alternative_over_a_download(data_dir, served):
    # stereoset/dev (original layout) has a URL but no local copy; the flat copy is local.
    resource, path = locate_first(["stereoset/dev", "stereoset/dev_flat"], data_dir)
    assert resource.name == "stereoset/dev_flat" and path == data_dir / "stereoset/stereoset_dev_flat.jsonl"


# --- public sources: pinned URLs and PyPI wheels, through a mirror ------------------------------------

WHEELS = Path(sys.prefix) / "wheels"  # `make install` downloads the wefe wheel here (not installed)


def test_every_resource_has_a_public_source():
    assert [name for name, r in REGISTRY.items() if not (r.url or r.wheel)] == []


def test_mirror_replaces_scheme_and_host(monkeypatch):
    url = "https://raw.githubusercontent.com/nyu-mll/crows-pairs/abc/data/x.csv"
    assert resources.source_url(url) == url
    monkeypatch.setenv("LMBIAS_MIRROR", "http://127.0.0.1:9/lmbias/")
    assert resources.source_url(url) == "http://127.0.0.1:9/lmbias/nyu-mll/crows-pairs/abc/data/x.csv"


@pytest.fixture
def mirror(data_dir, tmp_path, monkeypatch):
    """A loopback mirror holding every public file in its original layout (URL path = file path):
    the data folder's files at their GitHub paths and the pinned wefe wheel at its PyPI path.
    Downloads allowed, no data folder, an empty cache."""
    wheel = next(r.wheel for r in REGISTRY.values() if r.wheel and r.wheel.package == "wefe")
    local_wheel = WHEELS / wheel.url.rsplit("/", 1)[-1]
    if not local_wheel.is_file():
        pytest.skip(f"{local_wheel} is missing (make install downloads it)")
    root = tmp_path / "www"
    for resource in REGISTRY.values():
        if resource.url and (data_dir / resource.path).is_file():
            target = root / urlsplit(resource.url).path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(data_dir / resource.path, target)
    target = root / urlsplit(wheel.url).path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(local_wheel, target)
    server = _Server(root)
    monkeypatch.setenv("LMBIAS_MIRROR", server.url)
    monkeypatch.delenv("LMBIAS_OFFLINE")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("LMBIAS_DATA_DIR")
    monkeypatch.setattr(resources, "installed_member", lambda wheel: None)  # the wheel must come from the mirror
    yield server
    server.close()


def test_word_vectors_come_from_the_pinned_wheel_through_the_mirror(mirror, data_dir):
    vectors = locate("word2vec_gnews_subset/vectors")
    vocab = locate("word2vec_gnews_subset/vocab")
    assert vectors.read_bytes() == (data_dir / "word2vec_gnews_subset/vectors.npy").read_bytes()  # same sha256, converted here
    assert vocab.read_text().splitlines()[:3] == (data_dir / "word2vec_gnews_subset/vocab.txt").read_text().splitlines()[:3]
    assert sorted(p.name for p in (resources.cache_dir() / "wheels").iterdir()) == ["wefe-1.0.1-py3-none-any.whl"]


def test_run_bold_with_the_embedded_model_and_only_public_sources(mirror, embedded_model, tmp_path):
    """End to end: no data folder, an empty cache (but for the converted model), every file from the mirror."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "models").symlink_to(embedded_model.cache_dir / "models")
    env = {**os.environ, "LMBIAS_CACHE_DIR": str(cache)}
    env.pop("LMBIAS_DATA_DIR", None)
    out = tmp_path / "run"
    command = [sys.executable, "-m", "lmbias", "run", "bold", "--per-group", "1", "--domains", "gender", "race",
               "--metrics", "sentiment", "psycholinguistic_norms", "gender_polarity", "--max-new-tokens", "8",
               "--no-progress", "--out", str(out)]
    finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert results["skipped"] == {}
    assert results["partial"] == {"prompts": "6 of 23,679 (--per-group 1)"}  # 2 gender + 4 race groups, one prompt each
    assert set(results["results"]["model"]["metrics"]) == {"sentiment", "psycholinguistic_norms", "gender_polarity"}
    assert (cache / "word2vec_gnews_subset/vectors.npy").is_file() and (cache / "bold/prompts/race_prompt.json").is_file()


def test_resources_fetch_gets_everything_and_says_so(mirror, capsys):
    from lmbias.cli import main

    assert main(["resources", "--fetch"]) == 1  # stereoset/dev and the flat copy: not in this mirror
    out = capsys.readouterr().out
    assert "resources are available" in out and "missing (download of" in out
    assert str(resources.cache_dir() / "word2vec_gnews_subset/vectors.npy") in out
