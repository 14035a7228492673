"""Fills in the blanks: prints, for each [MASK] of each text, the pretrained masked-LM head's likeliest tokens.

    python fill_mask.py --bert_config_file=run/bert_config.json --vocab_file=run/vocab.txt --init_checkpoint=run \\
        --text='The [MASK] of the Union is strong.' [--input_file=sentences.txt] [--top_k=5]

--init_checkpoint is any checkpoint that holds the masked-LM head (run_pretraining's --output_dir, Google's
release, a Hugging Face BertForPreTraining); --input_file holds one text per line, each with one or more
[MASK]s. Output, per text:

    The [MASK] of the Union is strong.
      [MASK] 1: state 0.4120 | union 0.1043 | ...

Exit status 1 with a one-line message on bad flags or input.
"""

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

import tensorflow as tf
from absl import flags

from official_bert.configs import BertConfig, ConfigError
from official_bert.fill_mask import FillMaskError, encode_masked_text, load_masked_lm, top_k_fillers
from official_bert.io.files import check_input_file
from official_bert.text.packing import packing_of
from official_bert.tools.flag_kinds import (INPUT_FILE, MAX_SEQ_LENGTH, MODEL, define_integer, define_path,
                                            define_text_list)
from official_bert.tools.flags import check_case_from_flags, tokenizer_spec_from_flags

FLAGS = flags.FLAGS

define_path("bert_config_file", None, "The config json file of the pretrained BERT model.", INPUT_FILE)
define_path("vocab_file", None, "The vocabulary file that the BERT model was trained on.", INPUT_FILE)
define_path("init_checkpoint", None, "The pretrained checkpoint, with its masked-LM head: "
            "run_pretraining's --output_dir, Google's TF1, Hugging Face or ours.", MODEL)
flags.DEFINE_bool("do_lower_case", True, "Whether to lower case the input text. Should be True for uncased models "
                  "and False for cased models. Left out: as --init_checkpoint is (False when its vocabulary has "
                  "uppercase entries).")
define_path("input_file", None, "A text file of one text per line, each with one or more [MASK]s "
            "(blank lines are skipped).", INPUT_FILE)
define_text_list("text", [], "A text with one or more [MASK]s (repeatable).", multi=True)
define_integer("top_k", 5, "How many tokens to print for each [MASK].", 1, 1000)
define_integer("max_seq_length", 128, "The most WordPiece tokens of a text, [CLS] and [SEP] included (by "
               "default at most the model's max_position_embeddings).", 3, MAX_SEQ_LENGTH)


def main():
    if not FLAGS.input_file and not FLAGS.text:
        cli.fail("no text to fill in: pass --input_file and/or --text")
    check_case_from_flags()
    texts = _read_texts(FLAGS.input_file, FLAGS.text)
    tokenizer_spec = tokenizer_spec_from_flags()
    tokenizer = tokenizer_spec.python_tokenizer()
    mask = packing_of(tokenizer).mask_token
    if mask not in tokenizer.vocab:
        raise FillMaskError(f"--vocab_file={FLAGS.vocab_file} has no {mask} token: not a BERT vocabulary?")
    config = BertConfig.from_json_file(FLAGS.bert_config_file)
    if FLAGS["max_seq_length"].present:
        config.check_seq_length(FLAGS.max_seq_length, f"--bert_config_file={FLAGS.bert_config_file}")
    max_seq_length = min(FLAGS.max_seq_length, config.max_position_embeddings)
    encoded = []
    for where, text in texts:
        try:
            encoded.append(encode_masked_text(tokenizer, text, max_seq_length))
        except FillMaskError as e:
            raise FillMaskError(f"{where}: {e}") from None
    if len(tokenizer.vocab) > config.vocab_size:
        raise ConfigError(f"--vocab_file={FLAGS.vocab_file or FLAGS.spm_model_file} has {len(tokenizer.vocab)} tokens, more than the "
                          f"vocab_size={config.vocab_size} of --bert_config_file={FLAGS.bert_config_file}")
    model = load_masked_lm(config, FLAGS.init_checkpoint, tokenizer_spec.do_lower_case)
    fillers = top_k_fillers(model, tokenizer, encoded, FLAGS.top_k)
    for (_, text), masks in zip(texts, fillers):
        print(text)
        for i, candidates in enumerate(masks, start=1):
            print(f"  [MASK] {i}: " + " | ".join(f"{token} {probability:.4f}" for token, probability in candidates))


def _read_texts(input_file, texts):
    """(where, text) for every non-blank line of `input_file` ("FILE:LINE") and every --text ("--text=...")."""
    found = []
    if input_file:
        check_input_file(input_file, "a text file", "--input_file", FillMaskError)
        try:
            with tf.io.gfile.GFile(input_file, "rb") as f:
                lines = f.read().decode("utf-8-sig").splitlines()  # a leading BOM dropped
        except tf.errors.NotFoundError:
            raise FillMaskError(f"--input_file={input_file}: No such file or directory") from None
        except tf.errors.OpError as e:
            raise FillMaskError(f"--input_file={input_file}: {e.message}") from None
        except UnicodeDecodeError as e:
            raise FillMaskError(f"--input_file={input_file}: not UTF-8 ({e.reason} at byte {e.start})") from None
        found += [(f"{input_file}:{number}", line.strip()) for number, line in enumerate(lines, start=1)
                  if line.strip()]
        if not found:
            raise FillMaskError(f"--input_file={input_file}: no text in it")
    return found + [(f"--text={text!r}", text) for text in texts]


def run():
    """The tool as a command (`python fill_mask.py`, or the console script `bert-fill-mask`)."""
    # --vocab_file (or --spm_model_file) is checked with the config: a RoBERTa's, XLM-R's, DistilBERT's or ELECTRA's
    # tokenizer files are read beside the checkpoint.
    cli.run(main, required_flags=["bert_config_file", "init_checkpoint"])


if __name__ == "__main__":
    run()
