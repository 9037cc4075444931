"""A disk that fills up mid-run (issue 37): the run stops with one line naming the file it could not
write and saying that the same command resumes, and once there is room again, it does, to the numbers
of a run that was never stopped. On a real tmpfs mounted small for the test (skipped where mounting is
not permitted), and under a file-size limit (``ulimit -f``: EFBIG, on any POSIX machine)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lmbias.cli import main
from lmbias.files import FULL_DISK_ERRORS, atomic_path, full_disk_error, write_atomic
from lmbias.run_lock import LOCK_FILE

from tiny_lm import save_tiny_causal_lm

REPO_ROOT = Path(__file__).resolve().parents[1]
PAGE = 4096


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_causal_lm(tmp_path_factory.mktemp("tiny"))


def _saved_batches(out: Path) -> list[int]:
    """The batches whose line in the shard is whole (a line cut short by the full disk is not)."""
    saved = []
    for line in (out / "shard-0.jsonl").read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            saved.append(json.loads(line)["batch"])
        except json.JSONDecodeError:
            pass
    return saved


def _same_results(reference: Path, resumed: Path, records_file: str) -> None:
    """The resumed run's numbers and records are the uninterrupted run's."""
    results = {folder: json.loads((folder / "results.json").read_text()) for folder in (reference, resumed)}
    assert results[resumed]["results"] == results[reference]["results"]
    assert results[resumed]["records"] == results[reference]["records"]
    assert (resumed / records_file).read_text() == (reference / records_file).read_text()


@pytest.fixture
def small_tmpfs(tmp_path):
    """A folder with a 1 MiB tmpfs mounted on it (unmounted after the test); skipped where mount is not permitted."""
    folder = tmp_path / "tmpfs"
    folder.mkdir()
    if not sys.platform.startswith("linux") or shutil.which("mount") is None:
        pytest.skip("needs Linux's mount -t tmpfs")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"mount -t tmpfs is not permitted here ({mounted.stderr.strip()[:200]}); "
                    "test_a_run_past_the_file_size_limit_resumes covers the same path with EFBIG")
    yield folder
    subprocess.run(["umount", "--lazy", str(folder)], check=True)  # lazy: a file left open by a failed test holds no mount


def _fill(folder: Path, leave: int) -> Path:
    """A file taking all of ``folder``'s disk but ``leave`` bytes (whole pages); its path."""
    stat = os.statvfs(folder)
    filler = folder / "filler"
    filler.write_bytes(b"\0" * (stat.f_bavail * stat.f_frsize - leave))
    assert os.statvfs(folder).f_bavail * stat.f_frsize == leave
    return filler


