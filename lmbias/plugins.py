"""Registries of named things (benchmarks, datasets, data files, debiasing methods) that are found the
same way whether lmbias ships them or another package does: through an entry-point group.

lmbias's own are declared in its ``setup.cfg`` (``[options.entry_points]``); a third-party package
declares its own under the same groups. An entry point names one object or a tuple of them (a
catalogue of data files). Nothing is imported until the registry is first read, and a broken
third-party entry is a warning, not an error (it must not take the built-ins down with it).

A benchmark is registered by one line: its package's ``data`` module's ``SPEC`` (its dataset) and ``RESOURCES``
(its data files) are found through its ``lmbias.benchmarks`` entry point (``beside``), so that the
``lmbias.datasets`` and ``lmbias.resources`` groups name only what lives elsewhere (a data module holding two
datasets, the scorers' catalogue).

>>> from lmbias.benchmarks import REGISTRY
>>> REGISTRY.group
'lmbias.benchmarks'
"""

from __future__ import annotations

import importlib
import importlib.util
import warnings
from collections.abc import Iterator, MutableMapping
from importlib.metadata import entry_points

from .errors import InputError, UnknownNameError


class Registry(MutableMapping):
    """Objects of type ``kind`` by their ``name``, from the entry-point group ``group`` and :meth:`register`
    (a mapping: ``registry[name]``, iteration over the names in registration order).

    Args:
        group: the entry-point group (``"lmbias.benchmarks"``).
        kind: the type every registered object has (checked).
        what: what one is called in messages ("benchmark").
        beside: the attribute of each benchmark package's ``data`` module that holds objects of this registry too
            (``"SPEC"``: a benchmark's dataset), read before the group's own entry points (None: none).
    """

    def __init__(self, group: str, kind: type, what: str, beside: str | None = None):
        self.group, self.kind, self.what, self.beside = group, kind, what, beside
        self._objects: dict = {}
        self._loaded = False

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if self.beside is not None:
            for package in benchmark_packages():
                self._add_all(lambda package=package: getattr(importlib.import_module(f"{package}.data"), self.beside, ()),
                              f"{package}.data:{self.beside}")
        for entry in entry_points(group=self.group):
            self._add_all(entry.load, f"{entry.name!r} ({entry.value})")

    def _add_all(self, load, where: str) -> None:
        """Add the object or tuple of objects ``load()`` returns; a failure is a warning naming ``where``."""
        try:
            value = load()
            for item in value if isinstance(value, (tuple, list)) else (value,):
                self._add(item)
        except Exception as error:  # noqa: BLE001
            warnings.warn(f"lmbias: {self.what} entry point {where} was not loaded: {error}", stacklevel=4)

    def _add(self, item):
        if not isinstance(item, self.kind):
            raise InputError(f"a {self.what} must be a {self.kind.__module__}.{self.kind.__name__}, got {type(item).__name__}")
        self._objects[item.name] = item
        return item

    def reload(self) -> None:
        """Read the entry points again (another distribution was installed or put on ``sys.path``),
        dropping what was registered at run time."""
        self._objects.clear()
        self._loaded = False
        self._load()

    def register(self, item):
        """Add ``item`` (replacing one of the same name; the entry points are read first, so that an
        object registered at run time wins) and return it."""
        self._load()
        return self._add(item)

    def unregister(self, name: str) -> None:
        """Remove the object called ``name`` (no error if there is none)."""
        self._load()
        self._objects.pop(name, None)

    def names(self) -> list:
        """The registered names, in the order they were registered."""
        self._load()
        return list(self._objects)

    def get(self, name: str, *default):
        """The object called ``name``; without a default, an :class:`~lmbias.errors.UnknownNameError`
        lists the valid names."""
        self._load()
        if name in self._objects:
            return self._objects[name]
        if default:
            return default[0]
        hint = "" if self._objects else f" (none is registered: is lmbias installed, with its {self.group} entry points?)"
        raise UnknownNameError(f"unknown {self.what} {name!r}; valid: {list(self._objects)}{hint}")

    def __getitem__(self, name: str):
        return self.get(name)

    def __setitem__(self, name: str, item) -> None:
        if getattr(item, "name", None) != name:
            raise InputError(f"a {self.what} is registered under its own name, not {name!r}")
        self.register(item)

    def __delitem__(self, name: str) -> None:
        self._load()
        del self._objects[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())


def benchmark_packages() -> list:
    """The packages that the ``lmbias.benchmarks`` entry points name (``lmbias.benchmarks.bold``), each once, in
    order, that have a ``data`` module (a benchmark that is a single module has none)."""
    found = []
    for entry in entry_points(group="lmbias.benchmarks"):
        try:
            has_data = importlib.util.find_spec(f"{entry.module}.data") is not None
        except Exception:  # noqa: BLE001  (a module, not a package; or one that fails to import: its registry says so)
            has_data = False
        if has_data and entry.module not in found:
            found.append(entry.module)
    return found
