"""The evaluate modules (the repository's ``metrics/`` folders) by name.

``evaluate.load("bold_gender_polarity")`` tries the Hub (``evaluate-metric/…`` and the other
canonical namespaces) and, when that fails, the newest copy in its own module cache under
``metrics/evaluate-metric--NAME/<hash>/`` (``evaluate.loading.CachedEvaluationModuleFactory``).
:func:`install_modules` (``lmbias modules install``, run by ``make install``) writes every lmbias
module there, so the bare name works offline and online, from any directory; a copy of another
lmbias version is replaced. :func:`push_modules` (``lmbias modules push``) publishes each module
folder as a Hub Space, so that ``evaluate.load("ORG/NAME")`` works for anyone online.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from .errors import InputError
from .files import write_atomic
from .version import __version__

# The copy shipped inside an installed wheel, else the repository's metrics/ (a checkout).
_PACKAGE = Path(__file__).resolve().parent
MODULES_DIR = next((p for p in (_PACKAGE / "evaluate_modules", _PACKAGE.parent / "metrics") if p.is_dir()),
                   _PACKAGE / "evaluate_modules")
FILES = ("{name}.py", "README.md", "app.py")


def module_names(modules_dir: Path = MODULES_DIR) -> list[str]:
    """Every module folder's name (a folder ``NAME`` holding ``NAME.py``), sorted."""
    if not modules_dir.is_dir():
        raise InputError(f"the evaluate modules are not at {modules_dir}; reinstall lmbias (the wheel ships them)")
    return sorted(p.name for p in modules_dir.iterdir() if (p / f"{p.name}.py").is_file())


def install_modules(modules_cache: str | Path | None = None, modules_dir: Path = MODULES_DIR) -> list[Path]:
    """Copy every module into evaluate's module cache (``modules_cache``, default ``HF_MODULES_CACHE``)
    as ``evaluate-metric--NAME/<hash of the lmbias version and the script>``, removing older copies;
    returns the installed scripts."""
    from evaluate.loading import init_dynamic_modules

    dynamic = Path(init_dynamic_modules(hf_modules_cache=str(modules_cache) if modules_cache else None))
    (dynamic / "metrics").mkdir(exist_ok=True)
    (dynamic / "metrics" / "__init__.py").touch()
    installed = []
    for name in module_names(modules_dir):
        script = modules_dir / name / f"{name}.py"
        digest = hashlib.sha256(f"lmbias {__version__}\n".encode() + script.read_bytes()).hexdigest()
        home = dynamic / "metrics" / f"evaluate-metric--{name}"
        home.mkdir(exist_ok=True)
        (home / "__init__.py").touch()
        for old in home.iterdir():
            if old.is_dir() and old.name != digest:
                shutil.rmtree(old)
        target = home / digest
        target.mkdir(exist_ok=True)
        (target / "__init__.py").touch()
        for pattern in FILES:
            source = modules_dir / name / pattern.format(name=name)
            if source.is_file():
                write_atomic(target / source.name, source.read_bytes())
        installed.append(target / script.name)
    return installed


def space_folder(name: str, out: Path, requirement: str, modules_dir: Path = MODULES_DIR) -> Path:
    """Write module ``name`` as a Hub Space folder ``out/NAME``: the script, its card (front matter:
    a gradio Space), app.py and a ``requirements.txt`` whose lmbias line is ``requirement``."""
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    for pattern in FILES:
        source = modules_dir / name / pattern.format(name=name)
        if source.is_file():
            write_atomic(folder / source.name, source.read_bytes())
    lines = (modules_dir / name / "requirements.txt").read_text().splitlines()
    lines = [requirement if line.strip() == "lmbias" else line for line in lines]
    write_atomic(folder / "requirements.txt", "\n".join(lines) + "\n")
    return folder


def push_modules(org: str, *, requirement: str | None = None, dry_run: bool = False, out: str | Path | None = None,
                 token: str | None = None, modules_dir: Path = MODULES_DIR) -> list[str]:
    """Publish every module as the Space ``ORG/NAME`` (or, with ``dry_run``, write the folders to
    ``out``); returns the Space ids. ``requirement`` is the lmbias line of each Space's
    requirements.txt (default ``lmbias==VERSION``, right once the version is on the package index;
    before, a pinned VCS URL such as ``lmbias @ git+https://github.com/ORG/lmbias@COMMIT``).

    Raises:
        InputError: an org that is not a Hub namespace, or a dry run without ``out``.
    """
    import re
    import tempfile

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", org or ""):
        raise InputError(f"--org must be a Hub user or organisation name, got {org!r}")
    requirement = requirement or f"lmbias=={__version__}"
    if dry_run and out is None:
        raise InputError("--dry-run needs --out DIR: the Space folders are written there")
    names = module_names(modules_dir)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(out) if dry_run else Path(scratch)
        folders = [space_folder(name, root, requirement, modules_dir) for name in names]
        if not dry_run:
            from huggingface_hub import HfApi

            api = HfApi(token=token)
            for name, folder in zip(names, folders):
                api.create_repo(f"{org}/{name}", repo_type="space", space_sdk="gradio", exist_ok=True)
                api.upload_folder(repo_id=f"{org}/{name}", repo_type="space", folder_path=str(folder),
                                  commit_message=f"lmbias {__version__}: {name}")
    return [f"{org}/{name}" for name in names]
