"""The benchmark datasets, each declared as a :class:`~lmbias.data.spec.DatasetSpec` in its benchmark package's
``data.py`` (``SPEC``, found through the benchmark's entry point) or named under the ``lmbias.datasets`` entry-point
group; loading them by name."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..checks import check_choice
from ..errors import InputError
from ..plugins import Registry
from ..resources import ResourceError, ResourceNotFoundError
from .hub_source import SOURCES
from .spec import DatasetSpec, PathLike, Row

if TYPE_CHECKING:
    import datasets

# Every dataset: each benchmark package's data module's SPEC, found through the benchmark's entry point, and the
# DatasetSpecs named under the ``lmbias.datasets`` entry-point group (lmbias.plugins).
DATASETS = Registry("lmbias.datasets", DatasetSpec, "dataset", beside="SPEC")


def register_dataset(spec: DatasetSpec) -> DatasetSpec:
    """Add a dataset at run time (replacing one of the same name), so that :func:`load_rows`,
    :func:`load_dataset` and ``lmbias datasets`` know it. Returns ``spec``."""
    return DATASETS.register(spec)


def get_spec(name: str) -> DatasetSpec:
    """The :class:`DatasetSpec` called ``name``; an ``UnknownNameError`` (a ValueError) lists the valid names."""
    return DATASETS.get(name)


def expected_rows(name: str, config: str | None = None) -> int:
    """Rows of dataset ``name``'s config ``config`` (default: all) as published: what a full run covers.

    A task marks its run partial against this count, not against the rows its file gave (a short copy
    accepted with ``LMBIAS_VERIFY=0`` must not pass for the whole dataset).

    >>> expected_rows("stereoset"), expected_rows("stereoset", "intrasentence")
    (4229, 2106)
    """
    return get_spec(name).expected_rows(config)


def load_rows(name: str, config: str | None = None, *, data_dir: PathLike | None = None, source: str = "local",
              hub_id: str | None = None) -> list[Row]:
    """Rows (plain dicts with a stable ``id``) of one dataset config; see :func:`load_dataset`."""
    spec = get_spec(name)
    config = spec.check_config(config)
    check_choice(source, SOURCES, "source")
    if hub_id is not None and source != "hub":
        raise InputError("hub_id applies to source='hub'")
    if source == "hub" and spec.hub is None:
        with_hub = [other.name for other in DATASETS.values() if other.hub is not None]
        raise InputError(f"source='hub' reads {', '.join(with_hub)} from the Hub's originals; {name!r} is read from "
                         "its original files (source='local')")
    rows = spec.hub[1](hub_id or spec.hub[0], config) if source == "hub" else spec.load_rows(config, data_dir)
    first_of: dict = {}
    for index, row in enumerate(rows):
        if first_of.setdefault(row["id"], index) != index:
            raise ResourceError(f"{name}: rows {first_of[row['id']]} and {index} have the same id {row['id']!r}; ids must be "
                                "unique (their scores would overwrite each other). Was the data file edited?")
    return rows


def load_dataset(name: str, config: str | None = None, *, data_dir: PathLike | None = None, source: str = "local",
                 hub_id: str | None = None) -> datasets.Dataset:
    """Load a benchmark as a ``datasets.Dataset``.

    Args:
        name: ``"bold"``, ``"stereoset"``, ``"crows_pairs"`` or ``"counterfactual_templates"``.
        config: a config of that dataset (default: ``"all"``); e.g. a BOLD domain such as ``"gender"``,
            a StereoSet task, a counterfactual attribute.
        data_dir: a local data folder (see :mod:`lmbias.resources` for the lookup order).
        source: ``"local"`` (default): the original files, found or downloaded as :mod:`lmbias.resources`
            says; ``"hub"``: the copy the Hub hosts (BOLD as ``AlexaAI/bold``, StereoSet as
            ``McGill-NLP/stereoset``), mapped onto the same rows (:mod:`lmbias.data.hub_source`).
        hub_id: with ``source="hub"``, another Hub dataset or a local folder in the same layout.

    Example:
        >>> import lmbias
        >>> ds = lmbias.load_dataset("counterfactual_templates", "occupation")
        >>> ds.num_rows, ds[0]["prefix"]
        (290, 'I got a new job as an attendant. Starting next week, I will be')
    """
    return get_spec(name).to_dataset(load_rows(name, config, data_dir=data_dir, source=source, hub_id=hub_id), config)


def summarize(*, data_dir: PathLike | None = None) -> list[dict]:
    """One record per dataset config: dataset, config, split, rows and distinct groups.

    The group column is the dataset's ``group_column`` (BOLD sub-group, StereoSet target,
    CrowS-Pairs bias type, counterfactual subgroup). A config whose data file cannot be had here
    has ``rows`` and ``groups`` None and ``missing`` naming the file.

    Raises:
        ResourceNotFoundError: no config of any dataset could be read (the first one's error).
    """
    summary, first_error = [], None
    for spec in DATASETS.values():
        for config in spec.configs:
            record = {"dataset": spec.name, "config": config, "split": spec.split_of(config), "rows": None, "groups": None,
                      "group_column": spec.group_column}
            try:
                rows = spec.load_rows(config, data_dir)
            except ResourceNotFoundError as error:
                first_error = first_error or error
                found = re.match(r"resource '([^']+)'", str(error))
                record["missing"] = found.group(1) if found else str(error).splitlines()[0]
            else:
                record.update(rows=len(rows), groups=len({row[spec.group_column] for row in rows}))
            summary.append(record)
    if first_error is not None and all(record["rows"] is None for record in summary):
        raise first_error
    return summary
