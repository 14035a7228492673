"""`TokenizerSpec`: its in-graph layer gives its Python tokenizer's ids — cased and uncased, with and without
--preserve_unused_tokens — and what the two could not both honour is refused in one line."""

import random

import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from official_bert.text.tokenization import VocabError
from official_bert.text.tokenizer_spec import TokenizerSpec
from tests.pretraining_data_corpus import real_vocab_file
from tests.tokenization_helpers import english_lines, hostile_text, mixed_sentences

# Where the original's preserve_unused_tokens keeps "[unused<n>]" whole and where it does not: upper case, glued to
# a word or punctuation, beside CJK (spaced out first, so kept), beyond the vocabulary's slots, leading zeros.
UNUSED_TEXTS = ["[unused0]", "a [unused0] b", "[UNUSED0] x", "x[unused0]", "[unused0],", "中[unused1]中",
                "[unused993] [unused994] [unused99999]", "[unused01]", "\t[unused5]\u3000[unused6]\x00",
                "[unused2][unused3]", "[ unused4 ]", "Café [unused0] naïve"]


def _texts():
    rng = random.Random(3)
    mixed = mixed_sentences(300, seed=5)
    with_unused = [f"{text} [unused{rng.randrange(1000)}] {text}" for text in mixed[:100]]
    return english_lines(300) + mixed + with_unused + UNUSED_TEXTS


def _python_ids(spec, text):
    tokenizer = spec.python_tokenizer()
    return tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))


def _graph_ids(layer, texts):
    out = layer(tf.constant([t.encode("utf-8") for t in texts]))
    ids = out[0] if isinstance(out, tuple) else out
    return ids.merge_dims(1, 2).to_list()


@pytest.mark.parametrize("preserve", [False, True], ids=["split", "preserve"])
@pytest.mark.parametrize("do_lower_case", [True, False], ids=["uncased", "cased"])
def test_layer_ids_equal_python_ids(do_lower_case, preserve):
    spec = TokenizerSpec(real_vocab_file(), do_lower_case=do_lower_case, preserve_unused_tokens=preserve).check()
    texts = _texts()
    expected = [_python_ids(spec, text) for text in texts]
    assert _graph_ids(spec.layer(), texts) == expected
    assert _graph_ids(spec.layer(with_offsets=True, offsets_unit="UTF8_CHAR"), texts) == expected


def test_preserve_keeps_the_vocabulary_unused_tokens_whole():
    vocab = real_vocab_file()
    kept = TokenizerSpec(vocab, preserve_unused_tokens=True).layer()
    split = TokenizerSpec(vocab).layer()
    unused0 = TokenizerSpec(vocab).python_tokenizer().vocab["[unused0]"]
    assert _graph_ids(kept, ["a [unused0]"])[0][1:] == [unused0]
    assert unused0 not in _graph_ids(split, ["a [unused0]"])[0]


@pytest.fixture(scope="module")
def preserving():
    spec = TokenizerSpec(real_vocab_file(), do_lower_case=False, preserve_unused_tokens=True)
    return spec, spec.layer()


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.one_of(hostile_text, st.sampled_from(UNUSED_TEXTS)), min_size=1, max_size=6))
def test_preserve_on_hostile_unicode(preserving, texts):
    spec, layer = preserving
    assert _graph_ids(layer, texts) == [_python_ids(spec, text) for text in texts]



def test_what_python_and_the_graph_cannot_both_honour_is_refused(tmp_path):
    spm = str(tmp_path / "m.model")
    cases = [(TokenizerSpec(), "exactly one of --vocab_file and --spm_model_file"),
             (TokenizerSpec("v.txt", ops="icu"), "--tokenizer_ops=icu"),
             (TokenizerSpec("v.txt", normalize_unicode="nfkc"), "--normalize_unicode=nfkc"),
             (TokenizerSpec(spm_model_file=spm, preserve_unused_tokens=True), "--preserve_unused_tokens"),
             (TokenizerSpec(spm_model_file=spm, normalize_unicode="nfc"), "--normalize_unicode")]
    for spec, message in cases:
        with pytest.raises(VocabError, match=message.replace("[", r"\[")) as raised:
            spec.check()
        assert "\n" not in str(raised.value)
