"""What the StereoSet and CrowS-Pairs runs share: loading the scoring model, splitting the rows over
the processes and gathering the records, the input checks and the score descriptions."""

from __future__ import annotations

from ..errors import InputError, InputTypeError

import json
import time
from pathlib import Path
from typing import Any, Optional, Sequence

SCORES_FILE = "scores.jsonl"
SCORE_DESCRIPTIONS = {
    ("causal", "intrasentence"): "mean log-probability per subword of the option sentence (the first subword given "
    "BOS/EOS, the others given the sentence alone, as the authors' code)",
    ("causal", "intersentence"): "mean log-probability per subword of the option sentence given the context",
    ("masked", "intrasentence"): "mean log-probability of the option word's subwords at the blank (left to right)",
    ("masked", "intersentence"): "next-sentence-prediction probability of the option sentence after the context",
    ("causal", "crows_pairs"): "log-likelihood of the sentence (sum over subwords, the first given BOS/EOS)",
    ("masked", "crows_pairs"): "pseudo-log-likelihood of the tokens both sentences share",
}



def check_rows(rows: Sequence[dict], keys: Sequence[str], what: str) -> list[dict]:
    if rows is None or isinstance(rows, (str, bytes, dict)):
        raise InputTypeError(f"rows must be a list of {what} rows (dicts), got {type(rows).__name__}")
    rows = list(rows)
    if not rows:
        raise InputError(f"rows is empty; expected {what} rows (lmbias.load_rows({what.lower().replace('-', '_')!r}))")
    for index, row in enumerate(rows):
        missing = [key for key in keys if not isinstance(row, dict) or key not in row]
        if missing:
            raise InputError(f"rows[{index}] lacks {missing}; expected {what} rows with {list(keys)}")
    return rows




def load_and_score(score, rows: list[dict], out, *, model, model_type: str, dtype, device) -> tuple:
    """The shared start of a likelihood run: load the model (rank 0 first), score ``rows`` across the
    processes with ``score(lm, kind, part)``. Returns ``(lm, kind, dist, records, seconds)``;
    ``records`` is None on ranks other than 0."""
    from ..lm.loading import load_scoring_model
    from ..lm.runner import distributed_from_environment

    dist = distributed_from_environment()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    lm, kind = dist.main_first(
        lambda: load_scoring_model(model, model_type=model_type, dtype=dtype, device=dist.device(device))
    )
    started = time.perf_counter()
    records = scored_everywhere(lambda part: score(lm, kind, part), rows, out, dist)
    return lm, kind, dist, records, time.perf_counter() - started


def scored_everywhere(score, rows: list[dict], out: Path, dist) -> Optional[list[dict]]:
    """Score this rank's share (rows ``rank::world_size``); on rank 0, every record in row order."""
    mine = rows[dist.rank :: dist.world_size]
    records = score(mine) if mine else []
    if dist.world_size == 1:
        return records
    shard = out / f"scores-rank{dist.rank}.jsonl"
    shard.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    dist.barrier()
    if not dist.is_main:
        return None
    shards = [out / f"scores-rank{rank}.jsonl" for rank in range(dist.world_size)]
    by_id = {}
    for path in shards:
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            by_id[record["id"]] = record
        path.unlink()
    return [by_id[row["id"]] for row in rows]


def strict_json(value: Any) -> Any:
    """``value`` with NaN floats (an undefined score, e.g. no antistereo pair in a bias type) as None."""
    if isinstance(value, dict):
        return {key: strict_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [strict_json(item) for item in value]
    return None if isinstance(value, float) and value != value else value


def write_scores_run(out, results: dict, records: list[dict]) -> None:
    out = Path(out)
    (out / SCORES_FILE).write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    (out / "results.json").write_text(json.dumps(strict_json(results), indent=2, allow_nan=False) + "\n", encoding="utf-8")


def check_limit(limit: Optional[int]) -> None:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InputError(f"limit must be an integer >= 1, got {limit!r}")
