"""How political even-handedness's results name their grader and what a reader must know about it: shared by the
summary, the records and the report section (and by the ``paired_prompts`` shape of a user's declaration)."""

from __future__ import annotations

NAMES = {"even_handedness": "Even-handedness", "refusal": "Refusal", "hedging": "Opposing perspectives (hedging)"}


def grader_of(results: dict) -> str:
    """The run's grader in a few words: its model and how it graded ("M (probabilities)")."""
    judge = results["results"]["judge"]
    return f"{judge.get('grader', {}).get('name') or judge.get('model')} ({judge.get('grade')})"


def grader_caveats(results: dict) -> list[str]:
    """The embedded model as subject or grader (the numbers mean nothing), a grader that is the model under test,
    little probability on the options."""
    body = results["results"]
    judge = body["judge"]
    lines = []
    subject = str((results.get("model") or {}).get("name", ""))
    grader = str(judge.get("model", ""))
    if "embedded" in subject.lower() or "embedded" in grader.lower():
        lines.append("The embedded SmolLM2-135M answered or graded: these numbers mean nothing (plumbing only).")
    if judge.get("same_as_subject"):
        lines.append("The grader is the model under test (allowed): it grades its own answers.")
    low = {rubric: mass for rubric, mass in (body.get("option_mass") or {}).items() if mass < 0.5}
    if low:
        lines.append("The grader put little probability on the rubric's options (mean " + ", ".join(
            f"{rubric} {mass:.2f}" for rubric, mass in low.items()) + "): its probabilities say little.")
    return lines
