"""A BOLD run as one side of ``lmbias compare``: its saved texts scored again for sentiment, paired by prompt.

A BOLD run keeps its generations, not each text's scores; the comparison scores them again as the run did
(prompt + continuation, anonymised unless the run was not, VADER with BOLD's thresholds) and checks that this
gives the run's own per-domain negative-sentiment gaps before it reads anything from them. Each text's outcome
is "negative sentiment"; the headline is the negative-sentiment gap (the spread of the groups' negative shares,
in percentage points) overall, the mean over the domains as the leaderboard reads it. Resampling draws
prompts (a prompt's samples together). Toxicity and regard would need their classifiers loaded again: the
comparison reads sentiment, which needs none.
"""

from __future__ import annotations

from ...errors import InputError
from ...lm.chat import scored_text
from ...scorers import vader
from ...text import anonymize_texts
from ..paired import Side, saved_generations

GAP = "negative_sentiment_gap"


def _gaps(rows: list, negative: list, indices: list) -> dict:
    """{domain: gap in percentage points (None with fewer than two groups)} over the items at ``indices``."""
    counts: dict = {}
    for index in indices:
        domain, group = rows[index]["domain"], rows[index]["group"]
        total, bad = counts.setdefault(domain, {}).get(group, (0, 0))
        counts[domain][group] = (total + 1, bad + negative[index])
    gaps = {}
    for domain, groups in counts.items():
        shares = [bad / total for total, bad in groups.values() if total]
        gaps[domain] = 100.0 * (max(shares) - min(shares)) if len(shares) >= 2 else None
    return gaps


def bold_side(run, data_dir=None, rows=None) -> Side:
    """A finished BOLD run as one side of a comparison (module docstring); ``rows``: a set scored as BOLD (a user's
    prompts: their rows)."""
    results = run.results
    generations, rows = saved_generations(run, "bold", data_dir, rows)
    texts = [scored_text(row["prompt"], g["continuation"], bool(results["model"].get("chat"))) for row, g in zip(rows, generations)]
    if results["results"]["model"].get("options", {}).get("anonymize", True):
        texts = anonymize_texts(texts, *([row[key] for row in rows] for key in ("domain", "name", "group")))
    negative = [label == "negative" for label in vader.sentiment_labels(vader.vader_compound(texts))]
    recorded = {r["domain"]: r["value"] for r in results.get("records", []) if r["metric"] == GAP and r["source"] == "model"}
    rebuilt = _gaps(rows, negative, list(range(len(rows))))
    if any(abs((rebuilt.get(domain) or 0.0) - (value or 0.0)) > 1e-9 for domain, value in recorded.items()) or not recorded:
        raise InputError(f"{run.path}: its texts scored again for sentiment do not give its own negative-sentiment gaps "
                         f"({recorded} recorded, {rebuilt} now): the run was scored otherwise (another lmbias?); rerun it")
    units: dict = {}
    for index, g in enumerate(generations):
        units.setdefault(g["id"], []).append(index)
    groups = list(units.values())

    def headline(draw: list) -> dict:
        gaps = [gap for gap in _gaps(rows, negative, [i for unit in draw for i in groups[unit]]).values() if gap is not None]
        return {GAP: sum(gaps) / len(gaps) if gaps else None}

    return Side([f"{g['id']}#{g['sample']}" for g in generations], negative, groups, headline,
                "negative sentiment (VADER, as BOLD scores it)")
