"""A user's own benchmark as data: a declaration file (YAML or JSON) that names its shape, its data (a CSV,
JSONL or Parquet file beside it, or a Hub dataset at a pinned revision) and which of the data's columns are
which of the shape's fields. :func:`read_declaration` checks the declaration, reads the data and returns the
rows in the shape's layout with the digests that make a run's identity (a rerun on changed data is refused,
never mixed into the same folder).

Every mistake is one line naming the file and, for the data, the row and the field: a missing or misspelt key,
a column that is not in the data, a value outside what the field takes, an id given twice. What is read with
care: a declaration larger than :data:`MAX_DECLARATION_BYTES` or holding a YAML alias (``*name``, which can
expand a few lines into gigabytes) is refused; a CSV's fields may be as long as the file (Python's csv module
stops at 131,072 characters); a byte-order mark (Excel's "CSV UTF-8") is read as what it is, not as part of
the first column's name; a data path that is a folder or a symbolic link to nothing is said to be so.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import io
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import InputError
from ...files import check_readable_file, read_text
from ..base import HubDataset

FORMAT_VERSION = 1
NAME = re.compile(r"[a-z][a-z0-9_]{1,39}")
REVISION = re.compile(r"[0-9a-f]{40}")
KEYS = {"lmbias", "name", "display_name", "description", "citation", "shape", "language", "data", "columns"}
REQUIRED = ("lmbias", "name", "shape", "data")
DATA_KEYS = {"path", "hub", "revision", "config", "split"}
SUFFIXES = {".csv": "CSV", ".jsonl": "JSONL", ".parquet": "Parquet"}
MAX_DECLARATION_BYTES = 1 << 20  # 1 MiB: a declaration is a few keys; its data live in their own file
BOM = "\ufeff"  # the byte-order mark Excel writes at the start of a "CSV UTF-8" file


@dataclass(frozen=True)
class Declaration:
    """A checked declaration: its file, its fields, its text and digest, ``own``: the keys of its shape's own (a
    ``paired_prompts`` declaration's ``groups``, ``breakdowns``, ``rubrics``) as given; its data is read by
    :func:`read_data`."""

    path: Path
    name: str
    display_name: str
    description: str
    citation: str
    shape: str
    language: str | None
    columns: dict
    data: dict
    declaration_sha256: str
    text: str
    own: dict = field(default_factory=dict)

    def column(self, field: str) -> str:
        """The data column that holds ``field`` (the field's own name unless the declaration maps it)."""
        return self.columns.get(field, field)

    @property
    def hub_dataset(self) -> HubDataset:
        """The dataset the model-index names: the declared Hub dataset and split, else the declaration's name, "test"."""
        return HubDataset(self.data.get("hub", self.name), self.display_name, self.data.get("split", "test"))


def _close(value: str, known) -> str:
    close = difflib.get_close_matches(value, sorted(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _yaml_loader():
    """A ``yaml.SafeLoader`` that refuses aliases (``*name``): nested aliases expand a few hundred bytes into
    gigabytes (a "billion laughs"), and a declaration has no need of them."""
    import yaml  # pyyaml: a dependency of huggingface_hub

    class NoAliases(yaml.SafeLoader):
        def compose_node(self, parent, index):
            if self.check_event(yaml.events.AliasEvent):
                event = self.peek_event()
                raise yaml.YAMLError(f"line {event.start_mark.line + 1}: an alias (*{event.anchor}); a declaration "
                                     "does not use YAML anchors and aliases, write each value out")
            return super().compose_node(parent, index)

    return NoAliases


def _parse(path: Path, text: str) -> dict:
    text = text.removeprefix(BOM)
    try:
        if path.suffix.lower() == ".json":
            value = json.loads(text)
        else:
            import yaml

            value = yaml.load(text, Loader=_yaml_loader())  # a SafeLoader, with aliases refused
    except Exception as error:  # a YAML or JSON syntax error, with its line
        raise InputError(f"{path}: not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'} "
                         f"({' '.join(str(error).split())[:200]})") from None
    if not isinstance(value, dict):
        raise InputError(f"{path}: a benchmark declaration is a mapping of keys ({', '.join(sorted(KEYS))}); "
                         f"found {type(value).__name__}")
    return value


def _csv_records(path: Path) -> list[dict]:
    """The rows of a CSV file with a header line (values as text). A field may be as long as the file (the csv
    module's own limit, 131,072 characters, is raised for the read: a prompt or context can be long); a row with
    more values than the header has columns, or a quote left open, is one line naming the file and line."""
    text = read_text(path, "CSV with a header line").removeprefix(BOM)
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, len(text)))
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        rows = []
        for row in reader:
            if None in row:
                raise InputError(f"{path} line {reader.line_num}: more values than the header has columns")
            rows.append(row)
    except csv.Error as error:
        raise InputError(f"{path} line {reader.line_num}: not CSV ({error})") from None
    finally:
        csv.field_size_limit(limit)
    return rows


def _records(path: Path, where: Path) -> list[dict]:
    """The rows of a CSV (header line; values as text), JSONL (an object per line) or Parquet file."""
    check_readable_file(path, f"{where}: data.path", "a path is read relative to the declaration")
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise InputError(f"{where}: data.path {path.name!r} is not a CSV, JSONL or Parquet file (its name must end in "
                         f"{', '.join(SUFFIXES)})")
    if kind == "CSV":
        return _csv_records(path)
    if kind == "JSONL":
        rows = []
        text = read_text(path, "one JSON object per line").removeprefix(BOM)
        for number, line in enumerate(text.split("\n"), start=1):
            if line.strip():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as error:
                    raise InputError(f"{path} line {number}: not valid JSON ({error.msg})") from None
                if not isinstance(row, dict):
                    raise InputError(f"{path} line {number}: expected a JSON object, found {type(row).__name__}")
                rows.append(row)
        return rows
    import pyarrow.parquet as parquet

    try:
        return parquet.read_table(path).to_pylist()
    except Exception as error:  # pyarrow's errors for a file that is not Parquet
        raise InputError(f"{path}: not a Parquet file ({' '.join(str(error).split())[:160]})") from None


def _hub_records(data: dict, where: Path) -> list[dict]:
    """The rows of a Hub dataset at a pinned revision (a commit id)."""
    import datasets

    try:
        loaded = datasets.load_dataset(data["hub"], data.get("config"), split=data.get("split", "test"),
                                       revision=data["revision"])
    except Exception as error:  # the Hub's and datasets' errors: offline, unknown id, revision or split
        raise InputError(f"{where}: the Hub dataset {data['hub']!r} at {data['revision'][:12]} could not be loaded "
                         f"({' '.join(str(error).split())[:200]})") from None
    return [dict(row) for row in loaded]


@dataclass(frozen=True)
class Data:
    """A declaration's data: its rows (dicts of the data's columns), where they came from and their digest."""

    records: list
    source: str
    sha256: str


def read_declaration(path, shapes, text: str | None = None, own: Mapping[str, tuple] | None = None) -> Declaration:
    """The checked declaration at ``path`` (``text``: its content as recorded by a run, instead of the file's;
    ``shapes``: the shape names this lmbias knows; ``own``: shape -> the keys it takes besides :data:`KEYS`, which
    the shape checks). Its data is not read (:func:`read_data`).

    Raises:
        InputError: one line naming the file and what was expected.
    """
    path = Path(path)
    if text is None:
        check_readable_file(path, "benchmark declaration (a YAML or JSON file)")
        if path.stat().st_size > MAX_DECLARATION_BYTES:  # not read: refused by its size alone
            raise InputError(f"{path}: {path.stat().st_size:,} bytes; a declaration is at most {MAX_DECLARATION_BYTES:,} "
                             "bytes (its data go in the file data.path names)")
    text = read_text(path, "a benchmark declaration (YAML or JSON)") if text is None else text
    given = _parse(path, text)
    own = own or {}
    known = KEYS | {key for keys in own.values() for key in keys}
    for key in sorted(set(given) - known):
        raise InputError(f"{path}: unknown key {key!r}{_close(key, known)}; a declaration has {', '.join(sorted(KEYS))}"
                         + "".join(f"; shape {shape} also {', '.join(keys)}" for shape, keys in own.items()))
    for key in REQUIRED:
        if key not in given:
            raise InputError(f"{path}: the key {key!r} is missing (required: {', '.join(REQUIRED)})")
    if given["lmbias"] != FORMAT_VERSION:
        raise InputError(f"{path}: lmbias: {given['lmbias']!r} is not a declaration format this lmbias reads "
                         f"(it reads {FORMAT_VERSION})")
    if not isinstance(given["name"], str) or not NAME.fullmatch(given["name"]):
        raise InputError(f"{path}: name {given['name']!r} must be 2-40 lowercase letters, digits or _ , starting with a "
                         "letter (it names the run's folder and its results)")
    if given["shape"] not in shapes:
        raise InputError(f"{path}: shape {given['shape']!r} is not one lmbias knows{_close(str(given['shape']), shapes)}; "
                         f"the shapes: {', '.join(shapes)}")
    for key in sorted(set(given) - KEYS - set(own.get(given["shape"], ()))):
        raise InputError(f"{path}: the key {key!r} is for shape "
                         f"{', '.join(shape for shape, keys in own.items() if key in keys)}, not {given['shape']}")
    for key in ("display_name", "description", "citation", "language"):
        if key in given and not isinstance(given[key], str):
            raise InputError(f"{path}: {key} must be text, got {type(given[key]).__name__}")
    columns = given.get("columns") or {}
    if not isinstance(columns, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in columns.items()):
        raise InputError(f"{path}: columns must map the shape's fields to the data's column names (field: column)")
    data = given["data"]
    if not isinstance(data, dict) or set(data) - DATA_KEYS or ("path" in data) == ("hub" in data):
        raise InputError(f"{path}: data must give either path (a CSV, JSONL or Parquet file) or hub (a dataset id, with "
                         f"revision, and optionally config and split); its keys: {', '.join(sorted(DATA_KEYS))}")
    if "hub" in data and (not isinstance(data.get("revision"), str) or not REVISION.fullmatch(data["revision"])):
        raise InputError(f"{path}: data.revision must be the dataset's 40-character commit id (a branch or tag can move, "
                         f"and a rerun would not know); got {data.get('revision')!r}")
    return Declaration(
        path=path.resolve(), name=given["name"], display_name=given.get("display_name") or given["name"],
        description=given.get("description") or f"{given.get('display_name') or given['name']} (a user's benchmark)",
        citation=given.get("citation") or "", shape=given["shape"], language=given.get("language"), columns=columns,
        data=data, declaration_sha256=hashlib.sha256(text.encode()).hexdigest(), text=text,
        own={key: given[key] for key in own.get(given["shape"], ()) if key in given},
    )


def read_data(declaration: Declaration) -> Data:
    """The declaration's data: a file beside it (CSV, JSONL, Parquet) or a Hub dataset at its pinned revision."""
    data = declaration.data
    if "path" in data:
        source = declaration.path.parent / str(data["path"])
        records = _records(source, declaration.path)  # before resolve(): a link to nothing is named as one
        source = source.resolve()
        data_digest = hashlib.sha256(source.read_bytes()).hexdigest()
        source = str(source)
    else:
        records = _hub_records(data, declaration.path)
        source = f"hf://datasets/{data['hub']}@{data['revision']}"
        data_digest = hashlib.sha256(json.dumps(records, sort_keys=True, default=str).encode()).hexdigest()
    if not records:
        raise InputError(f"{source}: the data has no rows")
    return Data(records, source, data_digest)
