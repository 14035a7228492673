"""The Python WordPiece tokenizer: every rule of the original, its errors, and Hugging Face as a reference."""

import pytest
import tokenizers
from tokenizers import BertWordPieceTokenizer

from official_bert import tokenization
from official_bert.tokenization import BasicTokenizer, FullTokenizer, VocabError, WordpieceTokenizer
from tests.pretraining_data_corpus import real_vocab_file
from tests.tokenization_helpers import english_lines, mixed_sentences, write_vocab

BOTH_CASES = pytest.mark.parametrize("do_lower_case", [True, False])


def basic(text, do_lower_case):
    return BasicTokenizer(do_lower_case=do_lower_case).tokenize(text)


# Rule 1: delete NUL, U+FFFD and Cc/Cf characters; map whitespace to spaces.
@BOTH_CASES
def test_clean_deletes_controls_and_replacement_char(do_lower_case):
    assert basic("a\x00b\ufffdc\x07d\u200be\u00adf\ufeffg", do_lower_case) == ["abcdefg"]


@BOTH_CASES
def test_clean_maps_whitespace_to_space(do_lower_case):
    assert basic("a\tb\nc\rd\u3000e\xa0f\u2009g h", do_lower_case) == list("abcdefgh")


@BOTH_CASES
def test_whitespace_that_is_a_control_char_is_deleted_not_split(do_lower_case):
    # \x0b \x0c \x1c-\x1f \x85 are str.isspace() but Cc, and _clean_text deletes Cc first.
    assert basic("a\x0bb\x0cc\x1cd\x1fe\x85f", do_lower_case) == ["abcdef"]


@BOTH_CASES
def test_line_and_paragraph_separators_split_through_str_split(do_lower_case):
    # U+2028/U+2029 are neither deleted nor the original's whitespace, but str.split() splits on them.
    assert basic("a\u2028b\u2029c", do_lower_case) == ["a", "b", "c"]


# Rule 2: CJK ideographs become words of their own, cased or not; Hangul and kana do not.
@BOTH_CASES
def test_cjk_ideographs_are_split_off(do_lower_case):
    assert basic("ab中文cd\U00020000e", do_lower_case) == ["ab", "中", "文", "cd", "\U00020000", "e"]


def test_hangul_and_kana_are_not_split():
    assert basic("한국어ひらがなカタカナ", do_lower_case=False) == ["한국어ひらがなカタカナ"]


# Rule 3: lowercasing implies NFD and dropping Mn; cased text is left alone.
def test_lowercasing_strips_accents():
    assert basic("HeLLo WÖRLD Café e\u0301", do_lower_case=True) == ["hello", "world", "cafe", "e"]
    assert basic("HeLLo WÖRLD Café e\u0301", do_lower_case=False) == ["HeLLo", "WÖRLD", "Café", "e\u0301"]


def test_lowercasing_uses_str_lower_with_its_length_changes_and_final_sigma():
    # 'İ'.lower() is 'i' + U+0307 (two characters); NFD keeps the Mn mark, which is then dropped.
    assert basic("İstanbul", do_lower_case=True) == ["istanbul"]
    # Final sigma depends on the neighbours within the whitespace token.
    assert basic("ΟΔΟΣ ΣΑ", do_lower_case=True) == ["\u03bf\u03b4\u03bf\u03c2", "\u03c3\u03b1"]
    # No folding beyond str.lower(); compatibility ligatures survive NFD.
    assert basic("ß ﬁ", do_lower_case=True) == ["ß", "ﬁ"]


def test_lowercasing_decomposes_hangul_syllables():
    assert basic("한", do_lower_case=True) == ["\u1112\u1161\u11ab"]


# Rule 4: punctuation is Unicode P* plus the ASCII symbols; other symbols stay in words.
@BOTH_CASES
def test_ascii_symbols_are_punctuation(do_lower_case):
    assert basic("a$b^c`d~e+f|g", do_lower_case) == list("a$b^c`d~e+f|g")


@BOTH_CASES
def test_every_unicode_punctuation_class_is_split(do_lower_case):
    # Pc Pd Ps Pe Pi Pf Po
    assert basic("a\u203fb\u2010c\u300cd\u300de\u00abf\u00bbg\u00bfh", do_lower_case) == list(
        "a\u203fb\u2010c\u300cd\u300de\u00abf\u00bbg\u00bfh")


