"""Converting a checkpoint between formats, keeping every head it has."""

import os

import tensorflow as tf

from official_bert.checkpoints import detect, load_checkpoint, resolve_causal_attention, save_checkpoint
from official_bert.checkpoints.source import CheckpointError
from official_bert.configs import BertConfig
from official_bert.io import copy_atomically, is_file
from official_bert.io.files import is_stale_temporary, listdir, remove_stale_temporaries
from official_bert.io.locks import LOCK_NAME
from official_bert.models import BertClassifier, BertPretrainer, BertSpanLabeler, ElectraDiscriminator
from official_bert.networks.bert_encoder import BertEncoder
from official_bert.text.tokenizer_spec import FAMILY_FILES


def model_for(source, config):
    """The model whose variables are exactly those `source` holds: an encoder plus the heads it has.

    A classifier head builds a `BertClassifier` (token classifiers and multiple choice store the same
    Dense under the same names, so their weights convert through it unchanged).
    """
    encoder = BertEncoder(config)
    tensors = source.tensors
    if "cls/predictions/output_bias" in tensors:
        return BertPretrainer(encoder, use_nsp="cls/seq_relationship/output_weights" in tensors)
    if "discriminator_predictions/dense_prediction/kernel" in tensors:
        return ElectraDiscriminator(encoder)
    if "cls/squad/output_weights" in tensors:
        return BertSpanLabeler(encoder)
    if "output_weights" in tensors:
        return BertClassifier(encoder, num_classes=tensors["output_weights"].shape[0])
    return encoder


def convert_checkpoint(input_path, output_path, output_format, bert_config_file=None, overwrite=False):
    """Reads the checkpoint at `input_path` (any format) and writes it to `output_path` in `output_format`, with the
    tokenizer files beside it (vocab.txt; for BERT's family also vocab.json + merges.txt, sentencepiece.bpe.model and
    tokenizer_config.json).

    Args:
        input_path: anything `load_checkpoint` accepts.
        output_path: the output directory: new or empty, unless `overwrite` (the temporary files a killed
            conversion left there are removed first, and never count as content).
        output_format: "official_bert", "huggingface" or "google".
        bert_config_file: the model's config, needed when none lies beside the input.
        overwrite: write into a directory that holds files (a run's, another checkpoint's), replacing those
            of the same names. Without it such a directory is refused: the converted checkpoint would shadow
            the one there (`load_checkpoint` reads model.safetensors first).

    Returns:
        the `LoadReport` of reading the input.

    Example:
    >>> import os, tempfile
    >>> from official_bert.checkpoints.convert import convert_checkpoint
    >>> from official_bert import BertConfig, BertEncoder, BertPretrainer
    >>> from official_bert.checkpoints import save_checkpoint
    >>> work = tempfile.TemporaryDirectory()
    >>> src, dst = os.path.join(work.name, "src"), os.path.join(work.name, "dst")
    >>> model = BertPretrainer(BertEncoder(BertConfig.from_preset("tiny", vocab_size=100, num_hidden_layers=1)))
    >>> _ = save_checkpoint(model, src, "official_bert")
    >>> report = convert_checkpoint(src, dst, "google")
    >>> len(report.loaded), sorted(os.listdir(dst))[0]
    (26, 'bert_config.json')
    """
    remove_stale_temporaries(output_path)  # a killed conversion's: as big as the checkpoint, and no content
    present = sorted(name for name in listdir(output_path) if name != LOCK_NAME
                     and not is_stale_temporary(name)) if tf.io.gfile.isdir(output_path) else []
    if present and not overwrite:
        raise CheckpointError(f"--output_path={output_path} is not empty (it holds {', '.join(present[:5])}"
                              f"{', ...' if len(present) > 5 else ''}): a converted checkpoint there would shadow "
                              "or mix with those files; pass an empty directory, or --overwrite")
    located = detect.locate(input_path)
    config_file = bert_config_file or located.config_file
    if config_file is None:
        raise CheckpointError(f"{input_path}: no bert_config.json or config.json beside the checkpoint; "
                              "pass the model's config file")
    # A left-to-right checkpoint converts as one (its marker kept) even under a config without the key.
    config = resolve_causal_attention(BertConfig.from_json_file(config_file), None, config_file, [input_path])
    model = model_for(detect.open_source(located), config)
    report = load_checkpoint(model, input_path)
    save_checkpoint(model, output_path, output_format, vocab_file=located.vocab_file)
    if config.family:  # RoBERTa's vocab.json + merges.txt, XLM-R's SentencePiece model, DistilBERT's casing, ...
        for name in (*FAMILY_FILES[config.family_traits.tokenizer], "tokenizer_config.json"):
            if name != "vocab.txt" and is_file(os.path.join(located.directory, name)):
                copy_atomically(os.path.join(located.directory, name), os.path.join(output_path, name))
    return report
