"""Fill-in-the-blank: fill_mask.py's top-k against the NumPy reference BERT, a head whose answer is set, the
[MASK] tokenization, and the CLI's one-line errors."""

import os
import subprocess
import sys

import numpy as np
import pytest

from official_bert import BertConfig, BertEncoder, BertPretrainer, save_checkpoint
from official_bert.fill_mask import FillMaskError, MaskedText, encode_masked_text, load_masked_lm, top_k_fillers
from official_bert.tokenization import FullTokenizer
from tests import numpy_bert
from tests.checkpoints.test_checkpoints import google_release

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "fill_mask.py")
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "the", "a", "cat", "dog", "sat", "ran", "on",
         "mat", "big", "##s", "is"]
HIDDEN, LAYERS, HEADS, INTER, POSITIONS = 16, 2, 4, 32, 24
# Texts and their ids written out by hand, so the expectation does not come from the tokenizer under test.
TEXTS = {"The cat sat on the [MASK].": [2, 7, 9, 11, 13, 7, 4, 5, 3],
         "[MASK] dogs ran,[MASK]": [2, 4, 10, 16, 12, 6, 4, 3],
         "a big [MASK]": [2, 8, 15, 4, 3]}


def tiny_config():
    return BertConfig(vocab_size=len(VOCAB), hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                      intermediate_size=INTER, max_position_embeddings=POSITIONS, type_vocab_size=2)


def write_vocab(path, tokens=VOCAB):
    with open(path, "w") as f:
        f.write("\n".join(tokens) + "\n")
    return str(path)


def run(*args):
    env = dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run([sys.executable, SCRIPT, *args], env=env, capture_output=True, text=True, timeout=120)


def parse_output(stdout):
    """The CLI's output → {text: [[(token, probability), ...] per [MASK]]}."""
    result, text = {}, None
    for line in stdout.splitlines():
        if line.startswith("  [MASK] "):
            fillers = line.split(": ", 1)[1].split(" | ")
            result[text].append([(token, float(p)) for token, p in (f.rsplit(" ", 1) for f in fillers)])
        else:
            text = line
            result[text] = []
    return result


def test_cli_prints_the_top_k_of_the_numpy_reference(tmp_path):
    weights = numpy_bert.random_weights(np.random.default_rng(3), len(VOCAB), HIDDEN, LAYERS, INTER,
                                        max_positions=POSITIONS, scale=0.5)
    model_dir = google_release(tmp_path, weights, tiny_config())
    vocab = write_vocab(tmp_path / "vocab.txt")
    texts = list(TEXTS)
    (tmp_path / "texts.txt").write_text(f"{texts[0]}\n\n{texts[1]}\n")
    result = run(f"--bert_config_file={model_dir / 'bert_config.json'}", f"--vocab_file={vocab}",
                 f"--init_checkpoint={model_dir}", f"--input_file={tmp_path / 'texts.txt'}", f"--text={texts[2]}",
                 "--top_k=3")
    assert result.returncode == 0, result.stderr[-3000:]
    printed = parse_output(result.stdout)
    assert list(printed) == texts
    for text, ids in TEXTS.items():
        ids = np.array([ids])
        positions = np.array([[i for i, token in enumerate(ids[0]) if token == VOCAB.index("[MASK]")]])
        layers, pooled = numpy_bert.encoder_forward(weights, ids, np.ones_like(ids), np.zeros_like(ids), HEADS,
                                                    approximate_gelu=True)
        logits, _ = numpy_bert.pretraining_heads(weights, layers[-1], pooled, positions, approximate_gelu=True)
        probabilities = numpy_bert.softmax(logits[0])
        assert len(printed[text]) == len(positions[0])
        for mask, expected in zip(printed[text], probabilities):
            best = np.argsort(-expected)[:3]
            assert [token for token, _ in mask] == [VOCAB[i] for i in best]
            np.testing.assert_allclose([p for _, p in mask], expected[best], atol=1e-4)