def test_a_likelihood_run_on_a_full_tmpfs_says_which_file_and_resumes_once_there_is_room(tiny, tmp_path, small_tmpfs, capsys):
    arguments = ["run", "crows_pairs", "--model", tiny, "--limit", "120", "--batch-size", "2", "--threads", "1", "--no-progress"]
    assert main([*arguments, "--out", str(tmp_path / "reference")]) == 0
    capsys.readouterr()
    # room for the lock file, config.json and two pages of scores: 3 of the 8 saved batches (each about 2.4 kB)
    filler = _fill(small_tmpfs, 4 * PAGE)
    out = small_tmpfs / "run"
    assert main([*arguments, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert [line for line in captured.err.splitlines() if "error" in line] == [
        f"lmbias: error: {out / 'shard-0.jsonl'} could not be written (No space left on device): make room (free space on its "
        "disk, or raise the quota or file-size limit) and run the same command again; a run resumes from the batches it saved"]
    saved = _saved_batches(out)
    assert saved == list(range(len(saved))) and 1 <= len(saved) < 8  # stopped mid-run, each batch once
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "shard-0.jsonl"]  # no lock, no temporary file left
    assert (out / "shard-0.jsonl").read_bytes()[-1:] != b"\n"  # the batch in flight: cut short, to be redone

    filler.unlink()  # the space freed: the same command resumes
    assert main([*arguments, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    done = 16 * len(saved)  # 8 x --batch-size rows a saved batch
    assert f"resuming {out}: {done} of 120 pairs already done" in captured.err
    assert f"line(s) [{len(saved) + 1}] damaged" in captured.err  # the batch cut short is redone
    assert f"{120 - done} pairs scored in " in captured.out and f"{done} before the run was resumed" in captured.out
    _same_results(tmp_path / "reference", out, "scores.jsonl")


def test_the_results_written_last_on_a_full_tmpfs_are_named_too(tiny, tmp_path, small_tmpfs, capsys):
    arguments = ["run", "crows_pairs", "--model", tiny, "--limit", "40", "--batch-size", "2", "--threads", "1", "--no-progress"]
    assert main([*arguments, "--out", str(tmp_path / "reference")]) == 0
    capsys.readouterr()
    # every batch fits (3 of about 2.4 kB: 2 pages), scores.jsonl (6 kB) does not beside them
    filler = _fill(small_tmpfs, 4 * PAGE)
    out = small_tmpfs / "run"
    assert main([*arguments, "--out", str(out)]) == 2
    error = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert error == [f"lmbias: error: {out / 'scores.jsonl'} could not be written (No space left on device): make room (free "
                     "space on its disk, or raise the quota or file-size limit) and run the same command again; a run resumes "
                     "from the batches it saved"]
    assert _saved_batches(out) == [0, 1, 2] and not (out / "results.json").exists()
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "items.jsonl", "shard-0.jsonl"]
    filler.unlink()
    assert main([*arguments, "--out", str(out)]) == 0
    assert "resuming" in capsys.readouterr().err
    _same_results(tmp_path / "reference", out, "scores.jsonl")


def test_a_generation_run_past_the_file_size_limit_resumes(tiny, tmp_path):
    # ulimit -f in the child: a write past the limit fails with EFBIG (Python ignores SIGXFSZ), on any POSIX machine
    resource = pytest.importorskip("resource")
    arguments = ["run", "bold", "--model", tiny, "--per-group", "10", "--domains", "gender", "--metrics", "sentiment",
                 "--batch-size", "2", "--max-new-tokens", "8", "--threads", "1", "--no-progress"]
    assert main([*arguments, "--out", str(tmp_path / "reference")]) == 0
    line = len((tmp_path / "reference" / "shard-0.jsonl").read_bytes()) // 10  # about one batch's line
    limit = 3 * line + line // 2  # config.json fits; the shard stops in its fourth batch

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    out = tmp_path / "run"
    command = [sys.executable, "-m", "lmbias", *arguments, "--out", str(out)]
    stopped = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, preexec_fn=limited)
    assert stopped.returncode == 2, stopped.stderr[-3000:]
    assert "Traceback" not in stopped.stderr
    assert stopped.stderr.strip().splitlines()[-1] == (
        f"lmbias: error: {out / 'shard-0.jsonl'} could not be written (File too large): make room (free space on its disk, or "
        "raise the quota or file-size limit) and run the same command again; a run resumes from the batches it saved")
    saved = _saved_batches(out)
    assert saved == [0, 1, 2] and LOCK_FILE not in os.listdir(out)
    resumed = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resuming {out}: 6 of 20 prompts already done" in resumed.stderr
    assert "line(s) [4] damaged (a killed process, a full disk, or an edit)" in resumed.stderr  # the batch cut short: redone
    _same_results(tmp_path / "reference", out, "generations.jsonl")


@pytest.mark.parametrize("code", FULL_DISK_ERRORS)
def test_an_atomic_write_on_a_full_disk_names_the_file_and_leaves_the_old_one(tmp_path, code):
    target = write_atomic(tmp_path / "results.json", "old")
    with pytest.raises(OSError) as caught, atomic_path(target) as temporary:
        temporary.write_text("new, half")
        raise OSError(code, os.strerror(code))
    assert str(caught.value) == str(full_disk_error(target, OSError(code, "")))
    assert str(caught.value).startswith(f"{target} could not be written ({os.strerror(code)}): make room")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["results.json"]
    with pytest.raises(PermissionError), atomic_path(target):  # any other error: as it was
        raise PermissionError(13, "Permission denied")


def test_a_run_on_a_disk_already_full_is_one_line_and_leaves_no_folder(tiny, small_tmpfs, capsys):
    """No room even for the lock's holder line: the lock still holds, config.json is the file named, and
    the folder the run created is removed again (it was a raw traceback from closing the lock file)."""
    _fill(small_tmpfs, 0)
    out = small_tmpfs / "run"
    assert main(["run", "crows_pairs", "--model", tiny, "--limit", "4", "--no-progress", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"lmbias: error: {out / 'config.json'} could not be written"), err
    assert not out.exists()
