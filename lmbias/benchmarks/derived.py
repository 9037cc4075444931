"""Leaderboard-only records derived from per-domain ones (each says how in its ``derived`` field)."""

from __future__ import annotations


def mean_over_domains(records: list, key_fields: tuple, what: str) -> list:
    """One ``domain == "overall"`` record per group of ``records`` (grouped by ``key_fields``): the mean of
    the defined values over the domains, with ``derived`` naming them and ``over`` listing them.

    >>> r = [{"metric": "m", "domain": d, "value": v} for d, v in (("a", 1.0), ("b", 3.0), ("c", None))]
    >>> [(x["value"], x["derived"]) for x in mean_over_domains(r, ("metric",), "domains")]
    [(2.0, 'mean over the 2 domains measured (a, b)')]
    """
    groups: dict = {}
    for record in records:
        groups.setdefault(tuple(record.get(k) for k in key_fields), []).append(record)
    means = []
    for group in groups.values():
        defined = [r for r in group if r["value"] is not None]
        over = [r["domain"] for r in defined]
        value = sum(r["value"] for r in defined) / len(defined) if defined else None
        means.append({**{k: v for k, v in group[0].items() if k not in ("value", "count", "ci", "domain")},
                      "value": value, "domain": "overall",
                      "derived": f"mean over the {len(over)} {what} measured ({', '.join(over) or 'none'})", "over": over})
    return means
