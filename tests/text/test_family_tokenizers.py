"""The tokenizers of BERT's family against Hugging Face's: RoBERTa's byte-level BPE, XLM-R's SentencePiece with
fairseq's ids, and the WordPiece of DistilBERT and ELECTRA (Hugging Face's 100-character words).

The test vocabularies were trained on data/corpus/sotu.txt and Hugging Face's ids recorded by
tools/make_family_fixtures.py (transformers' RobertaTokenizer, XLMRobertaTokenizer and the slow SentencePiece path,
BertTokenizer and BertTokenizerLegacy, which agreed on every text) in tests/fixtures/families/tokenizer_ids.npz: for
4,000 lines of data/corpus/sotu_heldout.txt a count and a CRC-32 of each line's ids (the first lines in full), the
hard cases, pairs and NER sentences in full.
"""

import os
import shutil
import zlib

import numpy as np
import pytest

from official_bert.configs import BertConfig
from official_bert.text import tokenizer_spec
from official_bert.text.packing import packing_of
from official_bert.text.tokenization import VocabError
from official_bert.text.tokenizers import word_pieces

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "families")
HELDOUT = os.path.join(REPO, "data", "corpus", "sotu_heldout.txt")
DIRECTORIES = {"bpe": "roberta", "spm": "xlm-roberta", "wordpiece": "distilbert"}
NER_FILE = os.path.join(REPO, "tests", "fixtures", "ner", "train.txt")


@pytest.fixture(scope="module")
def reference():
    with np.load(os.path.join(FIXTURES, "tokenizer_ids.npz")) as f:
        return {k: f[k] for k in f.files}


@pytest.fixture(scope="module")
def lines(reference):
    with open(HELDOUT, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if line.strip()][:4000]
    assert len(lines) == 4000 and zlib.crc32("\n".join(lines).encode("utf-8")) == int(reference["lines_crc32"])
    return lines


def spec_of(kind):
    directory = os.path.join(FIXTURES, DIRECTORIES[kind])
    return tokenizer_spec.for_checkpoint(directory, BertConfig.from_json_file(os.path.join(directory, "config.json")))


def expected(reference, kind, group):
    values, lengths = reference[f"{kind}/{group}"], reference[f"{kind}/{group}_lengths"]
    starts = np.concatenate([[0], np.cumsum(lengths)])
    return [values[a:b].tolist() for a, b in zip(starts[:-1], starts[1:])]


def ids(tokenizer, text):
    return tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))


def mismatches(reference, kind, all_ids):
    """The corpus lines whose ids differ from Hugging Face's (by count and CRC-32)."""
    counts, crcs = reference[f"{kind}/line_counts"], reference[f"{kind}/line_crc32"]
    return [i for i, line_ids in enumerate(all_ids)
            if len(line_ids) != counts[i] or zlib.crc32(np.asarray(line_ids, np.int32).tobytes()) != crcs[i]]


def test_each_family_reads_its_tokenizer_from_its_directory():
    specs = {family: tokenizer_spec.for_checkpoint(os.path.join(FIXTURES, family), BertConfig.from_json_file(
        os.path.join(FIXTURES, family, "config.json"))) for family in
        ("roberta", "xlm-roberta", "distilbert", "electra", "electra-generator")}
    assert {f: s.kind for f, s in specs.items()} == {
        "roberta": "byte_level_bpe", "xlm-roberta": "sentencepiece", "distilbert": "wordpiece",
        "electra": "wordpiece", "electra-generator": "wordpiece"}
    assert specs["xlm-roberta"].fairseq_ids and specs["roberta"].merges_file.endswith("merges.txt")
    # DistilBERT's and ELECTRA's WordPiece: lowercased (tokenizer_config.json says so), Hugging Face's 100 characters.
    assert (specs["distilbert"].do_lower_case, specs["distilbert"].max_chars_per_word) == (True, 100)
    assert not specs["roberta"].do_lower_case


@pytest.mark.parametrize("kind", sorted(DIRECTORIES))
def test_python_ids_equal_hugging_faces_on_the_corpus(reference, lines, kind):
    tokenizer = spec_of(kind).python_tokenizer()
    all_ids = [ids(tokenizer, line) for line in lines]
    bad = mismatches(reference, kind, all_ids)
    assert not bad, f"{len(bad)} lines differ, the first {bad[0]}: {lines[bad[0]]!r} → {all_ids[bad[0]][:20]}"
    first = expected(reference, kind, "first_lines")
    assert all_ids[:len(first)] == first


@pytest.mark.parametrize("kind", sorted(DIRECTORIES))
def test_python_ids_equal_hugging_faces_on_hard_cases(reference, kind):
    tokenizer = spec_of(kind).python_tokenizer()
    for text, theirs in zip(reference["hard_cases"], expected(reference, kind, "hard_cases"), strict=True):
        assert ids(tokenizer, str(text)) == theirs, repr(str(text))


