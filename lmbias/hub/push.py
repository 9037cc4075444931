"""``lmbias push``: publish finished runs to a model repo on the Hugging Face Hub (docs/hub.md).

A push is one commit to the model repo holding ``README.md`` (the existing card, or a new one, with
the runs' results merged into its model-index) and ``.eval_results/<benchmark>.yaml`` (for a run
whose data came from a Hub dataset: :mod:`lmbias.hub.eval_results`); with
``--results-dataset`` it is preceded by one commit of each run's ``results.json`` to a dataset repo at
``runs/<slug>/<benchmark>/results.json`` (slug: the model repo id with ``/`` -> ``__``). ``--dry-run``
writes the same files to a local folder and contacts nobody.

The token (``HF_TOKEN`` or the user's login, via :func:`huggingface_hub.get_token`) goes to
:class:`huggingface_hub.HfApi` only: it is never printed, logged or written, and is scrubbed from
the Hub's error messages.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..credentials import strip_credentials
from ..errors import InputError, LmbiasError
from ..files import output_folder, write_atomic
from ..results import Run, data_source, first_line, load_runs, model_of
from . import eval_results as eval_yaml
from .model_index import NOT_HEADLINE, eval_results_of, merged_card, model_records

HUB = "https://huggingface.co"


class HubError(LmbiasError, ValueError):
    """The Hub could not be reached, refused the push, or holds something lmbias cannot merge into."""


@dataclass
class Plan:
    """What a push uploads: ``files`` to the model repo, ``dataset_files`` to the results dataset."""

    repo_id: str
    files: dict
    results_dataset: str | None = None
    dataset_files: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)


def check_repo_id(repo_id, option: str = "--repo-id") -> str:
    """``repo_id`` if it is a valid ``ORG/NAME`` Hub id, else a ValueError naming ``option``."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    expected = f"{option} {repo_id!r} is not a Hub repo id: expected ORG/NAME (e.g. my-org/my-model)"
    if not isinstance(repo_id, str) or repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise InputError(f"{expected}, an owner and a name separated by one '/'")
    try:
        validate_repo_id(repo_id)
    except HFValidationError as error:
        raise InputError(f"{expected}, made of letters, digits, '-', '_' and '.' ({error})") from None
    return repo_id


def slug(repo_id: str) -> str:
    """The folder name of a model in the results dataset: its repo id with ``/`` -> ``__``."""
    return repo_id.replace("/", "__")


def dataset_path(repo_id: str, benchmark: str) -> str:
    """Where a run's results.json goes in the results dataset."""
    return f"runs/{slug(repo_id)}/{benchmark}/results.json"


def run_slot(run: Run) -> str:
    """A run's benchmark, with its protocol when it is not the papers' ("crows_pairs-chat-generative"):
    where its results.json goes in the results dataset, so runs of one benchmark under two protocols
    do not overwrite each other."""
    tags = run.model[len(model_of(run)):].strip(" []")
    return f"{run.benchmark}-{slug(tags)}" if tags else run.benchmark


def finished_runs(run_dirs: Sequence, *, allow_partial: bool = False) -> list:
    """:func:`lmbias.results.load_runs`, refusing unfinished runs, two runs of one benchmark (and protocol) and, unless
    ``allow_partial``, runs that cover less than the paper's full setting."""
    runs = load_runs(run_dirs)
    unfinished = [run for run in runs if run.results is None]
    if unfinished:
        details = "; ".join(f"{run.path}: {', '.join(run.missing)}" for run in unfinished)
        raise InputError(f"cannot push an unfinished run: {details}")
    partial = [run for run in runs if run.partial]
    if partial and not allow_partial:
        details = "; ".join(f"{run.path}: " + ", ".join(f"{what} {how}" for what, how in run.partial.items()) for run in partial)
        raise InputError(f"these runs are partial ({details}); rerun them in full, or pass --allow-partial to publish them "
                         "labelled as partial")
    seen: dict = {}
    for run in runs:  # one run per benchmark and protocol: a chat or generative run's results are keyed apart
        protocol = run.model[len(model_of(run)):]
        if (run.benchmark, protocol) in seen:
            raise InputError(f"two {run.benchmark} runs ({seen[run.benchmark, protocol]} and {run.path}): push one run per "
                             "benchmark (and protocol)")
        seen[run.benchmark, protocol] = run.path
    return runs


