"""Adding words to a vocabulary and checkpoint (`checkpoints.vocab_extension`), on a tiny random model in each format.

The expectations are independent of the code under test: the pieces each word splits into are written out by
hand, the new rows are the NumPy mean of the old checkpoint's rows, and the old model's outputs are computed from
the checkpoint as it was.
"""

import json
import os

import numpy as np
import pytest

from official_bert import BertConfig, BertEncoder, BertPretrainer, tokenization
from official_bert.checkpoints import detect, load_checkpoint, save_checkpoint
from official_bert.checkpoints import vocab_extension as ve
from official_bert.checkpoints.convert import model_for
from official_bert.io import OutputError

UNUSED = [f"[unused{i}]" for i in range(4)]
TOKENS = (["[PAD]"] + UNUSED[:2] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"] + UNUSED[2:]
          + ["the", "a", "of", "cell", "cells", "gene", "##s", "in", "##ter", "##leu", "##kin", "il", "##6", "co",
             "##vid", "tr", "##op", "##oni", "##n", "protein", "level", "##ed", "raised", ".", ","])
# Each word to add, with the pieces the old vocabulary splits it into (by hand, greedy longest match first).
NEW = {"interleukin": ("in", "##ter", "##leu", "##kin"), "troponin": ("tr", "##op", "##oni", "##n"),
       "covid": ("co", "##vid")}
TEXTS = ["The level of the protein in cells.", "raised il6 levels , a gene ."]  # no word begins with a new word