def test_non_ascii_symbols_are_not_punctuation():
    assert basic("a€b©c≈d", do_lower_case=False) == ["a€b©c≈d"]


def test_punctuation_is_split_after_normalization():
    # NFD turns ≠ into '=' + U+0338: only the uncased tokenizer sees the '='.
    assert basic("a≠b", do_lower_case=True) == ["a", "=", "b"]
    assert basic("a≠b", do_lower_case=False) == ["a≠b"]


def test_special_token_literals_in_text_are_split():
    assert basic("[UNK] [MASK]", do_lower_case=True) == ["[", "unk", "]", "[", "mask", "]"]


# Rule 5: greedy longest-match-first WordPiece, [UNK] for uncoverable or over-200-character words.
@pytest.fixture
def small_vocab(tmp_path):
    return write_vocab(tmp_path, ["[PAD]", "[UNK]", "un", "##aff", "##able", "run", "runn", "##ning", "##ing",
                                  "a", "##a", "é", "##é", "i", "##i"])


def test_wordpiece_is_greedy_longest_match_first(small_vocab):
    tokenizer = FullTokenizer(small_vocab)
    assert tokenizer.tokenize("unaffable") == ["un", "##aff", "##able"]
    # "runn" + "##ing" (longest first piece), not "run" + "##ning".
    assert tokenizer.tokenize("running") == ["runn", "##ing"]


def test_uncoverable_word_is_one_unk(small_vocab):
    assert FullTokenizer(small_vocab).tokenize("unaffx run") == ["[UNK]", "run"]


def test_words_over_200_characters_are_one_unk(small_vocab):
    tokenizer = FullTokenizer(small_vocab)
    assert tokenizer.tokenize("a" * 200) == ["a"] + ["##a"] * 199
    assert tokenizer.tokenize("a" * 201 + " a") == ["[UNK]", "a"]


def test_word_length_counts_characters_after_normalization(small_vocab):
    # 200 two-byte characters fit; 200 'İ' are 400 characters after lower() but 200 once the Mn is dropped.
    assert FullTokenizer(small_vocab, do_lower_case=False).tokenize("é" * 200) == ["é"] + ["##é"] * 199
    assert FullTokenizer(small_vocab, do_lower_case=True).tokenize("İ" * 200) == ["i"] + ["##i"] * 199
    assert FullTokenizer(small_vocab, do_lower_case=True).tokenize("İ" * 201) == ["[UNK]"]


def test_wordpiece_tokenizer_limit_is_configurable():
    assert WordpieceTokenizer({"a": 0, "##a": 1}, max_input_chars_per_word=3).tokenize("aaaa aa") == [
        "[UNK]", "a", "##a"]


def test_ids_round_trip(small_vocab):
    tokenizer = FullTokenizer(small_vocab)
    ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize("unaffable"))
    assert ids == [2, 3, 4]
    assert tokenizer.convert_ids_to_tokens(ids) == ["un", "##aff", "##able"]
    assert tokenizer.vocab["[UNK]"] == 1 and tokenizer.inv_vocab[1] == "[UNK]"


def test_bytes_input_drops_undecodable_bytes(small_vocab):
    assert tokenization.convert_to_unicode(b"a\xffb\xc3\xa9") == "abé"
    assert FullTokenizer(small_vocab).tokenize(b"un\xffaff\xc3able") == ["un", "##aff", "##able"]
    with pytest.raises(ValueError, match="Unsupported string type"):
        tokenization.convert_to_unicode(3)


# Vocabulary errors name the file and the line.
def test_missing_vocab(tmp_path):
    with pytest.raises(VocabError, match=f"{tmp_path}/nope.txt: vocabulary file not found"):
        FullTokenizer(str(tmp_path / "nope.txt"))


def test_empty_vocab(tmp_path):
    path = write_vocab(tmp_path, [])
    with pytest.raises(VocabError, match=f"{path}: vocabulary file is empty"):
        FullTokenizer(path)


def test_vocab_without_unk(tmp_path):
    path = write_vocab(tmp_path, ["[PAD]", "a"])
    with pytest.raises(VocabError, match=f"{path}: vocabulary has no \\[UNK\\] token"):
        FullTokenizer(path)


def test_duplicate_vocab_entry(tmp_path):
    path = write_vocab(tmp_path, ["[UNK]", "a", "b", "a"])
    assert FullTokenizer(path).vocab == {"[UNK]": 0, "a": 3, "b": 2}  # the original's ids: the last line's


