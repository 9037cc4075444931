"""Writing files safely and naming them: one atomic write (and the temporary path behind it), one slug."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


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


def slugify(name: str, *, max_length: int = 80, empty: str = "model") -> str:
    """``name`` as a lowercase file or folder name: letters, digits and single dashes.

    >>> slugify("EleutherAI/pythia-70m (step 1000)")
    'eleutherai-pythia-70m-step-1000'
    >>> slugify("***")
    'model'
    """
    slug = re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-")[:max_length].strip("-")
    return slug or empty
