"""Streaming, parallel determinism, temporary files, output files and input errors of the pretraining-data pipeline."""

import os

import numpy as np
import pytest
import tensorflow as tf

from official_bert import pretraining_data as ptd
from official_bert.pretraining_data import inspection
from official_bert.pretraining_data import continuation_flags, tokens_by_id
from official_bert.pretraining_data.parallel import OrderedWorkers
from official_bert.tokenization import FullTokenizer
from tests.pretraining_data_corpus import real_vocab_file, write_corpus


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(real_vocab_file(), do_lower_case=True)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return write_corpus(str(tmp_path_factory.mktemp("corpus") / "corpus.txt"), num_documents=300)


def run(tmp_path, tokenizer, inputs, num_workers=1, seed=12345, outputs=("a.tfrecord", "b.tfrecord"),
        chunk_values=4000, gzip_compress=False, **options):
    generator = ptd.InstanceGenerator(tokenizer, ptd.PretrainingOptions(**{"dupe_factor": 2, **options}), seed)
    paths = [str(tmp_path / name) for name in outputs]
    stats = ptd.create_pretraining_data(inputs, paths, generator, num_workers=num_workers,
                                        gzip_compress=gzip_compress, chunk_values=chunk_values)
    return stats, paths


def test_same_output_for_any_number_of_workers(tmp_path, tokenizer, corpus):
    contents = []
    for workers in (1, 2, 3):
        os.makedirs(tmp_path / str(workers))
        _, paths = run(tmp_path / str(workers), tokenizer, [corpus], num_workers=workers)
        contents.append([open(p, "rb").read() for p in paths])
    assert contents[0] == contents[1] == contents[2] and len(contents[0][0]) > 10000
    os.makedirs(tmp_path / "seed")
    _, paths = run(tmp_path / "seed", tokenizer, [corpus], seed=1)
    assert [open(p, "rb").read() for p in paths] != contents[0]


def test_urls_work_like_paths(tmp_path, tokenizer, corpus):
    """Input and output go through tf.io.gfile for scheme://paths (e.g. gs://); file:// stands in for them here."""
    generator = ptd.InstanceGenerator(tokenizer, ptd.PretrainingOptions(dupe_factor=1))
    inputs = ptd.expand_input_files(f"file://{os.path.dirname(corpus)}/*.txt")
    stats = ptd.create_pretraining_data(inputs, [f"file://{tmp_path}/sub/out"], generator)
    assert os.listdir(tmp_path / "sub") == ["out"]
    assert sum(1 for _ in tf.data.TFRecordDataset(str(tmp_path / "sub" / "out"))) == stats.instances > 0


def test_a_dead_worker_is_an_error_not_a_hang(tmp_path, tokenizer, corpus):
    def die(block):
        os._exit(1)

    with pytest.raises(ptd.PretrainingDataError, match="a worker process died"):
        with OrderedWorkers(die, num_workers=2) as workers:
            list(workers.map(range(3)))


def test_outputs_are_round_robin_and_complete(tmp_path, tokenizer, corpus):
    stats, paths = run(tmp_path, tokenizer, [corpus], outputs=("x", "y", "z"), gzip_compress=True)
    counts = [sum(1 for _ in tf.data.TFRecordDataset(p, compression_type="GZIP")) for p in paths]
    assert sum(counts) == stats.instances and max(counts) - min(counts) <= 1
    assert sorted(os.listdir(tmp_path)) == ["x", "y", "z"]  # no temporary file is left
    examples = [e for b in inspection.read_batches(paths) for e in b["masked_lm_weights"]]
    assert len(examples) == stats.instances
    assert sum(int(e.sum()) for e in examples) == stats.masked


def test_records_are_those_tensorflow_writes(tmp_path, tokenizer, corpus):
    """The TFRecord framing (length, checksums) is written without TensorFlow: the bytes equal TF's writer's."""
    _, paths = run(tmp_path, tokenizer, [corpus], outputs=("o",))
    records = [r.numpy() for r in tf.data.TFRecordDataset(paths[0])]
    with tf.io.TFRecordWriter(str(tmp_path / "tf")) as writer:
        for record in records:
            writer.write(record)
    assert len(records) > 1000 and open(paths[0], "rb").read() == open(tmp_path / "tf", "rb").read()