@pytest.mark.parametrize("kind", sorted(DIRECTORIES))
def test_pairs_are_packed_as_hugging_faces(reference, kind):
    """RoBERTa and XLM-R: <s> A </s></s> B </s>; DistilBERT: [CLS] A [SEP] B [SEP]."""
    tokenizer = spec_of(kind).python_tokenizer()
    for (a, b), theirs in zip(reference["pairs"], expected(reference, kind, "pairs"), strict=True):
        tokens, _ = packing_of(tokenizer).pack(tokenizer.tokenize(str(a)), tokenizer.tokenize(str(b)))
        assert tokenizer.convert_tokens_to_ids(tokens) == theirs, (str(a), str(b))


@pytest.mark.parametrize("kind", sorted(DIRECTORIES))
def test_ner_words_have_hugging_faces_tokens(reference, kind):
    """Words as transformers' token classification tokenizes them (RoBERTa's each after a space): the same ids, and
    each id's word."""
    tokenizer = spec_of(kind).python_tokenizer()
    sentences, words = [], []
    for line in open(NER_FILE, encoding="utf-8"):
        if line.startswith("-DOCSTART-") or not line.strip():
            if words:
                sentences.append(words)
            words = []
        else:
            words.append(line.split()[0])
    sentences += [words] if words else []
    ours_ids, ours_words = [], []
    for sentence in sentences:
        pieces = word_pieces(tokenizer, sentence, prefix_space=True)
        tokens, _ = packing_of(tokenizer).pack([p for word in pieces for p in word])
        ours_ids.append(tokenizer.convert_tokens_to_ids(tokens))
        ours_words += [-1] + [i for i, word in enumerate(pieces) for _ in word] + [-1]
    assert ours_ids == expected(reference, kind, "ner_ids")
    assert ours_words == reference[f"{kind}/ner_word_ids"].tolist()


def test_bpe_offsets_span_each_tokens_text():
    tokenizer = spec_of("bpe").python_tokenizer()
    text = "  Café, 中文 😀 don't\tstop "
    tokens, spans = tokenizer.tokenize_with_offsets(text)
    assert tokenizer.detokenize(tokens) == text
    partial = 0
    for token, (start, end) in zip(tokens, spans):
        own = tokenizer.detokenize([token])
        if "\ufffd" in own:  # some of a character's bytes (the test vocabulary has no multi-byte tokens): that one
            partial += 1
            assert end == start + 1 and len(text[start].encode("utf-8")) > 1, (token, start, end)
        else:  # the token's text less the spaces it starts with (transformers' trim_offsets)
            assert text[start:end] == own.lstrip(" "), (token, start, end)
    assert partial == 2 + 3 + 3 + 4  # the bytes of é, 中, 文 and 😀


def copy_of(tmp_path, family, drop=(), change=None):
    directory = tmp_path / family
    shutil.copytree(os.path.join(FIXTURES, family), directory)
    for name in drop:
        os.remove(directory / name)
    if change:
        change(directory)
    return str(directory), BertConfig.from_json_file(str(directory / "config.json"))


@pytest.mark.parametrize("family, name", [("roberta", "merges.txt"), ("roberta", "vocab.json"),
                                          ("xlm-roberta", "sentencepiece.bpe.model"), ("electra", "vocab.txt")])
def test_a_missing_tokenizer_file_is_refused_in_one_line(tmp_path, family, name):
    directory, config = copy_of(tmp_path, family, drop=[name])
    with pytest.raises(VocabError) as error:
        tokenizer_spec.for_checkpoint(directory, config)
    message = str(error.value)
    assert message.startswith(f"{os.path.join(directory, name)}: no such file: a {config.family} checkpoint's "
                              "directory holds its tokenizer as") and "\n" not in message


def test_a_directory_with_tokenizer_json_alone_says_how_to_write_the_files(tmp_path):
    directory, config = copy_of(tmp_path, "roberta", drop=["vocab.json", "merges.txt"],
                                change=lambda d: (d / "tokenizer.json").write_text("{}"))
    with pytest.raises(VocabError, match=r"transformers 5 saves tokenizer.json alone: write the classic files with "
                                         r"tokenizer.backend_tokenizer.model.save\(directory\)"):
        tokenizer_spec.for_checkpoint(directory, config)


@pytest.mark.parametrize("family", ["roberta", "xlm-roberta", "distilbert"])
def test_a_tokenizer_of_another_size_than_the_config_is_refused(tmp_path, family):
    directory, config = copy_of(tmp_path, family)
    with pytest.raises(VocabError, match=r"tokens, but the config's vocab_size is 1000: the tokenizer and the model "
                                         r"are not of one checkpoint"):
        tokenizer_spec.for_checkpoint(directory, config.replace(vocab_size=1000))