def plan(runs: list, repo_id: str, results_dataset: str | None = None, card=None, existing: dict | None = None) -> Plan:
    """The files of a push: ``card`` (None: a new one) with the runs' model-index results merged in,
    one ``.eval_results/<benchmark>.yaml`` per run merged with ``existing`` ({path: entries}), and
    the results dataset's files when ``results_dataset`` is given."""
    existing = existing or {}
    files, results, dataset_files, notes = {}, [], {}, []
    for run in runs:
        source = None
        if results_dataset:
            # the file as recorded, URLs without credentials (a run written before lmbias refused them may hold some)
            dataset_files[dataset_path(repo_id, run_slot(run))] = strip_credentials(
                (run.path / "results.json").read_text(encoding="utf-8")).encode()
            source = f"{HUB}/datasets/{results_dataset}/blob/main/{dataset_path(repo_id, run_slot(run))}"
        results += eval_results_of(run, source)
        name = f".eval_results/{run.benchmark}.yaml"
        new = eval_yaml.entries_of(run, source)
        if new:  # merged with what the card has, or what an earlier run of this push (another protocol) wrote
            previous = eval_yaml.loads(files[name].decode()) if name in files else existing.get(name, [])
            files[name] = eval_yaml.dumps(eval_yaml.merge_entries(previous, new)).encode()
        else:
            notes.append(f"{run.benchmark}: no {name}: that format names a Hub benchmark dataset, and this run read its "
                         f"data from {data_source(run)['text']}, not from the Hub (the model-index in README.md records "
                         "that source)")
        notes += _left_out(run)
    card = merged_card(card, repo_id, results, eval_results_written=bool(files))
    return Plan(repo_id, {"README.md": str(card).encode(), **files}, results_dataset, dataset_files, notes)


def _left_out(run: Run) -> list:
    left_out = model_records(run)[1]
    baseline = [r["source"] for r, _ in left_out if r["source"] != "model"]
    notes = [f"{run.benchmark}: {len(baseline)} {baseline[0].capitalize()}-baseline results left out (a reference, not the model)"
             ] if baseline else []
    further = sum(why == NOT_HEADLINE for _, why in left_out)
    notes += [f"{run.benchmark}: {further} further records (other breakdowns of its measures) are in its results.json, not "
              "the card: the card holds the headline measures per domain"] if further else []
    notes += [f"{run.benchmark}: {r['metric']}/{r['domain']} left out: {why}" for r, why in left_out
              if r["source"] == "model" and why != NOT_HEADLINE]
    return notes + [f"{run.benchmark}: not measured: {first_line(line)}" for line in run.missing]


def write_plan(push: Plan, out) -> list:
    """Write a plan's files under ``out`` (the results dataset's under ``out/results-dataset``); each
    file is written whole (:func:`lmbias.files.write_atomic`). Returns the paths written."""
    out = Path(out)
    targets = {out / path: data for path, data in push.files.items()}
    targets.update({out / "results-dataset" / path: data for path, data in push.dataset_files.items()})
    for path, data in targets.items():
        write_atomic(path, data)
    return list(targets)


def _connection_errors() -> tuple:
    errors = [ConnectionError, TimeoutError]
    for module in ("httpx2", "httpx"):
        try:
            errors.append(__import__(module).TransportError)
        except (ImportError, AttributeError):
            pass
    return tuple(errors)


@contextmanager
def hub_errors(repo: str, token: str | None):
    """Turn the Hub's and the network's errors into a one-line :class:`HubError` without the token."""
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

    def clean(error) -> str:
        text = first_line(error, 10**6) or type(error).__name__
        return text.replace(token, "***") if token else text

    try:
        yield
    except RepositoryNotFoundError:
        raise HubError(f"{repo} was not found on the Hugging Face Hub, or this token cannot see it: create it first "
                       "(HfApi().create_repo) or check --repo-id; nothing was uploaded") from None
    except HfHubHTTPError as error:
        status = getattr(error.response, "status_code", None)
        if status in (401, 403):
            raise HubError(f"not allowed to write to {repo} (HTTP {status}): log in with `hf auth login` or set HF_TOKEN "
                           "to a token with write access") from None
        raise HubError(f"the Hugging Face Hub refused the request for {repo}: {clean(error)}") from None
    except _connection_errors() as error:
        raise HubError(f"cannot reach the Hugging Face Hub ({clean(error)}); nothing was uploaded: check the connection, "
                       "or use --dry-run to write the files locally") from None