def test_no_temporary_file_is_ever_visible(tmp_path, tokenizer, corpus, monkeypatch):
    """The token store and shuffle buckets have no name: a listing during the run shows only the outputs' own
    temporary names, and an error leaves nothing."""
    seen = set()
    real_add = ptd.pipeline.BucketShuffle.add

    def add(self, buckets):
        seen.update(os.listdir(tmp_path))
        return real_add(self, buckets)

    monkeypatch.setattr(ptd.pipeline.BucketShuffle, "add", add)
    run(tmp_path, tokenizer, [corpus], outputs=("o",))
    assert seen == set() and os.listdir(tmp_path) == ["o"]


def write(path, text, mode="w"):
    with open(path, mode) as f:
        f.write(text)
    return str(path)


def test_documents_are_separated_by_blank_lines_and_by_the_end_of_a_file(tmp_path):
    first = write(tmp_path / "1.txt", "a b\r\nc d\n  \t\n\n\nsolo\n")
    second = write(tmp_path / "2.txt", "next file\n\nlast one\nend")
    documents = list(ptd.read_documents([first, second]))
    assert [(os.path.basename(d.path), d.line_number, d.lines) for d in documents] == [
        ("1.txt", 1, ["a b", "c d"]), ("1.txt", 6, ["solo"]), ("2.txt", 1, ["next file"]),
        ("2.txt", 3, ["last one", "end"])]


def test_non_utf8_bytes_are_dropped_and_counted_as_the_original_drops_them(tmp_path):
    path = write(tmp_path / "latin1.txt", "fine\n\ncaf\xe9 au lait\n\xff\xfeok\n".encode("latin-1"), "wb")
    decoder = ptd.Utf8Decoder()
    documents = list(ptd.read_documents([path], decoder=decoder))
    assert [d.lines for d in documents] == [["fine"], ["caf au lait", "ok"]]
    assert decoder.warning() == f"dropped 3 bytes that are not UTF-8, as the original does (the first on {path}:3)"


def test_a_document_without_end_is_an_error_not_unbounded_memory(tmp_path):
    path = write(tmp_path / "one.txt", "\n\n" + "a sentence\n" * 100)
    with pytest.raises(ptd.PretrainingDataError, match=r"one.txt:3: the document starting here runs past 500"):
        list(ptd.read_documents([path], max_document_bytes=500))


def test_blocks_close_on_documents_or_bytes(tmp_path):
    doc = ptd.Document("f", 1, ["x"], 100)
    assert [len(b.documents) for b in ptd.iter_blocks([doc] * 10, max_documents=4)] == [4, 4, 2]
    assert [len(b.documents) for b in ptd.iter_blocks([doc] * 7, max_bytes=250)] == [3, 3, 1]
    assert [b.index for b in ptd.iter_blocks([doc] * 11, max_documents=4)] == [0, 1, 2]


@pytest.mark.parametrize("text, message", [
    ("\n\n  \n", "the input files hold no text"),
    ("just one document\nwith two lines\n", "the whole corpus is one document"),
])
def test_corpus_errors(tmp_path, tokenizer, text, message):
    path = write(tmp_path / "in.txt", text)
    os.makedirs(tmp_path / "out")
    with pytest.raises(ptd.PretrainingDataError, match=message):
        run(tmp_path / "out", tokenizer, [path])
    assert os.listdir(tmp_path / "out") == []


def test_one_document_is_fine_without_nsp(tmp_path, tokenizer):
    path = write(tmp_path / "in.txt", "just one document\nwith two lines\n")
    stats, _ = run(tmp_path, tokenizer, [path], no_nsp=True, outputs=("o",))
    assert stats.instances == 2 and stats.random_next == 0


def test_failure_midway_leaves_no_file(tmp_path, tokenizer, corpus):
    endless = write(tmp_path / "endless.txt", "a sentence\n" * 800_000)  # 8.8 MB without a blank line
    os.makedirs(tmp_path / "out")
    with pytest.raises(ptd.PretrainingDataError, match="endless.txt:1: the document starting here runs past"):
        run(tmp_path / "out", tokenizer, [corpus, endless], num_workers=2)
    assert os.listdir(tmp_path / "out") == []