def test_a_head_set_to_an_answer_gives_it_with_its_probabilities(tmp_path):
    # With the transform's kernel, bias and LayerNorm beta zero, the head's logits are its output bias alone.
    model = BertPretrainer(BertEncoder(tiny_config()))
    head = model.masked_lm
    for variable in (head.dense.kernel, head.dense.bias, head.layer_norm.beta):
        variable.assign(np.zeros(variable.shape))
    wanted = {"cat": 0.5, "dog": 0.3, "mat": 0.15}
    rest = (1 - sum(wanted.values())) / (len(VOCAB) - len(wanted))
    head.output_bias.assign(np.log([wanted.get(token, rest) for token in VOCAB]))
    save_checkpoint(model, str(tmp_path))  # as run_pretraining writes it

    tokenizer = FullTokenizer(write_vocab(tmp_path / "vocab.txt"))
    texts = [encode_masked_text(tokenizer, text) for text in TEXTS]
    fillers = top_k_fillers(load_masked_lm(tiny_config(), str(tmp_path)), tokenizer, texts, top_k=4)
    assert [len(masks) for masks in fillers] == [1, 2, 1]
    for mask in (mask for masks in fillers for mask in masks):
        assert [token for token, _ in mask][:3] == list(wanted)
        np.testing.assert_allclose([p for _, p in mask], [*wanted.values(), rest], rtol=1e-5)


def test_masks_are_cut_out_before_tokenizing(tmp_path):
    tokenizer = FullTokenizer(write_vocab(tmp_path / "vocab.txt"))
    for text, ids in TEXTS.items():
        assert encode_masked_text(tokenizer, text) == MaskedText(
            tuple(ids), tuple(i for i, token in enumerate(ids) if token == VOCAB.index("[MASK]")))
    with pytest.raises(FillMaskError, match=r"^no \[MASK\] in the text$"):
        encode_masked_text(tokenizer, "the [mask] is lowercase")
    with pytest.raises(FillMaskError, match="is 9 tokens long with .CLS. and .SEP., more than max_seq_length=8"):
        encode_masked_text(tokenizer, "The cat sat on the [MASK].", max_seq_length=8)


@pytest.fixture(scope="module")
def model_files(tmp_path_factory):
    """A checkpoint with the MLM head, one without (an encoder), and their vocabulary and config."""
    work = tmp_path_factory.mktemp("fill_mask")
    weights = numpy_bert.random_weights(np.random.default_rng(0), len(VOCAB), HIDDEN, LAYERS, INTER,
                                        max_positions=POSITIONS)
    google_release(work, weights, tiny_config())
    os.mkdir(work / "encoder")
    google_release(work / "encoder", {k: v for k, v in weights.items() if k.startswith("bert/")}, tiny_config())
    write_vocab(work / "vocab.txt")
    write_vocab(work / "no_mask_vocab.txt", [token for token in VOCAB if token != "[MASK]"])
    (work / "texts.txt").write_text("the [MASK] sat .\nthe cat sat .\n")
    return work


@pytest.mark.parametrize("case, message", [
    ("no input", "no text to fill in: pass --input_file and/or --text"),
    ("missing file", "--input_file={work}/missing.txt: No such file or directory"),
    ("a line without [MASK]", "{work}/texts.txt:2: no [MASK] in the text"),
    ("a text without [MASK]", "--text='the cat': no [MASK] in the text"),
    ("no [MASK] in the vocab", "--vocab_file={work}/no_mask_vocab.txt has no [MASK] token: not a BERT vocabulary?"),
    ("no MLM head", "{work}/encoder: the checkpoint has no masked-LM head: fill-in-the-blank needs a pretraining "
                    "checkpoint (e.g. run_pretraining's --output_dir), not an encoder-only or fine-tuned one"),
])
def test_bad_input_is_a_one_line_error(model_files, case, message):
    work = model_files
    flags = {"bert_config_file": work / "bert_config.json", "vocab_file": work / "vocab.txt", "init_checkpoint": work,
             "input_file": work / "texts.txt"}
    if case == "no input":
        del flags["input_file"]
    elif case == "missing file":
        flags["input_file"] = work / "missing.txt"
    elif case == "a text without [MASK]":
        flags.update(input_file=None, text="the cat")
    elif case == "no [MASK] in the vocab":
        flags["vocab_file"] = work / "no_mask_vocab.txt"
    elif case == "no MLM head":
        flags.update(init_checkpoint=work / "encoder", text="a [MASK]", input_file=None)
    result = run(*(f"--{name}={value}" for name, value in flags.items() if value is not None))
    assert result.returncode == 1
    assert result.stderr.rstrip().splitlines()[-1] == "fill_mask: error: " + message.format(work=work)
    assert "Traceback" not in result.stderr
