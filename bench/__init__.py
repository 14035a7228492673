"""Benchmarks, each run from the repository root as `python -m bench.NAME` (docs/benchmarks/index.md lists them)."""

import os

# TensorFlow's C++ start-up lines (CUDA probing, oneDNN notes) would bury the figures.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
