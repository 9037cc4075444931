"""Plain-text formats of what lmbias prints: Markdown tables, one-line messages."""

from __future__ import annotations

from collections.abc import Sequence


def markdown_table(records: Sequence[dict], columns: Sequence[str]) -> str:
    """Records as a GitHub-flavoured Markdown table; integers get thousands separators."""

    def cell(value) -> str:
        return f"{value:,}" if isinstance(value, int) else str(value)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(record[c]) for c in columns) + " |" for record in records]
    return "\n".join(lines)


def first_line(text, limit: int | None = None) -> str:
    """The first line of a message (a skip reason, an error); cut to ``limit`` characters with "…"
    when a limit is given (skip reasons are never cut: they end with their fix).

    >>> first_line("cannot load the classifier\\nCause: offline", limit=14)
    'cannot load t…'
    """
    text = str(text).strip()
    line = text.splitlines()[0] if text else ""
    return line if limit is None or len(line) <= limit else line[: limit - 1] + "…"


def cell(value, interval=None, digits: int = 1) -> str:
    """A number for a terminal table ("n/a" when absent or NaN), with its interval when given.

    >>> cell(12.345, [10.0, 14.5]), cell(None), cell(float("nan"))
    ('12.3 [10.0, 14.5]', 'n/a', 'n/a')
    """
    text = "n/a" if value is None or value != value else f"{value:.{digits}f}"
    return text + (f" [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]" if interval else "")
