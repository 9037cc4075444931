"""Writing files safely and naming them: one atomic write, line by line or whole (and the temporary
path behind both), one error for a full disk, one output folder, one JSON reader, one JSON-lines reader, one UTF-8
text reader, one check that a path given to read is a file, one slug."""

from __future__ import annotations

import errno
import json
import os
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import InputError, LmbiasError

# What a write that ran out of room raises: no space left on the device, the disk quota reached, or the
# file-size limit (``ulimit -f``) passed.
FULL_DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


class DiskFullError(LmbiasError, OSError):
    """A file could not be written because its disk (or quota, or the file-size limit) is full; the
    message names the file and says that the same command resumes once there is room."""


def full_disk_error(path: str | os.PathLike, error: OSError) -> DiskFullError | None:
    """The :class:`DiskFullError` naming ``path`` when ``error`` (raised while writing it) is a full disk
    (:data:`FULL_DISK_ERRORS`), else None.

    >>> import errno
    >>> print(full_disk_error("runs/x/shard-0.jsonl", OSError(errno.ENOSPC, "No space left on device")))  # doctest: +ELLIPSIS
    runs/x/shard-0.jsonl could not be written (No space left on device): make room (free space on its disk, or ...
    >>> full_disk_error("x", OSError(errno.EACCES, "Permission denied")) is None
    True
    """
    if error.errno not in FULL_DISK_ERRORS:
        return None
    return DiskFullError(f"{path} could not be written ({os.strerror(error.errno)}): make room (free space on its disk, or "
                         "raise the quota or file-size limit) and run the same command again; a run resumes from the batches "
                         "it saved")


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; ``path`` gets the file whole or not at all.

    The temporary name holds this process and thread, so two writers never share it. When the
    ``with`` block ends without an error the file is flushed to disk and replaces ``path`` in one
    rename: a reader sees the old file or the new one, never a part. On an error it is removed and
    ``path`` is left as it was; a full disk is a :class:`DiskFullError` naming ``path``.

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "out.bin"
    >>> with atomic_path(target) as temporary:
    ...     _ = temporary.write_bytes(b"whole")
    >>> target.read_bytes()
    b'whole'
    """
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        yield temporary
        with open(temporary, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as error:
        full = full_disk_error(path, error)
        if full is None:
            raise
        raise full from None
    finally:
        temporary.unlink(missing_ok=True)


def write_atomic(path: str | os.PathLike, data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` whole or not at all (see :func:`atomic_path`).

    Returns ``path``.
    """
    with atomic_path(path) as temporary:
        temporary.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return Path(path)


def write_lines_atomic(path: str | os.PathLike, lines: Iterable[str]) -> Path:
    """Write ``lines`` (text, each with its own line end) to ``path`` as UTF-8, one at a time, whole or
    not at all (see :func:`atomic_path`): the same bytes as :func:`write_atomic` of ``"".join(lines)``
    without that string. Returns ``path``.

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "out.jsonl"
    >>> write_lines_atomic(target, (f"{n}\\n" for n in range(3))).read_bytes()
    b'0\\n1\\n2\\n'
    """
    with atomic_path(path) as temporary, open(temporary, "w", encoding="utf-8", newline="") as handle:
        handle.writelines(lines)  # newline="": no line end translated
    return Path(path)


@contextmanager
def output_folder(path: str | os.PathLike, option: str = "--out") -> Iterator[Path]:
    """The folder ``path`` for a command's output files, created if needed, for the ``with`` block.

    A folder this call created is removed again when the block fails and leaves it empty, so a
    refused or failed command leaves nothing behind.

    Raises:
        InputError: ``path`` is a file, or cannot be created or written (a file or a read-only folder
            on the way); the message names ``option``.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise InputError(f"{option} {path} is a file, not a folder; give a folder for the output")
    created = not path.exists()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"{option} {path} cannot be created ({error.strerror or error}); give a writable folder") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise InputError(f"{option} {path} is not writable; give a writable folder")
    try:
        yield path
    except BaseException:
        if created and path.is_dir() and not any(path.iterdir()):
            path.rmdir()
        raise


def check_output_file(path: str | os.PathLike, option: str = "--out") -> Path:
    """``path`` as a Path if a file can be written there (its folder is, or can be, a writable folder);
    nothing is created. An InputError naming ``option`` otherwise (a folder, a file on the way)."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{option} {path} is a folder; give the path of a file to write")
    parent = next((p for p in path.absolute().parents if p.exists()), None)
    if parent is None or not parent.is_dir():
        raise InputError(f"{option} {path} cannot be written: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{option} {path} cannot be written: {parent} is not writable")
    return path