def test_do_lower_case_against_a_cased_bpe_vocabulary_is_refused():
    directory = os.path.join(FIXTURES, "roberta")
    config = BertConfig.from_json_file(os.path.join(directory, "config.json"))
    with pytest.raises(VocabError, match=r"--do_lower_case: .*vocab.json is a byte-level BPE vocabulary \(RoBERTa's\), "
                                         r"which tokenizes text as written, cased: pass --do_lower_case=false"):
        tokenizer_spec.for_checkpoint(directory, config, do_lower_case=True)


def test_merges_that_do_not_fit_the_vocabulary_are_refused(tmp_path):
    directory, config = copy_of(tmp_path, "roberta", change=lambda d: (d / "merges.txt").write_text(
        "#version: 0.2\nĠ t\nzz qq\n"))
    with pytest.raises(VocabError, match=r"merges.txt:3: merge 'zz qq' uses 'zz', which .*vocab.json lacks"):
        tokenizer_spec.for_checkpoint(directory, config)


def graph_ids(spec, texts, batch=1000):
    """The in-graph layer's ids of `texts` (each row's pieces flattened)."""
    import tensorflow as tf

    layer = spec.layer()
    tokenize = tf.function(lambda t: layer(t).merge_dims(1, -1) if layer(t).ragged_rank > 1 else layer(t))
    rows = []
    for start in range(0, len(texts), batch):
        rows += tokenize(tf.constant([t.encode("utf-8") for t in texts[start:start + batch]])).to_list()
    return rows


@pytest.mark.slow  # three tokenizers over 4,000 lines in the graph: about 15 s
@pytest.mark.parametrize("kind", sorted(DIRECTORIES))
def test_graph_ids_equal_hugging_faces_on_the_corpus(reference, lines, kind):
    all_ids = graph_ids(spec_of(kind), lines)
    bad = mismatches(reference, kind, all_ids)
    assert not bad, f"{len(bad)} lines differ, the first {bad[0]}: {lines[bad[0]]!r} → {all_ids[bad[0]][:20]}"


@pytest.mark.parametrize("kind", sorted(DIRECTORIES))
def test_graph_ids_equal_hugging_faces_on_hard_cases_and_pairs(reference, kind):
    """The in-graph layer (byte-level BPE and WordPiece in core TensorFlow ops, SentencePiece by tensorflow-text) and
    its packer (`BertPackInputs.for_tokenizer`: RoBERTa's <s> A </s></s> B </s>)."""
    import tensorflow as tf

    from official_bert.text.pack_inputs import BertPackInputs

    spec = spec_of(kind)
    hard = [str(t) for t in reference["hard_cases"]]
    assert graph_ids(spec, hard) == expected(reference, kind, "hard_cases")
    layer = spec.layer()
    pack = BertPackInputs.for_tokenizer(64, layer)
    a, b = ([str(pair[i]) for pair in reference["pairs"]] for i in (0, 1))
    packed = pack([layer(tf.constant(a)), layer(tf.constant(b))])
    got = [row[:n].tolist() for row, n in zip(packed["input_word_ids"].numpy(),
                                               packed["input_mask"].numpy().sum(axis=1))]
    assert got == expected(reference, kind, "pairs")
    assert set(packed["input_type_ids"].numpy().ravel()) == ({0} if kind != "wordpiece" else {0, 1})


def test_graph_bpe_offsets_are_the_python_tokenizers():
    import tensorflow as tf

    spec = spec_of("bpe")
    text = "  Café, 中文 😀 don't\tstop "
    _, spans = spec.python_tokenizer().tokenize_with_offsets(text)
    _, starts, ends = spec.layer(with_offsets=True, offsets_unit="UTF8_CHAR")(tf.constant([text]))
    assert list(zip(starts.flat_values.numpy().tolist(), ends.flat_values.numpy().tolist())) == spans
    _, byte_starts, byte_ends = spec.layer(with_offsets=True)(tf.constant([text]))
    data = text.encode("utf-8")
    spans = list(zip(byte_starts.flat_values.numpy().tolist(), byte_ends.flat_values.numpy().tolist()))
    # Byte spans tile the text, one token's after another's, less the spaces tokens start with; the tokens of one
    # character's bytes share its span.
    distinct = [span for i, span in enumerate(spans) if i == 0 or span != spans[i - 1]]
    assert b"".join(data[a:b] for a, b in distinct) == data.replace(b" ", b"")
    assert len(spans) - len(distinct) == (2 + 3 + 3 + 4) - 4  # é, 中, 文 and 😀 split into bytes
