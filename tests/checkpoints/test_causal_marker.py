"""A left-to-right checkpoint stays left-to-right: the constraint follows the weights (#39).

Fine-tuning under the config first given to run_pretraining.py (no "causal_attention" key), or from a checkpoint
copied without its bert_config.json, must compute causally — checked by the outputs: changing later tokens leaves
every earlier position's output unchanged — and a flag or config that contradicts the checkpoint is refused.
"""

import os
import shutil

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertConfig, BertEncoder, distribution, load_checkpoint, save_checkpoint
from official_bert.checkpoints import CheckpointError
from official_bert.checkpoints.convert import convert_checkpoint
from official_bert.checkpoints.causal import checkpoint_records, resolve_causal_attention
from official_bert.configs import ConfigError
from official_bert.fill_mask import load_masked_lm
from official_bert.finetuning import driver
from official_bert.finetuning.settings import FineTuningSettings
from official_bert.models import BertPretrainer
from official_bert.models.bert_language_model import BertLanguageModel
from official_bert.training.checkpointing import TrainingCheckpoints, seed_generator_states

# The config a user gives run_pretraining.py --objective=ltr: no "causal_attention" key.
PRETRAINING_CONFIG = BertConfig(vocab_size=40, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                intermediate_size=32, max_position_embeddings=32, initializer_range=0.2)


