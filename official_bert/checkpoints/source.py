"""What every checkpoint reader hands to the loader: tensors under the original Google TF1 names."""

import dataclasses
from typing import Callable, Optional

import numpy as np

from official_bert.errors import Error

# The left-to-right marker a checkpoint of a causal model carries inside itself, so that a copy without its
# bert_config.json still says how its weights compute: a root object of a tf.train.Checkpoint (training's and
# ours), a scalar beside the weights of a Google TF1 checkpoint (the original code loads only the names its graph
# has), a metadata key of a safetensors file.
CAUSAL_MARKER = "causal_attention"
GOOGLE_CAUSAL_MARKER = "official_bert/causal_attention"
NATIVE_CAUSAL_MARKER = CAUSAL_MARKER + "/.ATTRIBUTES/VARIABLE_VALUE"


class CheckpointError(Error):
    """A checkpoint that cannot be read or does not fit the model; the message names the file and variable."""


@dataclasses.dataclass(frozen=True)
class Tensor:
    """One stored tensor, seen through its Google TF1 name and layout.

    Args:
        name: how the file names it (what a user would look for in the file).
        shape: its shape in Google's layout (kernels [in, out]; `output_weights` [out, in]).
        transposed: whether the file stores it transposed relative to Google's layout.
        read: returns the array in Google's layout; reads are deferred so shapes can be checked first.
    """

    name: str
    shape: tuple
    transposed: bool
    read: Callable[[], np.ndarray]

    @property
    def file_shape(self):
        return self.shape[::-1] if self.transposed else self.shape

    def file_layout(self, shape):
        """`shape` (Google layout) as the file would store it, for error messages."""
        return tuple(shape)[::-1] if self.transposed else tuple(shape)


@dataclasses.dataclass
class Source:
    """A checkpoint opened for loading.

    Args:
        format: "google", "huggingface" or "official_bert".
        path: the file or prefix that was opened.
        tensors: Google TF1 name → `Tensor`, for every tensor whose name the reader understood.
        unknown: names in the file that map to no BERT variable (reported as unexpected).
        skipped: names in the file that are deliberately not model weights (optimizer slots, step
            counters, tied copies, buffers).
        name_in_file: the file's name for a Google name, to report missing variables in the file's terms.
        causal_attention: True when the checkpoint carries the left-to-right marker (`CAUSAL_MARKER`), else None.
    """

    format: str
    path: str
    tensors: dict
    unknown: list = dataclasses.field(default_factory=list)
    skipped: list = dataclasses.field(default_factory=list)
    name_in_file: Callable[[str], str] = str
    causal_attention: Optional[bool] = None
