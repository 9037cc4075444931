"""CrowS-Pairs (Nangia et al. 2020): 1,508 sentence pairs, one more and one less stereotyping."""

from __future__ import annotations

import csv
import io

from ...checks import first_repeat
from ...data.spec import DatasetSpec, PathLike, Row, check_text_fields, layout_error
from ...files import read_text
from ...resources import GITHUB_RAW, Resource, ResourceError, locate

BIAS_TYPES = (
    "race-color",
    "gender",
    "socioeconomic",
    "nationality",
    "religion",
    "age",
    "sexual-orientation",
    "physical-appearance",
    "disability",
)
DIRECTIONS = ("stereo", "antistereo")
COLUMNS = ("sent_more", "sent_less", "stereo_antistereo", "bias_type")

COLUMN_TYPES = {
    "id": "string",
    "sent_more": "string",
    "sent_less": "string",
    "stereo_antistereo": "string",
    "bias_type": "string",
}


def load_rows(config: str = "all", data_dir: PathLike | None = None) -> list[Row]:
    """CrowS-Pairs rows; ``id`` is the row index of the original CSV (``"0"`` … ``"1507"``)."""
    path = locate("crows_pairs", data_dir)
    rows, lines = [], []
    reader = csv.DictReader(io.StringIO(read_text(path, f"a CSV with columns {list(COLUMNS)}"), newline=""))
    header = reader.fieldnames or []
    if not all(column in header for column in COLUMNS):
        raise layout_error(path, f"a CSV with columns {list(COLUMNS)}", f"columns {header}")
    index_column = header[0]
    try:
        for number, record in enumerate(reader, start=2):
            if record["stereo_antistereo"] not in DIRECTIONS or record["bias_type"] not in BIAS_TYPES:
                raise layout_error(
                    path,
                    f"on line {number} stereo_antistereo in {DIRECTIONS} and bias_type in {BIAS_TYPES}",
                    f"{record['stereo_antistereo']!r}, {record['bias_type']!r} (truncated file?)",
                )
            row = {"id": str(record[index_column] or number - 2), **{column: record[column] for column in COLUMNS}}
            rows.append(check_text_fields(path, f"line {number}", row, ("sent_more", "sent_less")))
            lines.append(number)
    except csv.Error as error:
        raise ResourceError(f"{path} is not a valid CSV file ({error}); is it truncated?") from None
    if not rows:
        raise layout_error(path, f"sentence pairs under the header {header}", "no rows")
    repeat = first_repeat((row["id"], number) for row, number in zip(rows, lines))
    if repeat is not None:
        raise layout_error(path, f"each pair's id (the {index_column!r} column) once (a pair given twice would be scored "
                                 "twice)", f"id {repeat[0]!r} on line {repeat[1]} and again on line {repeat[2]}")
    return rows


SPEC = DatasetSpec(
    name="crows_pairs",
    configs={"all": "all nine bias types"},
    split="test",
    columns=COLUMN_TYPES,
    load_rows=load_rows,
    group_column="bias_type",
    description=(
        "CrowS-Pairs: 1,508 minimal pairs of sentences, one expressing a stereotype about a "
        "disadvantaged group (or an anti-stereotype) and one about a contrasting group, across "
        "nine bias types."
    ),
    citation="""@inproceedings{nangia2020crows,
  title     = {{CrowS-Pairs}: A Challenge Dataset for Measuring Social Biases in Masked Language Models},
  author    = {Nangia, Nikita and Vania, Clara and Bhalerao, Rasika and Bowman, Samuel R.},
  booktitle = {Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)},
  pages     = {1953--1967},
  year      = {2020},
  doi       = {10.18653/v1/2020.emnlp-main.154}
}""",
    license="cc-by-sa-4.0",
    homepage="https://github.com/nyu-mll/crows-pairs",
    sizes={"all": 1_508},
)


# The data files (lmbias.resources), named under the lmbias.resources entry-point group.
CROWS_PAIRS_COMMIT = "8aaac11c485473159ec9328a65253a5be9a479dc"

RESOURCES = (
    Resource(
        name="crows_pairs",
        path="crows_pairs/crows_pairs_anonymized.csv",
        url=f"{GITHUB_RAW}/nyu-mll/crows-pairs/{CROWS_PAIRS_COMMIT}/data/crows_pairs_anonymized.csv",
        sha256="dfb36986ce0502abbaf7055b9176da3d08d48e07df1251991b5dfbcbceab9d0c",
        description="CrowS-Pairs (Nangia et al. 2020)",
        lines=1_510,  # a header and 1,508 pairs, one of them quoting a line end
    ),
)