def causal_inputs(length=12, seed=0):
    """Two inputs that differ only from the middle on; returns them and the first differing position."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, PRETRAINING_CONFIG.vocab_size, size=(1, length)).astype(np.int32)
    changed = ids.copy()
    cut = length // 2
    changed[0, cut:] = rng.integers(5, PRETRAINING_CONFIG.vocab_size, size=length - cut)
    return [{"input_word_ids": x, "input_mask": np.ones_like(x), "input_type_ids": np.zeros_like(x)}
            for x in (ids, changed)], cut


def is_causal(config, checkpoint):
    """Whether an encoder built from `config` with the weights of `checkpoint` computes left-only."""
    encoder = BertEncoder(config)
    load_checkpoint(encoder, checkpoint)
    inputs, cut = causal_inputs()
    before, after = (np.asarray(encoder(x)["sequence_output"]) for x in inputs)
    assert not np.allclose(before[:, cut:], after[:, cut:], atol=1e-5)  # the changed tokens change something
    return np.allclose(before[:, :cut], after[:, :cut], atol=1e-6)


def copy_without_config(directory, destination):
    """The checkpoint files of `directory` copied alone, as a user copies the weights and forgets the config."""
    os.makedirs(destination)
    for name in os.listdir(directory):
        if not name.endswith(".json"):
            shutil.copy(os.path.join(directory, name), destination)
    return str(destination)


@pytest.fixture(scope="module")
def ltr_encoder():
    keras.utils.set_random_seed(1)
    return BertEncoder(PRETRAINING_CONFIG, causal_attention=True)


@pytest.mark.parametrize("format", ["official_bert", "google", "huggingface"])
def test_a_copy_without_its_config_still_computes_left_only(ltr_encoder, tmp_path, format):
    save_checkpoint(ltr_encoder, str(tmp_path / "ltr"), format)
    copy = copy_without_config(tmp_path / "ltr", tmp_path / "copy")
    config = resolve_causal_attention(PRETRAINING_CONFIG, checkpoints=[copy])
    assert config.causal_attention and is_causal(config, copy)
    # The same weights under the bidirectional config compute otherwise: what the marker prevents.
    with pytest.raises(CheckpointError, match="records a left-to-right model .* but the model being loaded is a "
                                              "bidirectional model"):
        load_checkpoint(BertEncoder(PRETRAINING_CONFIG), copy)


def test_the_pretraining_config_without_the_key_follows_the_checkpoints_config(ltr_encoder, tmp_path):
    save_checkpoint(ltr_encoder, str(tmp_path / "ltr"))
    assert BertConfig.from_json_file(str(tmp_path / "ltr" / "bert_config.json")).causal_attention
    config = resolve_causal_attention(PRETRAINING_CONFIG, None, "pretraining/bert_config.json",
                                      [str(tmp_path / "ltr")])
    assert is_causal(config, str(tmp_path / "ltr"))
    # A bidirectional checkpoint under the same config stays bidirectional.
    save_checkpoint(BertEncoder(PRETRAINING_CONFIG), str(tmp_path / "bidirectional"))
    config = resolve_causal_attention(PRETRAINING_CONFIG, checkpoints=[str(tmp_path / "bidirectional")])
    assert config.causal_attention is None and not is_causal(config, str(tmp_path / "bidirectional"))


def test_training_checkpoints_carry_the_marker_and_fine_tuning_follows_it(ltr_encoder, tmp_path):
    # What run_pretraining --objective=ltr writes: ckpt-<step> of a BertLanguageModel with its optimizer.
    model = BertLanguageModel(ltr_encoder)
    optimizer = keras.optimizers.Adam()
    optimizer.build(model.trainable_variables)
    TrainingCheckpoints(model, optimizer, str(tmp_path / "run"), distribution.get_strategy("one_device")).save()
    copy = copy_without_config(tmp_path / "run", tmp_path / "copy")
    assert [value for value, _ in checkpoint_records(copy)] == [True]
    # run_classifier's model config under the pretraining config without the key: left-only.
    PRETRAINING_CONFIG.to_json_file(str(tmp_path / "bert_config.json"))
    settings = FineTuningSettings(str(tmp_path / "out"), str(tmp_path / "bert_config.json"), "vocab.txt",
                                  init_checkpoint=copy, max_seq_length=16, do_train=True)
    config = driver._model_config(settings)
    assert config.causal_attention and is_causal(config, copy)
    # A contradicting flag is refused in one line naming the checkpoint.
    settings.causal_attention = False
    with pytest.raises(ConfigError) as refused:
        driver._model_config(settings)
    assert str(refused.value) == (
        f"--nocausal_attention contradicts the checkpoint {copy}/ckpt-0, which records a left-to-right model "
        "(causal_attention: true): leave the flag out to fine-tune the model as it was pretrained")


def test_a_config_that_says_bidirectional_is_refused(ltr_encoder, tmp_path):
    save_checkpoint(ltr_encoder, str(tmp_path / "ltr"), "google")
    copy = copy_without_config(tmp_path / "ltr", tmp_path / "copy")
    with pytest.raises(ConfigError) as refused:
        resolve_causal_attention(PRETRAINING_CONFIG.replace(causal_attention=False), None, "my_config.json", [copy])
    assert str(refused.value) == (
        f"my_config.json records a bidirectional model (causal_attention: false), but the checkpoint "
        f"{copy}/bert_model.ckpt records a left-to-right model (causal_attention: true): the weights decide how "
        "they compute; pass the checkpoint's own bert_config.json")


def test_a_marked_training_checkpoint_resumes_and_an_unmarked_one_too(ltr_encoder, tmp_path):
    strategy = distribution.get_strategy("one_device")
    model = BertLanguageModel(ltr_encoder)
    optimizer = keras.optimizers.Adam()
    optimizer.build(model.trainable_variables)
    # One a left-to-right run wrote before the marker existed.
    old = tf.train.Checkpoint(model=model, optimizer=optimizer, seed_generators=seed_generator_states(model))
    tf.train.CheckpointManager(old, str(tmp_path / "old"), 1, checkpoint_name="ckpt").save(0)
    assert TrainingCheckpoints(model, optimizer, str(tmp_path / "old"), strategy).restore_latest()
    checkpoints = TrainingCheckpoints(model, optimizer, str(tmp_path / "new"), strategy)
    checkpoints.save()
    assert checkpoints.restore_latest()


def test_conversion_keeps_the_marker(ltr_encoder, tmp_path):
    save_checkpoint(ltr_encoder, str(tmp_path / "ltr"))
    copy = copy_without_config(tmp_path / "ltr", tmp_path / "copy")
    PRETRAINING_CONFIG.to_json_file(str(tmp_path / "bert_config.json"))
    for format in ("official_bert", "google", "huggingface"):
        output = str(tmp_path / format)
        convert_checkpoint(copy, output, format, bert_config_file=str(tmp_path / "bert_config.json"))
        again = copy_without_config(output, tmp_path / f"{format}_copy")
        assert [value for value, _ in checkpoint_records(again)] == [True]
        config = resolve_causal_attention(PRETRAINING_CONFIG, checkpoints=[output])
        assert is_causal(config, again)


def test_pretraining_continued_from_a_left_to_right_checkpoint_stays_left_to_right(ltr_encoder, tmp_path):
    save_checkpoint(ltr_encoder, str(tmp_path / "ltr"), "google")
    copy = copy_without_config(tmp_path / "ltr", tmp_path / "copy")
    names = ("--objective=ltr", "--objective=mlm_nsp")  # as run_pretraining.py names its objective
    with pytest.raises(ConfigError) as refused:
        resolve_causal_attention(PRETRAINING_CONFIG, False, "bert_config.json", [copy, str(tmp_path / "out")], names)
    assert str(refused.value) == (
        f"--objective=mlm_nsp contradicts the checkpoint {copy}/bert_model.ckpt, which records a left-to-right model "
        "(causal_attention: true): pass --objective=ltr to train the model as it was pretrained")
    assert resolve_causal_attention(PRETRAINING_CONFIG, True, "bert_config.json", [copy], names).causal_attention


def test_fill_mask_refuses_a_left_to_right_checkpoint_in_one_line(ltr_encoder, tmp_path):
    save_checkpoint(BertPretrainer(ltr_encoder, use_nsp=False), str(tmp_path / "ltr"))
    copy = copy_without_config(tmp_path / "ltr", tmp_path / "copy")
    with pytest.raises(CheckpointError) as refused:
        load_masked_lm(PRETRAINING_CONFIG, copy)
    assert str(refused.value) == (f"{copy}: a left-to-right model (run_pretraining.py --objective=ltr): "
                                  "fill-in-the-blank needs a masked LM's checkpoint (--objective=mlm_nsp or mlm)")
