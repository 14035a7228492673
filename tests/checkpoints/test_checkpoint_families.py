"""BERT's family (RoBERTa, XLM-RoBERTa, DistilBERT, ELECTRA) as transformers saves it, against transformers' outputs.

The fixtures (tests/fixtures/families/) were written by tools/make_family_fixtures.py with torch and transformers:
each family's small random-weight model as transformers saved it, and transformers' hidden states and head outputs
on text of data/classification/dev.tsv. These tests need neither torch nor transformers.
"""

import json
import os

import numpy as np
import pytest
from safetensors.numpy import load_file

from official_bert import BertClassifier, BertConfig, BertEncoder, BertPretrainer, ElectraDiscriminator
from official_bert.checkpoints import CheckpointError, load_checkpoint, save_checkpoint
from official_bert.checkpoints.convert import convert_checkpoint
from official_bert.configs import ConfigError

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "families")
FAMILIES = ("roberta", "xlm-roberta", "distilbert", "electra", "electra-generator")
TOLERANCE = 1e-4
INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


@pytest.fixture(scope="module")
def reference():
    with np.load(os.path.join(FIXTURES, "reference.npz")) as f:
        return {k: f[k] for k in f.files}


def model_of(family, config):
    """The model whose weights are exactly those of the family's fixture."""
    encoder = BertEncoder(config)
    return ElectraDiscriminator(encoder) if family == "electra" else BertPretrainer(encoder, use_nsp=False)


def loaded(family):
    directory = os.path.join(FIXTURES, family)
    model = model_of(family, BertConfig.from_json_file(os.path.join(directory, "config.json")))
    report = load_checkpoint(model, directory)
    # Only the pooler, which the masked LMs and the discriminator have none of, is left as initialized.
    assert (report.missing, report.unexpected) == (["pooler/kernel", "pooler/bias"], [])
    return model


def outputs(model, inputs):
    """Every hidden state (the embeddings' output first) and the head's output, as the fixture holds them."""
    states = model.encoder.layer_states(inputs, training=False)
    hidden = [states["embedding_output"]] + states["encoder_outputs"]
    if isinstance(model, ElectraDiscriminator):
        head = model(inputs, training=False)
    else:
        positions = np.tile(np.arange(2, dtype=np.int32), (len(inputs["input_mask"]), 1))
        head = model({**inputs, "masked_lm_positions": positions}, training=False)["mlm_logits"]
    return [h.numpy() for h in hidden], head.numpy()


def real_diff(a, b, mask):
    mask = mask.astype(bool).reshape(mask.shape + (1,) * (a.ndim - mask.ndim))
    return float(np.where(mask, np.abs(a - b), 0).max())


def test_the_configs_record_the_family():
    configs = {f: BertConfig.from_json_file(os.path.join(FIXTURES, f, "config.json")) for f in FAMILIES}
    assert {f: c.family for f, c in configs.items()} == {
        "roberta": "roberta", "xlm-roberta": "xlm-roberta", "distilbert": "distilbert", "electra": "electra",
        "electra-generator": "electra"}
    roberta, distilbert, electra = configs["roberta"], configs["distilbert"], configs["electra"]
    assert (roberta.pad_token_id, roberta.position_offset, roberta.type_vocab_size, roberta.layer_norm_eps) == (
        1, 2, 1, 1e-5)
    assert (distilbert.type_vocab_size, distilbert.sinusoidal_pos_embds, distilbert.hidden_act) == (0, False, "gelu_erf")
    assert (electra.embedding_size, electra.hidden_size, electra.embedding_width) == (24, 32, 24)
    # Our bert_config.json keeps the family, so nothing is guessed when it is read back.
    assert BertConfig.from_dict(roberta.to_dict()) == roberta
    assert "family" not in BertConfig.from_preset("tiny").to_dict()


@pytest.mark.parametrize("family", FAMILIES)
def test_every_hidden_layer_and_the_head_match_transformers(reference, family):
    model = loaded(family)
    inputs = {k: reference[f"{family}/{k}"] for k in INPUTS}
    hidden, head = outputs(model, inputs)
    expected = [reference[f"{family}/hidden_{i}"] for i in range(len(hidden))]
    assert len(expected) == model.encoder.config.num_hidden_layers + 1
    assert f"{family}/hidden_{len(hidden)}" not in reference
    for i, (ours, theirs) in enumerate(zip(hidden, expected, strict=True)):
        assert real_diff(ours, theirs, inputs["input_mask"]) <= TOLERANCE, f"hidden state {i}"
    mask = inputs["input_mask"] if family == "electra" else inputs["input_mask"][:, :2]
    assert real_diff(head, reference[f"{family}/logits"], mask) <= TOLERANCE


