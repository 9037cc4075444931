"""A file of a Hub dataset at a pinned commit, for the benchmarks whose data lives only on the Hugging Face Hub
(DiscrimEval, RealToxicityPrompts): a copy in a data folder first, else ``huggingface_hub`` downloads the file
at the commit (its cache checks the download against the Hub's content hash at that commit).

A commit id names one content for good, so the pin is the verification of a download; a local copy (a user's,
or rows built in the dataset's layout for a test) is read as it is and checked row by row by its benchmark.
"""

from __future__ import annotations

from pathlib import Path

from ..resources import ResourceNotFoundError, _data_dirs


def hub_file(repo: str, filename: str, revision: str, *, folder: str, data_dir=None) -> tuple[Path, str]:
    """The path of ``filename`` of the Hub dataset ``repo`` at ``revision``, and where it came from.

    Looked for as ``<place>/<folder>/<filename>`` in ``data_dir``, each ``LMBIAS_DATA_DIR`` folder and the
    user cache, in that order; else downloaded with :func:`huggingface_hub.hf_hub_download` at ``revision``.

    Raises:
        ResourceNotFoundError: one line naming the file, every place looked and how to supply it.
    """
    from huggingface_hub import dataset_info, hf_hub_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    from ..model_source import PROBE_TIMEOUT, network_cause
    from ..resources import is_offline

    places = _data_dirs(data_dir)
    for _, place in places:
        path = place / folder / filename
        if path.is_file():
            return path, str(path)
    source = f"hf://datasets/{repo}@{revision}/{filename}"
    try:  # downloaded before: the Hub's cache, no request
        return Path(hf_hub_download(repo, filename, repo_type="dataset", revision=revision, local_files_only=True)), source
    except LocalEntryNotFoundError:
        pass
    looked = ", ".join(f"{label} {place / folder / filename}" for label, place in places)
    what = f"resource '{folder}/{filename}' ({repo} at {revision[:12]})"
    supply = f"put the file in DIR/{folder}/ and pass --data-dir DIR (or set LMBIAS_DATA_DIR)"
    if is_offline():
        raise ResourceNotFoundError(f"{what} is not here (looked in: {looked}, the Hub cache) and the Hub is off "
                                    f"(HF_HUB_OFFLINE or LMBIAS_OFFLINE is set); {supply}")
    try:
        dataset_info(repo, revision=revision, timeout=PROBE_TIMEOUT)  # one request, no retries
        path = Path(hf_hub_download(repo, filename, repo_type="dataset", revision=revision))
    except Exception as error:  # no network, gated, a proxy: why, in one line
        raise ResourceNotFoundError(f"{what} is not here (looked in: {looked}, the Hub cache) and could not be "
                                    f"downloaded ({network_cause(error)}); {supply}") from None
    return path, source


def jsonl_records(path, source: str):
    """``(number, where, record)`` for each non-empty line of the JSON Lines file ``path`` (``number``: the line's,
    from 1; ``where``: "SOURCE line N"); a line that is not JSON is one :class:`~lmbias.errors.InputError` naming it."""
    import json

    from ..errors import InputError

    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = f"{source} line {number}"
            try:
                yield number, where, json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(f"{where}: not a JSON object ({error.msg})") from None