def read_json(path: str | os.PathLike, fix: str = "rerun the command that wrote it"):
    """The JSON content of the file ``path``; a binary, cut-short or invalid file is an InputError
    naming the file, the error and ``fix`` (what to do about it)."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"{path} is not valid JSON text ({type(error).__name__}: {str(error)[:120]}); {fix}") from None
    except OSError as error:
        raise InputError(f"{path} cannot be read ({error.strerror or error}); {fix}") from None


def read_jsonl(path: str | os.PathLike, expected: str, fix: str = "rerun the command that wrote it") -> list[dict]:
    """The objects of the JSON-lines file ``path`` (one object per line; blank lines skipped); an empty file, a line
    that is not a JSON object (a cut-short last line) or a file that is not UTF-8 is an InputError naming the file,
    the line, ``expected`` (what the file holds) and ``fix``.

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "scores.jsonl"
    >>> _ = target.write_text('{"id": "1"}\\n{"id": "2", "sco')
    >>> read_jsonl(target, "one score record per item")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    lmbias.errors.InputError: .../scores.jsonl line 2: not a JSON object (cut short? Unterminated string ...); expected one ...
    """
    records = []
    for number, line in enumerate(read_text(path, expected).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"{path} line {number}: not a JSON object (cut short? {error.msg} at column {error.colno}); "
                             f"expected {expected}; {fix}") from None
        if not isinstance(record, dict):
            raise InputError(f"{path} line {number}: a JSON {type(record).__name__}, not an object; expected {expected}; {fix}")
        records.append(record)
    if not records:
        raise InputError(f"{path} is empty; expected {expected}; {fix}")
    return records


def read_text(path: str | os.PathLike, expected: str) -> str:
    """The text of the file ``path`` as it is (UTF-8, line ends untouched); a file that is not UTF-8
    is an InputError naming it, where decoding failed and ``expected`` (what the file should hold).

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "latin1.txt"
    >>> _ = target.write_bytes(b"caf\\xe9\\n")
    >>> read_text(target, "one word per line")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    lmbias.errors.InputError: .../latin1.txt is not UTF-8 text (invalid continuation byte at byte 3); expected one word per line
    """
    try:
        return Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{path} is not UTF-8 text ({error.reason} at byte {error.start}); expected {expected}") from None


def check_readable_file(path: str | os.PathLike, what: str, hint: str = "") -> Path:
    """``path`` as a Path when it is a file to read (a symbolic link to a file is one); else an InputError
    naming ``what`` and ``path`` that says what is there instead: a folder, a symbolic link whose target is
    missing, or nothing (then ``hint``, in brackets, if given).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> check_readable_file(folder, "data.path")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    lmbias.errors.InputError: data.path ... is a folder, not a file; give the path of a file
    """
    path = Path(path)
    if path.is_file():
        return path
    if path.is_dir():
        raise InputError(f"{what} {str(path)!r} is a folder, not a file; give the path of a file")
    if path.is_symlink():
        raise InputError(f"{what} {str(path)!r} is a symbolic link to {os.readlink(path)!r}, which does not exist")
    if path.exists():
        raise InputError(f"{what} {str(path)!r} is not a regular file (a device, socket or pipe); give the path of a file")
    raise InputError(f"{what} {str(path)!r} does not exist" + (f" ({hint})" if hint else ""))


def slugify(name: str, *, max_length: int = 80, empty: str = "model") -> str:
    """``name`` as a lowercase file or folder name: letters, digits and single dashes.

    >>> slugify("EleutherAI/pythia-70m (step 1000)")
    'eleutherai-pythia-70m-step-1000'
    >>> slugify("***")
    'model'
    """
    slug = re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-")[:max_length].strip("-")
    return slug or empty