def test_roberta_positions_start_after_the_padding_id(reference):
    """The fixture tells the offset apart: from position 0, as BERT's, the first layer is off by far more."""
    model = loaded("roberta")
    inputs = {k: reference[f"roberta/{k}"] for k in INPUTS}
    shifted = BertEncoder(model.encoder.config)
    shifted.embeddings.position_offset = 0
    for ours, theirs in zip(shifted.weights, model.encoder.weights):
        ours.assign(theirs)
    first = shifted(inputs, training=False)["encoder_outputs"][0].numpy()
    assert real_diff(first, reference["roberta/hidden_1"], inputs["input_mask"]) > 100 * TOLERANCE


@pytest.mark.parametrize("family", FAMILIES)
def test_writing_back_gives_what_transformers_wrote(tmp_path, family):
    """The same tensors (names, dtypes, values) and config.json as transformers' (tools/make_family_fixtures.py
    also checks that transformers reads the directory with nothing missing and the same outputs, to 1e-5)."""
    save_checkpoint(loaded(family), str(tmp_path), "huggingface")
    theirs, ours = (load_file(os.path.join(d, "model.safetensors")) for d in (os.path.join(FIXTURES, family), tmp_path))
    assert sorted(ours) == sorted(theirs)
    for name, value in theirs.items():
        assert ours[name].dtype == value.dtype and np.array_equal(ours[name], value), name
    expected = json.load(open(os.path.join(FIXTURES, family, "config.json")))
    expected.pop("transformers_version")
    assert json.load(open(tmp_path / "config.json")) == expected


@pytest.mark.parametrize("family", ["roberta", "xlm-roberta", "distilbert", "electra"])
def test_a_classifier_is_written_as_transformers_sequence_classifier(reference, tmp_path, family):
    """Its pooler becomes the family's dense layer on the first token (classifier.dense, pre_classifier), its output
    layer classifier.out_proj or classifier, with the names and shapes transformers saves."""
    config = BertConfig.from_json_file(os.path.join(FIXTURES, family, "config.json"))
    save_checkpoint(BertClassifier(BertEncoder(config), 3), str(tmp_path), "huggingface")
    ours = {k: v.shape for k, v in load_file(os.path.join(tmp_path, "model.safetensors")).items()}
    names = [str(n) for n in reference[f"{family}/classifier_names"]]
    assert sorted(ours) == names
    assert [ours[n] for n in names] == [tuple(s) for s in json.loads(str(reference[f"{family}/classifier_shapes"]))]
    # And it reads back into our classifier whole.
    report = load_checkpoint(BertClassifier(BertEncoder(config), 3), str(tmp_path))
    assert (report.missing, report.unexpected) == ([], [])


@pytest.mark.parametrize("family", ["roberta", "electra"])
def test_conversion_through_our_formats_keeps_every_tensor(tmp_path, family):
    ours, google, back = (str(tmp_path / n) for n in ("ours", "google", "back"))
    report = convert_checkpoint(os.path.join(FIXTURES, family), ours, "official_bert")
    assert str(report).startswith(f"loaded {len(report.loaded)} variables from the huggingface {family} checkpoint")
    assert json.load(open(os.path.join(ours, "bert_config.json")))["family"] == family
    convert_checkpoint(ours, google, "google")
    convert_checkpoint(google, back, "huggingface")
    theirs, written = (load_file(os.path.join(d, "model.safetensors")) for d in (os.path.join(FIXTURES, family), back))
    assert sorted(written) == sorted(theirs)
    assert all(np.array_equal(written[k], theirs[k]) for k in theirs)
    # The tokenizer travels with the weights, so that each copy is used without tokenizer flags.
    tokenizer_files = {"roberta": ["merges.txt", "vocab.json"], "electra": ["tokenizer_config.json", "vocab.txt"]}
    for directory in (ours, google, back):
        assert sorted(set(os.listdir(directory)) & {"merges.txt", "vocab.json", "tokenizer_config.json",
                                                     "vocab.txt"}) == tokenizer_files[family]


