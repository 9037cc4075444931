"""The benchmark datasets: one module each, all declared as a :class:`~lmbias.data.spec.DatasetSpec`."""

from __future__ import annotations

import datasets

from ..errors import InputError
from ..resources import ResourceError
from . import bold, counterfactual_templates, crows_pairs, stereoset
from .spec import DatasetSpec, PathLike, Row

DATASETS: dict[str, DatasetSpec] = {
    spec.name: spec for spec in (bold.SPEC, stereoset.SPEC, crows_pairs.SPEC, counterfactual_templates.SPEC)
}


def register_dataset(spec: DatasetSpec) -> DatasetSpec:
    """Add a dataset (replacing one of the same name), so that :func:`load_rows`, :func:`load_dataset`
    and ``lmbias datasets`` know it; a new benchmark's data module calls this. Returns ``spec``."""
    if not isinstance(spec, DatasetSpec):
        raise InputError(f"register_dataset() takes a lmbias.data.spec.DatasetSpec, got {type(spec).__name__}")
    DATASETS[spec.name] = spec
    return spec


def get_spec(name: str) -> DatasetSpec:
    """The :class:`DatasetSpec` called ``name``; ``ValueError`` lists the valid names."""
    if name not in DATASETS:
        raise InputError(f"unknown dataset {name!r}; valid names: {', '.join(DATASETS)}")
    return DATASETS[name]


def load_rows(name: str, config: str | None = None, *, data_dir: PathLike | None = None) -> list[Row]:
    """Rows (plain dicts with a stable ``id``) of one dataset config; see :func:`load_dataset`."""
    spec = get_spec(name)
    rows = spec.load_rows(spec.check_config(config), data_dir)
    first_of: dict = {}
    for index, row in enumerate(rows):
        if first_of.setdefault(row["id"], index) != index:
            raise ResourceError(f"{name}: rows {first_of[row['id']]} and {index} have the same id {row['id']!r}; ids must be "
                                "unique (their scores would overwrite each other). Was the data file edited?")
    return rows


def load_dataset(name: str, config: str | None = None, *, data_dir: PathLike | None = None) -> datasets.Dataset:
    """Load a benchmark as a ``datasets.Dataset``.

    Args:
        name: ``"bold"``, ``"stereoset"``, ``"crows_pairs"`` or ``"counterfactual_templates"``.
        config: a config of that dataset (default: ``"all"``); e.g. a BOLD domain such as ``"gender"``,
            a StereoSet task, a counterfactual attribute.
        data_dir: a local data folder (see :mod:`lmbias.resources` for the lookup order).

    Example:
        >>> import lmbias
        >>> ds = lmbias.load_dataset("counterfactual_templates", "occupation")
        >>> ds.num_rows, ds[0]["prefix"]
        (290, 'I got a new job as an attendant. Starting next week, I will be')
    """
    spec = get_spec(name)
    config = spec.check_config(config)
    return spec.to_dataset(spec.load_rows(config, data_dir))


def summarize(*, data_dir: PathLike | None = None) -> list[dict]:
    """One record per dataset config: dataset, config, split, rows and distinct groups.

    The group column is the dataset's ``group_column`` (BOLD sub-group, StereoSet target,
    CrowS-Pairs bias type, counterfactual subgroup).
    """
    summary = []
    for spec in DATASETS.values():
        for config in spec.configs:
            rows = spec.load_rows(config, data_dir)
            summary.append(
                {
                    "dataset": spec.name,
                    "config": config,
                    "split": spec.split,
                    "rows": len(rows),
                    "groups": len({row[spec.group_column] for row in rows}),
                    "group_column": spec.group_column,
                }
            )
    return summary
