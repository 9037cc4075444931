"""What every shape of a user's benchmark shares: its data read once per version of the file, a field read
from a row with a one-line error naming the source, row and column, the run's identity (the declaration's and
the data's digests) and results.json's ``data`` block (the declaration recorded, so that the run can be read
without the file)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

from ...checks import first_repeat
from ...errors import InputError
from .declaration import Declaration, read_data

_READ: dict = {}  # (declaration digest, the data file's size and time) -> (data, rows): read once per version


def loaded(declaration: Declaration, rows_of: Callable):
    """The declaration's data and its rows (``rows_of(declaration, data)``), read again whenever the data file
    changes (a Hub revision cannot)."""
    path = declaration.data.get("path")
    file = declaration.path.parent / str(path) if path else None
    stat = file.stat() if file is not None and file.is_file() else None
    key = (declaration.declaration_sha256, None if stat is None else (stat.st_size, stat.st_mtime_ns))
    if key not in _READ:
        data = read_data(declaration)
        _READ[key] = data, tuple(rows_of(declaration, data))
    return _READ[key]


def check_columns(declaration: Declaration, data, fields) -> None:
    """Every field's column is in the data (one line naming each missing one and the data's columns)."""
    missing = [f"{field} (column {declaration.column(field)!r})" for field in fields
               if declaration.column(field) not in data.records[0]]
    if missing:
        raise InputError(f"{data.source}: no column for {', '.join(missing)}; its columns: {sorted(data.records[0])} "
                         f"(map a field to a column under `columns:` in {declaration.path.name})")


def _found(value) -> str:
    """How an error names a value that is not text: its kind and (the start of) its JSON."""
    import json

    kind = {bool: "a boolean", dict: "an object", list: "a list", float: "a fraction"}.get(type(value), type(value).__name__)
    return f"{json.dumps(value, default=str)[:60]} ({kind})"


def field_value(declaration: Declaration, source: str, number: int, record: dict, field: str, default=None, *,
                index: bool = False):
    """A row's value of ``field`` as stripped text; an integer is read as its digits (with ``index``, kept as an
    integer: an answer's index).

    A missing value (no column, null, an empty text, or NaN: how pandas and Parquet mark one) is ``default``, or
    when the field is required (``default`` None) one line naming the source, row and field. A boolean, a
    fraction, an object or a list is refused in one line too, never read as 1, as "nan" or as its Python repr.
    """
    column = declaration.column(field)
    found = record.get(column)
    missing = found is None or (isinstance(found, str) and not found.strip()) or (isinstance(found, float) and math.isnan(found))
    if missing and default is None:
        raise InputError(f"{source} row {number}: {field} (column {column!r}) is empty"
                         + (" (NaN, a missing value)" if isinstance(found, float) else ""))
    if missing:
        return default
    if isinstance(found, str):
        return found.strip()
    if isinstance(found, int) and not isinstance(found, bool):
        return found if index else str(found)
    raise InputError(f"{source} row {number}: {field} (column {column!r}) is {_found(found)}; expected "
                     + ("0, 1, 2 or an answer's text" if index else "text"))


def check_language(declaration: Declaration, source: str, number: int, record: dict) -> None:
    """A row whose language column names another language than the declaration's is refused."""
    language = field_value(declaration, source, number, record, "language", "")
    if declaration.language and language and language != declaration.language:
        raise InputError(f"{source} row {number}: language is {language!r}, but {declaration.path.name} declares "
                         f"{declaration.language!r} (one language per declaration)")


def check_unique(rows: list, source: str) -> list:
    """``rows`` when every id is given once, else one line naming both rows."""
    repeat = first_repeat((row["id"], row["row"]) for row in rows)
    if repeat is not None:
        raise InputError(f"{source}: id {repeat[0]!r} in row {repeat[1]} and again in row {repeat[2]} (an item given "
                         "twice would be scored twice)")
    return rows


def identity(declaration: Declaration, rows_of: Callable, keys: tuple) -> Callable:
    """An :attr:`~lmbias.benchmarks.declared.Ask.identity`: the protocol, the options ``keys``, and the declaration's
    and the data's digests."""
    def of(settings: dict) -> dict:
        data, _ = loaded(declaration, rows_of)
        return {"protocol": settings["protocol"], **{key: settings[key] for key in keys},
                "declaration": f"{declaration.path} sha256:{declaration.declaration_sha256}",
                "data": f"{data.source} sha256:{data.sha256}"}
    return of


def data_block(declaration: Declaration, rows_of: Callable, unit: str, group: str) -> Callable:
    """A benchmark's ``data``: the source and digests, the declaration recorded, the counts of ``unit`` per ``group``."""
    def of(rows, settings, data_dir) -> dict:
        data, _ = loaded(declaration, rows_of)
        return {"dataset": declaration.name, "source": data.source, "data_sha256": data.sha256,
                "language": declaration.language, "citation": declaration.citation,
                "declaration": {"path": str(declaration.path), "text": declaration.text,
                                "sha256": declaration.declaration_sha256},
                "counts": {unit: len(rows), **Counter(row[group] for row in rows)}}
    return of
