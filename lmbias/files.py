"""Writing files safely and naming them: one atomic write, one slug."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Union


def write_atomic(path: Union[str, os.PathLike], data: Union[str, bytes]) -> Path:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` whole or not at all.

    The data goes to a temporary file beside ``path`` (named after this process, so two writers
    never share it), is flushed to disk, and replaces ``path`` in one rename: a reader sees the old
    file or the new one, never a part. Returns ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "wb") as handle:
        handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    return path


def slugify(name: str, *, max_length: int = 80, empty: str = "model") -> str:
    """``name`` as a lowercase file or folder name: letters, digits and single dashes.

    >>> slugify("EleutherAI/pythia-70m (step 1000)")
    'eleutherai-pythia-70m-step-1000'
    >>> slugify("***")
    'model'
    """
    slug = re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-")[:max_length].strip("-")
    return slug or empty
