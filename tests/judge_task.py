"""A declared benchmark on the judge protocol, for the judge's tests (tests/test_judge.py) and the subprocesses
they kill: three prompts answered by the model, each response graded with a lettered rubric (A-C) and a digit
rubric (1-5); the measure returns the grades as they are."""

from lmbias.benchmarks.base import Benchmark, HubDataset, MetricSpec
from lmbias.benchmarks.declared import Ask, Option, run_task
from lmbias.protocols import JUDGE, judge

HELPFUL = judge.Rubric("helpful", "RUBRIC helpful\nQ: {prompt}\nA: {response}\nOptions:\n(A) yes\n(B) partly\n(C) no",
                       ("A", "B", "C"))
SCALE = judge.Rubric("scale", "RUBRIC scale\nQ: {prompt}\nA: {response}\nOptions:\n(1) none\n(2) little\n(3) some\n"
                              "(4) much\n(5) all", ("1", "2", "3", "4", "5"))
PROMPTS = {"p1": "Name a colour.", "p2": "Name a fruit.", "p3": "Name a city."}


def request(rows, settings):
    """Each row's prompt answered, each response graded with both rubrics (keys ``<id>:<rubric>``)."""
    def gradings(responses):
        return [judge.Grading(f"{row['id']}:{rubric.name}", rubric, {"prompt": row["prompt"], "response": responses[row["id"]]})
                for row in rows for rubric in (HELPFUL, SCALE)]

    return judge.Judged([row["id"] for row in rows], [row["prompt"] for row in rows], gradings, judge.judge_from(settings),
                        settings=judge.response_settings(settings))


TASK = Benchmark(
    name="judged_demo", display_name="Judged demo", description="three prompts graded by a judge (the judge's tests)",
    dataset="judged_demo", hub_dataset=HubDataset("none/judged_demo", "Judged demo", "test"),
    metrics=(MetricSpec("prompts", "Prompts", "", 0.0, None, 0, "prompts graded"),),
    records=lambda results: [], summary=lambda results, out: "", report_section=lambda *args: [],
    options=tuple(Option(**spec) for spec in judge.OPTIONS),
    protocols=(Ask(JUDGE, "responses graded by a judge", request),),
    items=lambda settings, data_dir: [{"id": key, "prompt": prompt} for key, prompt in PROMPTS.items()],
    measure=lambda graded, rows, settings, data_dir: {"grades": graded.grades, "counts": graded.counts},
    data=lambda rows, settings, data_dir: {"counts": {"prompts": len(rows)}},
    counted=lambda rows, settings: {"prompts": (len(rows), len(PROMPTS))},
)


def run(out, model=None, **options):
    """:func:`run_task` of :data:`TASK` (batch size 1, no progress bar)."""
    return run_task(TASK, model=model, out=out, progress=False, batch_size=1, **options)