def test_non_utf8_vocab(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"[UNK]\na\n\xff\xfeb\n")
    with pytest.raises(VocabError, match=f"{path}:3: vocabulary is not UTF-8"):
        FullTokenizer(str(path))


def test_vocab_directory(tmp_path):
    with pytest.raises(VocabError, match=r"is a directory; expected a vocabulary file \(vocab.txt: one token"):
        FullTokenizer(str(tmp_path))


def test_case_must_match_released_checkpoint():
    with pytest.raises(ValueError, match="--do_lower_case=True"):
        tokenization.validate_case_matches_checkpoint(False, "/x/uncased_L-12_H-768_A-12/bert_model.ckpt")
    with pytest.raises(ValueError, match="--do_lower_case=False"):
        tokenization.validate_case_matches_checkpoint(True, "/x/cased_L-12_H-768_A-12/bert_model.ckpt")
    tokenization.validate_case_matches_checkpoint(True, "/x/uncased_L-12_H-768_A-12/bert_model.ckpt")
    tokenization.validate_case_matches_checkpoint(False, "/x/my_model/bert_model.ckpt")


def test_create_tokenizer_picks_wordpiece(tmp_path, small_vocab):
    # The tools' tokenizer: a BERT vocabulary, with the special tokens every input needs.
    with pytest.raises(VocabError, match=r"no \[CLS\] in it: not a BERT vocabulary"):
        tokenization.create_tokenizer(vocab_file=small_vocab)
    vocab = write_vocab(tmp_path, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able"], name="bert.txt")
    tokenizer = tokenization.create_tokenizer(vocab_file=vocab, do_lower_case=True)
    assert isinstance(tokenizer, FullTokenizer) and tokenizer.tokenize("UNAFFABLE") == ["un", "##aff", "##able"]
    with pytest.raises(VocabError, match="exactly one of --vocab_file and --spm_model_file"):
        tokenization.create_tokenizer(vocab_file=vocab, spm_model_file=vocab)


# Hugging Face `tokenizers` as an independent implementation of the same algorithm.
def _words(text):
    return BasicTokenizer(do_lower_case=True).tokenize(text)


def _has_word_of_101_to_200_chars(text):
    return any(100 < len(word) <= 200 for word in _words(text))


def _has_special_literal(text):
    return any(token in text.upper() for token in ("[UNK]", "[CLS]", "[SEP]", "[MASK]", "[PAD]"))


def test_real_vocab_matches_hf_tokenizers_except_the_documented_rules():
    vocab_file = real_vocab_file()
    ours = FullTokenizer(vocab_file, do_lower_case=True)
    sentences = english_lines(3000) + mixed_sentences(1000, seed=3)
    expected = [ours.convert_tokens_to_ids(ours.tokenize(s)) for s in sentences]

    hf = BertWordPieceTokenizer(vocab_file, lowercase=True)
    hf_ids = [e.ids for e in hf.encode_batch(sentences, add_special_tokens=False)]
    differing = [s for s, a, b in zip(sentences, expected, hf_ids) if a != b]
    # HF makes words over 100 (not 200) characters [UNK], and keeps special-token literals whole.
    assert all(_has_word_of_101_to_200_chars(s) or _has_special_literal(s) for s in differing)
    assert any(_has_word_of_101_to_200_chars(s) for s in differing)
    assert any(_has_special_literal(s) for s in differing)
    assert len(set(differing) & set(sentences[:3000])) < 30  # plain English: almost never

    # With those two rules aligned (a 200-character limit, no special-token matching), HF agrees everywhere.
    aligned = tokenizers.Tokenizer(tokenizers.models.WordPiece(
        dict(ours.vocab), unk_token="[UNK]", max_input_chars_per_word=200))
    aligned.normalizer = tokenizers.normalizers.BertNormalizer(lowercase=True)
    aligned.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    assert [e.ids for e in aligned.encode_batch(sentences, add_special_tokens=False)] == expected


def test_hf_comparison_sentences_are_not_trivial():
    # The comparison above is only meaningful if the sentences exercise the hard cases.
    sentences = mixed_sentences(1000, seed=3)
    text = "".join(sentences)
    for needle in ("中", "한", "😀", "\u200b", "\x00", "\ufffd", "é", "\u3000", "\x85"):
        assert needle in text