def fetch_existing(api, repo_id: str, benchmarks: Sequence[str]) -> tuple:
    """The model repo's card (None if it has no README.md) and its lmbias ``.eval_results`` files' entries."""
    from huggingface_hub import ModelCard

    files = set(api.list_repo_files(repo_id))
    card = None
    if "README.md" in files:
        try:
            card = ModelCard.load(api.hf_hub_download(repo_id, "README.md"))
        except ValueError as error:
            raise HubError(f"the model card of {repo_id} cannot be merged into: {error}") from None
    existing = {}
    for name in (f".eval_results/{benchmark}.yaml" for benchmark in benchmarks):
        if name in files:
            existing[name] = eval_yaml.loads(Path(api.hf_hub_download(repo_id, name)).read_text(encoding="utf-8"))
    return card, existing


def upload(runs: list, repo_id: str, results_dataset: str | None = None) -> tuple:
    """A real push: read the repo's card and files, merge, commit (results dataset first, so that the
    card never links to a missing file). Returns (plan, commit URLs)."""
    from huggingface_hub import CommitOperationAdd, HfApi, constants, get_token

    if constants.HF_HUB_OFFLINE or os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE"):
        raise HubError("cannot reach the Hugging Face Hub: offline mode is on (HF_HUB_OFFLINE); nothing was uploaded: "
                       "unset it, or use --dry-run to write the files locally")
    token = get_token()
    if not token:
        raise HubError("no Hugging Face token: set HF_TOKEN or log in with `hf auth login` (or use --dry-run)")
    api = HfApi(token=token)
    with hub_errors(repo_id, token):
        card, existing = fetch_existing(api, repo_id, [run.benchmark for run in runs])
    result = plan(runs, repo_id, results_dataset, card, existing)
    urls = []
    benchmarks = ", ".join(run.benchmark for run in runs)
    if results_dataset:
        with hub_errors(results_dataset, token):
            api.create_repo(results_dataset, repo_type="dataset", exist_ok=True)
            operations = [CommitOperationAdd(path, data) for path, data in result.dataset_files.items()]
            urls.append(str(api.create_commit(results_dataset, operations, repo_type="dataset",
                                              commit_message=f"lmbias: results of {repo_id} ({benchmarks})")))
    try:
        with hub_errors(repo_id, token):
            operations = [CommitOperationAdd(path, data) for path, data in result.files.items()]
            urls.append(str(api.create_commit(repo_id, operations, commit_message=f"lmbias: bias evaluation results ({benchmarks})")))
    except HubError as error:
        if urls:
            raise HubError(f"{error} (the results dataset was already updated: {urls[0]}; push again to update the card)") from None
        raise
    return result, urls


def push(run_dirs: Sequence, repo_id: str, *, results_dataset: str | None = None, dry_run: bool = False,
         out=None, allow_partial: bool = False, echo: Callable = print) -> Plan:
    """Publish finished runs to ``repo_id`` (see the module docstring); ``dry_run`` writes the files to
    ``out`` (default ``hub-dry-run/<slug>``) instead. Prints what was (or would be) uploaded."""
    check_repo_id(repo_id)
    if results_dataset is not None:
        check_repo_id(results_dataset, "--results-dataset")
    if out is not None and not dry_run:
        raise InputError("--out is only used with --dry-run")
    runs = finished_runs(run_dirs, allow_partial=allow_partial)
    models = sorted({model_of(run) for run in runs})  # a chat run of M is a run of M
    if len(models) > 1:
        print(f"lmbias: warning: the runs are of different models: {models}", file=sys.stderr)
    if dry_run:
        out = Path(out or Path("hub-dry-run") / slug(repo_id))
        with output_folder(out, "--out"):
            result = plan(runs, repo_id, results_dataset)
            write_plan(result, out)
        echo(f"dry run: nothing was uploaded; the files a push would upload are in {out}/ (a new card: a real push merges "
             "the results into the card on the Hub)")
    else:
        result, urls = upload(runs, repo_id, results_dataset)
        echo("pushed: " + ", ".join(urls))
    echo(_summary(result, runs))
    return result


def _summary(result: Plan, runs: list) -> str:
    lines = [f"model: {', '.join(sorted({model_of(run) for run in runs}))}", f"model repo {result.repo_id} ({HUB}/{result.repo_id}):"]
    for path, data in result.files.items():
        what = f"model-index: {sum(len(eval_results_of(run)) for run in runs)} results from these runs" if path == "README.md" \
            else f"{len(eval_yaml.loads(data.decode()))} results"
        lines.append(f"  {path}  ({what})")
    if result.results_dataset:
        lines.append(f"dataset repo {result.results_dataset} ({HUB}/datasets/{result.results_dataset}; dry run: results-dataset/):")
        lines += [f"  {path}" for path in result.dataset_files]
    return "\n".join(lines + result.notes)

