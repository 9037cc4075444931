"""Writing files safely and naming them: one atomic write, line by line or whole (and the temporary
path behind both), one output folder, one JSON reader, one slug."""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import InputError


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; ``path`` gets the file whole or not at all.

    The temporary name holds this process and thread, so two writers never share it. When the
    ``with`` block ends without an error the file is flushed to disk and replaces ``path`` in one
    rename: a reader sees the old file or the new one, never a part. On an error it is removed and
    ``path`` is left as it was.

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "out.bin"
    >>> with atomic_path(target) as temporary:
    ...     _ = temporary.write_bytes(b"whole")
    >>> target.read_bytes()
    b'whole'
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        yield temporary
        with open(temporary, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(temporary, path)
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


def slugify(name: str, *, max_length: int = 80, empty: str = "model") -> str:
    """``name`` as a lowercase file or folder name: letters, digits and single dashes.

    >>> slugify("EleutherAI/pythia-70m (step 1000)")
    'eleutherai-pythia-70m-step-1000'
    >>> slugify("***")
    'model'
    """
    slug = re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-")[:max_length].strip("-")
    return slug or empty
