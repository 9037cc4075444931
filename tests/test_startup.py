"""What a command costs before it does anything: ``lmbias --help``, ``lmbias run --list`` and building the
whole parser import none of the heavy libraries (each half a second or more of CPU time, paid by every
command and by every test that starts a subprocess). They load on first use; bench/startup.py times it."""

import json
import subprocess
import sys

import pytest

# Each of these costs 0.2 to 2.5 s of CPU to import on the project's 2-core machines (python -X importtime);
# a command that needs one imports it in the function that uses it.
HEAVY = ("torch", "transformers", "datasets", "evaluate", "matplotlib", "scipy", "pandas", "pyarrow", "gensim",
         "huggingface_hub", "sklearn", "statsmodels", "sentence_transformers", "spacy", "accelerate", "jinja2")

# Runs the command line in-process, then prints what it printed and the top-level modules loaded.
PROBE = """
import contextlib, io, json, sys
from lmbias import cli
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        code = cli.main(sys.argv[1:])
    except SystemExit as exit:
        code = exit.code
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted({name.split('.')[0] for name in sys.modules})}))
"""


@pytest.mark.parametrize("argv, shows", [(["--help"], "lmbias run"), (["run", "--list"], "winogender"),
                                         (["run", "--help"], "BENCHMARK")])
def test_a_command_starts_without_the_heavy_libraries(argv, shows):
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    assert probe["code"] == 0 and shows in probe["out"]  # the command did run
    loaded = set(probe["modules"]) & set(HEAVY)
    assert not loaded, f"lmbias {' '.join(argv)} imported {sorted(loaded)} before doing anything"