def write_vocab(directory, tokens=TOKENS):
    path = os.path.join(directory, "vocab.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in tokens))
    return path


def random_pretrainer(vocab_size=len(TOKENS), seed=0):
    config = BertConfig(vocab_size=vocab_size, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=32, type_vocab_size=2, hidden_act="gelu")
    model = BertPretrainer(BertEncoder(config))
    rng = np.random.default_rng(seed)
    for w in model.weights:  # the MLM bias starts at zero: random everywhere, so that its mean is seen
        w.assign(rng.normal(0, 0.3, w.shape).astype("float32"))
    return model


def encode(tokens, texts, length=16):
    """Word ids (with [CLS] and [SEP]) of `texts` under the vocabulary `tokens`, padded to `length`."""
    vocab = {t: i for i, t in enumerate(tokens)}
    basic, wordpiece = tokenization.BasicTokenizer(do_lower_case=True), tokenization.WordpieceTokenizer(vocab)
    ids = np.zeros((len(texts), length), np.int32)
    for row, text in enumerate(texts):
        pieces = ["[CLS]"] + [p for word in basic.tokenize(text) for p in wordpiece.tokenize(word)] + ["[SEP]"]
        ids[row, :len(pieces)] = [vocab[p] for p in pieces]
    return ids


def outputs(model, ids):
    inputs = {"input_word_ids": ids, "input_mask": (ids > 0).astype(np.int32), "input_type_ids": np.zeros_like(ids)}
    out = model({**inputs, "masked_lm_positions": np.tile(np.arange(8), (len(ids), 1))}, training=False)
    encoder = model.encoder(inputs, training=False)
    return encoder["sequence_output"].numpy(), encoder["pooled_output"].numpy(), out["mlm_logits"].numpy()


def reload(directory):
    located = detect.locate(directory)
    model = model_for(detect.open_source(located), BertConfig.from_json_file(located.config_file))
    report = load_checkpoint(model, directory)
    assert (report.missing, report.unexpected) == ([], [])
    return model, located


@pytest.fixture(scope="module", params=["google", "huggingface", "official_bert"])
def checkpoint(request, tmp_path_factory):
    directory = str(tmp_path_factory.mktemp(request.param))
    model = random_pretrainer()
    save_checkpoint(model, directory, request.param, vocab_file=write_vocab(str(tmp_path_factory.mktemp("v"))))
    return request.param, directory, model


@pytest.mark.parametrize("mode", ["unused", "append"])
def test_the_guarantees_in_each_format(checkpoint, mode, tmp_path):
    fmt, directory, old = checkpoint
    out = str(tmp_path / "out")
    report = ve.extend_vocabulary(directory, out, ["Interleukin", "TROPONIN", "covid", "the"], mode=mode)
    new_tokens = [line.rstrip("\n") for line in open(os.path.join(out, "vocab.txt"), encoding="utf-8")]
    expected_ids = [1, 2, 7] if mode == "unused" else [len(TOKENS), len(TOKENS) + 1, len(TOKENS) + 2]
    assert [(w.word, w.id, w.pieces) for w in report.plan.added] == [
        (word, i, pieces) for (word, pieces), i in zip(NEW.items(), expected_ids)]
    assert report.plan.skipped == [("the", "already in the vocabulary (id 9)")]
    # Every old token keeps its id; the new ones are where the report says, the [unused] they replaced gone.
    assert len(new_tokens) == len(TOKENS) + (3 if mode == "append" else 0)
    assert [t for i, t in enumerate(new_tokens) if i not in expected_ids] == [
        t for i, t in enumerate(TOKENS) if i not in expected_ids]
    assert [new_tokens[i] for i in expected_ids] == list(NEW)
    # Each new word is one id under the model's casing, whatever its case in the text.
    tokenizer = tokenization.FullTokenizer(os.path.join(out, "vocab.txt"), do_lower_case=True)
    for word, i in zip(NEW, expected_ids):
        for form in (word, word.upper(), word.capitalize()):
            assert tokenizer.convert_tokens_to_ids(tokenizer.tokenize(form)) == [i]

    new, located = reload(out)
    assert located.format == fmt
    config = json.load(open(os.path.join(out, "bert_config.json")))
    assert config["vocab_size"] == len(new_tokens)
    # The new rows: the mean of the pieces' rows, in the embeddings and in the masked-LM output bias.
    old_table, new_table = (m.encoder.embeddings.word_embeddings.numpy() for m in (old, new))
    old_bias, new_bias = (m.masked_lm.output_bias.numpy() for m in (old, new))
    for word, i in zip(NEW, expected_ids):
        piece_ids = [TOKENS.index(p) for p in NEW[word]]
        np.testing.assert_allclose(new_table[i], old_table[piece_ids].mean(axis=0), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(new_bias[i], old_bias[piece_ids].mean(), rtol=1e-6, atol=1e-7)
    kept = [i for i in range(len(TOKENS)) if i not in expected_ids]
    assert np.array_equal(new_table[kept], old_table[kept]) and np.array_equal(new_bias[kept], old_bias[kept])

    # Texts without new words: the same ids, and the same outputs bit for bit.
    ids = encode(TOKENS, TEXTS)
    assert np.array_equal(encode(new_tokens, TEXTS), ids)
    (old_seq, old_pooled, old_logits), (new_seq, new_pooled, new_logits) = outputs(old, ids), outputs(new, ids)
    assert np.array_equal(new_seq, old_seq) and np.array_equal(new_pooled, old_pooled)
    if mode == "unused":
        assert np.array_equal(new_logits[..., kept], old_logits[..., kept])
    else:
        # A wider output matrix changes the matmul's blocking, so the sums are rounded in another order: equal to
        # float32 rounding, not bit for bit (a plain tf.matmul shows the same; see README).
        np.testing.assert_allclose(new_logits[..., :len(TOKENS)], old_logits, rtol=0, atol=2e-5)
        assert np.array_equal(new_logits[..., :len(TOKENS)].argmax(-1), old_logits.argmax(-1))


def test_a_word_that_begins_with_a_new_word_can_change(tmp_path):
    """What the guarantee leaves out, as the docs say: WordPiece starts a word with its longest entry."""
    tokens = TOKENS + ["##iot"]
    assert encode(tokens, ["covidiot"])[0, 1:4].tolist() == [tokens.index(t) for t in ("co", "##vid", "##iot")]
    plan = ve.plan_extension(["covid"], tokens, do_lower_case=True)
    assert encode(plan.tokens, ["covidiot"])[0, 1:3].tolist() == [1, tokens.index("##iot")]


@pytest.mark.parametrize("words,message", [
    (["covid-19"], "'covid-19' is not one word to the basic tokenizer (it splits it into 'covid', '-', '19')"),
    (["heart attack"], "'heart attack' is not one word to the basic tokenizer"),
    (["\u764c\u75c7"], "is not one word to the basic tokenizer"),  # CJK ideographs split one by one
    (["Covid", "covid"], "'Covid' and 'covid' are the same word (both are 'covid' to an uncased model)"),
    (["covid", "covid"], "'covid' and 'covid' are the same word; list each word once"),
    (["w" + "x" * 200], "has 201 characters; WordPiece maps words over 200 to [UNK]"),
    ([f"word{i}" for i in range(5)], "5 words to add but the vocabulary has 4 [unused] entries"),
    (["the", "cell"], "no word to add (every one is in the vocabulary already)"),
])
def test_refusals(words, message):
    with pytest.raises(ve.VocabExtensionError) as raised:
        ve.plan_extension(words, TOKENS, do_lower_case=True, source="words.txt")
    assert str(raised.value).startswith("words.txt: ") and message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_cased_models_keep_case_and_accents():
    plan = ve.plan_extension(["Troponin", "troponin", "Café"], TOKENS, do_lower_case=False)
    assert [w.word for w in plan.added] == ["Troponin", "troponin", "Café"]
    assert ve.plan_extension(["Café"], TOKENS, do_lower_case=True).added[0].word == "cafe"


def test_append_needs_a_vocabulary_as_long_as_the_embeddings():
    with pytest.raises(ve.VocabExtensionError, match="has 34 entries but the model 40 rows"):
        ve.plan_extension(["covid"], TOKENS, do_lower_case=True, mode="append", vocab_size=40)
    assert ve.plan_extension(["covid"], TOKENS, True, mode="unused", vocab_size=40).vocab_size == 40
    with pytest.raises(ve.VocabExtensionError, match="more than the model's vocab_size 30"):
        ve.plan_extension(["covid"], TOKENS, do_lower_case=True, vocab_size=30)


def test_corpus_words_are_ranked_by_pieces_times_occurrences():
    vocab = {t: i for i, t in enumerate(TOKENS)}
    counts = {"the": 50, "interleukin": 3, "troponin": 2, "covid": 5, "il6": 4, "cells": 9, "\u00fe": 7}
    words = ve.frequent_split_words(counts, vocab, 3)
    # interleukin 4 x 3 = 12, il6 2 x 4 = 8, troponin 4 x 2 = 8, covid 2 x 5 = 10; the tie goes to more occurrences.
    assert [(w.word, w.score) for w in words] == [("interleukin", 12), ("covid", 10), ("il6", 8)]


def test_from_a_corpus_and_a_dry_run(tmp_path):
    directory = str(tmp_path / "bert")
    save_checkpoint(random_pretrainer().encoder, directory, "google", vocab_file=write_vocab(str(tmp_path)))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Interleukin raised the troponin level.\nInterleukin, COVID and covid.\n\nthe cells\n")
    report = ve.extend_vocabulary(directory, None, corpus_files=[str(corpus)], num_new_words=2)
    assert [(w.word, w.count, w.pieces) for w in report.corpus_words] == [
        ("interleukin", 2, NEW["interleukin"]), ("covid", 2, NEW["covid"])]
    assert [w.word for w in report.plan.added] == ["interleukin", "covid"]
    assert "interleukin: 2 x 4 pieces (in ##ter ##leu ##kin)" in str(report)
    assert "dry run: nothing written" in str(report)
    assert sorted(os.listdir(tmp_path)) == ["bert", "corpus.txt", "vocab.txt"]


def test_nothing_is_written_when_the_words_are_refused_or_the_output_dir_is_taken(checkpoint, tmp_path):
    _, directory, _ = checkpoint
    with pytest.raises(ve.VocabExtensionError, match="is not one word"):
        ve.extend_vocabulary(directory, str(tmp_path / "out"), ["covid-19"])
    assert os.listdir(tmp_path) == []
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    with pytest.raises(ve.VocabExtensionError, match=r"taken is not empty \(it holds notes.txt\)"):
        ve.extend_vocabulary(directory, str(tmp_path / "taken"), ["covid"])
    assert os.listdir(tmp_path / "taken") == ["notes.txt"]


def test_a_failed_write_leaves_no_output_and_a_killed_ones_temporaries_go(checkpoint, tmp_path, monkeypatch):
    _, directory, _ = checkpoint
    dead = 2 ** 22 + 7  # above any pid this system gives
    (tmp_path / f".out.incomplete-{dead}").mkdir()  # what a killed run left beside the output
    (tmp_path / f".out.incomplete-{dead}" / "vocab.txt").write_text("half")

    def full_disk(path, text):
        raise OutputError(f"{path}: cannot write it (No space left on device)")

    monkeypatch.setattr(ve, "write_text", full_disk)
    with pytest.raises(OutputError, match="No space left on device"):
        ve.extend_vocabulary(directory, str(tmp_path / "out"), ["covid"])
    assert os.listdir(tmp_path) == []
    monkeypatch.undo()
    ve.extend_vocabulary(directory, str(tmp_path / "out"), ["covid"])
    assert os.listdir(tmp_path) == ["out"]


@pytest.mark.parametrize("output_format", ["google", "huggingface"])
def test_output_format_and_an_encoder_without_heads(tmp_path, output_format):
    """An encoder alone (no MLM head: only the embeddings grow), written in another format than it was read in."""
    encoder = random_pretrainer().encoder
    save_checkpoint(encoder, str(tmp_path / "in"), "official_bert", vocab_file=write_vocab(str(tmp_path)))
    report = ve.extend_vocabulary(str(tmp_path / "in"), str(tmp_path / "out"), ["covid"], mode="append",
                                  output_format=output_format)
    assert report.heads == [ve.WORD_EMBEDDINGS]
    new, located = reload(str(tmp_path / "out"))
    assert located.format == output_format and new.config.vocab_size == len(TOKENS) + 1
    ids = encode(TOKENS, TEXTS)
    inputs = {"input_word_ids": ids, "input_mask": (ids > 0).astype(np.int32), "input_type_ids": np.zeros_like(ids)}
    assert np.array_equal(new(inputs)["sequence_output"].numpy(), encoder(inputs)["sequence_output"].numpy())


def test_words_file(tmp_path):
    path = tmp_path / "words.txt"
    path.write_bytes(b"interleukin\t12\t(in ##ter)\n\n troponin \n")
    assert ve.read_words_file(str(path)) == ["interleukin", "troponin"]
    path.write_bytes(b"ok\ncaf\xe9\n")
    with pytest.raises(ve.VocabExtensionError, match=r"words.txt:2: not UTF-8"):
        ve.read_words_file(str(path))
    with pytest.raises(ve.VocabExtensionError, match="no such file"):
        ve.read_words_file(str(tmp_path / "missing.txt"))


def test_a_words_file_without_words_is_refused(tmp_path):
    path = tmp_path / "words.txt"
    for content in (b"", b"\n  \n\t12\n"):
        path.write_bytes(content)
        with pytest.raises(ve.VocabExtensionError) as raised:
            ve.read_words_file(str(path))
        assert str(raised.value) == f"--new_words={path}: no words in {path} (expected one word per line)"


def test_a_corpus_that_is_not_utf8_is_refused_naming_its_byte_offset(tmp_path):
    """Without the check, the word whose byte the decoder drops ("interleuk\\xe9in" → "interleukin") is added."""
    directory = str(tmp_path / "bert")
    save_checkpoint(random_pretrainer().encoder, directory, "google", vocab_file=write_vocab(str(tmp_path)))
    good, bad = tmp_path / "good.txt", tmp_path / "latin1.txt"
    good.write_text("the troponin level.\n")
    bad.write_bytes(b"the level.\nraised interleuk\xe9in interleuk\xe9in.\n")
    offset = len(b"the level.\nraised interleuk")
    for corpus_files, out in (([str(good), str(bad)], None), ([str(bad)], str(tmp_path / "out"))):
        with pytest.raises(ve.VocabExtensionError) as raised:
            ve.extend_vocabulary(directory, out, corpus_files=corpus_files, num_new_words=2)
        assert str(raised.value) == (f"--from_corpus: {bad}, line 2: byte 0xe9 at byte offset {offset} is not UTF-8 "
                                     "(save the file as UTF-8)")
    assert sorted(os.listdir(tmp_path)) == ["bert", "good.txt", "latin1.txt", "vocab.txt"]


def test_a_left_to_right_checkpoint_is_extended_as_one(tmp_path):
    """A checkpoint that records the left-only constraint (its marker) is followed under a config without the key,
    as run_classifier follows it: the extended checkpoint keeps the marker and its config records the key."""
    from official_bert.checkpoints.causal import checkpoint_records
    from official_bert.configs import ConfigError

    model = random_pretrainer()
    causal = BertPretrainer(BertEncoder(model.encoder.config.replace(causal_attention=True)))
    for source, target in zip(model.weights, causal.weights):
        target.assign(source)
    directory = str(tmp_path / "ltr")
    save_checkpoint(causal, directory, "google", vocab_file=write_vocab(str(tmp_path)))
    plain = str(tmp_path / "plain_config.json")  # the config first given to run_pretraining: no key
    model.encoder.config.to_json_file(plain)
    assert "causal_attention" not in json.load(open(plain))
    out = str(tmp_path / "out")
    ve.extend_vocabulary(directory, out, ["covid"], mode="append", bert_config_file=plain)
    assert json.load(open(os.path.join(out, "bert_config.json")))["causal_attention"] is True
    assert [value for value, _ in checkpoint_records(out)] == [True, True]
    new, _ = reload(out)
    ids = encode(TOKENS, TEXTS)
    old_seq, _, _ = outputs(causal, ids)
    assert new.encoder.config.causal_attention and np.array_equal(outputs(new, ids)[0], old_seq)
    assert not np.array_equal(outputs(model, ids)[0], old_seq)  # bidirectionally the same weights compute otherwise
    bidirectional = str(tmp_path / "bidirectional.json")
    model.encoder.config.replace(causal_attention=False).to_json_file(bidirectional)
    with pytest.raises(ConfigError, match=r"bidirectional.json records a bidirectional model \(causal_attention: "
                       r"false\), but .*ltr/bert_config.json records a left-to-right model"):
        ve.extend_vocabulary(directory, str(tmp_path / "refused"), ["covid"], bert_config_file=bidirectional)
    assert not os.path.exists(tmp_path / "refused")


def test_hugging_face_tokenizer_json_gets_the_new_vocabulary(tmp_path):
    """tokenizer.json (what transformers' fast tokenizer reads) holds the vocabulary: rewritten, so the `tokenizers`
    library gives each new word one id too."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, normalizers, pre_tokenizers

    src = tmp_path / "in"
    save_checkpoint(random_pretrainer().encoder, str(src), "huggingface", vocab_file=write_vocab(str(tmp_path)))
    fast = tokenizers.Tokenizer(models.WordPiece({t: i for i, t in enumerate(TOKENS)}, unk_token="[UNK]"))
    fast.normalizer = normalizers.BertNormalizer(lowercase=True)
    fast.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    fast.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]"])
    fast.save(str(src / "tokenizer.json"))
    (src / "tokenizer_config.json").write_text('{"do_lower_case": true}')
    report = ve.extend_vocabulary(str(src), str(tmp_path / "out"), list(NEW))
    assert report.not_copied == []
    new_fast = tokenizers.Tokenizer.from_file(str(tmp_path / "out" / "tokenizer.json"))
    for word in report.plan.added:
        assert new_fast.encode(word.word.upper(), add_special_tokens=False).ids == [word.id]
    assert [t["content"] for t in json.load(open(tmp_path / "out" / "tokenizer.json"))["added_tokens"]] == [
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]  # [unused0] is a word now
    for text in TEXTS:
        assert new_fast.encode(text).ids == fast.encode(text).ids
    assert json.load(open(tmp_path / "out" / "tokenizer_config.json")) == {"do_lower_case": True}


MINILM_WORDS = ["heretofore", "isthmus", "gratifying", "appropriation", "indemnity", "indispensable", "stipulations",
                "practicable", "expedient", "injurious", "burdens", "pecuniary", "pursuance", "continuance",
                "hitherto", "redress", "earnestly", "herewith", "enlightened", "hereafter"]  # --from_corpus=sotu.txt's


@pytest.mark.slow  # about 30 s on 2 cores: two 90 MB checkpoints written and read back
def test_minilm_twenty_words_in_each_mode(tmp_path):
    """The real all-MiniLM-L6-v2 (Hugging Face format, uncased, 30,522 entries), 20 words over [unused] entries and
    appended: old ids unchanged, one id per word, the encoder's outputs bit for bit on text without them, and the
    written safetensors holds the tensors transformers' BertModel saves (transformers itself loads it: README)."""
    from safetensors import safe_open

    from tests.checkpoints.test_checkpoint_minilm import MODEL_DIR

    old_tokens = ve.read_vocab_lines(os.path.join(MODEL_DIR, "vocab.txt"))
    original = BertEncoder(BertConfig.from_json_file(os.path.join(MODEL_DIR, "config.json")))
    load_checkpoint(original, MODEL_DIR)
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(repo, "data", "corpus", "sotu_heldout.txt"), encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()][:200]
    basic = tokenization.BasicTokenizer(do_lower_case=True)
    texts = [t for t in lines if not any(w.startswith(n) for w in basic.tokenize(t) for n in MINILM_WORDS)][:24]
    ids = encode(old_tokens, texts, length=max(len(basic.tokenize(t)) * 2 + 2 for t in texts))
    inputs = {"input_word_ids": ids, "input_mask": (ids > 0).astype(np.int32), "input_type_ids": np.zeros_like(ids)}
    expected = original(inputs)["sequence_output"].numpy()
    with safe_open(os.path.join(MODEL_DIR, "model.safetensors"), framework="np") as f:  # as transformers saved it
        original_shapes = {k: tuple(f.get_slice(k).get_shape()) for k in f.keys() if k != "embeddings.position_ids"}

    for mode, first_id in (("unused", 1), ("append", 30522)):
        out = str(tmp_path / mode)
        report = ve.extend_vocabulary(MODEL_DIR, out, MINILM_WORDS, mode=mode)
        tokens = ve.read_vocab_lines(os.path.join(out, "vocab.txt"))
        added = {w.word: w.id for w in report.plan.added}
        assert len(added) == 20 and len(tokens) == 30522 + (20 if mode == "append" else 0)
        assert min(added.values()) == first_id and len(set(added.values())) == 20
        assert [t for i, t in enumerate(tokens[:30522]) if i not in added.values()] == [
            t for i, t in enumerate(old_tokens) if i not in added.values()]
        tokenizer = tokenization.FullTokenizer(os.path.join(out, "vocab.txt"), do_lower_case=True)
        assert all(tokenizer.convert_tokens_to_ids(tokenizer.tokenize(w.capitalize())) == [i] for w, i in added.items())
        assert np.array_equal(encode(tokens, texts, ids.shape[1]), ids)

        new, located = reload(out)
        assert located.format == "huggingface" and new.config.vocab_size == len(tokens)
        assert np.array_equal(new(inputs)["sequence_output"].numpy(), expected)
        with safe_open(os.path.join(out, "model.safetensors"), framework="np") as f:
            written = {k: tuple(f.get_slice(k).get_shape()) for k in f.keys()}
        assert written == {**original_shapes, "embeddings.word_embeddings.weight": (len(tokens), 384)}
        config = json.load(open(os.path.join(out, "config.json")))
        assert (config["vocab_size"], config["architectures"], config["hidden_act"]) == (len(tokens), ["BertModel"],
                                                                                          "gelu")
        fast = pytest.importorskip("tokenizers").Tokenizer.from_file(os.path.join(out, "tokenizer.json"))
        fast.no_padding()  # this tokenizer.json pads every input to 128
        assert all(fast.encode(w.upper(), add_special_tokens=False).ids == [i] for w, i in added.items())