def test_a_family_not_listed_is_refused_in_one_line(tmp_path):
    values = json.load(open(os.path.join(FIXTURES, "roberta", "config.json")))
    (tmp_path / "config.json").write_text(json.dumps({**values, "model_type": "albert"}))
    with pytest.raises(ConfigError) as error:
        BertConfig.from_json_file(str(tmp_path / "config.json"))
    assert str(error.value) == (f"{tmp_path / 'config.json'}: model_type 'albert' is not supported; expected one of "
                                "bert, roberta, xlm-roberta, distilbert, electra")


def test_a_checkpoint_of_another_family_is_refused(tmp_path):
    """RoBERTa's weights have BERT's names; its config says what they compute, and a BERT model refuses them."""
    config = BertConfig.from_json_file(os.path.join(FIXTURES, "roberta", "config.json"))
    bert = BertEncoder(config.replace(family=None, pad_token_id=None))
    with pytest.raises(CheckpointError, match=r"family: model None, checkpoint 'roberta'"):
        load_checkpoint(bert, os.path.join(FIXTURES, "roberta"))


def test_family_fields_outside_their_family_are_refused():
    with pytest.raises(ConfigError, match="embedding_size is electra's; this config's family is bert"):
        BertConfig.from_preset("tiny", embedding_size=64)
    with pytest.raises(ConfigError, match="pad_token_id must be a non-negative integer for roberta"):
        BertConfig.from_preset("tiny", family="roberta")
    with pytest.raises(ConfigError, match="type_vocab_size must be 0 for DistilBERT"):
        BertConfig.from_preset("tiny", family="distilbert")


def test_roberta_sequence_length_counts_the_positions_before_the_first(tmp_path):
    config = BertConfig.from_json_file(os.path.join(FIXTURES, "roberta", "config.json"))
    config.check_seq_length(64)
    with pytest.raises(ConfigError, match=r"--max_seq_length=65 exceeds the 64 positions of the config "
                                          r"\(max_position_embeddings=66"):
        config.check_seq_length(65)


def test_a_next_sentence_head_cannot_be_written_as_a_family_model(tmp_path):
    config = BertConfig.from_json_file(os.path.join(FIXTURES, "roberta", "config.json"))
    with pytest.raises(CheckpointError, match="roberta has no next-sentence head in transformers"):
        save_checkpoint(BertPretrainer(BertEncoder(config)), str(tmp_path), "huggingface")
    assert not os.listdir(tmp_path)


def test_distilbert_sinusoidal_positions_are_transformers_and_fixed():
    """transformers' create_sinusoidal_embeddings, transcribed: the table a sinusoidal DistilBERT starts from, and
    keeps (it is not trained)."""
    config = BertConfig.from_json_file(os.path.join(FIXTURES, "distilbert", "config.json")).replace(
        sinusoidal_pos_embds=True)
    embeddings = BertEncoder(config).embeddings
    dim = config.hidden_size
    position_enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)]
                             for pos in range(config.max_position_embeddings)])
    expected = np.zeros_like(position_enc)
    expected[:, 0::2], expected[:, 1::2] = np.sin(position_enc[:, 0::2]), np.cos(position_enc[:, 1::2])
    np.testing.assert_allclose(embeddings.position_embeddings.numpy(), expected, atol=1e-6)
    assert not embeddings.position_embeddings.trainable
    assert embeddings.token_type_embeddings is None


def test_the_fixture_records_that_transformers_reads_our_directories(reference):
    """What tools/make_family_fixtures.py measured with transformers, kept with the fixture: each family's directory
    written by us read by transformers with nothing missing or unexpected, its outputs within 1e-5 of the
    original's; our classifiers read by its sequence classifiers."""
    import re

    lines = str(reference["checks"]).splitlines()
    round_trips = [line for line in lines if "our written directory" in line]
    assert [line.split(":")[0] for line in round_trips] == list(FAMILIES)
    assert all("nothing missing or unexpected" in line and float(re.search(r"= (\S+)$", line).group(1)) <= 1e-5
               for line in round_trips)
    assert sum("our classifier written as" in line for line in lines) == 4
