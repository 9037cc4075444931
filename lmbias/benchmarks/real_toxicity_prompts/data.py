"""RealToxicityPrompts (Gehman et al. 2020): ``allenai/real-toxicity-prompts`` on the Hub (Apache-2.0) at a pinned
commit, its one file ``prompts.jsonl`` (99,442 prompts, split ``train``).

A record: ``filename``, ``begin``, ``end`` (where the sentence is in OpenWebText), ``challenging`` (a bool: the
prompt made every model the paper tested toxic), ``prompt`` and ``continuation`` (each ``text`` and the
Perspective API scores of 2020: ``toxicity``, ``severe_toxicity``, ... , any of them null). A record is refused
with its file and line when the prompt has no text, ``challenging`` is not a bool or a score is outside [0, 1],
and when its sentence (``filename``, ``begin``, ``end``) was given before: a prompt given twice would be
scored twice.
"""

from __future__ import annotations

from ...data.spec import DatasetSpec
from ...errors import InputError
from ..hub_file import hub_file, jsonl_records

REPO = "allenai/real-toxicity-prompts"
REVISION = "d3a6507562064c4f37cdf267bdc2faa7b0873173"  # "Upload prompts.jsonl"; later commits change only the card
FOLDER = "real_toxicity_prompts"
PROMPTS = 99_442
CITATION = """@inproceedings{gehman2020realtoxicityprompts,
  title     = {{RealToxicityPrompts}: Evaluating Neural Toxic Degeneration in Language Models},
  author    = {Gehman, Samuel and Gururangan, Suchin and Sap, Maarten and Choi, Yejin and Smith, Noah A.},
  booktitle = {Findings of the Association for Computational Linguistics: EMNLP 2020},
  year      = {2020},
  url       = {https://aclanthology.org/2020.findings-emnlp.301}
}"""


def _score(value, where: str, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise InputError(f"{where}: prompt.{name} {value!r} is not a score in [0, 1]")
    return float(value)


def read_prompts(data_dir=None) -> tuple[list[dict], str]:
    """The prompts, checked, in file order, and where they were read from.

    Each row: ``id`` (the line number in the file), ``prompt`` (its text), ``challenging``, ``prompt_toxicity``
    (Perspective's, None where the file has none).
    """
    path, source = hub_file(REPO, "prompts.jsonl", REVISION, folder=FOLDER, data_dir=data_dir)
    rows, first_line = [], {}
    for number, where, record in jsonl_records(path, source):
        prompt = record.get("prompt") if isinstance(record, dict) else None
        if not isinstance(prompt, dict) or not isinstance(prompt.get("text"), str) or not prompt["text"].strip():
            raise InputError(f"{where}: no prompt text; expected RealToxicityPrompts' layout "
                             '{"prompt": {"text": ..., "toxicity": ...}, "challenging": ...}')
        if not isinstance(record.get("challenging"), bool):
            raise InputError(f"{where}: challenging {record.get('challenging')!r} is not true or false")
        sentence = tuple(record.get(key) for key in ("filename", "begin", "end"))
        if not isinstance(sentence[0], str) or not all(isinstance(k, int) and not isinstance(k, bool) for k in sentence[1:]):
            raise InputError(f"{where}: filename {sentence[0]!r}, begin {sentence[1]!r}, end {sentence[2]!r}; expected the "
                             "OpenWebText file's name and the sentence's character offsets in it (integers)")
        if first_line.setdefault(sentence, number) != number:
            raise InputError(f"{where}: the prompt of {sentence[0]} [{sentence[1]}:{sentence[2]}] was given on line "
                             f"{first_line[sentence]} already (each prompt once: one given twice would be scored twice)")
        rows.append({"id": str(number), "prompt": prompt["text"], "challenging": record["challenging"],
                     "prompt_toxicity": _score(prompt.get("toxicity"), where, "toxicity")})
    if not rows:
        raise InputError(f"{source}: no prompts")
    return rows, source


COLUMN_TYPES = {"id": "string", "prompt": "string",
                "challenging": "bool", "prompt_toxicity": "float64"}
SPEC = DatasetSpec(
    name="real_toxicity_prompts", configs={"prompts": "the 99,442 prompts, with their challenging flag and Perspective "
                                                      "toxicity"},
    split="train", columns=COLUMN_TYPES, load_rows=lambda config, data_dir: read_prompts(data_dir)[0], group_column="challenging",
    description=("RealToxicityPrompts: 99,442 sentence beginnings from OpenWebText, with the Perspective API toxicity "
                 "of 2020 and the flag of the challenging ones."),
    citation=CITATION, license="apache-2.0", homepage=f"https://huggingface.co/datasets/{REPO}", sizes={"prompts": PROMPTS},
)
