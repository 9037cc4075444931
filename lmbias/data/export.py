"""Export a dataset as Parquet files plus a dataset card, the layout the Hugging Face Hub loads.

Loading scripts no longer run in ``datasets`` 4+, so a dataset is published as data files and a
``README.md`` whose YAML front matter lists ``configs:`` (name, data files per split). The card
template in ``hub_cards/<name>/README.md`` is the source of that layout: :func:`export_dataset`
writes one Parquet file at each path the card names and copies the card beside them, so that
``datasets.load_dataset(OUT_DIR, config)`` loads it and the folder can be pushed as it is. A dataset
without a card there gets one made from its spec (:func:`spec_card`).
"""

from __future__ import annotations

import os
from pathlib import Path

from huggingface_hub import DatasetCard

from ..errors import InputError, NotFoundError
from . import get_spec
from .spec import DatasetSpec, PathLike

# The copy shipped inside an installed wheel, else the repository's hub_cards/ (a checkout).
_PACKAGE = Path(__file__).resolve().parents[1]
CARDS_DIR = next((p for p in (_PACKAGE / "hub_cards", _PACKAGE.parent / "hub_cards") if p.is_dir()), _PACKAGE / "hub_cards")


def read_card_metadata(card: PathLike) -> dict:
    """The YAML front matter of a card (the block between the first two ``---`` lines), as
    :class:`huggingface_hub.DatasetCard` reads it."""
    text = Path(card).read_text(encoding="utf-8")
    parsed = DatasetCard(text)
    if parsed.text == text:  # no front-matter block: the whole card is its text
        raise InputError(f"{card} has no YAML front matter (a block between two '---' lines at the top)")
    return parsed.data.to_dict()


def card_data_files(spec: DatasetSpec, card: PathLike) -> dict[str, str]:
    """Config name -> relative Parquet path, from the card's ``configs:``; checked against ``spec``."""
    configs = read_card_metadata(card).get("configs") or []
    paths = {}
    for entry in configs:
        files = entry.get("data_files") or []
        split = spec.split_of(entry.get("config_name")) if entry.get("config_name") in spec.configs else spec.split
        if len(files) != 1 or files[0].get("split") != split:
            raise InputError(f"{card}: config {entry.get('config_name')!r} must list one data file for split {split!r}")
        paths[entry["config_name"]] = files[0]["path"]
    if set(paths) != set(spec.configs):
        raise InputError(f"{card} lists configs {sorted(paths)}, but dataset {spec.name!r} has {sorted(spec.configs)}")
    return paths


def _parquet_path(spec: DatasetSpec, config: str) -> str:
    """Where a card made from the spec puts a config's Parquet file: ``<config>/<split>.parquet``."""
    return f"{config}/{spec.split_of(config)}.parquet"


def spec_card(spec: DatasetSpec) -> str:
    """The card of a dataset that ``hub_cards/`` has none for, made from its spec: its licence, one Parquet file per
    config at ``<config>/<split>.parquet`` (the first config the default), its description, homepage and citation."""
    from huggingface_hub import DatasetCardData

    configs = [{"config_name": config, **({"default": True} if config == spec.default_config else {}),
                "data_files": [{"split": spec.split_of(config), "path": _parquet_path(spec, config)}]} for config in spec.configs]
    metadata = DatasetCardData(license=spec.license, pretty_name=spec.name, tags=["lmbias"], configs=configs).to_yaml()
    parts = [f"---\n{metadata}\n---\n\n# {spec.name}\n\n{spec.description}\n",
             "Configs: " + "; ".join(f"`{config}`: {about}" for config, about in spec.configs.items()) + ".\n"]
    if spec.homepage:
        parts.append(f"Source: {spec.homepage}\n")
    if spec.citation:
        parts.append(f"## Citation\n\n```bibtex\n{spec.citation.strip()}\n```\n")
    return "\n".join(parts)


def export_dataset(
    name: str,
    out_dir: PathLike,
    *,
    data_dir: PathLike | None = None,
    cards_dir: PathLike | None = None,
) -> dict[str, int]:
    """Write every config of dataset ``name`` as Parquet under ``out_dir`` with its card.

    Args:
        name: a dataset name (see :data:`lmbias.DATASETS`).
        out_dir: the folder to write; existing files of the same names are replaced.
        data_dir: a local data folder for the source files (see :mod:`lmbias.resources`).
        cards_dir: where ``<name>/README.md`` card templates live (default: the repository's ``hub_cards``,
            or the copy inside an installed wheel, and a card made from the spec where it has none).

    Returns:
        config name -> number of rows written.

    Example:
        >>> export_dataset("counterfactual_templates", "out/cf")  # doctest: +SKIP
        {'all': 730, 'country': 100, 'occupation': 290, 'name': 340}
    """
    spec = get_spec(name)
    chosen = cards_dir or os.environ.get("LMBIAS_CARDS_DIR")
    card = Path(chosen or CARDS_DIR) / name / "README.md"
    out = Path(out_dir)
    if not card.is_file() and chosen:
        raise NotFoundError(
            f"dataset card {card} not found; pass cards_dir (--cards DIR) pointing at a folder with {name}/README.md"
        )
    if card.is_file():
        text, paths = card.read_text(encoding="utf-8"), card_data_files(spec, card)
    else:  # none written for it: the one its spec makes
        text, paths = spec_card(spec), {config: _parquet_path(spec, config) for config in spec.configs}
    counts = {}
    for config, relative in paths.items():
        rows = spec.load_rows(config, data_dir)
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        spec.to_dataset(rows, config).to_parquet(str(target))
        counts[config] = len(rows)
    (out / "README.md").write_text(text, encoding="utf-8")
    return counts


def push_dataset(name: str, repo_id: str, *, dry_run: bool = False, out: PathLike | None = None, data_dir: PathLike | None = None,
                 cards_dir: PathLike | None = None, token: str | None = None) -> dict[str, int]:
    """Publish dataset ``name`` (:func:`export_dataset`: Parquet per config and the card with its
    ``configs:``) as the Hub dataset ``repo_id``, so that ``datasets.load_dataset(repo_id, CONFIG)``
    works; with ``dry_run`` the folder is written to ``out`` and nothing is pushed. Returns the row
    counts per config.

    Raises:
        InputError: ``repo_id`` is not ``ORG/NAME``, or a dry run without ``out``.
    """
    import re
    import tempfile

    if not re.fullmatch(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*", repo_id or ""):
        raise InputError(f"--repo-id must be ORG/NAME, got {repo_id!r}")
    if dry_run and out is None:
        raise InputError("--dry-run needs --out DIR: the dataset folder is written there")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(out) if dry_run else Path(scratch)
        counts = export_dataset(name, folder, data_dir=data_dir, cards_dir=cards_dir)
        if not dry_run:
            from huggingface_hub import HfApi

            api = HfApi(token=token)
            api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
            api.upload_folder(repo_id=repo_id, repo_type="dataset", folder_path=str(folder),
                              commit_message=f"lmbias: the {name} dataset")
    return counts
