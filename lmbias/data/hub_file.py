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
    places = _data_dirs(data_dir)
    for _, place in places:
        path = place / folder / filename
        if path.is_file():
            return path, str(path)
    try:
        from huggingface_hub import hf_hub_download

        path = Path(hf_hub_download(repo, filename, repo_type="dataset", revision=revision))
    except Exception as error:  # offline, gated, a proxy: the Hub's own message, in one line
        looked = ", ".join(f"{label} {place / folder / filename}" for label, place in places)
        raise ResourceNotFoundError(
            f"{repo}/{filename} is not here (looked in: {looked}) and could not be downloaded at {revision[:12]} "
            f"({type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else 'no message'}); put the file in "
            f"DIR/{folder}/ and pass --data-dir DIR (or set LMBIAS_DATA_DIR)") from None
    return path, f"hf://datasets/{repo}@{revision}/{filename}"