def test_a_vocabulary_that_lists_a_token_twice_gives_the_originals_ids(tmp_path, corpus):
    """The original's load_vocab: the last line's id. Random replacements come from the distinct tokens."""
    lines = open(real_vocab_file(), encoding="utf-8").read().splitlines()
    vocab = write(tmp_path / "vocab.txt", "\n".join(lines + ["the", "city"]) + "\n")
    tokenizer = FullTokenizer(vocab)
    assert tokenizer.vocab["the"] == len(lines) and tokenizer.vocab["city"] == len(lines) + 1
    stats, paths = run(tmp_path, tokenizer, [corpus], outputs=("o",), random_token_prob=1.0, mask_token_prob=0.0)
    batch = next(inspection.read_batches(paths, batch_size=100000))
    shown = np.take_along_axis(batch["input_ids"], batch["masked_lm_positions"], 1)[batch["masked_lm_weights"] > 0]
    shadowed = [lines.index("the"), lines.index("city")]
    assert stats.masked > 5000 and not np.isin(shown, shadowed).any() and shown.max() > len(lines) - 100
    assert not np.isin(batch["input_ids"], shadowed).any() and (batch["input_ids"] == len(lines)).any()
    assert tokens_by_id(tokenizer.vocab)[len(lines)] == "the"


def test_a_vocabulary_without_mask_is_refused(tmp_path):
    vocab = write(tmp_path / "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nword\n")
    with pytest.raises(ptd.PretrainingDataError, match=r"no \[MASK\] token"):
        ptd.InstanceGenerator(FullTokenizer(vocab), ptd.PretrainingOptions())


def test_no_nsp_examples_are_one_full_segment(tmp_path, tokenizer):
    corpus = write_corpus(str(tmp_path / "long.txt"), num_documents=20, min_sentences=40, max_sentences=60)
    stats, paths = run(tmp_path, tokenizer, [corpus], no_nsp=True, short_seq_prob=0.0, outputs=("o",))
    batch = next(inspection.read_batches(paths, batch_size=100000))
    assert stats.random_next == 0 and not batch["next_sentence_labels"].any() and not batch["segment_ids"].any()
    sep = tokenizer.vocab["[SEP]"]
    lengths = batch["input_mask"].sum(axis=1)
    assert (batch["input_ids"][np.arange(len(lengths)), lengths - 1] == sep).all()
    assert ((batch["input_ids"] == sep).sum(axis=1) == 1).all()
    assert np.mean(lengths == 128) > 0.8  # packed to full length except at document ends


def test_sentencepiece_whole_word_masking_keeps_words_whole(tmp_path, corpus):
    from official_bert import tokenization
    from official_bert.text import sentencepiece_tokenizer
    model = str(tmp_path / "sp.model")
    sentencepiece_tokenizer.train([corpus], model, vocab_size=120, do_lower_case=True)
    tokenizer = tokenization.create_tokenizer(spm_model_file=model, do_lower_case=True)
    stats, paths = run(tmp_path, tokenizer, [corpus], do_whole_word_mask=True, outputs=("o",))
    vocab = tokenizer.vocab
    flags = continuation_flags(sorted(vocab, key=vocab.get))
    assert sum(flags) > 10  # pieces without "▁" continue a word
    measured = inspection.ExampleStatistics(vocab["[MASK]"], vocab["[CLS]"], vocab["[SEP]"], is_continuation=flags)
    for batch in inspection.read_batches(paths):
        measured.add_batch(batch)
    assert measured.records == stats.instances > 0 and measured.partly_masked_words == 0


def test_inspection_reports_the_procedure(tmp_path, tokenizer, corpus):
    stats, paths = run(tmp_path, tokenizer, [corpus], do_whole_word_mask=True)
    vocab = tokenizer.vocab
    inv = sorted(vocab, key=vocab.get)
    measured = inspection.ExampleStatistics(vocab["[MASK]"], vocab["[CLS]"], vocab["[SEP]"], 0.15,
                                            is_continuation=[t.startswith("##") for t in inv])
    for batch in inspection.read_batches(paths):
        measured.add_batch(batch)
    assert (measured.records, measured.masked, measured.random_next) == (stats.instances, stats.masked,
                                                                          stats.random_next)
    assert measured.special_masked == 0 and measured.partly_masked_words == 0
    assert measured.replaced_by_mask + measured.kept + measured.replaced_randomly == measured.masked
    assert inspection.feature_names(paths[0]) == "v1"
    report = "\n".join(measured.report())
    assert "[CLS]/[SEP] masked: 0" in report and "words masked only in part: 0" in report
