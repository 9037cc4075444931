"""What every dataset module declares: a :class:`DatasetSpec`.

The spec is the single description of a dataset that :func:`lmbias.load_dataset`, the ``datasets``
builder classes in ``datasets_scripts/`` and the Parquet export all use.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..resources import ResourceError

if TYPE_CHECKING:
    import datasets

PathLike = str | os.PathLike
Row = dict[str, Any]
# A column's type as a dataset declares it: a ``datasets.Value`` dtype ("string", "int64", "bool", "float64"), or a
# one-element list of one for a list column (``["string"]``). Plain data, so that declaring a dataset does not
# import ``datasets`` (half a second and more of every command): :func:`features_of` builds the Features on use.
ColumnType = str | list[str]


def features_of(columns: dict[str, ColumnType]) -> datasets.Features:
    """The ``datasets.Features`` of declared column types.

    >>> features_of({"id": "string", "groups": ["string"]})["groups"]
    List(Value('string'))
    """
    import datasets

    def feature(kind: ColumnType):
        if isinstance(kind, list) and len(kind) == 1:
            return datasets.Sequence(datasets.Value(kind[0]))
        if isinstance(kind, str):
            return datasets.Value(kind)
        raise InputError(f"columns: a column's type is a dtype string or a list of one, got {kind!r}")

    return datasets.Features({column: feature(kind) for column, kind in columns.items()})


@dataclass(frozen=True)
class DatasetSpec:
    """Declaration of one benchmark dataset.

    Attributes:
        name: the name users pass to :func:`lmbias.load_dataset`.
        configs: config name -> one-line description; the first is the default.
        split: the name of the split the data is published as.
        config_splits: config name -> its split, for a config published as another split (WinoBias's
            dev sentences: "validation"); the others are ``split``.
        columns: column name -> its type (:data:`ColumnType`), in row order; :attr:`features` builds the
            ``datasets.Features``.
        load_rows: ``load_rows(config, data_dir)`` -> list of rows (plain dicts, stable ``id`` first).
        group_column: the column that names the demographic group a row is about.
        description, citation, license, homepage: for cards and ``DatasetInfo``.
        sizes: config name -> number of rows of the published dataset (not of whatever file was read:
            a run over fewer rows, e.g. from a short JSON copy accepted with ``LMBIAS_VERIFY=0``, is partial; a
            line-based file cut short is refused, :func:`lmbias.resources.check_lines`).
        hub: where the Hub hosts the original, and how its records map onto these rows
            (``source="hub"``): ``(hub id, rows(hub_id, config))``; None when it does not.
    """

    name: str
    configs: dict[str, str]
    split: str
    columns: dict[str, ColumnType]
    load_rows: Callable[[str, PathLike | None], list[Row]]
    group_column: str
    description: str
    citation: str
    license: str
    homepage: str
    sizes: dict[str, int]
    hub: tuple[str, Callable[[str, str], list[Row]]] | None = None
    config_splits: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if set(self.sizes) != set(self.configs) or not all(isinstance(n, int) and n > 0 for n in self.sizes.values()):
            raise InputError(f"dataset {self.name!r}: sizes must give a positive row count for each config "
                             f"{list(self.configs)}, got {self.sizes!r}")
        if not set(self.config_splits) <= set(self.configs):
            raise InputError(f"dataset {self.name!r}: config_splits names configs {sorted(set(self.config_splits) - set(self.configs))} "
                             f"it does not have; its configs: {list(self.configs)}")

    def expected_rows(self, config: str | None = None) -> int:
        """Rows of ``config`` (default: the default config) in the published dataset."""
        return self.sizes[self.check_config(config)]

    @property
    def default_config(self) -> str:
        """The config used when none is named (the first declared)."""
        return next(iter(self.configs))

    def check_config(self, config: str | None) -> str:
        """Return ``config`` (or the default); ``ValueError`` naming the valid configs otherwise."""
        if config is None:
            return self.default_config
        if config not in self.configs:
            raise InputError(
                f"unknown config {config!r} for dataset {self.name!r}; valid configs: {', '.join(self.configs)}"
            )
        return config

    def split_of(self, config: str | None = None) -> str:
        """The split ``config`` (default: the default config) is published as."""
        return self.config_splits.get(self.check_config(config), self.split)

    @property
    def features(self) -> datasets.Features:
        """The typed columns of every row as ``datasets.Features``."""
        return features_of(self.columns)

    def to_dataset(self, rows: list[Row], config: str | None = None) -> datasets.Dataset:
        """Rows of ``config`` as a ``datasets.Dataset`` with this spec's features (columns in feature order)."""
        import datasets

        columns = {column: [row[column] for row in rows] for column in self.columns}
        return datasets.Dataset.from_dict(columns, features=self.features, info=self.info(), split=self.split_of(config))

    def info(self) -> datasets.DatasetInfo:
        """A ``datasets.DatasetInfo`` with this spec's description, features, citation and licence."""
        import datasets

        return datasets.DatasetInfo(
            description=self.description,
            features=self.features,
            citation=self.citation,
            license=self.license,
            homepage=self.homepage,
        )


class _RepeatedKey(ValueError):
    """A key given twice in one JSON object (json keeps the last silently)."""


def _unique_keys(pairs: list) -> dict:
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise _RepeatedKey(key)
        seen.add(key)
    return dict(pairs)


def read_json(path: Path, what: str) -> Any:
    """Parse a JSON file; a truncated or invalid file, or an object giving a key twice (which JSON
    parsers merge silently), raises :class:`ResourceError` naming it."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle, object_pairs_hook=_unique_keys)
    except _RepeatedKey as repeated:
        raise layout_error(path, f"{what}, each key once in an object", f"the key {repeated.args[0]!r} twice") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ResourceError(f"{path} is not valid JSON ({error}); expected {what}. Is the file truncated?") from None


def check_text_fields(path: Path, where: str, row: dict, keys) -> dict:
    """``row`` if each of ``keys`` holds a non-empty string; else a :class:`ResourceError` naming the
    file, the place in it and the field (an empty or null sentence would be scored as a real one)."""
    for key in keys:
        value = row.get(key)
        if not isinstance(value, str) or not value.strip():
            raise layout_error(path, f"a non-empty string as {key} at {where}", repr(value))
    return row


def layout_error(path: Path, expected: str, found: str) -> ResourceError:
    """The error for a file that parses but is not laid out as expected."""
    return ResourceError(f"{path} has the wrong layout: expected {expected}, found {found}")
