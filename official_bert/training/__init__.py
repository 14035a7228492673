"""Pretraining: options, checkpoints, progress reports, the training run and its outputs."""

from official_bert.training.options import TrainingError, TrainingOptions
from official_bert.training.outputs import prepare_output_dir
from official_bert.training.pretraining import PretrainingRun
